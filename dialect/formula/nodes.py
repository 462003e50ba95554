"""The nodes of the scalar expression IR (:class:`Expr` and its kinds) and the op names each
kind admits; :mod:`.expr` adds the builders and the tree utilities and is what users import.

>>> Input(0) + 1
add(in0, 1)
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from tdflow.dialect.element_types import DTYPE_NAMES

from tdflow.core.valueclass import value_class

__all__ = ["Scalar", "TRIG_OPS", "FLOAT_UNARY_OPS", "PREDICATE_UNARY_OPS", "BITWISE_UNARY_OPS", "BITWISE_BINARY_OPS", "UNARY_OPS", "ARITH_BINARY_OPS", "COMPARE_OPS", "LOGICAL_BINARY_OPS", "BINARY_OPS", "INT_ONLY_OPS", "CAST_DTYPES", "as_expr", "Expr", "Input", "Attr", "Const", "Unary", "Binary", "Select", "Cast",
           "transform"]

Scalar = bool | int | float

# Operator vocabulary. Unary "float" functions promote integer inputs to a float type.
TRIG_OPS = frozenset({"sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
                      "acosh", "atanh"})
FLOAT_UNARY_OPS = frozenset({"exp", "log", "sqrt", "rsqrt", "tanh", "erf", "floor", "ceil",
                             "round"}) | TRIG_OPS
# Tests of a float value giving i1 (an integer has no NaN or infinity, so they take floats).
PREDICATE_UNARY_OPS = frozenset({"isnan", "isinf"})
# Bit operations: integer (and, except shifts, i1) operands only; no float meaning.
BITWISE_UNARY_OPS = frozenset({"bitwise_not"})
BITWISE_BINARY_OPS = frozenset({"bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
                                "right_shift"})
UNARY_OPS = (frozenset({"neg", "abs", "sign", "not"}) | FLOAT_UNARY_OPS | PREDICATE_UNARY_OPS
             | BITWISE_UNARY_OPS)
# "mod" is C's remainder (fmod for floats, truncated for integers, x % 0 == 0 for integers);
# "floor_mod" is Python's (the sign of the divisor, for floats too; x floor_mod 0 == 0 for
# integers).
ARITH_BINARY_OPS = frozenset({"add", "sub", "mul", "div", "mod", "floor_mod", "max", "min",
                              "pow"})
COMPARE_OPS = frozenset({"lt", "le", "gt", "ge", "eq", "ne"})
LOGICAL_BINARY_OPS = frozenset({"and", "or", "xor"})
BINARY_OPS = ARITH_BINARY_OPS | COMPARE_OPS | LOGICAL_BINARY_OPS | BITWISE_BINARY_OPS
# Ops without a float meaning: a formula using one admits integer (and maybe i1) types only.
INT_ONLY_OPS = BITWISE_UNARY_OPS | BITWISE_BINARY_OPS
CAST_DTYPES = frozenset(DTYPE_NAMES)  # every element type (the table in element_types.py)


def as_expr(value: Expr | Scalar) -> Expr:
    """Wrap a Python number as :class:`Const`; pass expressions through."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool | int | float):
        return Const(value)
    raise TypeError(f"expected an Expr or a Python number, got {type(value).__name__}")


@value_class(frozen=True, slots=True)
class Expr:
    """Base of the expression nodes; arithmetic operators build new nodes."""

    def __add__(self, o: Expr | Scalar) -> Expr:
        return Binary("add", self, as_expr(o))

    def __radd__(self, o: Scalar) -> Expr:
        return Binary("add", as_expr(o), self)

    def __sub__(self, o: Expr | Scalar) -> Expr:
        return Binary("sub", self, as_expr(o))

    def __rsub__(self, o: Scalar) -> Expr:
        return Binary("sub", as_expr(o), self)

    def __mul__(self, o: Expr | Scalar) -> Expr:
        return Binary("mul", self, as_expr(o))

    def __rmul__(self, o: Scalar) -> Expr:
        return Binary("mul", as_expr(o), self)

    def __truediv__(self, o: Expr | Scalar) -> Expr:
        return Binary("div", self, as_expr(o))

    def __rtruediv__(self, o: Scalar) -> Expr:
        return Binary("div", as_expr(o), self)

    def __mod__(self, o: Expr | Scalar) -> Expr:
        return Binary("mod", self, as_expr(o))

    def __rmod__(self, o: Scalar) -> Expr:
        return Binary("mod", as_expr(o), self)

    def __pow__(self, o: Expr | Scalar) -> Expr:
        return Binary("pow", self, as_expr(o))

    def __rpow__(self, o: Scalar) -> Expr:
        return Binary("pow", as_expr(o), self)

    def __neg__(self) -> Expr:
        return Unary("neg", self)

    def __lt__(self, o: Expr | Scalar) -> Expr:  # type: ignore[override]
        return Binary("lt", self, as_expr(o))

    def __le__(self, o: Expr | Scalar) -> Expr:  # type: ignore[override]
        return Binary("le", self, as_expr(o))

    def __gt__(self, o: Expr | Scalar) -> Expr:  # type: ignore[override]
        return Binary("gt", self, as_expr(o))

    def __ge__(self, o: Expr | Scalar) -> Expr:  # type: ignore[override]
        return Binary("ge", self, as_expr(o))

    def children(self) -> tuple[Expr, ...]:
        return ()


