"""TableGen values (llvm-tblgen's ``Init`` hierarchy): literals, references and resolution.

A value with ``refs`` false is fully known and resolves to itself, which keeps instantiating
classes cheap. ``str(v)`` is llvm-tblgen's ``getAsString`` (the JSON ``printable``).

>>> str(ListInit((IntInit(1), IntInit(2)), T.INT))
'[1, 2]'
"""

from __future__ import annotations

from . import types as T
from .init import UNSET, Init, UnsetInit  # noqa: F401  (the base values, re-exported)
from .resolvers import memoized


class TypedInit(Init):
    __slots__ = ()

    def convert(self, ty):
        st = self.ty
        if st is ty or st.is_a(ty):
            return self
        if st is T.BIT and ty.kind == "bits" and ty.size == 1:
            return BitsInit((self,))
        return None

    def bit(self, i):
        if self.ty is T.BIT:
            return self
        return VarBitInit(self, i)

    def field_type(self, name):
        ty = self.ty
        if ty is not None and ty.kind == "record":
            for c in ty.classes:
                rv = c.values.get(name)
                if rv is not None:
                    return rv.ty
        return None


class BitInit(TypedInit):
    __slots__ = ("value",)
    ty = T.BIT

    def __init__(self, value):
        self.value = value

    def __str__(self):
        return "1" if self.value else "0"

    def convert(self, ty):
        k = ty.kind
        if k == "bit":
            return self
        if k == "int":
            return IntInit(1 if self.value else 0)
        if k == "bits" and ty.size == 1:
            return BitsInit((self,))
        return None


    def bit(self, i):
        return self


TRUE = BitInit(True)
FALSE = BitInit(False)


def bit_init(v) -> BitInit:
    return TRUE if v else FALSE


def _wrap64(v: int) -> int:
    v &= 0xFFFFFFFFFFFFFFFF
    return v - (1 << 64) if v >> 63 else v


class IntInit(TypedInit):
    __slots__ = ("value",)
    ty = T.INT

    def __init__(self, value):
        self.value = _wrap64(value) if not -(1 << 63) <= value < (1 << 63) else value

    def __str__(self):
        return str(self.value)

    def convert(self, ty):
        k = ty.kind
        if k == "int":
            return self
        v = self.value
        if k == "bit":
            return bit_init(v) if v in (0, 1) else None
        if k == "bits":
            n = ty.size
            if n < 64 and (v >> n) != 0 and (v >> (n - 1)) != -1:
                return None
            return BitsInit(tuple(bit_init((v >> i) & 1) for i in range(n)))
        return None


    def bit(self, i):
        return bit_init((self.value >> i) & 1)


class StringInit(TypedInit):
    __slots__ = ("value", "code")
    ty = T.STRING

    def __init__(self, value, code=False):
        self.value = value
        self.code = code

    def __str__(self):
        return f"[{{{self.value}}}]" if self.code else f'"{self.value}"'

    def unquoted(self):
        return self.value

    def convert(self, ty):
        return self if ty.kind == "string" else None


    def __eq__(self, other):
        return isinstance(other, StringInit) and other.value == self.value

    def __hash__(self):
        return hash(self.value)


class BitsInit(TypedInit):
    __slots__ = ("bits", "ty", "refs")

    def __init__(self, bits):
        bits = self.bits = tuple(bits)
        self.ty = T.BITS(len(bits))
        # A plain loop: X86 makes ~200k of these in its final resolution, and a generator
        # under any() costs more than the scan itself.
        for b in bits:
            if b.refs:
                self.refs = True
                break
        else:
            self.refs = False

    def __str__(self):
        return "{ " + ", ".join(str(b) for b in reversed(self.bits)) + " }"

    def bit(self, i):
        return self.bits[i]

    def concrete(self):
        # Without references every bit is a known bit or `?`: concrete, and not nested (X86
        # walked 4.5M bits of new defs' bits values here)
        return not self.refs or all(b.concrete() for b in self.bits)

    def complete(self):
        return all(b.complete() for b in self.bits)

    def convert(self, ty):
        k = ty.kind
        if k == "bit":
            return self.bits[0] if len(self.bits) == 1 else None
        if k == "bits":
            return self if ty.size == len(self.bits) else None
        if k == "int":
            v = 0
            for i, b in enumerate(self.bits):
                if not isinstance(b, BitInit):
                    return None
                if b.value:
                    v |= 1 << i
            return IntInit(v)
        return None


    def resolve(self, r):
        if not self.refs:
            return self
        new = []
        changed = False
        keep_unset = r.keep_unset
        # Runs of bits of one variable (`let Inst{7-0} = opc`) resolve it once; a variable
        # that resolves to itself keeps its bits as they are (bit() would make equal copies,
        # and a new BitsInit of them: each instantiation of a class, before the fields it
        # mentions are known).
        cache_ref = cache_val = cache_bits = None
        for b in self.bits:
            if not b.refs:
                new.append(b)
                continue
            if type(b) is VarBitInit:
                var = b.var
                if var is not cache_ref:
                    cache_ref = var
                    cache_val = var.resolve(r)
                    cache_bits = cache_val.bits if type(cache_val) is BitsInit else None
                if cache_val is var:
                    new.append(b)
                    continue
                nb = cache_bits[b.index] if cache_bits is not None else cache_val.bit(b.index)
            else:
                nb = b.resolve(r).bit(0)
            if nb is not b:
                if nb is UNSET and keep_unset:
                    nb = b
                else:
                    changed = True
            new.append(nb)
        return BitsInit(new) if changed else self


