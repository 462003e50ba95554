"""Bang operators beyond unary and binary: ``!if !foreach !filter !subst !dag !substr !find
!setdagarg !setdagname !range`` (three operands), ``!cond``, ``!foldl``, ``!isa``, ``!exists``.
"""

from __future__ import annotations

from . import types as T
from .ops import OpInit, as_int, check_items, check_string, dag_key, fatal, range_len
from .resolvers import memoized
from .values import (
    UNSET,
    DagInit,
    DefInit,
    IntInit,
    ListInit,
    Resolver,
    ShadowResolver,
    StringInit,
    TypedInit,
    VarInit,
)


class TernOp(OpInit):
    __slots__ = ("op", "a", "b", "c")

    def __init__(self, op, a, b, c, ty):
        self.op = op
        self.a = a
        self.b = b
        self.c = c
        self.ty = ty

    def __str__(self):
        a = self.a.unquoted() if self.op in ("foreach", "filter") else str(self.a)
        return f"!{self.op}({a}, {self.b}, {self.c})"

    @memoized
    def resolve(self, r):
        a = self.a.resolve(r)
        if self.op == "if" and a is not self.a:
            i = as_int(a)
            if i is not None:
                return (self.b if i else self.c).resolve(r)
        b = self.b.resolve(r)
        if self.op in ("foreach", "filter"):
            c = self.c.resolve(ShadowResolver(r, (a.value,) if isinstance(a, StringInit) else ()))
        else:
            c = self.c.resolve(r)
        if a is self.a and b is self.b and c is self.c:
            return self
        return TernOp(self.op, a, b, c, self.ty).fold(r.cur, r.final)

    def fold(self, cur, final=False):  # noqa: C901
        op, a, b, c = self.op, self.a, self.b, self.c
        if op == "if":
            i = as_int(a)
            if i is not None:
                return b if i else c  # llvm-tblgen returns the arm as it is
            return self
        if op == "foreach":
            if isinstance(b, DagInit):
                return _foreach_dag(a, b, c, cur)
            if isinstance(b, ListInit):
                items = [_apply(a, x, c, cur) for x in b.items]
                return ListInit(items, self.ty.elem)
            return self
        if op == "filter":
            if isinstance(b, ListInit):
                out = []
                for x in b.items:
                    k = as_int(_apply(a, x, c, cur))
                    if k is None:
                        return self
                    if k:
                        out.append(x)
                return ListInit(out, self.ty.elem)
            return self
        if op == "subst":
            # llvm-tblgen folds only when all three operands are defs, all three variables or
            # all three strings; `!subst(t, "", s)` with arguments `t`, `s` waits for them.
            if isinstance(c, DefInit) and isinstance(a, DefInit) and isinstance(b, DefInit):
                return b if a.rec is c.rec else c
            if isinstance(c, StringInit) and isinstance(a, StringInit) and \
                    isinstance(b, StringInit):
                if not a.value:
                    return StringInit(c.value)  # llvm-tblgen never returns here
                if len(b.value) > len(a.value):  # only a longer replacement can grow it
                    check_string(len(c.value) + c.value.count(a.value)
                                  * (len(b.value) - len(a.value)), cur)
                return StringInit(c.value.replace(a.value, b.value))
            if isinstance(c, VarInit) and isinstance(a, VarInit) and isinstance(b, VarInit):
                return VarInit(b.name if a.name == c.name else c.name, self.ty)
            return self
        if op == "dag":
            if isinstance(b, ListInit) and (isinstance(c, ListInit) or c is UNSET) and \
                    not a.refs:
                names = c.items if isinstance(c, ListInit) else (UNSET,) * len(b.items)
                if len(names) != len(b.items):
                    raise fatal("!dag argument lists must have the same size", cur)
                args = []
                for v, n in zip(b.items, names):
                    if isinstance(n, StringInit):
                        args.append((v, n.value))
                    elif n is UNSET:
                        args.append((v, None))
                    else:
                        return self
                return DagInit(a, None, args)
            return self
        if op == "substr":
            if isinstance(a, StringInit):
                s, n = as_int(b), as_int(c)
                if s is None or n is None:
                    return self
                if s < 0 or s > len(a.value):
                    raise fatal(f"!substr start position is out of range 0...{len(a.value)}: "
                                f"{s}", cur)
                if n < 0:
                    raise fatal("!substr length must be nonnegative", cur)
                return StringInit(a.value[s:s + n], a.code)
            return self
        if op == "find":
            if isinstance(a, StringInit) and isinstance(b, StringInit):
                s = as_int(c)
                if s is None:
                    return self
                if s < 0 or s > len(a.value):
                    raise fatal(f"!find start position is out of range 0...{len(a.value)}: "
                                f"{s}", cur)
                return IntInit(a.value.find(b.value, s))
            return self
        if op in ("setdagarg", "setdagname"):
            if isinstance(a, DagInit) and isinstance(b, (IntInit, StringInit)):
                i = dag_key(a, b, cur, op)
                args = list(a.args)
                if op == "setdagarg":
                    args[i] = (c, args[i][1])
                elif isinstance(c, StringInit):
                    args[i] = (args[i][0], c.value)
                elif c is UNSET:
                    args[i] = (args[i][0], None)
                else:
                    return self
                return DagInit(a.op, a.op_name, args)
            return self
        if op == "range":
            x, y, s = as_int(a), as_int(b), as_int(c)
            if x is None or y is None or s is None:
                return self
            if s == 0:
                raise fatal("Illegal range: step size cannot be zero", cur)
            check_items(range_len(x, y, s), cur)
            return ListInit([IntInit(i) for i in range(x, y, s)], T.INT)
        return self


