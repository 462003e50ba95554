"""Fused expressions mixing exact ops with numpy-only ones (``lowering/elementwise_segments.py``):
native C segments between numpy's ``tanh``/``exp``/``erf``... calls, block by block, give the
numpy program's bits (up to which NaN a two-NaN ``+``/``*`` keeps, where numpy itself varies):
random expressions over f32 and f64 full of NaN (payloads, both signs), inf, signed zeros and
subnormals, sizes that are not a multiple of the block, in place; the cases handed back to
numpy (small, broadcast, non-contiguous, other dtypes, overlapping, no compiler); the compiled
6-op chain of ``bench/runtime_bench.py`` against numpy and against eager calls.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from native_support import UINT, need_native, special_mix
from tdflow.dialect.formula.expr import Binary, Cast, Const, Expr, Input, Select, Unary, maximum
from tdflow.lowering import elementwise_native, elementwise_segments
from tdflow.lowering.elementwise_native import MIN_ELEMENTS
from tdflow.lowering.elementwise_numpy import numpy_function, render_numpy
from tdflow.lowering.elementwise_segments import plan_segments, with_segments

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
BLOCK = 5000  # small blocks (set for each test): several blocks and a ragged last one, cheaply
N = 3 * BLOCK + 123
EXACT_UNARY = ("neg", "abs", "sqrt", "floor", "ceil", "round")
EXACT_BINARY = ("add", "sub", "mul", "div", "max", "min")
COMPARE = ("lt", "le", "gt", "ge", "eq", "ne")
NUMPY_UNARY = ("tanh", "exp", "log", "erf", "sin", "rsqrt", "sign", "atan")
NUMPY_BINARY = ("pow", "mod", "floor_mod")


DEFAULT_GAIN = elementwise_segments.MIN_GAIN


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    """Small blocks, and every expression that splits is segmented (not only those worth a
    compiler run: the values are what is tested)."""
    monkeypatch.setattr(elementwise_segments, "BLOCK", BLOCK)
    monkeypatch.setattr(elementwise_segments, "MIN_GAIN", 0.0)


SPECIALS = [np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-310, 0.5, -2.5, 1.5, 20.0]


def values(dtype: str, rng: np.random.Generator, n: int = N) -> np.ndarray:
    return special_mix(dtype, rng, n, SPECIALS)


def random_expr(rng: np.random.Generator, depth: int, n_inputs: int) -> Expr:
    """Exact ops and numpy-only ones, mixed."""
    if depth == 0 or rng.random() < 0.12:
        if rng.random() < 0.15:
            return Const(float(rng.choice([0.0, -0.0, 0.5, -2.0, 3.0, np.inf])))
        return Input(int(rng.integers(0, n_inputs)))
    kind = rng.random()
    sub = [random_expr(rng, depth - 1, n_inputs) for _ in range(3)]
    if kind < 0.25:
        return Unary(str(rng.choice(NUMPY_UNARY)), sub[0])
    if kind < 0.35:
        return Binary(str(rng.choice(NUMPY_BINARY)), sub[0], sub[1])
    if kind < 0.5:
        return Unary(str(rng.choice(EXACT_UNARY)), sub[0])
    if kind < 0.85:
        return Binary(str(rng.choice(EXACT_BINARY)), sub[0], sub[1])
    return Select(Binary(str(rng.choice(COMPARE)), sub[0], sub[1]), sub[2], sub[0])


def numpy_path(prog, inputs, out=None):
    """The program with the native path (loops and segments) off: numpy's ufuncs only."""
    elementwise_native.USE_NATIVE = False
    try:
        return prog(inputs, out)
    finally:
        elementwise_native.USE_NATIVE = True


def same_bits(a: np.ndarray, b: np.ndarray, dtype: str) -> bool:
    """Bit for bit, but a NaN may stand for a NaN of another payload or sign (see
    ``test_elementwise_native.test_numpy_nan_payloads_vary``: numpy's own ``add`` varies)."""
    if a.dtype == np.bool_:
        return a.dtype == b.dtype and np.array_equal(a, b)
    same = a.view(UINT[dtype]) == b.view(UINT[dtype])
    return a.dtype == b.dtype and bool((same | (np.isnan(a) & np.isnan(b))).all())


def segmented(expr: Expr, dtypes: list[str], out_dtype: str):
    """``render_numpy``'s program and the segmented run alone (its fallback raises)."""
    prog = render_numpy(expr, dtypes, out_dtype)

    def no_fallback(inputs, out=None):
        raise AssertionError(f"segments handed {expr} back to numpy")

    return prog, with_segments(no_fallback, expr, dtypes, out_dtype, numpy_function)


