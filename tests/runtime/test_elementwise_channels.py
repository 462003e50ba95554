"""Channel broadcasts in the native fused loop (``lowering/elementwise_native.py``): operands
such as a batch norm's ``(1, C, 1, 1)`` against ``(N, C, H, W)`` are one value per row of
``H * W`` (hoisted out of the contiguous inner loop), with numpy's bits. Differential against
the numpy program: random expressions over random mixes of full, channel, per-plane, single
value and trailing-row operands full of NaN (payloads, signs), inf, signed zeros and
subnormals, in place and not; the batch norm gradient's own expressions; the layouts the loop
refuses (numpy's then, same values); the kernel refusing periods it cannot read; and the
ResNet's graph gradients, equal bit for bit with the native loop on and off.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from native_support import UINT, need_native, numpy_then_native, special_mix
from tdflow.dialect.formula.expr import Binary, Const, Expr, Input, Select, Unary
from tdflow.dialect.formula.text import parse_expr
from tdflow.lowering import elementwise_native
from tdflow.lowering.elementwise_layout import broadcast_layout
from tdflow.lowering.elementwise_native import c_source, native_kernel
from tdflow.lowering.elementwise_numpy import render_numpy

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
SPECIALS = [np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-310, 0.5, -2.5, 1.5]
SHAPE = (6, 5, 7, 41)  # 8610 elements: past MIN_ELEMENTS, odd rows (no vector multiple)
#: operand shapes numpy broadcasts to SHAPE, each a layout the native loop reads
NATIVE_SHAPES = [SHAPE, (1, 5, 1, 1), (5, 1, 1), (6, 5, 1, 1), (6, 1, 1, 1), (1, 1, 1, 1), (),
                 (41,), (7, 41), (5, 7, 41), (1, 5, 7, 41)]
#: the batch norm gradient's expressions, as dialect/hooks/norm.py emits them
BN_GRAD = "mul(in0, sub(sub(in1, mul(in2, 0.0009765625)), mul(in3, mul(in4, 0.0009765625))))"
BN_NORMALIZED = "mul(sub(in0, in1), in2)"


def _values(dtype: str, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape))
    return special_mix(dtype, rng, max(n, 1), SPECIALS)[:n].reshape(shape)


def _same_bits(a: np.ndarray, b: np.ndarray, dtype: str) -> bool:
    """Bit for bit, except which NaN a NaN is (numpy's own loops vary there; see
    test_elementwise_native.test_numpy_nan_payloads_vary)."""
    if a.dtype == np.bool_:
        return a.dtype == b.dtype and np.array_equal(a, b)
    same = a.view(UINT[dtype]) == b.view(UINT[dtype])
    return a.shape == b.shape and a.dtype == b.dtype and bool(
        (same | (np.isnan(a) & np.isnan(b))).all())


def _random_expr(rng: np.random.Generator, depth: int, n_inputs: int) -> Expr:
    if depth == 0 or rng.random() < 0.15:
        if rng.random() < 0.1:
            return Const(float(rng.choice([0.0, -0.0, 0.5, -2.0, np.inf])))
        return Input(int(rng.integers(0, n_inputs)))
    kind = rng.random()
    if kind < 0.25:
        op = str(rng.choice(["neg", "abs", "sqrt", "floor", "round"]))
        return Unary(op, _random_expr(rng, depth - 1, n_inputs))
    if kind < 0.85:
        op = str(rng.choice(["add", "sub", "mul", "div", "max", "min"]))
        return Binary(op, _random_expr(rng, depth - 1, n_inputs),
                      _random_expr(rng, depth - 1, n_inputs))
    cond = Binary(str(rng.choice(["lt", "ge", "eq", "ne"])), _random_expr(rng, depth - 1, n_inputs),
                  _random_expr(rng, depth - 1, n_inputs))
    return Select(cond, _random_expr(rng, depth - 1, n_inputs),
                  _random_expr(rng, depth - 1, n_inputs))


def _counting(monkeypatch) -> list[tuple]:
    """Record each native call's (row length, buffers' sizes) as the loop runs it: a test can
    then tell that the native loop, not numpy, gave its values."""
    calls: list[tuple] = []
    real = elementwise_native.native_kernel

    def wrap(*args, **kwargs):
        fn = real(*args, **kwargs)
        if fn is None:
            return None

        def run(*a):
            ok = fn(*a)
            if ok:
                calls.append(a[-1])
            return ok

        return run

    monkeypatch.setattr(elementwise_native, "native_kernel", wrap)
    return calls


def test_layouts():
    assert broadcast_layout((64, 16, 8, 8), [(1, 16, 1, 1), (64, 16, 8, 8), (16, 1, 1)]) == (
        frozenset(), frozenset({0, 2}), 64)
    # a per-plane value, a single value and a 0-d one beside channels: one row length
    assert broadcast_layout((2, 3, 4, 5), [(2, 3, 1, 1), (1, 1, 1, 1), (), (3, 1, 1)]) == (
        frozenset(), frozenset({0, 1, 2, 3}), 20)
    # trailing rows: the shortest is the row, longer ones are whole rows of it
    assert broadcast_layout((2, 3, 4, 5), [(5,), (4, 5), (2, 3, 4, 5)]) == (
        frozenset({0, 1}), frozenset(), 5)
    assert broadcast_layout((2, 3, 4, 5), [(3, 4, 1)]) == (frozenset(), frozenset({0}), 5)
    assert broadcast_layout((2, 3, 4, 5), [(3, 1, 1), (4, 5)]) == (
        frozenset({1}), frozenset({0}), 20)
    # a (N, C, 1, 1) output: the channel operand is a trailing row (not rows of one element)
    assert broadcast_layout((2, 3, 1, 1), [(3, 1, 1), (2, 3, 1, 1)]) == (
        frozenset({0}), frozenset(), 3)
    for shapes in ([(1, 3, 1, 5)],          # broadcast inside its own dims
                   [(3, 1, 1), (2, 1, 1, 1)],  # per-row operands of two row lengths
                   [(3, 1, 1), (5,)],          # a row shorter than the channel's plane
                   [(2, 3, 4, 5, 1)],          # more dims than the output
                   [(4, 3, 1)]):               # not numpy's broadcast at all
        assert broadcast_layout((2, 3, 4, 5), shapes) is None, shapes


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("seed", range(5))
def test_random_broadcasts_match_numpy_bit_for_bit(dtype, seed, monkeypatch):
    need_native()
    calls = _counting(monkeypatch)
    rng = np.random.default_rng(seed + (50 if dtype == "f64" else 0))
    expr = _random_expr(rng, 4, 4)
    while c_source(expr, [dtype] * 4, dtype, "m") is None or not isinstance(
            expr, (Binary, Unary, Select)):
        expr = _random_expr(rng, 4, 4)
    prog = render_numpy(expr, [dtype] * 4, dtype).run
    for _ in range(6):
        shapes = [SHAPE] + [NATIVE_SHAPES[int(rng.integers(0, len(NATIVE_SHAPES)))]
                            for _ in range(3)]
        rng.shuffle(shapes)
        if broadcast_layout(SHAPE, shapes) is None:
            continue  # e.g. a row of 41 beside a channel's plane of 287
        inputs = [_values(dtype, rng, s) for s in shapes]
        ref, got = numpy_then_native(prog, inputs)
        assert _same_bits(ref, got, dtype), (expr, shapes)
        full = [k for k, s in enumerate(shapes) if s == SHAPE]
        place = inputs[full[0]].copy()
        inputs[full[0]] = place
        ref2, got2 = numpy_then_native(prog, inputs, out=place)
        assert got2 is place and _same_bits(ref2, got2, dtype), (expr, shapes)
    assert calls, "the native loop never ran"


@pytest.mark.parametrize("shape", [(64, 32, 4, 4), (64, 16, 8, 8), (3, 7, 13, 17)])
def test_batch_norm_gradient_expressions_are_native_and_exact(shape, monkeypatch):
    need_native()
    calls = _counting(monkeypatch)
    rng = np.random.default_rng(3)
    c = (1, shape[1], 1, 1)
    grad = render_numpy(parse_expr(BN_GRAD), ["f32"] * 5).run
    inputs = [_values("f32", rng, s) for s in (c, shape, c, shape, c)]
    ref, got = numpy_then_native(grad, inputs)
    assert _same_bits(ref, got, "f32")
    norm = render_numpy(parse_expr(BN_NORMALIZED), ["f32"] * 3).run
    inputs = [_values("f32", rng, s) for s in (shape, c, c)]
    ref, got = numpy_then_native(norm, inputs)
    assert _same_bits(ref, got, "f32")
    ref, got = numpy_then_native(norm, inputs, out=inputs[0])  # in place, as plans run it
    assert got is inputs[0] and _same_bits(ref, got, "f32")
    assert calls == [shape[2] * shape[3]] * 3


def test_the_kernel_refuses_periods_it_cannot_read():
    need_native()
    expr = parse_expr(BN_NORMALIZED)
    kernel = native_kernel(expr, ["f32"] * 3, "f32", cols=frozenset({1, 2}))
    rows_kernel = native_kernel(expr, ["f32"] * 3, "f32", rows=frozenset({1}),
                                cols=frozenset({2}))
    assert kernel is not None and rows_kernel is not None
    x = np.ones((4, 6, 5, 5), np.float32)
    c, out = np.ones(6, np.float32), np.empty_like(x)
    assert kernel(x, c, c, out, 25) is True
    assert kernel(x, c, np.ones(5, np.float32), out, 25) is False  # 24 rows, period 5
    assert kernel(x, c, c, out, 7) is False                       # 600 is not rows of 7
    assert rows_kernel(x, np.ones(10, np.float32), c, out, 25) is False  # not whole rows
    assert rows_kernel(x, np.ones(50, np.float32), c, out, 25) is True
    with pytest.raises(ValueError):
        kernel(x, c, c, out, 0)
    # without a row length, the earlier protocol: per-row inputs are one value per row, all of
    # one length
    assert kernel(x, c, np.ones(5, np.float32), out) is False
    assert kernel(x.reshape(-1, 5), np.ones(120, np.float32), np.ones(120, np.float32),
                  out.reshape(-1, 5)) is True


def test_other_broadcasts_stay_numpy_with_the_same_values(monkeypatch):
    need_native()
    calls = _counting(monkeypatch)
    rng = np.random.default_rng(9)
    prog = render_numpy(parse_expr(BN_NORMALIZED), ["f32"] * 3).run
    for shapes in ([SHAPE, (1, 5, 1, 41), (5, 1, 1)], [SHAPE, (5, 1, 1), (41,)],
                   [SHAPE, (5, 1, 1), (6, 1, 7, 1)]):
        inputs = [_values("f32", rng, s) for s in shapes]
        ref, got = numpy_then_native(prog, inputs)
        assert _same_bits(ref, got, "f32"), shapes
    assert calls == []


def test_resnet_graph_gradients_equal_with_the_native_loop_on_and_off():
    """The batch norm gradients of the ResNet's graph step run on the channel loop; the
    gradients are the numpy path's bit for bit (eager equals graph: tests/e2e/test_resnet)."""
    need_native()
    examples = Path(__file__).resolve().parents[2] / "examples"
    if str(examples) not in sys.path:
        sys.path.insert(0, str(examples))
    import resnet
    import train_resnet

    rng = np.random.default_rng(0)
    x = rng.random((16, 64), dtype=np.float32)
    y = rng.integers(0, 10, 16).astype(np.int64)
    graphs = [train_resnet.Graph(resnet.init_params(0), resnet.init_stats()) for _ in range(2)]
    loss, grads = graphs[0].grads(x, y)
    elementwise_native.USE_NATIVE = False
    try:
        loss_np, grads_np = graphs[1].grads(x, y)
    finally:
        elementwise_native.USE_NATIVE = True
    assert loss == loss_np
    for k in grads:
        assert np.array_equal(grads[k].view(np.uint32), grads_np[k].view(np.uint32)), k


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_batch_norm_forward_scales_and_shifts_on_the_channel_loop(dtype, monkeypatch):
    """Training batch norm (runtime/kernels/norm.py) centres ``x - mean`` and applies
    ``y * (inv * gamma) + beta`` on the channel loop (one pass each): the same outputs and
    statistics as numpy's broadcasts, bit for bit."""
    need_native()
    from tdflow.runtime.kernels import norm

    calls = _counting(monkeypatch)
    norm._scale_shifts.clear()  # built afresh: the counting wrapper sees the kernels
    norm._centers.clear()
    rng = np.random.default_rng(21)
    shape = (16, 12, 6, 7)
    x = _values(dtype, rng, shape)
    x[:, 3] = rng.standard_normal((16, 6, 7))  # channels without NaN/inf: finite statistics
    x[:, 4] = -0.0
    gamma, beta = _values(dtype, rng, (12,)), _values(dtype, rng, (12,))
    attrs = {"axis": 1, "epsilon": 1e-5, "training": True, "momentum": 0.9}
    results = []
    for native in (False, True):
        elementwise_native.USE_NATIVE = native
        try:
            mm, mv = np.zeros(12, x.dtype), np.ones(12, x.dtype)
            outs = [np.empty_like(x), np.empty(12, x.dtype), np.empty(12, x.dtype)]
            results.append(norm.normalization(attrs, [x, mm, mv, gamma, beta], outs) + [mm, mv])
        finally:
            elementwise_native.USE_NATIVE = True
    for ref, got in zip(*results):
        assert _same_bits(ref, got, dtype)
    assert calls == [42, 42]  # the centring and the scale and shift, once each
    norm._scale_shifts.clear()
    norm._centers.clear()


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_bound_launches_match_numpy(dtype):
    """A plan launch's native loop settled at bind time (``bound_native``): one-op channel
    broadcasts, an output no input has the shape of, in place; what it declines."""
    need_native()
    from tdflow.lowering.elementwise_native import bound_native

    rng = np.random.default_rng(17)
    cases = [("mul(in0, in1)", [SHAPE, (5, 1, 1)], SHAPE),
             ("add(mul(in0, in1), in2)", [(6, 5, 1, 1), (7, 41), ()], SHAPE),
             ("where(gt(in0, 0.0), in1, neg(in1))", [SHAPE, (1, 5, 1, 1)], SHAPE)]
    for text, shapes, out_shape in cases:
        expr = parse_expr(text)
        prog = render_numpy(expr, [dtype] * len(shapes)).run
        run = bound_native(expr, [dtype] * len(shapes), dtype, shapes, out_shape)
        assert run is not None, text
        inputs = [_values(dtype, rng, s) for s in shapes]
        elementwise_native.USE_NATIVE = False
        try:
            ref = prog(inputs)
            assert run(inputs, np.empty(out_shape, ref.dtype)) is False  # switched off
        finally:
            elementwise_native.USE_NATIVE = True
        got = np.empty(out_shape, ref.dtype)
        assert run(inputs, got) is True and _same_bits(ref, got, dtype), text
        if shapes[0] == out_shape:  # in place over input 0, as a plan's launch may run it
            place = inputs[0].copy()
            assert run([place, *inputs[1:]], place) is True and _same_bits(ref, place, dtype)
    expr = parse_expr("mul(in0, in1)")
    assert bound_native(expr, [dtype] * 2, dtype, [(4, 5), (5,)], (4, 5)) is None  # small
    assert bound_native(expr, [dtype] * 2, dtype, [SHAPE, (1, 5, 1, 41)], SHAPE) is None
    assert bound_native(parse_expr("exp(in0)"), [dtype], dtype, [SHAPE], SHAPE) is None
