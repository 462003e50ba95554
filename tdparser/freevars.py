"""Which variables a value mentions, so that resolving can skip the values it cannot change.

A class's fields are resolved with its template arguments each time a record subclasses it
(llvm-tblgen resolves the whole record there). Under such a resolver a value that mentions
none of its names comes back as itself: every value's ``resolve`` returns the value itself
when its parts come back unchanged. The one exception is a :class:`~.ops.LateVarDefInit`,
which makes its record the first time it is resolved at all; :func:`free_names` answers
``None`` (resolve it) for a value holding one, and for any value of a kind it does not know.
X86 resolves ~1M such fields while building its records; most mention no argument (the
``TSFlags`` bits of its instruction classes mention only other fields).

>>> from . import types as T
>>> from .values import ListInit, VarInit, IntInit
>>> sorted(free_names(ListInit([VarInit("C:n", T.INT), IntInit(1)], T.INT), {}))
['C:n']
"""

from __future__ import annotations

from .ops import BinOp, UnOp, VarDefInit
from .ternary import CondOp, ExistsOp, FoldOp, IsAOp, TernOp
from .values import BitsInit, DagInit, FieldInit, ListInit, VarBitInit, VarInit

_EMPTY: frozenset = frozenset()


def _parts(v):
    """The values directly inside ``v``, or None for a kind not listed here."""
    t = type(v)
    if t is BitsInit:
        return v.bits
    if t is VarBitInit:
        return (v.var,)
    if t is FieldInit:
        return (v.rec,)
    if t is ListInit:
        return v.items
    if t is BinOp:
        return (v.lhs, v.rhs)
    if t is UnOp:
        return (v.arg,)
    if t is TernOp:
        return (v.a, v.b, v.c)
    if t is DagInit:
        return (v.op, *[a for a, _ in v.args])
    if t is VarDefInit:
        return [a for _, _, a in v.args]
    if t is CondOp:
        return (*v.conds, *v.vals)
    if t is FoldOp:
        return (v.start, v.lst, v.expr)
    if t is IsAOp or t is ExistsOp:
        return (v.expr,)
    # LateVarDefInit (a subclass of VarDefInit: types are compared exactly here), or a kind
    # whose resolve may change it otherwise: resolve it
    return None


def free_names(v, memo: dict) -> frozenset | None:
    """The names of the variables ``v`` mentions (bound ones of ``!foreach``/``!foldl``
    included: more names only means more resolving), or None when resolving ``v`` may
    change it whatever the resolver maps. ``memo`` (id -> (value, answer)) must live no
    longer than the values (the evaluator keeps it).

    >>> from . import types as T
    >>> from .values import IntInit
    >>> free_names(IntInit(3), {})
    frozenset()
    """
    if not v.refs:
        return _EMPTY
    if type(v) is VarInit:
        return frozenset((v.name,))
    got = memo.get(id(v))
    if got is not None and got[0] is v:
        return got[1]
    parts = _parts(v)
    out: frozenset | None
    if parts is None:
        out = None
    else:
        names: set = set()
        for p in parts:
            if not p.refs:
                continue
            if type(p) is VarInit:
                names.add(p.name)
                continue
            sub = free_names(p, memo)
            if sub is None:
                names = None
                break
            names |= sub
        out = None if names is None else frozenset(names)
    memo[id(v)] = (v, out)
    return out