def splitting_expr(rng, dtype: str) -> Expr:
    while True:
        expr = random_expr(rng, 4, 3)
        if plan_segments(expr, [dtype] * 3, dtype, numpy_function) is not None:
            return expr


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("seed", range(5))
def test_random_expressions_match_numpy_bit_for_bit(dtype, seed):
    need_native()
    rng = np.random.default_rng(seed + (100 if dtype == "f64" else 0))
    expr = splitting_expr(rng, dtype)
    inputs = [values(dtype, rng) for _ in range(3)]
    prog, run = segmented(expr, [dtype] * 3, dtype)
    ref = numpy_path(prog, inputs)
    assert same_bits(ref, run(inputs), dtype), expr
    assert same_bits(ref, prog(inputs), dtype), expr  # the renderer takes the segments
    # in place over input 0 (the plan's in-place launches)
    x0 = inputs[0].copy()
    got = run([x0, inputs[1], inputs[2]], x0)
    assert got is x0 and same_bits(ref, x0, dtype), expr


@pytest.mark.parametrize("n", [MIN_ELEMENTS, BLOCK - 1, BLOCK, 2 * BLOCK, 2 * BLOCK + 1])
def test_sizes_around_the_block(n):
    need_native()
    rng = np.random.default_rng(n)
    x, y = values("f32", rng, n), values("f32", rng, n)
    expr = maximum(Unary("tanh", Input(0) * Input(1) + Input(0)) * 0.5, Const(0.0))
    prog, run = segmented(expr * expr, ["f32", "f32"], "f32")
    assert same_bits(numpy_path(prog, [x, y]), run([x, y]), "f32")
    assert run([x, y]).shape == (n,)


def test_the_chain_every_special_pair():
    """The benchmark's chain on every pair of special values (NaN both signs, inf, zeros,
    subnormals, large), repeated past several blocks: exact bits, signed zeros included."""
    need_native()
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 1.0,
                        -1.5, 2.5, 1e30, -1e30, 9.0], np.float32)
    a = np.repeat(special, special.size)
    b = np.tile(special, special.size)
    reps = N // a.size + 1
    x, y = np.tile(a, reps)[:N], np.tile(b, reps)[:N]
    e = maximum(Unary("tanh", Input(0) * Input(1) + Input(0)) * 0.5, Const(0.0))
    prog, run = segmented(e * e, ["f32", "f32"], "f32")
    ref, got = numpy_path(prog, [x, y]), run([x, y])
    assert np.array_equal(ref.view(np.uint32), got.view(np.uint32))
    hand = np.square(np.maximum(np.tanh(x * y + x) * np.float32(0.5), 0))
    assert np.array_equal(hand.view(np.uint32), got.view(np.uint32))


def test_predicate_root_shared_subtrees_and_numpy_root():
    need_native()
    rng = np.random.default_rng(7)
    x, y = values("f64", rng), values("f64", rng)
    t = Unary("exp", Input(0) - Input(1))
    cases = [(Binary("gt", Unary("tanh", Input(0)), Const(0.25)), "i1"),   # a bool result
             (t * t + Unary("log", t), "f64"),                       # a value used three times
             (Unary("tanh", Input(0) * Input(1) + 1.0), "f64"),      # numpy writes the output
             (Select(Binary("lt", Input(0), Const(0.0)), Unary("erf", Input(1)), Input(0) * 2.0), "f64")]
    for expr, out_dtype in cases:
        prog, run = segmented(expr, ["f64", "f64"], out_dtype)
        assert same_bits(numpy_path(prog, [x, y]), run([x, y]), "f64"), expr


def test_a_bool_mask_operand():
    need_native()
    rng = np.random.default_rng(23)
    mask, x = rng.random(N) < 0.5, values("f32", rng)
    expr = Select(Input(0), Unary("tanh", Input(1) * 2.0 + 1.0), Input(1) * 3.0 - 1.0)
    prog, run = segmented(expr, ["i1", "f32"], "f32")
    assert same_bits(numpy_path(prog, [mask, x]), run([mask, x]), "f32")


def test_erf_f32_and_pow_with_a_constant():
    need_native()
    rng = np.random.default_rng(3)
    x = values("f32", rng)
    gelu = Input(0) * 0.5 * (Unary("erf", Input(0) * 0.7071067811865476) + 1.0)
    for expr in (gelu, Binary("pow", Input(0) * 2.0, Const(3.0)) - Input(0)):
        prog, run = segmented(expr, ["f32"], "f32")
        assert same_bits(numpy_path(prog, [x]), run([x]), "f32"), expr


