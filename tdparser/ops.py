"""Bang operators as values (llvm-tblgen's ``OpInit``s): each folds when its operands allow.

``fold(cur, final)`` returns a simpler value or the operator itself; ``cur`` is the record
being resolved (for self-references and error locations), ``final`` marks the last resolve.
"""

from __future__ import annotations

from . import types as T
from .errors import TdError
from .limits import MAX_ITEMS, MAX_STRING, check_count
from .resolvers import memoized
from .values import (
    UNSET,
    BitInit,
    BitsInit,
    DagInit,
    DefInit,
    Init,
    IntInit,
    ListInit,
    StringInit,
    TrackResolver,
    TypedInit,
    VarBitInit,
    bit_init,
)


def fatal(msg, cur) -> TdError:
    loc = cur.locs[0] if cur is not None and cur.locs else None
    if loc is None:
        return TdError(msg)
    return TdError(msg, loc.file, loc.line, loc.column, loc.stack)


def as_int(v):
    """``v`` as a Python int, or None when it does not convert to an int.

    >>> as_int(IntInit(5)), as_int(bit_init(1)), as_int(StringInit("5"))
    (5, 1, None)
    """
    t = type(v)
    if t is IntInit:  # most calls (X86: 1.5M, from !if, !eq, arithmetic): what convert gives
        return v.value
    if t is BitInit:
        return 1 if v.value else 0
    c = v.convert(T.INT)
    return c.value if isinstance(c, IntInit) else None


class OpInit(TypedInit):
    __slots__ = ("ty",)
    refs = True

    def concrete(self):
        return False

    def bit(self, i):
        if self.ty is T.BIT:
            return self
        return VarBitInit(self, i)


def cast_value(v: Init, ty):
    """``v`` converted to type ``ty`` as an assignment or ``!cast`` allows, or None if it cannot be.

    A value of another convertible type becomes a ``!cast`` operator, folded when it can be.

    >>> str(cast_value(IntInit(3), T.BITS(2))), cast_value(IntInit(3), T.STRING)
    ('{ 1, 1 }', None)
    """
    if not isinstance(v, TypedInit):
        return v.convert(ty)
    st = v.ty
    if st is ty or st.is_a(ty):
        return v
    if st is T.BIT and ty.kind == "bits" and ty.size == 1:
        return BitsInit((v,))
    if not st.convertible_to(ty):
        return None
    return UnOp("cast", v, ty).fold(None, False)


class UnOp(OpInit):
    __slots__ = ("op", "arg")

    def __init__(self, op, arg, ty):
        self.op = op
        self.arg = arg
        self.ty = ty

    def __str__(self):
        op = self.op
        if op in ("cast", "getdagop"):
            return f"!{op}<{self.ty}>({self.arg})"
        return f"!{op}({self.arg})"

    @memoized
    def resolve(self, r):
        a = self.arg.resolve(r)
        if a is self.arg and not (r.final and self.op == "cast"):
            return self
        return UnOp(self.op, a, self.ty).fold(r.cur, r.final)

    def fold(self, cur, final=False, keeper=None):  # noqa: C901
        """The folded value; ``keeper`` (the evaluator) looks up defs where there is no
        current record ``cur`` (a ``defm``'s arguments, a record name)."""
        op, a, ty = self.op, self.arg, self.ty
        if op == "cast":
            k = ty.kind
            if k == "string":
                if isinstance(a, StringInit):
                    return a
                if isinstance(a, DefInit):
                    return StringInit(str(a))
                i = as_int(a)
                if i is not None:
                    return StringInit(str(i))
            elif k == "record" and isinstance(a, StringInit):
                if keeper is None and cur is not None:
                    keeper = cur.keeper
                d = keeper.defs.get(a.value) if keeper is not None else None
                if d is None and cur is not None and a.value == cur.name:
                    if not final:
                        return self
                    d = cur
                if d is None:
                    if final:
                        raise fatal(f"Undefined reference to record: '{a.value}'", cur)
                    return self
                di = DefInit(d)
                if not di.ty.is_a(ty):
                    raise fatal(f"Expected type '{ty}', got '{di.ty}' in: {self}", cur)
                return di
            n = a.convert(ty)
            return self if n is None else n
        if op == "not":
            i = as_int(a)
            return self if i is None else bit_init(i == 0)
        if op == "head" or op == "tail":
            if isinstance(a, ListInit):
                if not a.items:
                    raise fatal(f"Illegal operation: !{op} of empty list", cur)
                return a.items[0] if op == "head" else ListInit(a.items[1:], a.ty.elem)
            return self
        if op == "size" or op == "empty":
            if isinstance(a, ListInit):
                n = len(a.items)
            elif isinstance(a, DagInit):
                n = len(a.args)
            elif isinstance(a, StringInit):
                n = len(a.value)
            else:
                return self
            return IntInit(n) if op == "size" else bit_init(n == 0)
        if op == "getdagop":
            if isinstance(a, DagInit):
                o = a.op
                if isinstance(o, DefInit) and not o.ty.is_a(ty) and ty.kind == "record" \
                        and ty.classes:
                    raise fatal(f"Expected type '{ty}', got '{o.ty}' in: {self}", cur)
                return o
            return self
        if op == "logtwo":
            i = as_int(a)
            if i is None:
                return self
            if i <= 0:
                raise fatal("Illegal operation: logtwo is undefined on arguments less than "
                            "or equal to 0", cur)
            return IntInit(i.bit_length() - 1)
        if op in ("tolower", "toupper"):
            if isinstance(a, StringInit):
                s = a.value.lower() if op == "tolower" else a.value.upper()
                return StringInit(s)  # llvm-tblgen drops the code format here
            return self
        if op == "repr":
            if isinstance(a, DefInit):
                return StringInit(a.rec.print_text())
            if a.concrete():
                return StringInit(str(a))
            return self
        return self


