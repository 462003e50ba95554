"""The native (C) path of fused expressions (``lowering/elementwise_native.py``) gives numpy's
bits (up to which NaN a NaN is, where numpy itself varies): random expressions of the ops it renders, over f32 and f64 inputs full of NaN (with
payloads and both signs), inf, signed zeros and subnormals, in place and out of place; the
cases it must hand back to numpy (small, broadcast, non-contiguous, partly overlapping,
another dtype, transcendental ops); and the compiled MLP step's relu gradient taking it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from native_support import UINT, need_native, numpy_then_native, special_mix
from tdflow.dialect.formula.expr import Binary, Const, Expr, Input, Select, Unary, exp, where
from tdflow.lowering import elementwise_native
from tdflow.lowering.elementwise_native import MIN_ELEMENTS, c_source, native_kernel
from tdflow.lowering.elementwise_numpy import render_numpy

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
N = 3 * MIN_ELEMENTS + 7
UNARY = ("neg", "abs", "sqrt", "floor", "ceil", "round")
BINARY = ("add", "sub", "mul", "div", "max", "min")
COMPARE = ("lt", "le", "gt", "ge", "eq", "ne")


SPECIALS = [np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-310, 0.5, -2.5, 1.5]


def _values(dtype: str, rng: np.random.Generator, n: int = N) -> np.ndarray:
    return special_mix(dtype, rng, n, SPECIALS)


def _random_expr(rng: np.random.Generator, depth: int, n_inputs: int) -> Expr:
    if depth == 0 or rng.random() < 0.15:
        if rng.random() < 0.15:
            return Const(float(rng.choice([0.0, -0.0, 0.5, -2.0, 3.0, np.inf])))
        return Input(int(rng.integers(0, n_inputs)))
    kind = rng.random()
    if kind < 0.3:
        return Unary(str(rng.choice(UNARY)), _random_expr(rng, depth - 1, n_inputs))
    if kind < 0.8:
        return Binary(str(rng.choice(BINARY)), _random_expr(rng, depth - 1, n_inputs),
                      _random_expr(rng, depth - 1, n_inputs))
    cond = Binary(str(rng.choice(COMPARE)), _random_expr(rng, depth - 1, n_inputs),
                  _random_expr(rng, depth - 1, n_inputs))
    if rng.random() < 0.3:
        cond = Binary(str(rng.choice(["and", "or", "xor"])), cond,
                      Unary("isnan", _random_expr(rng, depth - 1, n_inputs)))
    return Select(cond, _random_expr(rng, depth - 1, n_inputs),
                  _random_expr(rng, depth - 1, n_inputs))


def _same_bits(a: np.ndarray, b: np.ndarray, dtype: str) -> bool:
    """Bit for bit, except that a NaN may stand for a NaN with another payload or sign: with
    two NaN operands, numpy's own ``add``/``multiply`` return the first one's in their SIMD
    body and the second one's in the loop's tail (see ``test_numpy_nan_payloads_vary``)."""
    if a.dtype == np.bool_:
        return a.dtype == b.dtype and np.array_equal(a, b)
    same = a.view(UINT[dtype]) == b.view(UINT[dtype])
    return a.dtype == b.dtype and bool((same | (np.isnan(a) & np.isnan(b))).all())


def test_numpy_nan_payloads_vary():
    """Why :func:`_same_bits` lets NaN payloads differ: numpy itself gives one pair of NaNs a
    different result by the element's position (when this numpy does, the native loop
    cannot match both; it matches the SIMD body)."""
    a = np.full(37, np.nan, np.float32).view(np.uint32)
    a |= 1
    b = a ^ 3
    got = np.add(b.view(np.float32), a.view(np.float32)).view(np.uint32)
    assert {int(got[0]), int(got[-1])} <= {int(a[0]), int(b[0])}


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("seed", range(4))
def test_random_expressions_match_numpy_bit_for_bit(dtype, seed):
    need_native()
    rng = np.random.default_rng(seed + (100 if dtype == "f64" else 0))
    expr = _random_expr(rng, 4, 3)
    while c_source(expr, [dtype] * 3, dtype, "m") is None or not isinstance(expr, (Binary, Unary, Select)):
        expr = _random_expr(rng, 4, 3)
    inputs = [_values(dtype, rng) for _ in range(3)]
    prog = render_numpy(expr, [dtype] * 3, dtype)
    ref, got = numpy_then_native(prog, inputs)
    assert _same_bits(ref, got, dtype), expr
    # in place over input 0 (the plan's in-place launches): same bits again
    x0 = inputs[0].copy()
    ref2, got2 = numpy_then_native(prog, [x0, inputs[1], inputs[2]], out=x0)
    assert got2 is x0 and _same_bits(ref2, got2, dtype), expr


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_each_op_alone_and_predicates(dtype):
    """Every rendered op over every pair of special values, each in its own expression."""
    need_native()
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, 1.0, -1.5, 2.5],
                       np.float32 if dtype == "f32" else np.float64)
    a = np.repeat(special, special.size * 64)[: max(N, special.size ** 2)]
    b = np.tile(special, a.size // special.size + 1)[: a.size]
    x, y = Input(0), Input(1)
    # a few expressions (each is one compiler run), every op in one of them, each result
    # picked by a mask so that a wrong bit anywhere shows
    s = Binary("add", x, y)
    exprs = [where(Unary("isnan", x), Unary(u, s), Unary(v, Unary("neg", y)))
             for u, v in zip(UNARY[:3], UNARY[3:])]
    exprs += [where(Binary(c, x, y), Binary(f, Unary("neg", x), y), Binary(g, y, x))
              for c, f, g in zip(COMPARE, BINARY, reversed(BINARY))]
    exprs += [Binary("or", Unary("isinf", Unary("neg", x)), Unary("not", Unary("isnan", y)))]
    for expr in exprs:
        prog = render_numpy(expr, [dtype, dtype])
        ref, got = numpy_then_native(prog, [a, b])
        assert _same_bits(ref, got, dtype), expr


def test_relu_gradient_is_native_and_bit_exact():
    """The MLP step's ``where(gt(x, 0), dy, 0)``: +0 where the mask is off, whatever dy is,
    and dy's exact bits (NaN payloads too) where it is on."""
    need_native()
    rng = np.random.default_rng(1)
    x, dy = _values("f32", rng), _values("f32", rng)
    prog = render_numpy(where(Input(0) > 0, Input(1), 0), ["f32", "f32"])
    ref, got = numpy_then_native(prog, [x, dy])
    assert np.array_equal(ref.view(np.uint32), got.view(np.uint32))
    assert native_kernel(where(Input(0) > 0, Input(1), 0), ["f32", "f32"], "f32") is not None


