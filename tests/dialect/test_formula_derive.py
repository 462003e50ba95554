"""Symbolic differentiation of elementwise formulas (``dialect/formula/derive.py``).

Every standard op with a formula: its :func:`vjp`, rendered with the numpy renderer, against
central finite differences of the forward formula in float64 (broadcasting pairs included:
the gradient has the broadcast shape and is summed back to each input's shape). Random smooth
trees (hypothesis) the same way, every rule on its own, and the exact simplified forms.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tdflow.dialect import standard_dialect
from tdflow.dialect.formula import derivative as lazy_derivative
from tdflow.dialect.formula.derive import derivative, vjp
from tdflow.dialect.formula.dtypes import FLOATS
from tdflow.dialect.formula.expr import (
    COMPARE_OPS,
    Attr,
    Binary,
    Cast,
    Const,
    Expr,
    Input,
    Unary,
    abs_,
    acos,
    acosh,
    asin,
    asinh,
    atan,
    atanh,
    cast,
    ceil,
    cos,
    cosh,
    erf,
    exp,
    expr_depth,
    floor,
    floor_mod,
    fold_constants,
    log,
    maximum,
    minimum,
    mod,
    power,
    round_,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sinh,
    sqrt,
    tan,
    tanh,
    walk,
    where,
)
from tdflow.lowering.elementwise_numpy import render_numpy
from tdflow.lowering.elementwise_ops import elementwise_def

x, y = Input(0), Input(1)
H = 1e-6  # central-difference step (float64)


# ---- numeric harness ---------------------------------------------------------------------


def evaluate(expr: Expr, inputs: list[np.ndarray]) -> np.ndarray:
    """``expr`` over float64 ``inputs``, broadcast to their common shape."""
    shape = np.broadcast_shapes(*(a.shape for a in inputs))
    out = np.empty(shape, np.float64)
    prog = render_numpy(expr, ["f64"] * len(inputs), "f64")
    with np.errstate(all="ignore"):
        return np.broadcast_to(prog([np.asarray(a) for a in inputs], out), shape)


def unbroadcast(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum a broadcast-shaped gradient back to an input of ``shape``."""
    g = g.sum(axis=tuple(range(g.ndim - len(shape)))) if g.ndim > len(shape) else g
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    return g.sum(axis=axes, keepdims=True) if axes else g


def finite_difference(outputs: list[Expr], inputs: list[np.ndarray], douts: list[np.ndarray],
                      i: int) -> np.ndarray:
    """d/d inputs[i] of ``sum_k sum(douts[k] * outputs[k])``, by central differences."""

    def loss(args: list[np.ndarray]) -> float:
        return sum(float(np.sum(d * evaluate(o, args))) for o, d in zip(outputs, douts))

    grad = np.zeros(inputs[i].shape)
    for j in np.ndindex(inputs[i].shape):
        plus = [np.array(a, np.float64) for a in inputs]
        minus = [np.array(a, np.float64) for a in inputs]
        plus[i][j] += H
        minus[i][j] -= H
        grad[j] = (loss(plus) - loss(minus)) / (2 * H)
    return grad


def analytic(grad: Expr | None, inputs: list[np.ndarray], douts: list[np.ndarray],
             i: int) -> np.ndarray:
    if grad is None:
        return np.zeros(inputs[i].shape)
    g = evaluate(grad, [*inputs, *douts])
    return unbroadcast(np.asarray(g, np.float64), inputs[i].shape)


def assert_vjp_matches(outputs: list[Expr], inputs: list[np.ndarray], wrt: list[int],
                       rng: np.random.Generator, rtol: float = 1e-5) -> None:
    shape = np.broadcast_shapes(*(a.shape for a in inputs))
    douts = [rng.uniform(-1.5, 1.5, shape) for _ in outputs]
    grads = vjp(outputs, len(inputs), wrt)
    assert set(grads) == set(wrt)
    for i in wrt:
        want = finite_difference(outputs, inputs, douts, i)
        got = analytic(grads[i], inputs, douts, i)
        scale = 1.0 + float(np.max(np.abs(want), initial=0.0))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6 * scale,
                                   err_msg=f"d/d in{i} of {outputs}: {grads[i]}")


