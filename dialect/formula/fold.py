"""Constant folding of scalar expressions, with Python semantics close to C's (what the kernels
compute); :func:`~tdflow.dialect.formula.expr.bind` folds with it.

>>> from tdflow.dialect.formula.expr import Input
>>> fold_constants(Const(2) * Const(3) + Input(0))
add(6, in0)
"""

from __future__ import annotations

import math

from .nodes import (
    BITWISE_BINARY_OPS,
    BITWISE_UNARY_OPS,
    PREDICATE_UNARY_OPS,
    Binary,
    Const,
    Expr,
    Scalar,
    Select,
    Unary,
    transform,
)

__all__ = ["expr_depth", "fold_constants"]


def _fold_unary(op: str, v: Scalar) -> Scalar | None:
    try:
        if op == "neg":
            return -v
        if op == "abs":
            return abs(v)
        if op == "not":
            return not v
        if op == "sign":
            return v if v != v or v == 0 else type(v)(1 if v > 0 else -1)  # NaN stays NaN
        if op in PREDICATE_UNARY_OPS or op in BITWISE_UNARY_OPS:
            return None  # i1 results and bit patterns depend on the runtime type
        f = float(v)
        return {
            "exp": math.exp, "log": math.log, "sqrt": math.sqrt, "tanh": math.tanh,
            "erf": math.erf, "floor": math.floor, "ceil": math.ceil,
            "rsqrt": lambda t: 1.0 / math.sqrt(t), "round": lambda t: float(round(t)),
            "sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin,
            "acos": math.acos, "atan": math.atan, "sinh": math.sinh, "cosh": math.cosh,
            "asinh": math.asinh, "acosh": math.acosh, "atanh": math.atanh,
        }[op](f)
    except (ValueError, OverflowError, ZeroDivisionError):
        return None  # leave it to the device (inf/nan semantics)


def _fold_binary(op: str, a: Scalar, b: Scalar) -> Scalar | None:
    try:
        if op == "div":
            if isinstance(a, int) and isinstance(b, int):
                return None  # integer vs float division depends on the runtime dtype
            return a / b
        if op == "mod":
            if isinstance(a, int) and isinstance(b, int):
                if b == 0:
                    return None  # 0 for an integer runtime type, nan for a float one
                r = abs(a) % abs(b)  # C truncates: the remainder has the dividend's sign
                return -r if a < 0 else r
            return math.fmod(a, b)
        if op == "floor_mod":
            if isinstance(a, int) and isinstance(b, int):
                return None if b == 0 else a % b
            return math.copysign(0.0, b) if a % b == 0 else a % b
        if op in BITWISE_BINARY_OPS:
            return None  # widths and overflow depend on the runtime type
        return {
            "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
            "max": lambda: max(a, b), "min": lambda: min(a, b), "pow": lambda: a ** b,
            "lt": lambda: a < b, "le": lambda: a <= b, "gt": lambda: a > b, "ge": lambda: a >= b,
            "eq": lambda: a == b, "ne": lambda: a != b,
            "and": lambda: bool(a) and bool(b), "or": lambda: bool(a) or bool(b),
            "xor": lambda: bool(a) != bool(b),
        }[op]()
    except (ValueError, OverflowError, ZeroDivisionError, TypeError):
        return None


def expr_depth(expr: Expr) -> int:
    """Levels of ``expr``'s tree (a leaf is 1), computed without recursion.

    >>> from tdflow.dialect.formula.expr import Input, exp
    >>> expr_depth(Input(0)), expr_depth(exp(Input(0)) + 1)
    (1, 3)
    """
    depth, todo = 0, [(expr, 1)]
    while todo:
        node, d = todo.pop()
        depth = max(depth, d)
        todo.extend((c, d + 1) for c in node.children())
    return depth


def fold_constants(expr: Expr, leaky_max: bool = True) -> Expr:
    """Evaluate subtrees made only of constants (``1 / (1 - 0.5)`` becomes ``2.0``).

    Casts are kept: their result depends on the device's rounding. With ``leaky_max`` a
    select that is a leaky ReLU becomes a ``max`` (:func:`_leaky_as_max`), which computes the
    same values faster; gradients are derived without it, since ``x > 0 ? dy : dy * k``
    (PyTorch's convention at 0) is not the derivative of ``max`` at the tie.
    """

    def fold(n: Expr) -> Expr | None:
        if isinstance(n, Unary):
            x = fold_constants(n.x, leaky_max)
            if isinstance(x, Const):
                v = _fold_unary(n.op, x.value)
                if v is not None and not isinstance(v, complex):
                    return Const(v)
            return Unary(n.op, x)
        if isinstance(n, Binary):
            a, b = fold_constants(n.a, leaky_max), fold_constants(n.b, leaky_max)
            if isinstance(a, Const) and isinstance(b, Const):
                v = _fold_binary(n.op, a.value, b.value)
                if v is not None and not isinstance(v, complex):
                    return Const(v)
            return Binary(n.op, a, b)
        if isinstance(n, Select):
            c = fold_constants(n.cond, leaky_max)
            if isinstance(c, Const):
                return fold_constants(n.a if c.value else n.b, leaky_max)
            a, b = fold_constants(n.a, leaky_max), fold_constants(n.b, leaky_max)
            return (leaky_max and _leaky_as_max(c, a, b)) or Select(c, a, b)
        return None

    return transform(expr, fold)


def _leaky_as_max(cond: Expr, a: Expr, b: Expr) -> Expr | None:
    """``x > 0 ? x : x * k`` (or ``>=``, or ``x < 0 ? x * k : x``) with a constant ``0 < k <= 1``
    is ``max(x, x * k)``: one ufunc instead of a compare and a select (the leaky ReLU as users
    write it runs as fast as the hand-tuned form).

    Exact for every input: for x > 0, x * k <= x; for x <= 0, x * k >= x; NaN stays NaN and
    signed zeros and infinities agree (k > 0, so no inf * 0); an integer x is unchanged too
    (k truncates to 0 or is 1, and |x * k| <= |x| cannot overflow).

    >>> from tdflow.dialect.formula.expr import Input, where
    >>> x = Input(0)
    >>> fold_constants(where(x > 0, x, x * 0.2)), fold_constants(where(x > 0, x, x * 2.0))
    (max(in0, mul(in0, 0.2)), where(gt(in0, 0), in0, mul(in0, 2.0)))
    """
    if not isinstance(cond, Binary) or not isinstance(cond.b, Const) or cond.b.value != 0:
        return None
    if cond.op in ("gt", "ge"):
        x, scaled = a, b
    elif cond.op in ("lt", "le"):
        x, scaled = b, a
    else:
        return None
    if cond.a != x or not isinstance(scaled, Binary) or scaled.op != "mul":
        return None
    k = scaled.b if scaled.a == x else scaled.a if scaled.b == x else None
    if not isinstance(k, Const) or isinstance(k.value, bool) or not isinstance(k.value, (int, float)):
        return None
    if not 0 < k.value <= 1:
        return None
    return Binary("max", x, scaled)