def test_cases_left_to_numpy():
    need_native()
    expr = Input(0) * Input(1) + 1.0
    prog = render_numpy(expr, ["f32", "f32"])
    rng = np.random.default_rng(2)
    big = _values("f32", rng)
    small = big[: MIN_ELEMENTS - 1].copy()
    cases = {
        "small": [small, small],
        "broadcast": [big.reshape(-1, 1)[: 3 * 1024].reshape(3, 1024), big[:1024].copy()],
        "non-contiguous": [big[::2][: MIN_ELEMENTS + 1], big[1::2][: MIN_ELEMENTS + 1]],
        "other dtype": [big.astype(np.float64), big.astype(np.float64)],
    }
    for name, inputs in cases.items():
        ref, got = numpy_then_native(prog, inputs)
        assert np.array_equal(ref, got, equal_nan=True), name
    # an output overlapping an input at another offset: numpy's (buffered) result
    buf = _values("f32", rng, N + 5)
    ref_buf = buf.copy()
    elementwise_native.USE_NATIVE = False
    try:
        prog([ref_buf[:N], ref_buf[:N]], ref_buf[5:])
    finally:
        elementwise_native.USE_NATIVE = True
    prog([buf[:N], buf[:N]], buf[5:])
    assert np.array_equal(buf.view(np.uint32), ref_buf.view(np.uint32))
    # transcendental, integer and mixed-precision expressions are never rendered natively
    assert c_source(exp(Input(0)) + 1.0, ["f32"], "f32", "m") is None
    assert c_source(Input(0) + Input(1), ["i32", "i32"], "i32", "m") is None
    assert c_source(Input(0) + Input(1), ["f32", "f64"], "f64", "m") is None
    from tdflow.dialect.formula.expr import Cast

    assert c_source(Binary("gt", Cast(Input(0), "i32"), Const(0)), ["i1"], "i1", "m") is None
    assert c_source(Binary("gt", Cast(Input(0), "f64"), Input(1)), ["f32", "f64"], "i1",
                    "m") is None


def test_switched_off_by_environment(monkeypatch):
    monkeypatch.setenv("TDFLOW_NATIVE", "0")
    assert native_kernel(Input(0) * Input(1) + 2.0, ["f32", "f32"], "f32") is None


