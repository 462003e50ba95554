"""The scalar expression IR of elementwise math: what a formula means.

An elementwise op is a scalar formula over its inputs (by position) and its attributes (by name).
The formula is a tree of frozen dataclasses; a ``formula`` field in ``.td`` is parsed into one
(:mod:`tdflow.dialect.formula.parse`), and Python operators build one too:

>>> x = Input(0)
>>> leaky = where(x > 0, x, x * Attr("alpha"))
>>> leaky
where(gt(in0, 0), in0, mul(in0, @alpha))
>>> bind(leaky, {"alpha": 0.25})
max(in0, mul(in0, 0.25))

(binding folds constants, and ``x > 0 ? x : x * k`` with ``0 < k <= 1`` is ``max(x, x * k)``).

Comparisons build nodes too (``x > 0`` above); structural equality stays ``==`` on nodes, as
usual for dataclasses, so use :func:`eq`/:func:`ne` to build equality tests.

The IR lives in the dialect (an op's formula is part of its definition); the renderers to numpy
and CUDA C and the fusion pass live in ``lowering`` and import it from here.

Fusion: :func:`compose` substitutes expressions for inputs, splicing the inner expression's
inputs in at the replaced position, so the fused operand list is
``operands[:i] + inner_operands + operands[i+1:]``; :func:`dedup_inputs` then merges inputs
that are the same SSA value.

>>> add = Input(0) + Input(1)
>>> compose(add, {0: exp(Input(0))})
add(exp(in0), in1)
>>> compose(add, {1: Input(0) * Input(1)})
add(in0, mul(in1, in2))

``mod`` is C's remainder: ``fmod`` for floats, truncated toward zero for integers, with
``x % 0 == 0`` for integers (as integer ``x / 0 == 0``):

>>> fold_constants(Const(-7) % 3), fold_constants(Const(7.5) % 2), fold_constants(Const(7) % 0)
(-1, 1.5, mod(7, 0))

``floor_mod`` is Python's (and ONNX ``Mod``'s with ``fmod = 0``): the sign of the divisor.

>>> fold_constants(floor_mod(-7, 3)), fold_constants(floor_mod(7.5, -2)), fold_constants(floor_mod(7, 0))
(2, -0.5, floor_mod(7, 0))
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from .fold import expr_depth, fold_constants
from .nodes import (
    ARITH_BINARY_OPS,
    BINARY_OPS,
    BITWISE_BINARY_OPS,
    BITWISE_UNARY_OPS,
    CAST_DTYPES,
    COMPARE_OPS,
    FLOAT_UNARY_OPS,
    INT_ONLY_OPS,
    LOGICAL_BINARY_OPS,
    PREDICATE_UNARY_OPS,
    TRIG_OPS,
    UNARY_OPS,
    Attr,
    Binary,
    Cast,
    Const,
    Expr,
    Input,
    Scalar,
    Select,
    Unary,
    as_expr,
    transform,
)

# ---- builders ------------------------------------------------------------------------------


def _unary(op: str) -> Callable[[Expr | Scalar], Expr]:
    def build(x: Expr | Scalar) -> Expr:
        return Unary(op, as_expr(x))

    build.__name__ = op
    build.__doc__ = f"``{op}(x)`` elementwise."
    return build


exp = _unary("exp")
log = _unary("log")
sqrt = _unary("sqrt")
rsqrt = _unary("rsqrt")
tanh = _unary("tanh")
erf = _unary("erf")
floor = _unary("floor")
ceil = _unary("ceil")
abs_ = _unary("abs")
logical_not = _unary("not")
sin, cos, tan = _unary("sin"), _unary("cos"), _unary("tan")
asin, acos, atan = _unary("asin"), _unary("acos"), _unary("atan")
sinh, cosh = _unary("sinh"), _unary("cosh")
asinh, acosh, atanh = _unary("asinh"), _unary("acosh"), _unary("atanh")
round_ = _unary("round")
sign = _unary("sign")
isnan, isinf = _unary("isnan"), _unary("isinf")
bitwise_not = _unary("bitwise_not")


def _binary(op: str) -> Callable[[Expr | Scalar, Expr | Scalar], Expr]:
    def build(a: Expr | Scalar, b: Expr | Scalar) -> Expr:
        return Binary(op, as_expr(a), as_expr(b))

    build.__name__ = op
    build.__doc__ = f"``{op}(a, b)`` elementwise."
    return build


maximum = _binary("max")
minimum = _binary("min")
power = _binary("pow")
mod = _binary("mod")
lt = _binary("lt")
le = _binary("le")
gt = _binary("gt")
ge = _binary("ge")
eq = _binary("eq")
ne = _binary("ne")
logical_and = _binary("and")
logical_or = _binary("or")
logical_xor = _binary("xor")
floor_mod = _binary("floor_mod")
bitwise_and = _binary("bitwise_and")
bitwise_or = _binary("bitwise_or")
bitwise_xor = _binary("bitwise_xor")
left_shift = _binary("left_shift")
right_shift = _binary("right_shift")


def where(cond: Expr | Scalar, a: Expr | Scalar, b: Expr | Scalar) -> Expr:
    """``cond ? a : b``."""
    return Select(as_expr(cond), as_expr(a), as_expr(b))


def cast(x: Expr | Scalar, dtype: str) -> Expr:
    """Convert ``x`` to ``dtype`` (MLIR spelling)."""
    return Cast(as_expr(x), dtype)


def sigmoid(x: Expr | Scalar) -> Expr:
    """``1 / (1 + exp(-x))``, written as a formula so it fuses and renders everywhere."""
    return 1.0 / (1.0 + exp(-as_expr(x)))


# ---- tree utilities ------------------------------------------------------------------------


def walk(expr: Expr) -> Iterator[Expr]:
    """Every node, parents before children (shared subtrees repeat)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children()))


