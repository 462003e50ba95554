"""From evaluator records (:mod:`.rec`) to the frozen contract of :mod:`.records`."""

from __future__ import annotations

from .limits import too_deep
from .records import Bits, Code, Dag, DefRef, Loc, Record, RecordKeeper, Unresolved
from .values import (
    FALSE,
    TRUE,
    UNSET,
    BitInit,
    BitsInit,
    DagInit,
    DefInit,
    IntInit,
    ListInit,
    StringInit,
    VarBitInit,
    VarInit,
)


def plain(v):
    """The :mod:`.records` value for an ``Init``."""
    t = type(v)
    if t is StringInit:
        return Code(v.value) if v.code else v.value
    if t is IntInit:
        return v.value
    if t is BitInit:
        return 1 if v.value else 0
    if t is DefInit:
        # One DefRef per record (they are immutable): ~900k fewer objects on X86.
        rec = v.rec
        d = rec.defref
        if d is None or d.name != rec.name:
            d = rec.defref = DefRef(rec.name)
        return d
    if v is UNSET:
        return None
    if t is ListInit:
        return [plain(x) for x in v.items]
    if t is DagInit:
        return Dag(plain(v.op), tuple((plain(a), n) for a, n in v.args), v.op_name)
    if t is BitsInit:
        try:  # the common case, known bits only: no Python call per bit
            return Bits(map(_KNOWN_BITS.__getitem__, v.bits))
        except KeyError:
            return Bits(plain(b) for b in v.bits)
    if t is VarInit:
        return Unresolved("var", str(v), v.name)
    if t is VarBitInit and isinstance(v.var, VarInit):
        return Unresolved("varbit", str(v), v.var.name, v.index)
    return Unresolved("complex", str(v))


# Known bits by identity (BitInit has no __eq__): TRUE and FALSE are the evaluator's only bit
# values (values.bit_init), so another BitInit or an unresolved bit takes plain's slow path.
_KNOWN_BITS = {TRUE: 1, FALSE: 0, UNSET: None}


def _loc(tok):
    return Loc(tok.file, tok.line, tok.column)


class _Memo:
    """What repeats across records in one conversion, kept while the evaluator lives (so ids
    stay theirs): type spellings (X86: 4M field types, a few hundred types) and locations (a
    multiclass's records share its tokens). Both results are immutable, so records may share
    them."""

    __slots__ = ("tys", "locs")

    def __init__(self):
        self.tys: dict = {}
        self.locs: dict = {}

    def ty(self, ty) -> str:
        s = self.tys.get(ty)
        if s is None:
            s = self.tys[ty] = str(ty)
        return s

    def loc(self, tok) -> Loc:
        k = id(tok)
        got = self.locs.get(k)
        if got is None:
            got = self.locs[k] = (_loc(tok), tok)  # tok kept: its id is not reused
        return got[0]


def to_record(rec, memo: _Memo | None = None) -> Record:
    """The frozen :class:`.records.Record` of evaluator record ``rec``."""
    if memo is None:
        memo = _Memo()
    fields = {}
    types = {}
    nonconcrete = []
    tys = memo.tys
    for name, rv in rec.values.items():
        if rv.targ:
            continue
        v = rv.value
        t = type(v)
        # ints and strings are most of the values: converted here, without a call
        if t is IntInit:
            fields[name] = v.value
        elif t is StringInit and not v.code:
            fields[name] = v.value
        else:
            fields[name] = plain(v)
        ty = rv.ty
        ts = tys.get(ty)
        types[name] = ts if ts is not None else memo.ty(ty)
        if rv.field:
            nonconcrete.append(name)
    return Record(
        name=rec.name,
        superclasses=tuple([c.name for c in rec.supers]),
        fields=fields,
        field_types=types,
        locs=tuple([memo.loc(t) for t in rec.locs]),
        anonymous=rec.anonymous,
        is_class=rec.is_class,
        template_args=tuple(rec.targs),
        nonconcrete=frozenset(nonconcrete),
        template_arg_info=tuple((n, memo.ty(rec.values[n].ty), plain(rec.values[n].value))
                                for n in rec.targs),
    )


def to_keeper(ev, files) -> RecordKeeper:
    """The frozen :class:`RecordKeeper` of evaluator ``ev``'s classes and defs."""
    rk = RecordKeeper(files=tuple(files))
    memo = _Memo()
    for c in ev.classes.values():
        rk.add_class(_converted(c, memo))
    for d in ev.defs.values():
        rk.add_def(_converted(d, memo))
    return rk


def _converted(rec, memo) -> Record:
    try:
        return to_record(rec, memo)
    except RecursionError:  # a value nested deeper than the conversion can recurse
        raise too_deep(rec.locs[0] if rec.locs else None) from None
