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

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tdflow.dialect.element_types import DTYPE_NAMES

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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True, order=False)
class Input(Expr):
    """The kernel's ``index``-th input, an element of it."""

    index: int

    def __post_init__(self) -> None:
        if not isinstance(self.index, int) or self.index < 0:
            raise ValueError(f"input index must be a non-negative int, got {self.index!r}")

    def __repr__(self) -> str:
        return f"in{self.index}"


@dataclass(frozen=True, slots=True, order=False)
class Attr(Expr):
    """An attribute of the op, replaced by a :class:`Const` when the kernel is built."""

    name: str

    def __repr__(self) -> str:
        return f"@{self.name}"


@dataclass(frozen=True, slots=True, order=False)
class Const(Expr):
    """A literal. It adopts the type of the values it meets (a "weak" scalar)."""

    value: Scalar

    def __repr__(self) -> str:
        return repr(self.value)


@dataclass(frozen=True, slots=True, order=False)
class Unary(Expr):
    op: str
    x: Expr

    def __post_init__(self) -> None:
        if self.op not in UNARY_OPS:
            raise ValueError(f"unknown unary op {self.op!r}; known: {', '.join(sorted(UNARY_OPS))}")

    def children(self) -> tuple[Expr, ...]:
        return (self.x,)

    def __repr__(self) -> str:
        return f"{self.op}({self.x!r})"


@dataclass(frozen=True, slots=True, order=False)
class Binary(Expr):
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


@dataclass(frozen=True, slots=True, order=False)
class Select(Expr):
    """``cond ? a : b``."""

    cond: Expr
    a: Expr
    b: Expr

    def children(self) -> tuple[Expr, ...]:
        return (self.cond, self.a, self.b)

    def __repr__(self) -> str:
        return f"where({self.cond!r}, {self.a!r}, {self.b!r})"


@dataclass(frozen=True, slots=True, order=False)
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


# ---- constant folding (Python semantics close to C's) --------------------------------------


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


__all__ = [
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