_ARITH = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
    # llvm-tblgen shifts int64s with C++'s `<<`/`>>`, which x86 does by the count mod 64:
    # !shl(1, 64) is 1 and !srl(-1, -1) is 1 (a shift by 63).
    "shl": lambda a, b: a << (b & 63),
    "sra": lambda a, b: a >> (b & 63),
    "srl": lambda a, b: (a & 0xFFFFFFFFFFFFFFFF) >> (b & 63),
}
_CMP = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
}


def compare(op, lhs, rhs):
    li = as_int(lhs)
    ri = as_int(rhs)
    if li is not None and ri is not None:
        return _CMP[op](li, ri)
    if isinstance(lhs, StringInit) and isinstance(rhs, StringInit):
        return _CMP[op](lhs.value, rhs.value)
    if op in ("eq", "ne") and isinstance(lhs, DefInit) and isinstance(rhs, DefInit):
        return (lhs.rec is rhs.rec) == (op == "eq")
    return None


def dag_key(d, key, cur, what):
    if isinstance(key, IntInit):
        i = key.value
        if not 0 <= i < len(d.args):
            raise fatal(f"!{what} index {i} is out of range (dag has {len(d.args)} arguments)",
                        cur)
        return i
    if isinstance(key, StringInit):
        for i, (_, n) in enumerate(d.args):
            if n == key.value:
                return i
        raise fatal(f"!{what} key '{key.value}' is not found in dag '{d}'", cur)
    return None


