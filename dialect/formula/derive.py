"""Symbolic differentiation of elementwise formulas: the backward of an op, as a formula.

:func:`derivative` gives the partial derivative of a scalar formula with respect to one
input; :func:`vjp` gives the vector-Jacobian product of an op with several results: for
input ``i``, ``sum_k dout_k * d(outputs[k]) / d(in_i)``, where ``dout_k`` (the gradient
flowing into result ``k``) is ``Input(n_inputs + k)``. The result is a formula in the same
vocabulary (:data:`~.expr.UNARY_OPS`, :data:`~.expr.BINARY_OPS`, ``where``, ``cast``), so
the numpy and CUDA renderers compile it like any other; ``None`` stands for a gradient that
is identically zero.

>>> from tdflow.dialect.formula.expr import Input, exp, floor, maximum, power, tanh
>>> x, y = Input(0), Input(1)
>>> vjp([x * 2.0], 1, [0])
{0: mul(in1, 2.0)}
>>> vjp([x * y], 2, [0, 1])
{0: mul(in2, in1), 1: mul(in2, in0)}
>>> vjp([maximum(x, 0)], 1, [0])          # relu: what tdflow.relu_grad computes
{0: where(gt(in0, 0), in1, 0)}
>>> vjp([tanh(x)], 1, [0])
{0: mul(in1, sub(1.0, mul(tanh(in0), tanh(in0))))}
>>> vjp([floor(x), exp(x)], 1, [0])        # floor has no gradient; exp reuses its node
{0: mul(in2, exp(in0))}
>>> vjp([x + y, x * 3.0], 2, [0], douts_present=[False, True])
{0: mul(in3, 3.0)}
>>> derivative(power(x, 3), 0), derivative(power(x, 2), 0), derivative(x / y, 1)
(mul(3, pow(in0, 2)), mul(2, in0), neg(div(div(in0, in1), in1)))

Rules (PyTorch's conventions where a function has a kink):

- ``pow(a, b)``: ``b * pow(a, b - 1)`` for ``a`` (with a constant ``b = c``: ``c * pow(a, c-1)``,
  ``2 * a`` for ``c = 2``, nothing for ``c = 0``), ``pow(a, b) * log(a)`` for ``b``;
- ``exp(x)`` reuses its node; ``log``: ``1 / x``; ``sqrt``: ``0.5 / sqrt(x)``; ``rsqrt``:
  ``-0.5 * rsqrt(x) / x``; ``tanh``: ``1 - tanh(x)^2``; ``erf``: ``2/sqrt(pi) * exp(-x*x)``;
- ``abs``: the sign, ``where(x > 0, 1, where(x < 0, -1, 0))`` (0 at 0, as PyTorch);
- ``mod`` (C's ``fmod``, ``a - trunc(a/b) * b``): 1 for ``a``, ``-(a - mod(a, b)) / b`` for ``b``;
- ``max(a, b)`` with ``b`` a constant: ``where(a > b, da, 0)`` (so relu's gradient at 0 is 0,
  like PyTorch's relu; a constant ``a`` is symmetric); with both sides computed from inputs,
  ties split evenly like ``torch.maximum``: ``where(a > b, da, where(a < b, db, 0.5*(da+db)))``;
  ``min`` mirrored;
- ``where(c, a, b)``: ``where(c, da, db)``, no gradient through ``c``;
- ``cast`` to a float type passes the gradient through, to an integer or ``i1`` stops it;
- ``sin``: ``cos``; ``cos``: ``-sin``; ``tan``: ``1 + tan^2``; ``asin``/``acos``:
  ``+-rsqrt(1 - x*x)``; ``atan``: ``1 / (1 + x*x)``; ``sinh``/``cosh``: each other;
  ``asinh``: ``rsqrt(x*x + 1)``; ``acosh``: ``rsqrt(x*x - 1)``; ``atanh``: ``1 / (1 - x*x)``;
- ``floor_mod`` (``a - floor(a/b) * b``): as ``mod``, with the floor for the truncation;
- ``floor``, ``ceil``, ``round``, ``sign``, comparisons, ``isnan``/``isinf``, logic, bit
  operations and constants: zero.

Canonical forms: the chain rule writes ``mul(local partial, d(operand))`` and the product
rule ``add(mul(da, b), mul(a, db))``; :func:`vjp` multiplies ``mul(dout_k, partial_k)`` and adds
the results' terms in result order. Every node is built by a simplifying constructor: zero
terms are dropped (never ``mul(dy, 0)``; ``x * 0`` counts as zero, as autodiff does),
``x * 1``, ``x + 0``, ``x - 0``, ``x / 1``, ``--x`` and ``y * (1 / x)`` (``y / x``) simplify, a
negation moves out of products and into their constant factor, two constant factors merge,
constant subtrees fold, and a product with a ``where`` whose branches are constants (but one)
moves into the branches (``dy * where(c, 1, 0)`` is ``where(c, dy, 0)``). A branch with no
gradient is the weak constant ``0``; constants introduced are Python numbers (weak), so the
gradient's type follows the inputs. Identical subtrees are shared (the renderers compute them
once); a node shared by several parents is differentiated once (memoised by identity, since
hashing a node walks its whole tree), and no walk recurses, so deep formulas are safe.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from .expr import (
    Attr,
    Binary,
    Cast,
    Const,
    Expr,
    Input,
    Select,
    Unary,
    fold_constants,
)

__all__ = ["derivative", "vjp"]

#: A derivative: an expression, or ``None`` when it is identically zero.
Deriv = Expr | None

FLOAT_CAST_DTYPES = frozenset({"f16", "bf16", "f32", "f64"})
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_ZERO = Const(0)  # the value of a `where` branch with no gradient


# ---- simplifying constructors (``None`` is zero) ---------------------------------------------


def _number(e: Deriv) -> float | int | None:
    """The value of a numeric constant (``None`` for anything else, booleans included)."""
    if isinstance(e, Const) and not isinstance(e.value, bool):
        return e.value
    return None


def _is(e: Deriv, v: float) -> bool:
    n = _number(e)
    return n is not None and n == v


def _zero(e: Deriv) -> bool:
    return e is None or _is(e, 0)


def _nz(e: Deriv) -> Deriv:
    """``e``, or ``None`` when it is the constant zero."""
    return None if _zero(e) else e


def _fold(node: Expr) -> Expr:
    """Fold a node whose operands are all constants (a shallow call, so no deep recursion)."""
    return fold_constants(node)


def _neg(x: Deriv) -> Deriv:
    if _zero(x):
        return None
    assert x is not None
    if isinstance(x, Const):
        return _fold(Unary("neg", x))
    if isinstance(x, Unary) and x.op == "neg":
        return x.x
    if isinstance(x, Binary) and x.op in ("mul", "div"):  # -(c * y) is (-c) * y, exactly
        if _number(x.a) is not None:
            return Binary(x.op, _fold(Unary("neg", x.a)), x.b)
        if _number(x.b) is not None:
            return Binary(x.op, x.a, _fold(Unary("neg", x.b)))
    return Unary("neg", x)


def _add(a: Deriv, b: Deriv) -> Deriv:
    if _zero(a):
        return _nz(b)
    if _zero(b):
        return a
    assert a is not None and b is not None
    if isinstance(a, Const) and isinstance(b, Const):
        return _nz(_fold(Binary("add", a, b)))
    if isinstance(b, Unary) and b.op == "neg":
        return _sub(a, b.x)
    if isinstance(a, Unary) and a.op == "neg":
        return _sub(b, a.x)
    return Binary("add", a, b)


def _sub(a: Deriv, b: Deriv) -> Deriv:
    if _zero(b):
        return _nz(a)
    if _zero(a):
        return _neg(b)
    assert a is not None and b is not None
    if isinstance(a, Const) and isinstance(b, Const):
        return _nz(_fold(Binary("sub", a, b)))
    if isinstance(b, Unary) and b.op == "neg":
        return _add(a, b.x)
    return Binary("sub", a, b)


def _const_factor(e: Expr) -> tuple[Const, Expr, bool] | None:
    """``(k, rest, k_first)`` when ``e`` is ``k * rest`` or ``rest * k`` for a constant ``k``."""
    if isinstance(e, Binary) and e.op == "mul":
        if _number(e.a) is not None:
            return e.a, e.b, True  # type: ignore[return-value]
        if _number(e.b) is not None:
            return e.b, e.a, False  # type: ignore[return-value]
    return None


def _distributes(s: Expr) -> bool:
    """Whether a product moves into ``s``'s branches: ``s`` is a ``where`` (possibly nested)
    with at most one branch that is not a constant, so nothing is computed twice."""
    varying, todo = 0, [s]
    while todo:
        n = todo.pop()
        if isinstance(n, Select):
            todo += [n.a, n.b]
        elif not isinstance(n, Const):
            varying += 1
    return isinstance(s, Select) and varying <= 1


def _mul(a: Deriv, b: Deriv) -> Deriv:
    if _zero(a) or _zero(b):
        return None
    assert a is not None and b is not None
    if _is(a, 1):
        return b
    if _is(b, 1):
        return a
    if _is(a, -1):
        return _neg(b)
    if _is(b, -1):
        return _neg(a)
    if isinstance(a, Const) and isinstance(b, Const):
        return _nz(_fold(Binary("mul", a, b)))
    if isinstance(a, Unary) and a.op == "neg":
        return _neg(_mul(a.x, b))
    if isinstance(b, Unary) and b.op == "neg":
        return _neg(_mul(a, b.x))
    if _distributes(b):
        assert isinstance(b, Select)
        return _where(b.cond, _mul(a, b.a), _mul(a, b.b))
    if _distributes(a):
        assert isinstance(a, Select)
        return _where(a.cond, _mul(a.a, b), _mul(a.b, b))
    if isinstance(b, Binary) and b.op == "div" and _is(b.a, 1):
        return _div(a, b.b)
    if isinstance(a, Binary) and a.op == "div" and _is(a.a, 1):
        return _div(b, a.b)
    for c, e in ((a, b), (b, a)):  # c * (k * rest) is (c * k) * rest
        split = _const_factor(e) if isinstance(c, Const) else None
        if split is not None:
            k, rest, k_first = split
            merged = _fold(Binary("mul", c, k) if c is a else Binary("mul", k, c))
            return _mul(merged, rest) if k_first else _mul(rest, merged)
    return Binary("mul", a, b)


def _div(a: Deriv, b: Expr) -> Deriv:
    if _zero(a):
        return None
    assert a is not None
    if _is(b, 1):
        return a
    if _is(b, -1):
        return _neg(a)
    if isinstance(a, Const) and isinstance(b, Const):
        return _nz(_fold(Binary("div", a, b)))
    if isinstance(a, Unary) and a.op == "neg":
        return _neg(_div(a.x, b))
    return Binary("div", a, b)


def _pow(a: Expr, c: int | float) -> Expr:
    if c == 1:
        return a
    if c == 0:
        return Const(1.0)
    return Binary("pow", a, Const(c))


def _where(cond: Expr, a: Deriv, b: Deriv) -> Deriv:
    """``where(cond, a, b)`` of two gradients; a branch with none is the constant 0."""
    if _zero(a) and _zero(b):
        return None
    if isinstance(cond, Const):
        return _nz(a if cond.value else b)
    a = _ZERO if a is None else a
    b = _ZERO if b is None else b
    return a if a == b else Select(cond, a, b)


# ---- the rules -------------------------------------------------------------------------------

# Local partial derivative of ``f(x)`` (the node given), multiplied by ``dx`` by the chain rule;
# ``None``: the function has no gradient (floor, ceil, not).
UNARY_PARTIALS: dict[str, Callable[[Unary], Deriv]] = {
    "neg": lambda n: Const(-1.0),
    "abs": lambda n: Select(Binary("gt", n.x, Const(0)), Const(1.0),
                            Select(Binary("lt", n.x, Const(0)), Const(-1.0), _ZERO)),
    "exp": lambda n: n,
    "log": lambda n: Binary("div", Const(1.0), n.x),
    "sqrt": lambda n: Binary("div", Const(0.5), n),
    "rsqrt": lambda n: Binary("mul", Const(-0.5), Binary("div", n, n.x)),
    "tanh": lambda n: Binary("sub", Const(1.0), Binary("mul", n, n)),
    "erf": lambda n: Binary("mul", Const(_TWO_OVER_SQRT_PI),
                            Unary("exp", Unary("neg", Binary("mul", n.x, n.x)))),
    "floor": lambda n: None,
    "ceil": lambda n: None,
    "not": lambda n: None,
    # Trigonometric and hyperbolic functions and their inverses.
    "sin": lambda n: Unary("cos", n.x),
    "cos": lambda n: Unary("neg", Unary("sin", n.x)),
    "tan": lambda n: Binary("add", Const(1.0), Binary("mul", n, n)),  # 1 + tan^2
    "asin": lambda n: Unary("rsqrt", Binary("sub", Const(1.0), Binary("mul", n.x, n.x))),
    "acos": lambda n: Unary("neg", Unary("rsqrt", Binary("sub", Const(1.0),
                                                          Binary("mul", n.x, n.x)))),
    "atan": lambda n: Binary("div", Const(1.0), Binary("add", Const(1.0), Binary("mul", n.x, n.x))),
    "sinh": lambda n: Unary("cosh", n.x),
    "cosh": lambda n: Unary("sinh", n.x),
    "asinh": lambda n: Unary("rsqrt", Binary("add", Binary("mul", n.x, n.x), Const(1.0))),
    "acosh": lambda n: Unary("rsqrt", Binary("sub", Binary("mul", n.x, n.x), Const(1.0))),
    "atanh": lambda n: Binary("div", Const(1.0), Binary("sub", Const(1.0), Binary("mul", n.x, n.x))),
    # Piecewise constant (PyTorch: zero gradient, also at the jumps), tests and bits.
    **{op: (lambda n: None) for op in ("round", "sign", "isnan", "isinf", "bitwise_not")},
}


def _d_div(n: Binary, da: Deriv, db: Deriv, live: Callable[[Expr], bool]) -> Deriv:
    # d(a / b) = (da - (a / b) * db) / b, reusing the node a / b
    return _div(_sub(da, _mul(n, db)), n.b)


def _d_mod(n: Binary, da: Deriv, db: Deriv, live: Callable[[Expr], bool]) -> Deriv:
    # fmod(a, b) = a - trunc(a / b) * b, and trunc(a / b) = (a - fmod(a, b)) / b
    return _sub(da, _mul(_div(_sub(n.a, n), n.b), db))


def _d_pow(n: Binary, da: Deriv, db: Deriv, live: Callable[[Expr], bool]) -> Deriv:
    a, b = n.a, n.b
    c = _number(b)
    if c is not None:
        base = _mul(Const(c), _pow(a, c - 1))
    else:
        base = _mul(b, Binary("pow", a, Binary("sub", b, Const(1))))
    exponent = _mul(n, Unary("log", a) if not isinstance(a, Const) else _fold(Unary("log", a)))
    return _add(_mul(base, da), _mul(exponent, db))


def _d_extreme(keep_a: str, keep_b: str) -> Callable[..., Deriv]:
    """``max`` (``keep_a = "gt"``) or ``min`` (``"lt"``): the gradient goes to the side that wins;
    against a constant, a tie gives none (relu at 0); between two inputs, ties split evenly."""

    def rule(n: Binary, da: Deriv, db: Deriv, live: Callable[[Expr], bool]) -> Deriv:
        a_wins, b_wins = Binary(keep_a, n.a, n.b), Binary(keep_b, n.a, n.b)
        if not live(n.b):
            return _where(a_wins, da, None)
        if not live(n.a):
            return _where(b_wins, db, None)
        tie = _mul(Const(0.5), _add(da, db))
        return _where(a_wins, da, _where(b_wins, db, tie))

    return rule


def _no_gradient(n: Binary, da: Deriv, db: Deriv, live: Callable[[Expr], bool]) -> Deriv:
    return None


# d(node) from the node, its operands' derivatives, and which subtrees read an input at all.
BINARY_RULES: dict[str, Callable[[Binary, Deriv, Deriv, Callable[[Expr], bool]], Deriv]] = {
    "add": lambda n, da, db, live: _add(da, db),
    "sub": lambda n, da, db, live: _sub(da, db),
    "mul": lambda n, da, db, live: _add(_mul(da, n.b), _mul(n.a, db)),
    "div": _d_div,
    "mod": _d_mod,
    # floor_mod(a, b) = a - floor(a / b) * b: the same form, (a - floor_mod(a, b)) / b being
    # floor(a / b) (the rule reads the node itself, so one rule serves both)
    "floor_mod": _d_mod,
    "pow": _d_pow,
    "max": _d_extreme("gt", "lt"),
    "min": _d_extreme("lt", "gt"),
    **{op: _no_gradient for op in ("lt", "le", "gt", "ge", "eq", "ne", "and", "or", "xor",
                                   "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
                                   "right_shift")},
}


class _Differentiator:
    """``d(expr) / d(Input(i))`` for the expressions it is called on, sharing one memo (so the
    results of one op, which share subtrees, differentiate each subtree once)."""

    def __init__(self, i: int) -> None:
        self.i = i
        # Keyed by node identity (hashing a node walks its whole tree); the node is kept with
        # its entry so its id stays unique while the memo lives.
        self.memo: dict[int, tuple[Expr, Deriv]] = {}
        self.live: dict[int, bool] = {}  # the subtree reads some input

    def __call__(self, root: Expr) -> Deriv:
        memo = self.memo
        stack: list[tuple[Expr, bool]] = [(root, False)]
        while stack:  # post-order without recursion: formulas may be hundreds of levels deep
            node, ready = stack.pop()
            if id(node) in memo:
                continue
            kids = node.children()
            if not ready:
                stack.append((node, True))
                stack.extend((k, False) for k in kids if id(k) not in memo)
                continue
            self.live[id(node)] = isinstance(node, Input) or any(self.live[id(k)] for k in kids)
            memo[id(node)] = node, self.rule(node, [memo[id(k)][1] for k in kids])
        return memo[id(root)][1]

    def reads_input(self, e: Expr) -> bool:
        return self.live[id(e)]

    def rule(self, node: Expr, d: list[Deriv]) -> Deriv:
        if isinstance(node, Input):
            return Const(1.0) if node.index == self.i else None
        if isinstance(node, Attr):
            raise ValueError(f"attribute {node.name!r} is unbound; bind the formula before "
                             f"differentiating it (expr.bind or CheckedFormula.bind)")
        if isinstance(node, Const) or all(x is None for x in d):
            return None
        if isinstance(node, Unary):
            partial = UNARY_PARTIALS[node.op](node)
            return None if partial is None else _mul(partial, d[0])
        if isinstance(node, Binary):
            return BINARY_RULES[node.op](node, d[0], d[1], self.reads_input)
        if isinstance(node, Select):
            return _where(node.cond, d[1], d[2])
        if isinstance(node, Cast):
            return d[0] if node.dtype in FLOAT_CAST_DTYPES else None
        raise TypeError(f"unknown expression node {node!r}")  # pragma: no cover


def _distinct_nodes(expr: Expr) -> list[Expr]:
    """Every node once (by identity; :func:`~.expr.walk` repeats shared subtrees)."""
    seen: set[int] = set()
    out, todo = [], [expr]
    while todo:
        node = todo.pop()
        if id(node) not in seen:
            seen.add(id(node))
            out.append(node)
            todo.extend(node.children())
    return out


def derivative(expr: Expr, i: int) -> Deriv:
    """The partial derivative ``d expr / d Input(i)``, simplified; ``None`` when it is zero.

    Raises ``ValueError`` naming an :class:`~.expr.Attr` left in ``expr`` (bind it first).

    >>> from tdflow.dialect.formula.expr import Input, log, where
    >>> x = Input(0)
    >>> derivative(log(x) * Input(1), 0), derivative(where(x > 1, x * x, 3.0), 0)
    (div(in1, in0), where(gt(in0, 1), add(in0, in0), 0))
    >>> print(derivative(x + 1, 1))
    None
    """
    return _Differentiator(i)(expr)


def vjp(outputs: Sequence[Expr], n_inputs: int, wrt: Iterable[int], *,
        douts_present: Sequence[bool] | None = None) -> dict[int, Deriv]:
    """Vector-Jacobian product of an elementwise op: for each ``i`` in ``wrt``, the formula of
    ``sum_k dout_k * d(outputs[k]) / d(in_i)``, or ``None`` when it is identically zero.

    ``outputs`` (one bound expression per result) read ``Input(0) .. Input(n_inputs - 1)``;
    ``dout_k`` is ``Input(n_inputs + k)``. With ``douts_present``, a result ``k`` whose entry
    is false receives no gradient (its input number stays reserved).

    >>> from tdflow.dialect.formula.expr import Attr, Input, sigmoid
    >>> vjp([sigmoid(Input(0))], 1, [0])[0]
    mul(in1, div(div(exp(neg(in0)), add(1.0, exp(neg(in0)))), add(1.0, exp(neg(in0)))))
    >>> vjp([Input(0) * Attr("alpha")], 1, [0])
    Traceback (most recent call last):
      ...
    ValueError: vjp: output 0 reads attribute 'alpha'; bind the formula first (expr.bind or CheckedFormula.bind)
    """
    outputs = tuple(outputs)
    if douts_present is not None and len(douts_present) != len(outputs):
        raise ValueError(f"vjp: douts_present has {len(douts_present)} entries for "
                         f"{len(outputs)} outputs")
    for k, out in enumerate(outputs):
        for node in _distinct_nodes(out):
            if isinstance(node, Attr):
                raise ValueError(f"vjp: output {k} reads attribute {node.name!r}; bind the "
                                 f"formula first (expr.bind or CheckedFormula.bind)")
            if isinstance(node, Input) and node.index >= n_inputs:
                raise ValueError(f"vjp: output {k} reads {node!r} but the op has {n_inputs} "
                                 f"inputs (in{n_inputs} and up are the incoming gradients)")
    grads: dict[int, Deriv] = {}
    for i in wrt:
        if not 0 <= i < n_inputs:
            raise ValueError(f"vjp: cannot differentiate with respect to in{i}: the op has "
                             f"{n_inputs} inputs")
        d = _Differentiator(i)
        total: Deriv = None
        for k, out in enumerate(outputs):
            if douts_present is None or douts_present[k]:
                total = _add(total, _mul(Input(n_inputs + k), d(out)))
        grads[i] = total
    return grads
