"""Records while they are being built (llvm-tblgen's ``Record``/``RecordVal``), mutable.

The evaluator fills these in; :mod:`.convert` turns the finished ones into the frozen
contract of :mod:`.records`.
"""

from __future__ import annotations

import itertools

from . import types as T
from .ops import cast_value
from .values import UNSET, BitsInit, RecordResolver

_serials = itertools.count(1)  # Rec.serial: unique for the process, never reused


class RecordVal:
    """One field of a record. A record's fields may be shared with the class they came from
    (``owner`` is the ``serial`` of the record that may change it, not the record: that would
    be a reference cycle, left to the cycle collector): a def copies a class's fields when it
    subclasses it, and most are never changed after (X86: 4M copies, one in ten of them ever
    written), so a field is copied only when written, through :meth:`Rec.own`."""

    __slots__ = ("name", "ty", "value", "targ", "field", "owner")

    def __init__(self, name, ty, value=UNSET, targ=False, field=False):
        self.name = name
        self.ty = ty
        self.value = value
        self.targ = targ
        self.field = field
        self.owner = 0  # set by Rec.add_value (serials start at 1)
        if value is UNSET and ty.kind == "bits":
            self.value = BitsInit([UNSET] * ty.size)

    def copy(self, owner: int = 0):
        rv = RecordVal.__new__(RecordVal)
        rv.name, rv.ty, rv.value, rv.targ, rv.field, rv.owner = (
            self.name, self.ty, self.value, self.targ, self.field, owner)
        return rv

    def set(self, v) -> bool:
        """Store ``v`` cast to this field's type; False when it cannot be cast."""
        ty = self.ty
        c = cast_value(v, ty)
        if c is None:
            return False
        if ty.kind == "bits" and not isinstance(c, BitsInit):
            c = BitsInit([c.bit(i) for i in range(ty.size)])
        self.value = c
        return True


class Rec:
    __slots__ = ("name", "keeper", "locs", "is_class", "anonymous", "values", "targs", "supers",
                 "super_set", "assertions", "dumps", "_type", "direct", "defref", "serial", "plan")

    def __init__(self, name, keeper, locs, is_class=False, anonymous=False):
        self.serial = next(_serials)  # what its own fields' RecordVal.owner holds
        self.name = name
        self.keeper = keeper
        self.locs = list(locs)
        self.is_class = is_class
        self.anonymous = anonymous
        self.values: dict[str, RecordVal] = {}
        self.targs: list[str] = []
        self.supers: list[Rec] = []
        self.super_set: set = set()
        self.assertions: list = []
        self.dumps: list = []
        self._type = None
        self.direct: list[Rec] = []
        self.defref = None  # its records.DefRef, made by the conversion (see convert.plain)
        # What a record subclassing this class copies (RecordStatements.class_plan), made at
        # the first such use: X86 subclasses ~200k times, mostly a handful of classes with
        # ~100 fields each. Every change to the fields drops it (add_value, own, resolve).
        self.plan = None

    def __repr__(self):
        return f"<Rec {self.name}>"

    def is_subclass_of(self, cls) -> bool:
        return cls in self.super_set

    def add_super(self, cls):
        self.supers.append(cls)
        self.super_set.add(cls)
        self._type = None

    def direct_superclasses(self):
        out = []
        scs = self.supers
        i = len(scs)
        while i > 0:
            sc = scs[i - 1]
            out.append(sc)
            i -= 1 + len(sc.supers)
        return out

    def type(self):
        if self._type is None:
            self._type = T.record_ty(self.direct_superclasses())
        return self._type

    def add_value(self, rv):
        self.plan = None
        rv.owner = self.serial
        self.values[rv.name] = rv

    def own(self, name) -> RecordVal | None:
        """Field ``name`` to change (copied first if it is shared with a class), or None.

        Every change to a field goes through here: a shared field changed in place would
        change the class and every record sharing it."""
        self.plan = None
        rv = self.values.get(name)
        if rv is not None and rv.owner != self.serial:
            rv = self.values[name] = rv.copy(self.serial)
        return rv

    def resolve(self, r, only=None):
        values = self.values
        # A field another one looked up is resolved already (RecordResolver.whole)
        whole = r.whole if type(r) is RecordResolver else ()
        for rv in (values.values() if only is None else [values[n] for n in only]):
            v = rv.value
            if v.refs:
                nv = r.cache[rv.name] if rv.name in whole else v.resolve(r)
                if nv is v:
                    continue
                self.plan = None
                if rv.owner != self.serial:
                    # replacing the value of a key while iterating is allowed (same size)
                    rv = values[rv.name] = rv.copy(self.serial)
                if not rv.set(nv):
                    from .ops import fatal

                    tys = f"of type '{nv.ty}' " if nv.ty is not None else ""
                    raise fatal(f"Invalid value {tys}found when setting field '{rv.name}' of "
                                f"type '{rv.ty}' after resolving references: {nv.unquoted()}",
                                self)
        if self.assertions:
            self.assertions = [(loc, c.resolve(r), m.resolve(r)) for loc, c, m in self.assertions]
        if self.dumps:
            self.dumps = [(loc, m.resolve(r)) for loc, m in self.dumps]

    def print_text(self) -> str:
        """The record as ``llvm-tblgen --print-records`` shows it (``!repr`` of a def)."""
        from .values import StringInit

        head = self.name
        if self.targs:
            parts = []
            for n in self.targs:
                rv = self.values[n]
                parts.append(f"{_print_type(rv)} {n} = {rv.value}")
            head += "<" + ", ".join(parts) + ">"
        head += " {"
        if self.supers:
            head += "\t//" + "".join(" " + c.name for c in self.supers)
        out = [head + "\n"]
        for nonconcrete in (True, False):
            for rv in self.values.values():
                if rv.targ or rv.field != nonconcrete:
                    continue
                out.append(f"  {'field ' if rv.field else ''}{_print_type(rv)} {rv.name} = "
                           f"{rv.value};\n")
        out.append("}\n")
        _ = StringInit
        return "".join(out)

    def resolve_self(self, final=True, name=None):
        self.resolve(RecordResolver(self, name, final))


def _print_type(rv) -> str:
    from .values import StringInit

    if rv.ty is T.STRING and isinstance(rv.value, StringInit) and rv.value.code:
        return "code"
    return str(rv.ty)