def test_plans_that_do_not_split(monkeypatch):
    fn = numpy_function
    assert plan_segments(Input(0) * Input(1) + 1.0, ["f32", "f32"], "f32", fn) is None  # all C
    assert plan_segments(Unary("tanh", Unary("exp", Input(0))), ["f32"], "f32", fn) is None
    assert plan_segments(Unary("tanh", Input(0)) * 2.0, ["f16"], "f16", fn) is None
    assert plan_segments(Unary("tanh", Input(0)) * Input(1), ["f32", "f64"], "f64", fn) is None
    assert plan_segments(Unary("tanh", Cast(Input(0), "f32")) + 1.0, ["f64"], "f32", fn) is None
    p = plan_segments(Unary("tanh", Input(0) * 2.0) * 3.0, ["f32"], "f32", fn)
    assert [s.kind for s in p.stages] == ["native", "numpy", "native"]
    assert p.n_temps == 1  # tanh writes over the value it reads
    # too little to gain for a compiler run: the GELUs in float64, whose erf is the slow exact
    # path; in float32 (the native erf) they split
    from tdflow.lowering.elementwise_ops import ELEMENTWISE_OPS

    monkeypatch.setattr(elementwise_segments, "MIN_GAIN", DEFAULT_GAIN)

    for op, dt, split in [("gelu", "f64", False), ("gelu_grad", "f64", False),
                          ("gelu", "f32", True), ("gelu_grad", "f32", True),
                          ("sigmoid", "f32", True), ("silu", "f32", True)]:
        d = ELEMENTWISE_OPS["tdflow." + op]
        got = plan_segments(d.bind(), [dt] * len(d.inputs), dt, fn)
        assert (got is not None) == split, (op, dt)


def test_one_compiler_run_per_expression(monkeypatch):
    """The native segments of one expression are built as one module."""
    need_native()
    from tdflow.runtime.backends.kernel_build import build_shared_object

    sources = []

    def counting(source, flags):
        sources.append(source)
        return build_shared_object(source, flags)

    monkeypatch.setattr(elementwise_native, "_builder", counting)
    expr = Unary("tanh", Input(0) * 1.75 - Input(1)) * Unary("exp", -Input(1)) + 0.375
    prog, run = segmented(expr, ["f32", "f32"], "f32")
    plan = plan_segments(expr, ["f32", "f32"], "f32", numpy_function)
    assert sum(s.kind == "native" for s in plan.stages) == 3
    rng = np.random.default_rng(19)
    x, y = values("f32", rng), values("f32", rng)
    assert same_bits(numpy_path(prog, [x, y]), run([x, y]), "f32")
    assert len(sources) == 1 and sources[0].count("PyCFunction") == 3


def test_cases_handed_to_numpy():
    need_native()
    rng = np.random.default_rng(5)
    expr = Unary("tanh", Input(0) * Input(1)) + Input(0)
    calls = []

    def numpy_run(inputs, out=None):
        calls.append(1)
        return "numpy"

    run = with_segments(numpy_run, expr, ["f32", "f32"], "f32", numpy_function)
    x, y = values("f32", rng), values("f32", rng)
    big = values("f32", rng, 2 * N)
    for inputs, out in [([x[:100], y[:100]], None),                        # small
                        ([x, y[:1]], None),                                 # broadcast
                        ([big[::2], y], None),                              # not contiguous
                        ([x.astype(np.float64), y], None),                  # another type
                        ([x, y], np.empty(N, np.float64)),                  # out of another type
                        ([big[:N], y], big[1:N + 1]),                       # out overlaps input
                        ([x, y], np.empty(2 * N, np.float32)[::2])]:        # out not contiguous
        calls.clear()
        assert run(inputs, out) == "numpy" and calls
    elementwise_segments.USE_SEGMENTS = False
    try:
        assert run([x, y]) == "numpy"
    finally:
        elementwise_segments.USE_SEGMENTS = True
    assert not isinstance(run([x, y]), str)


def test_no_compiler_means_numpy(monkeypatch):
    """No builder (no compiler, or a failed build) or ``TDFLOW_NATIVE=0``: the numpy program
    runs, with its values."""
    rng = np.random.default_rng(11)
    x = values("f32", rng)
    expr = Unary("tanh", Input(0) * 1.25 - 0.125) * -3.0  # built by no other test
    monkeypatch.setattr(elementwise_native, "_builder", None)
    run = with_segments(lambda inputs, out=None: "numpy", expr, ["f32"], "f32",
                        numpy_function)
    assert run([x]) == "numpy"
    monkeypatch.setenv("TDFLOW_NATIVE", "0")
    prog = render_numpy(expr + 1.0, ["f32"], "f32")
    assert same_bits(numpy_path(prog, [x]), prog([x]), "f32")