def test_compiled_mlp_step_uses_it_and_equals_numpy_path():
    """The compiled training step gives the same bits with and without the native path."""
    need_native()
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import train_bench as tb

    import tdflow

    x, y, params = tb.make_data()
    vg = tdflow.value_and_grad(tb.program(), wrt=list(tb.PARAMS))
    args = [x, y, *(params[k] for k in tb.PARAMS)]
    loss, grads = vg(*args)
    elementwise_native.USE_NATIVE = False
    try:
        loss_np, grads_np = vg(*args)
    finally:
        elementwise_native.USE_NATIVE = True
    assert float(loss) == float(loss_np)
    for g, h in zip(grads, grads_np):
        assert np.array_equal(g.view(np.uint32), h.view(np.uint32))


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_rows_broadcast_over_the_output_match_numpy(dtype):
    """Inputs of the trailing shape (a last-axis bias) are read again for every row; other
    broadcasts, and a row input written over, are numpy's."""
    need_native()
    rng = np.random.default_rng(7)
    x, b = Input(0), Input(1)
    expr = Binary("max", Binary("add", x, b), Const(0.0))
    assert native_kernel(expr, [dtype, dtype], dtype, frozenset({1})) is not None
    prog = render_numpy(expr, [dtype, dtype])
    full = _values(dtype, rng, 64 * 256).reshape(64, 256)
    row = _values(dtype, rng, 256)
    ref, got = numpy_then_native(prog, [full, row])
    assert _same_bits(ref, got, dtype)
    inplace = full.copy()
    ref2, got2 = numpy_then_native(prog, [inplace, row], out=inplace)
    assert got2 is inplace and _same_bits(ref2, got2, dtype)
    # two row inputs of one shape, the row input first, and a 3-d output
    three = Binary("mul", Binary("sub", b, x), Input(2))
    prog3 = render_numpy(three, [dtype] * 3)
    cube = _values(dtype, rng, 4 * 32 * 64).reshape(4, 32, 64)
    rows2 = _values(dtype, rng, 32 * 64).reshape(32, 64)
    ref3, got3 = numpy_then_native(prog3, [rows2, cube, rows2[::-1].copy()])
    assert _same_bits(ref3, got3, dtype)
    # a column (64, 1) and rows of two shapes broadcast otherwise: numpy's, same values
    for inputs in ([full, full[:, :1].copy()], ):
        ref4, got4 = numpy_then_native(prog, inputs)
        assert _same_bits(ref4, got4, dtype)
    ref5, got5 = numpy_then_native(prog3, [rows2[0].copy(), cube, rows2])
    assert _same_bits(ref5, got5, dtype)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_columns_broadcast_over_the_output_match_numpy(dtype):
    """Inputs of shape (..., 1) (a layer norm's per-row mean and scale) give one value per row
    of the last axis, alone or with last-axis rows; mismatched shapes, and a column written
    over, are numpy's."""
    need_native()
    rng = np.random.default_rng(11)
    x, c, d = Input(0), Input(1), Input(2)
    expr = Binary("mul", Binary("sub", x, Binary("mul", c, Const(0.0078125))), d)
    kernel = native_kernel(expr, [dtype] * 3, dtype, cols=frozenset({1, 2}))
    assert kernel is not None
    full = _values(dtype, rng, 64 * 256).reshape(64, 256)
    col, col2 = (_values(dtype, rng, 64).reshape(64, 1) for _ in range(2))
    out = np.empty_like(full)
    assert kernel(full, col, col2, out) is True  # the kernel itself takes them
    prog = render_numpy(expr, [dtype] * 3)
    ref, got = numpy_then_native(prog, [full, col, col2])
    assert _same_bits(ref, got, dtype) and _same_bits(ref, out, dtype)
    inplace = full.copy()
    ref2, got2 = numpy_then_native(prog, [inplace, col, col2], out=inplace)
    assert got2 is inplace and _same_bits(ref2, got2, dtype)
    # 3-d, a column first, and with a last-axis row input too
    cube = _values(dtype, rng, 4 * 32 * 64).reshape(4, 32, 64)
    ccol = _values(dtype, rng, 4 * 32).reshape(4, 32, 1)
    row = _values(dtype, rng, 64)
    for inputs in ([ccol, cube, row], [cube, ccol, ccol.copy()], [ccol, cube, cube]):
        p = render_numpy(Binary("add", Binary("mul", c, x), d), [dtype] * 3)
        ref3, got3 = numpy_then_native(p, inputs)
        assert _same_bits(ref3, got3, dtype)
    # the kernel refuses what it was not built for: a column of another length, a column
    # overlapping the output
    assert kernel(full, col[:32], col2, out) is False
    flat = full.copy().reshape(-1)
    assert kernel(full, flat[:64].reshape(64, 1), col2, flat.reshape(64, 256)) is False