class BinOp(OpInit):
    __slots__ = ("op", "lhs", "rhs")

    def __init__(self, op, lhs, rhs, ty):
        self.op = op
        self.lhs = lhs
        self.rhs = rhs
        self.ty = ty

    def __str__(self):
        op = self.op
        if op == "listelem":
            return f"{self.lhs}[{self.rhs}]"
        if op == "listslice":
            return f"{self.lhs}[{self.rhs}]"
        if op == "getdagarg":
            return f"!getdagarg<{self.ty}>({self.lhs}, {self.rhs})"
        name = "!con" if op == "concat" else "!" + op
        return f"{name}({self.lhs}, {self.rhs})"

    @memoized
    def resolve(self, r):
        lhs = self.lhs.resolve(r)
        rhs = self.rhs.resolve(r)
        if lhs is self.lhs and rhs is self.rhs:
            return self
        return BinOp(self.op, lhs, rhs, self.ty).fold(r.cur, r.final)

    def fold(self, cur, final=False):  # noqa: C901
        op, lhs, rhs = self.op, self.lhs, self.rhs
        f = _ARITH.get(op)
        if f is not None:
            a, b = as_int(lhs), as_int(rhs)
            if a is None or b is None:
                return self
            return IntInit(f(a, b))
        if op == "div":
            a, b = as_int(lhs), as_int(rhs)
            if a is None or b is None:
                return self
            if b == 0:
                raise fatal("Illegal operation: division by zero", cur)
            if a == -(1 << 63) and b == -1:
                raise fatal("Illegal operation: INT64_MIN / -1", cur)
            q = abs(a) // abs(b)
            return IntInit(q if (a >= 0) == (b >= 0) else -q)
        if op in _CMP:
            res = compare(op, lhs, rhs)
            return self if res is None else bit_init(res)
        if op == "strconcat":
            if isinstance(lhs, StringInit) and isinstance(rhs, StringInit):
                check_string(len(lhs.value) + len(rhs.value), cur)
                return StringInit(lhs.value + rhs.value, lhs.code or rhs.code)
            return self
        if op == "listconcat":
            if isinstance(lhs, ListInit) and isinstance(rhs, ListInit):
                check_items(len(lhs.items) + len(rhs.items), cur)
                return ListInit(lhs.items + rhs.items, lhs.ty.elem)
            return self
        if op == "listsplat":
            n = as_int(rhs)
            if n is None or not isinstance(lhs, TypedInit):
                return self
            if n < 0:
                raise fatal("Illegal operation: !listsplat count is negative", cur)
            check_items(n, cur)
            return ListInit((lhs,) * n, lhs.ty)
        if op == "listremove":
            if isinstance(lhs, ListInit) and isinstance(rhs, ListInit):
                drop = rhs.items
                if drop and all(type(y) is IntInit for y in drop):
                    # A set instead of comparing every pair (n * m): same result, as only
                    # an int-convertible item can equal an int.
                    ints = {y.value for y in drop}
                    keep = [x for x in lhs.items if as_int(x) not in ints]
                elif drop and all(type(y) is StringInit for y in drop):
                    strs = {y.value for y in drop}
                    keep = [x for x in lhs.items
                            if not (isinstance(x, StringInit) and x.value in strs)]
                else:
                    keep = [x for x in lhs.items
                            if not any(compare("eq", x, y) for y in rhs.items)]
                return ListInit(keep, lhs.ty.elem)
            return self
        if op == "listelem":
            i = as_int(rhs)
            if isinstance(lhs, ListInit) and i is not None:
                if not 0 <= i < len(lhs.items):
                    return self  # llvm-tblgen leaves it unfolded
                return lhs.items[i]
            return self
        if op == "listslice":
            if isinstance(lhs, ListInit) and isinstance(rhs, ListInit):
                out = []
                for x in rhs.items:
                    i = as_int(x)
                    if i is None:
                        return self
                    if not 0 <= i < len(lhs.items):
                        return self
                    out.append(lhs.items[i])
                return ListInit(out, lhs.ty.elem)
            return self
        if op == "interleave":
            if isinstance(lhs, ListInit) and isinstance(rhs, StringInit):
                parts = []
                code = False
                for n, x in enumerate(lhs.items):
                    if isinstance(x, StringInit):
                        parts.append(x.value)
                        code = code or (x.code and n > 0)  # llvm skips the first's format
                    else:
                        i = as_int(x)
                        if i is None:
                            return self
                        parts.append(str(i))
                check_string(sum(map(len, parts)) + len(rhs.value) * max(len(parts) - 1, 0),
                              cur)
                return StringInit(rhs.value.join(parts), code)
            return self
        if op == "concat":
            if isinstance(lhs, DagInit) and isinstance(rhs, DagInit):
                lo, ro = lhs.op, rhs.op
                if (not isinstance(lo, DefInit) and lo is not UNSET) or \
                        (not isinstance(ro, DefInit) and ro is not UNSET):
                    return self
                if isinstance(lo, DefInit) and isinstance(ro, DefInit) and lo.rec is not ro.rec:
                    raise fatal(f"Concatenated Dag operators do not match: '{lhs}' vs. '{rhs}'",
                                None)
                o = lo if isinstance(lo, DefInit) else ro
                check_items(len(lhs.args) + len(rhs.args), cur)
                return DagInit(o, None, lhs.args + rhs.args)
            return self
        if op == "getdagarg":
            if isinstance(lhs, DagInit) and isinstance(rhs, (IntInit, StringInit)):
                i = dag_key(lhs, rhs, cur, "getdagarg")
                v = lhs.args[i][0]
                if v is UNSET:
                    return v
                c = v.convert(self.ty)
                if c is None:
                    raise fatal(f"Expected type '{self.ty}', got '{v.ty}' in: {self}", cur)
                return c
            return self
        if op == "getdagname":
            if isinstance(lhs, DagInit) and isinstance(rhs, (IntInit, StringInit)):
                i = dag_key(lhs, rhs, cur, "getdagname")
                n = lhs.args[i][1]
                return UNSET if n is None else StringInit(n)
            return self
        if op == "setdagop":
            if isinstance(lhs, DagInit) and isinstance(rhs, DefInit):
                return DagInit(rhs, lhs.op_name, lhs.args)
            return self
        if op == "range":
            a, b = as_int(lhs), as_int(rhs)
            if a is None or b is None:
                return self
            check_items(range_len(a, b, 1), cur)
            return ListInit([IntInit(i) for i in range(a, b)], T.INT)
        return self