def _apply(var, item, expr, cur):
    r = Resolver(cur)
    r.set(var.value, item)
    return expr.resolve(r)


def _foreach_dag(var, d, expr, cur):
    op = _apply(var, d.op, expr, cur)
    args = []
    for v, n in d.args:
        args.append((_foreach_dag(var, v, expr, cur) if isinstance(v, DagInit)
                     else _apply(var, v, expr, cur), n))
    return DagInit(op, None, args)


class CondOp(OpInit):
    __slots__ = ("conds", "vals")

    def __init__(self, conds, vals, ty):
        self.conds = tuple(conds)
        self.vals = tuple(vals)
        self.ty = ty

    def __str__(self):
        return "!cond(" + ", ".join(f"{c}: {v}" for c, v in zip(self.conds, self.vals)) + ")"

    @memoized
    def resolve(self, r):
        cs = [c.resolve(r) for c in self.conds]
        vs = [v.resolve(r) for v in self.vals]
        if all(x is y for x, y in zip(cs, self.conds)) and \
                all(x is y for x, y in zip(vs, self.vals)):
            return self
        return CondOp(cs, vs, self.ty).fold(r.cur, r.final)

    def fold(self, cur, final=False):
        for c, v in zip(self.conds, self.vals):
            i = as_int(c)
            if i is None:
                return self
            if i:
                cv = v.convert(self.ty)
                # llvm-tblgen's fold yields nothing when the value does not convert, which
                # leaves the field unset.
                return UNSET if cv is None else cv
        name = cur.name if cur is not None else ""
        raise fatal(f"{name} does not have any true condition in:{self}", cur)


class FoldOp(OpInit):
    __slots__ = ("start", "lst", "acc", "var", "expr")

    def __init__(self, start, lst, acc, var, expr, ty):
        self.start, self.lst, self.acc, self.var, self.expr = start, lst, acc, var, expr
        self.ty = ty

    def __str__(self):
        return (f"!foldl({self.start}, {self.lst}, {self.acc.value}, {self.var.value}, "
                f"{self.expr})")

    @memoized
    def resolve(self, r):
        s = self.start.resolve(r)
        lst = self.lst.resolve(r)
        e = self.expr.resolve(ShadowResolver(r, (self.acc.value, self.var.value)))
        if s is self.start and lst is self.lst and e is self.expr:
            return self
        return FoldOp(s, lst, self.acc, self.var, e, self.ty).fold(r.cur, r.final)

    def fold(self, cur, final=False):
        if isinstance(self.lst, ListInit):
            acc = self.start
            for x in self.lst.items:
                r = Resolver(cur)
                r.set(self.acc.value, acc)
                r.set(self.var.value, x)
                acc = self.expr.resolve(r)
            return acc
        return self


class IsAOp(OpInit):
    __slots__ = ("check", "expr")

    def __init__(self, check, expr):
        self.check = check
        self.expr = expr
        self.ty = T.INT  # llvm-tblgen types !isa and !exists as int

    def __str__(self):
        return f"!isa<{self.check}>({self.expr})"

    @memoized
    def resolve(self, r):
        e = self.expr.resolve(r)
        return self if e is self.expr else IsAOp(self.check, e).fold(r.cur, r.final)

    def fold(self, cur, final=False):
        e = self.expr
        if isinstance(e, TypedInit):
            et = e.ty
            if et.convertible_to(self.check):
                return IntInit(1)
            if self.check.kind == "record":
                if not self.check.convertible_to(et) or isinstance(e, DefInit):
                    return IntInit(0)
            else:
                return IntInit(0)
        return self


class ExistsOp(OpInit):
    __slots__ = ("check", "expr")

    def __init__(self, check, expr):
        self.check = check
        self.expr = expr
        self.ty = T.INT  # llvm-tblgen types !isa and !exists as int

    def __str__(self):
        return f"!exists<{self.check}>({self.expr})"

    @memoized
    def resolve(self, r):
        e = self.expr.resolve(r)
        if e is self.expr and not r.final:
            return self
        return ExistsOp(self.check, e).fold(r.cur, r.final)

    def fold(self, cur, final=False, keeper=None):
        """As :meth:`UnOp.fold`: ``keeper`` looks up defs where there is no record ``cur``."""
        e = self.expr
        if isinstance(e, StringInit):
            if keeper is None and cur is not None:
                keeper = cur.keeper
            d = keeper.defs.get(e.value) if keeper is not None else None
            if d is not None:
                return IntInit(1 if d.type().is_a(self.check) else 0)
            if cur is not None and e.value == cur.name:
                if not final:
                    return self
                return IntInit(1 if cur.type().is_a(self.check) else 0)
            if final:
                return IntInit(0)
        return self