def test_threads_share_a_program():
    need_native()
    rng = np.random.default_rng(13)
    e = maximum(Unary("tanh", Input(0) * Input(1) + Input(0)) * 0.5, Const(0.0))
    prog = render_numpy(e * e, ["f32", "f32"], "f32")
    pairs = [(values("f32", rng), values("f32", rng)) for _ in range(4)]
    refs = [numpy_path(prog, list(p)) for p in pairs]
    bad = []

    def work(k: int) -> None:
        for _ in range(20):
            got = prog(list(pairs[k]))
            if not same_bits(refs[k], got, "f32"):
                bad.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad


CHAIN = """
func.func @chain(%x: tensor<64x300xf32>, %y: tensor<64x300xf32>) -> tensor<64x300xf32> {
  %0 = "tdflow.broadcast_mul"(%x, %y) : (tensor<64x300xf32>, tensor<64x300xf32>) -> tensor<64x300xf32>
  %1 = "tdflow.broadcast_add"(%0, %x) : (tensor<64x300xf32>, tensor<64x300xf32>) -> tensor<64x300xf32>
  %2 = "tdflow.tanh"(%1) : (tensor<64x300xf32>) -> tensor<64x300xf32>
  %3 = "tdflow.scalar_mul"(%2) {has_float_operand = true, float_operand = 0.5 : f64} : (tensor<64x300xf32>) -> tensor<64x300xf32>
  %4 = "tdflow.relu"(%3) : (tensor<64x300xf32>) -> tensor<64x300xf32>
  %5 = "tdflow.square"(%4) : (tensor<64x300xf32>) -> tensor<64x300xf32>
  return %5 : tensor<64x300xf32>
}
"""


def test_compiled_chain_equals_numpy_and_eager(tmp_path):
    """The graph (one fused launch, not tiled) gives the numpy expression's bits, and the
    eager calls of the same six ops give the same bits again."""
    need_native()
    import tdflow

    path = tmp_path / "chain.mlir"
    path.write_text(CHAIN)
    fn = tdflow.compile(str(path))
    rng = np.random.default_rng(17)
    x = values("f32", rng, 64 * 300).reshape(64, 300)
    y = values("f32", rng, 64 * 300).reshape(64, 300)
    got = np.asarray(fn(x, y))
    assert [(ln.op, ln.tile) for ln in fn.plan.launches] == [("tdflow.fused_elementwise", 0)]
    hand = np.square(np.maximum(np.tanh(x * y + x) * np.float32(0.5), 0))
    assert same_bits(hand, got, "f32")
    F = tdflow.functional
    tx, ty = tdflow.tensor(x), tdflow.tensor(y)
    eager = F.square(F.relu(F.scalar_mul(F.tanh(F.broadcast_add(F.broadcast_mul(tx, ty), tx)),
                                          has_float_operand=True, float_operand=0.5)))
    assert same_bits(eager.numpy(), got, "f32")


def test_the_float32_gelus_segmented_give_the_numpy_program_s_bits(monkeypatch):
    """gelu and gelu_grad as their kernels render them, segmented at the default gain (C
    stages around the native erf and numpy's exp), against the numpy program with every
    native path off (the erf's numpy table path included): the same bits."""
    need_native()
    from tdflow.lowering import erf_native
    from tdflow.lowering.elementwise_ops import ELEMENTWISE_OPS

    monkeypatch.setattr(elementwise_segments, "MIN_GAIN", DEFAULT_GAIN)
    rng = np.random.default_rng(41)
    x, dy = values("f32", rng), values("f32", rng)
    x[:64] = np.linspace(-5, 5, 64)  # both sides of erf's cut-off at |x / sqrt 2| = 3.92
    for op, ins in (("gelu", [x]), ("gelu_grad", [x, dy])):
        prog, run = segmented(ELEMENTWISE_OPS["tdflow." + op].bind(), ["f32"] * len(ins), "f32")
        got = run(ins)
        monkeypatch.setattr(erf_native, "USE_NATIVE_ERF", False)
        want = numpy_path(prog, ins)
        monkeypatch.setattr(erf_native, "USE_NATIVE_ERF", True)
        assert same_bits(want, got, "f32"), op
        out = ins[0].copy()  # in place over x, as the plan may give it
        assert run([out, *ins[1:]], out) is out and same_bits(want, out, "f32"), op
