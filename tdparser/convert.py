"""From evaluator records (:mod:`.rec`) to the frozen contract of :mod:`.records`."""

from __future__ import annotations

from .limits import too_deep
from .records import Bits, Code, Dag, DefRef, Loc, Record, RecordKeeper, Unresolved
from .values import (
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
        return Bits(plain(b) for b in v.bits)
    if t is VarInit:
        return Unresolved("var", str(v), v.name)
    if t is VarBitInit and isinstance(v.var, VarInit):
        return Unresolved("varbit", str(v), v.var.name, v.index)
    return Unresolved("complex", str(v))


def _loc(tok):
    return Loc(tok.file, tok.line, tok.column)


def to_record(rec) -> Record:
    fields = {}
    types = {}
    nonconcrete = []
    for name, rv in rec.values.items():
        if rv.targ:
            continue
        fields[name] = plain(rv.value)
        types[name] = str(rv.ty)
        if rv.field:
            nonconcrete.append(name)
    return Record(
        name=rec.name,
        superclasses=tuple(c.name for c in rec.supers),
        fields=fields,
        field_types=types,
        locs=tuple(_loc(t) for t in rec.locs),
        anonymous=rec.anonymous,
        is_class=rec.is_class,
        template_args=tuple(rec.targs),
        nonconcrete=frozenset(nonconcrete),
        template_arg_info=tuple((n, str(rec.values[n].ty), plain(rec.values[n].value))
                                for n in rec.targs),
    )


def to_keeper(ev, files) -> RecordKeeper:
    """The frozen :class:`RecordKeeper` of evaluator ``ev``'s classes and defs."""
    rk = RecordKeeper(files=tuple(files))
    for c in ev.classes.values():
        rk.add_class(_converted(c))
    for d in ev.defs.values():
        rk.add_def(_converted(d))
    return rk


def _converted(rec) -> Record:
    try:
        return to_record(rec)
    except RecursionError:  # a value nested deeper than the conversion can recurse
        raise too_deep(rec.locs[0] if rec.locs else None) from None