def range_len(start: int, stop: int, step: int) -> int:
    """``len(range(start, stop, step))`` for any ints (``len`` of a range raises
    OverflowError past ``sys.maxsize``).

    >>> range_len(0, 10, 3), range_len(5, 0, -2), range_len(0, 1 << 80, 1) == 1 << 80
    (4, 3, True)
    """
    if step > 0:
        return max(0, (stop - start + step - 1) // step)
    return max(0, (start - stop - step - 1) // -step)


def check_items(n: int, cur) -> None:
    if n > MAX_ITEMS:
        raise check_count(n, MAX_ITEMS, "elements in a list or dag", None).place(_rec_loc(cur))


def check_string(n: int, cur) -> None:
    if n > MAX_STRING:
        raise check_count(n, MAX_STRING, "characters in a string", None).place(_rec_loc(cur))


def _rec_loc(cur):
    """Where record ``cur`` is defined (None without a record)."""
    return cur.locs[0] if cur is not None and cur.locs else None


class VarDefInit(TypedInit):
    """``Class<args>`` in a value: an anonymous record, made once per distinct argument list."""

    __slots__ = ("cls", "args", "ty", "refs")

    def __init__(self, cls, args):
        self.cls = cls
        self.args = tuple(args)  # of (targ_name, is_named, value)
        self.ty = T.record_ty([cls])
        self.refs = True

    def __str__(self):
        # llvm-tblgen 19 prints each argument as `index: value` or `"Class:name": value`.
        parts = []
        targs = self.cls.targs
        for name, named, v in self.args:
            key = f'"{name}"' if named else str(targs.index(name))
            parts.append(f"{key}: {v}")
        return f"{self.cls.name}<" + ", ".join(parts) + ">"

    def concrete(self):
        return False

    @memoized
    def resolve(self, r):
        tr = TrackResolver(r)
        new = [(n, k, v.resolve(tr)) for n, k, v in self.args]
        if all(x[2] is y[2] for x, y in zip(new, self.args)):
            return self
        nv = VarDefInit(self.cls, new)
        if not tr.unresolved and not any(v.refs for _, _, v in new):
            return nv.instantiate()
        return nv

    def fold(self):
        if any(v.refs for _, _, v in self.args):
            return self
        return self.instantiate()

    def instantiate(self):
        return self.cls.keeper.instantiate(self.cls, self.args)


class LateVarDefInit(VarDefInit):
    """``Class<args>`` with known arguments that llvm-tblgen would only learn when it resolves
    a prototype (they mention a loop iterator or a multiclass argument there): made, and
    numbered, the first time it is resolved, in the order the record's fields are resolved,
    not when its arguments are read (X86's ``X86VectorVTInfo<4, EltVT32, VR128X>`` arguments of
    a defm in a multiclass; RISCV's ``SubRegSet<n, m>`` in a loop). One never resolved is never
    made, as in llvm-tblgen (an argument no field uses)."""

    __slots__ = ()

    @memoized
    def resolve(self, r):
        tr = TrackResolver(r)
        new = [(n, k, v.resolve(tr)) for n, k, v in self.args]
        if not tr.unresolved and not any(v.refs for _, _, v in new):
            return self.cls.keeper.instantiate(self.cls, new)
        if all(x[2] is y[2] for x, y in zip(new, self.args)):
            return self
        return LateVarDefInit(self.cls, new)

    def fold(self):
        return self