@value_class(frozen=True, slots=True)
class Input(Expr):
    """The kernel's ``index``-th input, an element of it."""

    index: int

    def __post_init__(self) -> None:
        if not isinstance(self.index, int) or self.index < 0:
            raise ValueError(f"input index must be a non-negative int, got {self.index!r}")

    def __repr__(self) -> str:
        return f"in{self.index}"


@value_class(frozen=True, slots=True)
class Attr(Expr):
    """An attribute of the op, replaced by a :class:`Const` when the kernel is built."""

    name: str

    def __repr__(self) -> str:
        return f"@{self.name}"


@value_class(frozen=True, slots=True)
class Const(Expr):
    """A literal. It adopts the type of the values it meets (a "weak" scalar).

    Two constants are equal only when they are the same literal: of one Python type and, for
    floats, the same bits. Python's ``0 == 0.0 == -0.0`` would let an expression memo or a
    shared subtree hand ``x + -0.0`` the value of ``x + 0.0`` (which differ at ``x = -0.0``),
    or an integer literal a float's.

    >>> Const(-0.0) == Const(0.0), Const(0) == Const(0.0), Const(2.5) == Const(2.5)
    (False, False, True)
    >>> Const(float("nan")) == Const(float("nan"))
    True
    """

    value: Scalar

    def __repr__(self) -> str:
        return repr(self.value)

    def _literal(self) -> tuple:
        v = self.value
        if type(v) is float:
            return (float, struct.pack("<d", v))
        return (type(v), v)

    def __eq__(self, other: object) -> bool:
        return type(other) is Const and self._literal() == other._literal()

    def __hash__(self) -> int:
        return hash(self._literal())


@value_class(frozen=True, slots=True)
class Unary(Expr):
    """``op(x)`` for an ``op`` of :data:`UNARY_OPS`: ``Unary("exp", Input(0))``."""

    op: str
    x: Expr

    def __post_init__(self) -> None:
        if self.op not in UNARY_OPS:
            raise ValueError(f"unknown unary op {self.op!r}; known: {', '.join(sorted(UNARY_OPS))}")

    def children(self) -> tuple[Expr, ...]:
        return (self.x,)

    def __repr__(self) -> str:
        return f"{self.op}({self.x!r})"


@value_class(frozen=True, slots=True)
class Binary(Expr):
    """``op(a, b)`` for an ``op`` of :data:`BINARY_OPS`: ``Binary("add", Input(0), Const(1.0))``."""

    op: str
    a: Expr
    b: Expr

    def __post_init__(self) -> None:
        if self.op not in BINARY_OPS:
            raise ValueError(f"unknown binary op {self.op!r}; known: {', '.join(sorted(BINARY_OPS))}")

    def children(self) -> tuple[Expr, ...]:
        return (self.a, self.b)

    def __repr__(self) -> str:
        return f"{self.op}({self.a!r}, {self.b!r})"


@value_class(frozen=True, slots=True)
class Select(Expr):
    """``cond ? a : b``."""

    cond: Expr
    a: Expr
    b: Expr

    def children(self) -> tuple[Expr, ...]:
        return (self.cond, self.a, self.b)

    def __repr__(self) -> str:
        return f"where({self.cond!r}, {self.a!r}, {self.b!r})"


@value_class(frozen=True, slots=True)
class Cast(Expr):
    """Convert to an element type (MLIR spelling, ``f32``); floats to ints truncate, as in C."""

    x: Expr
    dtype: str

    def __post_init__(self) -> None:
        if self.dtype not in CAST_DTYPES:
            raise ValueError(f"cannot cast to {self.dtype!r}; expected one of {sorted(CAST_DTYPES)}")

    def children(self) -> tuple[Expr, ...]:
        return (self.x,)

    def __repr__(self) -> str:
        return f"cast({self.x!r}, {self.dtype})"


def transform(expr: Expr, fn: Callable[[Expr], Expr | None]) -> Expr:
    """Rebuild bottom-up; ``fn(node)`` returns a replacement or ``None`` to keep the node."""
    memo: dict[int, Expr] = {}

    def go(node: Expr) -> Expr:
        key = id(node)
        if key in memo:
            return memo[key]
        rep = fn(node)
        if rep is None:
            if isinstance(node, Unary):
                rep = _same_or(node, Unary(node.op, go(node.x)))
            elif isinstance(node, Binary):
                rep = _same_or(node, Binary(node.op, go(node.a), go(node.b)))
            elif isinstance(node, Select):
                rep = _same_or(node, Select(go(node.cond), go(node.a), go(node.b)))
            elif isinstance(node, Cast):
                rep = _same_or(node, Cast(go(node.x), node.dtype))
            else:
                rep = node
        memo[key] = rep
        return rep

    return go(expr)


def _same_or(old: Expr, new: Expr) -> Expr:
    return old if old == new else new