def inputs_used(expr: Expr) -> frozenset[int]:
    """Indices of the inputs an expression reads: ``inputs_used(Input(2) * 3) == {2}``."""
    return frozenset(n.index for n in walk(expr) if isinstance(n, Input))


def arity(expr: Expr) -> int:
    """One more than the largest input index (0 for a constant expression)."""
    used = inputs_used(expr)
    return max(used) + 1 if used else 0


def attrs_used(expr: Expr) -> frozenset[str]:
    return frozenset(n.name for n in walk(expr) if isinstance(n, Attr))


def remap_inputs(expr: Expr, mapping: Mapping[int, int] | Sequence[int]) -> Expr:
    """Renumber inputs: ``mapping[old] = new``.

    >>> remap_inputs(Input(0) + Input(1), [1, 0])
    add(in1, in0)
    """
    return transform(expr, lambda n: Input(mapping[n.index]) if isinstance(n, Input) else None)


def bind(expr: Expr, attrs: Mapping[str, Any], leaky_max: bool = True) -> Expr:
    """Replace every :class:`Attr` by its value and fold constant subtrees (``leaky_max``:
    rewriting ``x > 0 ? x : x * k`` as ``max(x, x * k)``, see :func:`fold_constants`).

    Raises ``KeyError`` naming the attribute when one is missing.
    """

    def sub(n: Expr) -> Expr | None:
        if isinstance(n, Attr):
            if n.name not in attrs:
                raise KeyError(f"attribute {n.name!r} is not bound (have: {sorted(attrs)})")
            v = attrs[n.name]
            return v if isinstance(v, Expr) else Const(v)
        return None

    return fold_constants(transform(expr, sub), leaky_max)


def compose(outer: Expr, replacements: Mapping[int, Expr], outer_arity: int | None = None) -> Expr:
    """Substitute ``replacements[i]`` for ``Input(i)`` of ``outer`` (fusion).

    Inputs are spliced: with ``outer`` over ``n`` inputs, input ``i`` replaced by an inner
    expression over ``k`` inputs, the result is over ``n - 1 + k`` inputs ordered as
    ``outer[:i] + inner[0:k] + outer[i+1:]`` (several replacements splice left to right).
    ``outer_arity`` (default :func:`arity`) matters when ``outer`` ignores trailing inputs.

    >>> compose(Input(0) * Input(1), {0: Input(0) + Input(1), 1: exp(Input(0))})
    mul(add(in0, in1), exp(in2))
    """
    n = arity(outer) if outer_arity is None else outer_arity
    for i in replacements:
        if not 0 <= i < n:
            raise IndexError(f"compose: input {i} out of range for an expression over {n} inputs")
    new_index: dict[int, int] = {}
    inner_shifted: dict[int, Expr] = {}
    pos = 0
    for i in range(n):
        if i in replacements:
            inner = replacements[i]
            k = arity(inner)
            inner_shifted[i] = remap_inputs(inner, list(range(pos, pos + k))) if k else inner
            pos += k
        else:
            new_index[i] = pos
            pos += 1

    def sub(node: Expr) -> Expr | None:
        if isinstance(node, Input):
            if node.index in inner_shifted:
                return inner_shifted[node.index]
            return Input(new_index[node.index])
        return None

    return transform(outer, sub)


def dedup_inputs(expr: Expr, operands: Sequence[Any]) -> tuple[Expr, list[Any]]:
    """Merge inputs that are the same operand (by identity or ``==``); drop unused ones.

    >>> dedup_inputs(Input(0) * Input(1) + Input(2), ["x", "y", "x"])
    (add(mul(in0, in1), in0), ['x', 'y'])
    """
    used = inputs_used(expr)
    kept: list[Any] = []
    mapping: dict[int, int] = {}
    for i, operand in enumerate(operands):
        if i not in used:
            continue
        for j, k in enumerate(kept):
            if k is operand or k == operand:
                mapping[i] = j
                break
        else:
            mapping[i] = len(kept)
            kept.append(operand)
    return remap_inputs(expr, mapping), kept


__all__ = [
    # the vocabulary (from .nodes)
    "ARITH_BINARY_OPS", "BINARY_OPS", "BITWISE_BINARY_OPS", "BITWISE_UNARY_OPS", "CAST_DTYPES",
    "COMPARE_OPS", "FLOAT_UNARY_OPS", "INT_ONLY_OPS", "LOGICAL_BINARY_OPS", "PREDICATE_UNARY_OPS",
    "Scalar", "TRIG_OPS", "UNARY_OPS",
    "Attr", "Binary", "Cast", "Const", "Expr", "Input", "Select", "Unary",
    "abs_", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_and", "bitwise_not",
    "bitwise_or", "bitwise_xor", "cos", "cosh", "floor_mod", "isinf", "isnan", "left_shift",
    "logical_xor", "right_shift", "round_", "sign", "sin", "sinh", "tan",
    "arity", "as_expr", "attrs_used", "bind", "cast", "ceil", "compose", "dedup_inputs",
    "eq", "erf", "exp", "expr_depth", "floor", "fold_constants", "ge", "gt", "inputs_used", "le", "log",
    "logical_and", "logical_not", "logical_or", "lt", "maximum", "minimum", "mod", "ne",
    "power",
    "remap_inputs", "rsqrt", "sigmoid", "sqrt", "tanh",
    "transform", "walk", "where",
]