def smooth_here(exprs: list[Expr], inputs: list[np.ndarray], margin: float = 0.05) -> bool:
    """No comparison, max or min in ``exprs`` is near a tie at ``inputs`` (a kink)."""
    for e in exprs:
        for n in walk(e):
            if isinstance(n, Binary) and (n.op in COMPARE_OPS or n.op in ("max", "min")):
                if np.any(np.abs(evaluate(n.a - n.b, inputs)) < margin):
                    return False
            if isinstance(n, Binary) and n.op in ("div", "mod", "floor_mod"):
                if np.any(np.abs(evaluate(n.b, inputs)) < 0.2):
                    return False
            # Jumps: the remainders where a / b is an integer, rounding at integers (round at
            # halves).
            jump = None
            if isinstance(n, Binary) and n.op in ("mod", "floor_mod"):
                jump = evaluate(n.a / n.b, inputs)
            elif isinstance(n, Unary) and n.op in ("floor", "ceil"):
                jump = evaluate(n.x, inputs)
            elif isinstance(n, Unary) and n.op == "round":
                jump = evaluate(n.x, inputs) + 0.5
            if jump is not None and np.any(np.abs(jump - np.round(jump)) < margin):
                return False
    return True


# Functions defined on part of the line: draws for their argument are mapped into it (the
# formulas that use them read the input directly).
_DOMAINS = {
    "asin": lambda v: v * 0.45, "acos": lambda v: v * 0.45, "atanh": lambda v: v * 0.45,
    "acosh": lambda v: np.abs(v) + 1.1, "tan": lambda v: v * 0.6,
}


def _in_domain(exprs: list[Expr], inputs: list[np.ndarray]) -> list[np.ndarray]:
    for e in exprs:
        for n in walk(e):
            if isinstance(n, Unary) and n.op in _DOMAINS and isinstance(n.x, Input):
                inputs[n.x.index] = _DOMAINS[n.op](inputs[n.x.index])
    return inputs


def sample(exprs: list[Expr], shapes: list[tuple[int, ...]], positive: bool,
           rng: np.random.Generator) -> list[np.ndarray]:
    """Inputs with 0.3 <= |v| <= 2 (positive ones where the formula takes a log, root or
    power), redrawn until no kink is near."""
    for _ in range(200):
        mags = [rng.uniform(0.3, 2.0, s) for s in shapes]
        signs = [np.ones(s) if positive else rng.choice([-1.0, 1.0], s) for s in shapes]
        inputs = _in_domain(exprs, [np.array(m * sign, np.float64)
                                    for m, sign in zip(mags, signs)])
        if smooth_here(exprs, inputs):
            return inputs
    raise AssertionError(f"no smooth sample found for {exprs}")  # pragma: no cover


# ---- every standard op ---------------------------------------------------------------------

_NEEDS_POSITIVE = frozenset({"log", "sqrt", "rsqrt", "pow"})
# Ops whose defaults make the formula a division by zero (scalar_div's float_operand = 0.0).
_DEFAULTS_DIVIDE_BY_ZERO = frozenset({"tdflow.scalar_div"})


def _attr_sets(checked) -> list[dict]:
    """The defaults, each float attribute at two other values, and ints chosen by their flags."""
    sets: list[dict] = [{}]
    floats = [k for k, kind in checked.attr_kinds.items() if kind in ("f32", "f64")]
    for value in (0.3, 1.7):
        if floats:
            sets.append({k: value for k in floats})
    ints = [k for k, kind in checked.attr_kinds.items() if kind in ("si32", "si64")]
    if ints:
        flags = {k: True for k, kind in checked.attr_kinds.items() if kind == "bool"}
        sets.append({**flags, **{k: 3 for k in ints}})
    return sets