class ListInit(TypedInit):
    __slots__ = ("items", "ty", "refs")

    def __init__(self, items, elem_ty):
        self.items = tuple(items)
        self.ty = elem_ty.list()
        self.refs = any(x.refs for x in self.items)

    @property
    def elem_ty(self):
        return self.ty.elem

    def __str__(self):
        return "[" + ", ".join(str(x) for x in self.items) + "]"

    def concrete(self):
        return all(x.concrete() for x in self.items)

    def complete(self):
        return all(x.complete() for x in self.items)

    def convert(self, ty):
        if ty is self.ty:
            return self
        if ty.kind != "list":
            return None
        et = ty.elem
        out = []
        changed = False
        for x in self.items:
            c = x.convert(et)
            if c is None:
                return None
            changed |= c is not x
            out.append(c)
        return ListInit(out, et) if changed else self

    @memoized
    def resolve(self, r):
        if not self.refs:
            return self
        new = [x.resolve(r) for x in self.items]
        if all(a is b for a, b in zip(new, self.items)):
            return self
        return ListInit(new, self.ty.elem)


class DagInit(TypedInit):
    __slots__ = ("op", "op_name", "args", "refs")
    ty = T.DAG

    def __init__(self, op, op_name, args):
        self.op = op
        self.op_name = op_name
        self.args = tuple(args)
        self.refs = op.refs or any(a.refs for a, _ in self.args)

    def __str__(self):
        s = "(" + str(self.op)
        if self.op_name is not None:
            s += ":" + self.op_name
        if self.args:
            s += " " + ", ".join(str(a) + (":$" + n if n is not None else "")
                                 for a, n in self.args)
        return s + ")"

    def concrete(self):
        return self.op.concrete() and all(a.concrete() for a, _ in self.args)

    def complete(self):
        return self.op.complete() and all(a.complete() for a, _ in self.args)

    def convert(self, ty):
        return self if ty.kind == "dag" else None


    @memoized
    def resolve(self, r):
        if not self.refs:
            return self
        op = self.op.resolve(r)
        args = [(a.resolve(r), n) for a, n in self.args]
        if op is self.op and all(x[0] is y[0] for x, y in zip(args, self.args)):
            return self
        return DagInit(op, self.op_name, args)


class DefInit(TypedInit):
    __slots__ = ("rec",)

    def __init__(self, rec):
        self.rec = rec

    @property
    def ty(self):
        return self.rec.type()

    def __str__(self):
        return self.rec.name

    def convert(self, ty):
        if ty.kind == "record" and self.rec.type().convertible_to(ty):
            return self
        return None


    def field_type(self, name):
        rv = self.rec.values.get(name)
        return rv.ty if rv is not None else None


class VarInit(TypedInit):
    __slots__ = ("name", "ty")
    refs = True

    def __init__(self, name, ty):
        self.name = name
        self.ty = ty

    def __str__(self):
        return self.name

    def concrete(self):
        return False

    def resolve(self, r):
        v = r.resolve(self.name)
        return self if v is None else v


class VarBitInit(TypedInit):
    __slots__ = ("var", "index")
    refs = True
    ty = T.BIT

    def __init__(self, var, index):
        self.var = var
        self.index = index

    def __str__(self):
        return f"{self.var}{{{self.index}}}"

    def concrete(self):
        return False

    def resolve(self, r):
        v = self.var.resolve(r)
        if v is not self.var:
            return v.bit(self.index)
        return self


class FieldInit(TypedInit):
    """``rec.field``; folds once ``rec`` is a def whose field value is concrete."""

    __slots__ = ("rec", "field", "ty")
    refs = True

    def __init__(self, rec, field, ty):
        self.rec = rec
        self.field = field
        self.ty = ty

    def __str__(self):
        return f"{self.rec}.{self.field}"

    def concrete(self):
        return False

    @memoized
    def resolve(self, r):
        nr = self.rec.resolve(r)
        if nr is not self.rec:
            return FieldInit(nr, self.field, self.ty).fold(r.cur)
        return self

    def fold(self, cur):
        if isinstance(self.rec, DefInit):
            d = self.rec.rec
            if d is cur:
                from .errors import TdError

                loc = cur.locs[0] if cur.locs else None
                raise _err(f"Attempting to access field '{self.field}' of '{self.rec}' is a "
                           "forbidden self-reference", loc) if loc else TdError("self-reference")
            v = d.values[self.field].value
            if v.concrete():
                return v
        return self


def _err(msg, loc):
    from .errors import TdError

    if loc is None:
        return TdError(msg)
    return TdError(msg, loc.file, loc.line, loc.column, loc.stack)


# The resolvers live in .resolvers; re-exported here for the value classes' users.
from .resolvers import RecordResolver, Resolver, ShadowResolver, TrackResolver  # noqa: E402,F401
