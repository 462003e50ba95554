"""Block-by-block evaluation of rendered programs (``lowering/elementwise_blocks.py``) is bit for
bit the whole-array evaluation: random expressions over every dtype the numpy renderer takes,
inputs full of NaN, inf, signed zeros and extremes, a ragged last block, scalar (0-d) operands,
in-place outputs; and the cases that must fall back (broadcasting, non-contiguous layouts).
"""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.dialect.formula.expr import (
    BINARY_OPS,
    UNARY_OPS,
    Binary,
    Cast,
    Const,
    Expr,
    Input,
    Select,
    Unary,
)
from tdflow.lowering import elementwise_blocks
from tdflow.lowering.elementwise_blocks import BLOCK
from tdflow.lowering.elementwise_numpy import render_numpy

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # casts of nan and inf


@pytest.fixture(autouse=True)
def _numpy_only(monkeypatch):
    """Blocks against whole arrays, both numpy: the native loop (compared with numpy in
    ``test_elementwise_native.py``) would otherwise answer for both."""
    from tdflow.lowering import elementwise_native

    monkeypatch.setattr(elementwise_native, "USE_NATIVE", False)
N = 2 * BLOCK + 1234  # three blocks, the last one short
FLOATS = ("f16", "f32", "f64")
INTS = ("i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64")
SPECIAL = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 1e-40, 3e38]


def _values(dtype: str, rng: np.random.Generator, n: int = N) -> np.ndarray:
    from tdflow.dialect.types import DTYPES

    dt = np.dtype(DTYPES[dtype])
    if dt.kind == "f":
        with np.errstate(over="ignore"):
            v = (rng.standard_normal(n) * 3).astype(dt)
            v[rng.integers(0, n, n // 5)] = np.array(rng.choice(SPECIAL, n // 5)).astype(dt)
        return v
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    info = np.iinfo(dt)
    v = rng.integers(max(info.min, -100), min(info.max, 100), n).astype(dt)
    v[rng.integers(0, n, n // 20)] = info.max
    v[rng.integers(0, n, n // 20)] = info.min
    v[rng.integers(0, n, n // 20)] = 0
    return v


def _random_expr(rng: np.random.Generator, depth: int, n_inputs: int) -> Expr:
    if depth == 0 or rng.random() < 0.2:
        if rng.random() < 0.15:
            return Const(float(rng.choice([0.5, -2.0, 3.0])))
        return Input(int(rng.integers(0, n_inputs)))
    kind = rng.random()
    if kind < 0.4:
        return Unary(str(rng.choice(sorted(UNARY_OPS))), _random_expr(rng, depth - 1, n_inputs))
    if kind < 0.85:
        return Binary(str(rng.choice(sorted(BINARY_OPS))), _random_expr(rng, depth - 1, n_inputs),
                      _random_expr(rng, depth - 1, n_inputs))
    if kind < 0.95:
        c = Binary("gt", _random_expr(rng, depth - 1, n_inputs), Const(0.0))
        return Select(c, _random_expr(rng, depth - 1, n_inputs),
                      _random_expr(rng, depth - 1, n_inputs))
    return Cast(_random_expr(rng, depth - 1, n_inputs), str(rng.choice(["f32", "i32", "f64"])))


def _call(prog, inputs, out):
    try:
        return prog(inputs, out)
    except (TypeError, ValueError) as e:  # an op the dtype does not take (bitwise on floats)
        return np.array(type(e).__name__)


def _both(prog, inputs, out=None):
    """(whole-array result, blocked result): the switch is read at every call."""
    elementwise_blocks.USE_BLOCKS = False
    try:
        whole = _call(prog, inputs, None if out is None else out.copy())
    finally:
        elementwise_blocks.USE_BLOCKS = True
    return whole, _call(prog, inputs, out)


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.fixture
def block_runs(monkeypatch):
    """How many calls went through the block path."""
    calls = []
    real = elementwise_blocks.run_blocks

    def counting(*args, **kw):
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(elementwise_blocks, "run_blocks", counting)
    return calls


@pytest.mark.parametrize("dtype", FLOATS + INTS + ("i1",))
def test_random_expressions_bit_identical(dtype, block_runs):
    rng = np.random.default_rng(abs(hash(dtype)) % 2**32)
    checked = 0
    for _ in range(60):
        e = _random_expr(rng, 4, 3)
        if not any(isinstance(n, Input) for n in _walk(e)):
            continue
        dtypes = [dtype] * 3
        try:
            prog = render_numpy(e, dtypes)
        except (ValueError, TypeError):  # an op the dtype does not take: both paths refuse
            continue
        inputs = [_values(d, rng) for d in dtypes]
        whole, blocked = _both(prog, inputs)
        assert _same_bits(whole, blocked), e
        checked += whole.ndim > 0
    assert checked >= 10 and len(block_runs) >= 10


def _walk(e: Expr):
    yield e
    for c in e.children():
        yield from _walk(c)


def test_mixed_dtypes_scalars_and_in_place(block_runs):
    rng = np.random.default_rng(11)
    x, y = _values("f32", rng), _values("f64", rng)
    e = Unary("tanh", Input(0) * Input(1) + Input(0)) * 0.5
    prog = render_numpy(Binary("max", e, Const(0.0)) * Input(2), ["f32", "f64", "f32"], "f32")
    s = np.array(np.float32(-1.5))  # a 0-d operand read by a step that also reads an array
    whole, blocked = _both(prog, [x, y, s])
    assert _same_bits(whole, blocked)
    out = x.copy()
    elementwise_blocks.USE_BLOCKS = False
    want = prog([x, y, s], x.copy())
    elementwise_blocks.USE_BLOCKS = True
    assert prog([out, y, s], out) is out and _same_bits(out, want)  # out aliases input 0
    # f16 stored from f32 computed; a cast output type
    prog16 = render_numpy(Unary("exp", Input(0)) - Input(0), ["f16"], "f16")
    h = _values("f16", rng)
    assert _same_bits(*_both(prog16, [h]))
    erf = render_numpy(Unary("erf", Input(0) * 0.7) + Input(0), ["f32"], "f32")
    assert _same_bits(*_both(erf, [x]))
    assert len(block_runs) == 4


def test_a_step_on_scalars_alone_falls_back(block_runs):
    # exp(in1) with in1 0-d would be computed per element of a block: the whole path runs
    rng = np.random.default_rng(5)
    x = _values("f32", rng)
    prog = render_numpy(Unary("exp", Input(1)) * Input(0) + Input(0), ["f32", "f32"], "f32")
    s = np.array(np.float32(0.3))
    whole, blocked = _both(prog, [x, s])
    assert _same_bits(whole, blocked) and not block_runs


def test_broadcasting_and_strided_layouts_fall_back(block_runs):
    rng = np.random.default_rng(6)
    x = _values("f32", rng, 4 * BLOCK).reshape(4, BLOCK)
    row = _values("f32", rng, BLOCK)
    prog = render_numpy(Unary("tanh", Input(0) * Input(1)) + Input(0), ["f32", "f32"], "f32")
    assert _same_bits(*_both(prog, [x, row]))  # broadcasting
    assert _same_bits(*_both(prog, [x.T, x.T]))  # not C-contiguous
    out = np.empty((BLOCK, 4), np.float32).T
    w, b = _both(prog, [x, x], out)
    assert _same_bits(w, b)  # a strided output
    assert not block_runs