def _standard_cases() -> list:
    cases = []
    for op in standard_dialect().ops.values():
        if op.formula is None:
            continue
        for attrs in _attr_sets(op.formula):
            if not attrs and op.name in _DEFAULTS_DIVIDE_BY_ZERO:
                continue
            label = ",".join(f"{k}={v}" for k, v in attrs.items()) or "defaults"
            cases.append(pytest.param(op.name, attrs, id=f"{op.name}[{label}]"))
    return cases


def _float_inputs(opdef) -> list[int]:
    d = elementwise_def(opdef)
    return [i for i in range(d.arity) if d.input_dtypes.get(i, d.dtypes) & FLOATS]


def _shapes(n: int) -> list[list[tuple[int, ...]]]:
    same = [[(3, 4)] * n, [(5,)] * n, [()] * n]
    if n < 2:
        return same
    return same + [[(3, 4)] + [(4,)] * (n - 1), [(4,)] + [(3, 4)] * (n - 1),
                   [(2, 1)] + [(1, 3)] * (n - 1), [()] + [(2, 3)] * (n - 1)]


def test_the_standard_library_has_differentiable_formulas():
    ops = [op for op in standard_dialect().ops.values() if op.formula is not None]
    assert len(ops) >= 20
    assert {"tdflow.relu", "tdflow.gelu", "tdflow.broadcast_div"} <= {op.name for op in ops}


@pytest.mark.parametrize("name, attrs", _standard_cases())
def test_vjp_of_every_standard_op_matches_finite_differences(name, attrs):
    op = standard_dialect().lookup(name)
    checked = op.formula
    outputs = [checked.bind(attrs, result=k) for k in range(len(checked.exprs))]
    wrt = _float_inputs(op)
    if not wrt:  # bit operations: integers only, nothing to differentiate
        assert op.has_trait("NoGrad"), f"{name} has no float input"
        return
    positive = any(n.op in _NEEDS_POSITIVE for e in outputs for n in walk(e)
                   if isinstance(n, Unary | Binary))
    rng = np.random.default_rng(abs(hash((name, tuple(sorted(attrs.items()))))) % 2**32)
    for shapes in _shapes(len(checked.operands)):
        inputs = sample(outputs, shapes, positive, rng)
        assert_vjp_matches(outputs, inputs, wrt, rng)


# ---- every rule on its own -----------------------------------------------------------------

RULES = {
    "add": (x + y, False), "sub": (x - y, False), "mul": (x * y, False), "div": (x / y, False),
    "neg": (-x * y, False), "pow": (power(x, y), True), "pow-const": (power(x, 2.5), True),
    "pow-int": (power(x, 3), False), "pow-neg": (power(x, -2), False),
    "pow-base-const": (power(2.0, x), False), "exp": (exp(x * y), False),
    "log": (log(x), True), "sqrt": (sqrt(x), True), "rsqrt": (rsqrt(x), True),
    "tanh": (tanh(x), False), "erf": (erf(x), False), "abs": (abs_(x) * y, False),
    "floor": (floor(x) + y, False), "ceil": (ceil(x) * y, False), "mod": (mod(x, y) * x, False),
    "mod-pos": (mod(x * 3.0, y), True), "max": (maximum(x, y), False),
    "max-const": (maximum(x, 0.5), False), "max-const-a": (maximum(-0.5, x), False),
    "min": (minimum(x * y, y), False), "min-const": (minimum(x, 0), False),
    "select": (where(x > y, x * x, exp(y)), False), "select-zero": (where(x < 0, 3.0, x), False),
    "cast-float": (cast(x, "f64") * y, False), "cast-int": (cast(x * 4.0, "i32") * y, False),
    "cmp": (where(x > 0, 1.0, 0.0) + y, False), "sigmoid": (sigmoid(x * y), False),
    # the trigonometric and hyperbolic functions, inside their domains (|x| <= 2 here)
    "sin": (sin(x * y), False), "cos": (cos(x) * y, False), "tan": (tan(x * 0.6), False),
    "asin": (asin(x * 0.45), False), "acos": (acos(x * 0.45) * y, False),
    "atan": (atan(x * y), False), "sinh": (sinh(x), False), "cosh": (cosh(x * y), False),
    "asinh": (asinh(x * y), False), "acosh": (acosh(x * x + 1.1), False),
    "atanh": (atanh(x * 0.45), False),
    "round": (round_(x) * y, False), "sign": (sign(x) * y + x, False),
    "floor_mod": (floor_mod(x, y) * x, False),
}


