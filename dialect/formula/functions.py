"""The functions a formula may call: name, arity and the expression each one builds.

One table, read by the checker (names, arities) and by the dtype rules (which functions need a
float type); adding a function is one row here plus its rendering in lowering.

>>> from tdflow.dialect.formula.expr import Input
>>> FUNCTIONS["pow"].arity, FUNCTIONS["bool"].build(Input(0))
(2, cast(in0, i1))
>>> FUNCTIONS["fmod"].build(Input(0), Input(1)), FUNCTIONS["isnan"].kind
(mod(in0, in1), 'predicate')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tdflow.dialect.element_types import DTYPE_NAMES

from .expr import Binary, Cast, Expr, Unary, sigmoid


@dataclass(frozen=True)
class Function:
    """A callable name: ``kind`` is ``"float"`` (computes in a float type: ``exp``...),
    ``"arith"`` (any number type: ``abs``, ``pow``), ``"order"`` (only compares: ``min``,
    ``max``), ``"bits"`` (integer bit operations: ``bitwise_and``, ``left_shift``),
    ``"predicate"`` (gives a truth value: ``isnan``, ``xor``) or ``"cast"``."""

    name: str
    arity: int
    kind: str
    build: Callable[..., Expr]


def _unary(op: str, kind: str) -> Function:
    return Function(op, 1, kind, lambda x: Unary(op, x))


def _binary(name: str, op: str, kind: str) -> Function:
    return Function(name, 2, kind, lambda a, b: Binary(op, a, b))


def _cast(name: str, dtype: str) -> Function:
    return Function(name, 1, "cast", lambda x: Cast(x, dtype))


FUNCTIONS: dict[str, Function] = {
    f.name: f
    for f in (
        *(_unary(op, "float") for op in ("exp", "log", "sqrt", "rsqrt", "tanh", "erf",
                                        "floor", "ceil", "round", "sin", "cos", "tan", "asin",
                                        "acos", "atan", "sinh", "cosh", "asinh", "acosh",
                                        "atanh")),
        Function("sigmoid", 1, "float", sigmoid),  # 1 / (1 + exp(-x)): it fuses and renders
        _unary("abs", "arith"),
        _unary("sign", "arith"),
        _unary("isnan", "predicate"),
        _unary("isinf", "predicate"),
        _binary("xor", "xor", "predicate"),  # logical: `a` and `b` as truth values
        _binary("fmod", "mod", "arith"),  # C's remainder, the same as `a % b`
        _binary("floor_mod", "floor_mod", "arith"),  # Python's: the sign of the divisor
        _unary("bitwise_not", "bits"),
        *(_binary(op, op, "bits") for op in ("bitwise_and", "bitwise_or", "bitwise_xor",
                                             "left_shift", "right_shift")),
        _binary("min", "min", "order"),
        _binary("max", "max", "order"),
        _binary("pow", "pow", "arith"),
        *(_cast(t, t) for t in DTYPE_NAMES),  # f32(x), ui8(x): a cast to each element type
        _cast("bool", "i1"),
    )
}