@pytest.mark.parametrize("name", sorted(RULES))
def test_each_rule_matches_finite_differences(name):
    expr, positive = RULES[name]
    rng = np.random.default_rng(sorted(RULES).index(name))
    for shapes in ([(3, 4), (3, 4)], [(3, 4), (4,)], [(), (6,)]):
        inputs = sample([expr], shapes, positive, rng)
        if name == "cast-int" or name == "floor" or name == "ceil":  # away from integers
            inputs[0] = np.round(inputs[0] * 4.0) / 4.0 + 0.1
        assert_vjp_matches([expr], inputs, [0, 1], rng)


def test_two_results_and_missing_incoming_gradients():
    outs = [x * y, exp(x)]
    grads = vjp(outs, 2, [0, 1])
    assert grads == {0: Binary("add", Input(2) * y, Input(3) * exp(x)), 1: Input(2) * x}
    assert vjp(outs, 2, [0, 1], douts_present=[False, True]) == {0: Input(3) * exp(x), 1: None}
    assert vjp(outs, 2, [1], douts_present=[True, False]) == {1: Input(2) * x}
    rng = np.random.default_rng(7)
    inputs = sample(outs, [(3, 4), (4,)], False, rng)
    assert_vjp_matches(outs, inputs, [0, 1], rng)


# ---- random smooth trees -------------------------------------------------------------------

_LEAVES = st.one_of(st.sampled_from([x, y]),
                    st.sampled_from([0.5, 1.5, -2.0, 3.0]).map(Const))


def _trees(depth: int) -> st.SearchStrategy[Expr]:
    if depth == 1:
        return _LEAVES
    sub = _trees(depth - 1)
    unary = st.tuples(st.sampled_from(["exp", "tanh", "neg", "sigmoid"]), sub).map(
        lambda t: sigmoid(t[1]) if t[0] == "sigmoid" else Unary(t[0], t[1]))
    binary = st.tuples(st.sampled_from(["add", "sub", "mul", "div", "max", "min"]), sub, sub).map(
        lambda t: Binary(*t))
    powers = st.tuples(sub, st.sampled_from([2, 3, -1, 0.5, 2.0])).map(
        lambda t: power(t[0], t[1]))
    select = st.tuples(st.sampled_from(["gt", "lt"]), sub, sub, sub, sub).map(
        lambda t: where(Binary(t[0], t[1], t[2]), t[3], t[4]))
    # outputs reach vjp bound, so with their constant subtrees folded
    return st.one_of(_LEAVES, unary, binary, powers, select).map(fold_constants)


def _smooth_point(expr: Expr, point: list[np.ndarray]) -> bool:
    """Every intermediate value is moderate, and no kink or pole is near."""
    for n in walk(expr):
        v = evaluate(n, point)
        if not np.all(np.isfinite(v)) or np.any(np.abs(v) > 1e3):
            return False
        if isinstance(n, Binary):
            if n.op in ("max", "min", "gt", "lt") and abs(float(evaluate(n.a - n.b, point))) < 1e-2:
                return False
            if n.op == "div" and abs(float(evaluate(n.b, point))) < 0.1:
                return False
            if n.op == "pow" and isinstance(n.b, Const):
                base = float(evaluate(n.a, point))
                if n.b.value == -1 and abs(base) < 0.1 or n.b.value == 0.5 and base < 0.1:
                    return False
    return True


def _assert_simplified(grad: Expr, forward: Expr) -> None:
    """None of the forms the constructors simplify away is left in ``grad`` (outside the
    subtrees of ``forward`` it reuses)."""
    reused = set(walk(forward))
    for n in walk(grad):
        if n in reused:
            continue
        assert not isinstance(n, Attr | Cast), n
        if isinstance(n, Unary) and n.op == "neg":
            assert not (isinstance(n.x, Unary) and n.x.op == "neg"), n
        if isinstance(n, Binary) and n.op in ("add", "sub", "mul", "div"):
            consts = [c.value for c in (n.a, n.b) if isinstance(c, Const)]
            assert len(consts) < 2, f"unfolded constants in {n}"
            if n.op == "mul":
                assert 0 not in consts and 1 not in consts, n
            if n.op in ("add", "sub"):
                assert not isinstance(n.b, Const) or n.b.value != 0, n
            if n.op == "div":
                assert not (isinstance(n.b, Const) and n.b.value == 1), n


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.filter_too_much])
@given(expr=_trees(5), a=st.floats(-2.0, 2.0), b=st.floats(-2.0, 2.0),
       dout=st.floats(-2.0, 2.0))
def test_random_smooth_trees_match_finite_differences(expr, a, b, dout):
    point = [np.array(a), np.array(b)]
    assume(_smooth_point(expr, point))
    grads = vjp([expr], 2, [0, 1])
    for i in (0, 1):
        want = finite_difference([expr], point, [np.array(dout)], i)
        got = analytic(grads[i], point, [np.array(dout)], i)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * (1 + abs(float(want))),
                                   err_msg=f"{expr} d/d in{i}: {grads[i]}")
        partial = derivative(expr, i)
        plain = 0.0 if partial is None else float(evaluate(partial, point))
        np.testing.assert_allclose(plain * dout, float(got), rtol=1e-9, atol=1e-12)
        if grads[i] is not None:
            _assert_simplified(grads[i], expr)


# ---- exact forms ---------------------------------------------------------------------------


def test_linear_gradients_are_dout_times_the_constant():
    assert vjp([x * 2.0], 1, [0]) == {0: Input(1) * 2.0}
    assert vjp([2.0 * x + 1.0], 1, [0]) == {0: Input(1) * 2.0}
    assert vjp([x / 4.0], 1, [0]) == {0: Input(1) * 0.25}
    assert vjp([x + y, x - y], 2, [0, 1]) == {0: Input(2) + Input(3),
                                              1: Binary("sub", Input(2), Input(3))}
    assert vjp([Unary("neg", -x)], 1, [0]) == {0: Input(1)}
    assert vjp([x * 0.0 + y], 2, [0, 1]) == {0: None, 1: Input(2)}


def test_relu_gradient_is_the_relu_grad_formula():
    relu = standard_dialect().lookup("tdflow.relu").formula.bind()
    relu_grad = standard_dialect().lookup("tdflow.relu_grad").formula.bind()
    assert relu == maximum(x, 0)
    assert vjp([relu], 1, [0]) == {0: where(x > 0, Input(1), 0)} == {0: relu_grad}


def test_kinks_follow_pytorch():
    dy = Input(2)
    assert vjp([maximum(x, y)], 2, [0, 1]) == {
        0: where(x > y, dy, where(x < y, 0, dy * 0.5)),
        1: where(x > y, 0, where(x < y, dy, dy * 0.5)),
    }
    assert vjp([minimum(x, 1.0)], 1, [0]) == {0: where(x < 1.0, Input(1), 0)}
    assert vjp([maximum(1.0, x)], 1, [0]) == {0: where(Binary("lt", Const(1.0), x), Input(1), 0)}
    assert vjp([abs_(x)], 1, [0]) == {0: where(x > 0, Input(1), where(x < 0, -Input(1), 0))}
    at_zero = [np.zeros(3), np.ones(3)]
    for f in (maximum(x, 0), abs_(x)):
        np.testing.assert_array_equal(evaluate(vjp([f], 1, [0])[0], at_zero), np.zeros(3))


def test_rule_shapes():
    assert derivative(power(x, 2), 0) == Const(2) * x
    assert derivative(power(x, 3), 0) == Const(3) * power(x, 2)
    assert derivative(power(x, 1), 0) == Const(1.0)
    assert derivative(power(x, 0), 0) is None
    e = exp(x)
    assert derivative(e, 0) is e  # the node itself
    assert derivative(log(x), 0) == Binary("div", Const(1.0), x)
    assert vjp([log(x)], 1, [0]) == {0: Binary("div", Input(1), x)}
    assert derivative(tanh(x), 0) == 1.0 - tanh(x) * tanh(x)
    assert derivative(where(x > 1, x * x, 3.0), 0) == where(x > 1, x + x, 0)
    assert derivative(cast(x, "f16") * 3.0, 0) == Const(3.0)
    assert derivative(cast(x, "i32") * 3.0, 0) is None


def test_zero_gradients_are_none():
    assert vjp([Const(3.0)], 1, [0]) == {0: None}
    assert vjp([y * 2.0], 2, [0, 1]) == {0: None, 1: Input(2) * 2.0}
    assert vjp([floor(x) + ceil(y)], 2, [0, 1]) == {0: None, 1: None}
    assert vjp([x > y, where(x > y, 1.0, 2.0)], 2, [0, 1]) == {0: None, 1: None}
    assert vjp([x * y], 2, [0, 1], douts_present=[False]) == {0: None, 1: None}
    assert derivative(x + 1.0, 1) is None


def test_errors_name_what_is_wrong():
    with pytest.raises(ValueError, match="'alpha'"):
        vjp([x * Attr("alpha")], 1, [0])
    with pytest.raises(ValueError, match="'alpha'"):
        derivative(x * Attr("alpha"), 0)
    with pytest.raises(ValueError, match="reads in1"):
        vjp([x * y], 1, [0])
    with pytest.raises(ValueError, match="in3"):
        vjp([x * y], 2, [3])
    with pytest.raises(ValueError, match="douts_present"):
        vjp([x], 1, [0], douts_present=[True, False])
    assert lazy_derivative is derivative


def test_constants_introduced_are_weak_python_numbers():
    for expr in [e for e, _ in RULES.values()]:
        for g in vjp([expr], 2, [0, 1]).values():
            for n in walk(g) if g is not None else ():
                if isinstance(n, Const):
                    assert type(n.value) in (int, float), n
            assert g is None or not any(isinstance(n, Cast) for n in walk(g)) \
                or any(isinstance(n, Cast) for n in walk(expr))


# ---- depth and sharing -------------------------------------------------------------------


def test_deep_formulas_differentiate_without_recursion():
    e: Expr = x
    for k in range(400):
        e = tanh(e) if k % 3 == 0 else e * 1.5 if k % 3 == 1 else e + x
    d = derivative(e, 0)
    assert d is not None and expr_depth(d) > 400
    shallow: Expr = x * 0.1
    for k in range(150):  # about MAX_FUSED_DEPTH: renders and checks numerically
        shallow = tanh(shallow) if k % 2 else shallow * 1.01
    rng = np.random.default_rng(3)
    assert_vjp_matches([shallow], [rng.uniform(-1, 1, (4,))], [0], rng)


def test_shared_subtrees_are_differentiated_once():
    e: Expr = x
    for _ in range(60):  # a DAG of 120 nodes whose tree has 2**60 leaves
        e = tanh(e) * e
    d = derivative(e, 0)
    assert isinstance(d, Binary) and d.op == "add"
    small: Expr = x
    for _ in range(4):
        small = tanh(small) * small
    rng = np.random.default_rng(5)
    assert_vjp_matches([small], [rng.uniform(0.3, 0.9, (5,))], [0], rng)


def test_mod_gradient_is_minus_truncated_quotient():
    a, b = np.array([7.5, -7.5, 5.2, -0.7]), np.array([2.0, 2.0, -1.5, 0.3])
    g = evaluate(derivative(mod(x, y), 1), [a, b])
    np.testing.assert_allclose(g, -np.trunc(a / b))
    assert math.isclose(float(evaluate(derivative(mod(x, y), 0) or Const(0.0), [a, b])[0]), 1.0)
