"""float32 erf (``lowering/erf_f32.py``) against the exact float64 path rounded to float32.

Stated accuracy: every float32 input gives the reference's float32 value or a neighbour
(<= 1 ulp); in practice it is correctly rounded but for a handful of inputs in 2^32
(``bench/erf_check.py`` runs them all). Here: a large deterministic sample over every
exponent, both signs, zeros, subnormals, inf, nan and the values around the table's
intervals and the cut-off to 1.0; then the kernels (eager and graph) that use it.
"""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.lowering.erf_f32 import ERF_F32_SCALE, ERF_F32_TOP, erf_f32, erf_ufunc
from tdflow.lowering.erf_numpy import erf_f64, erf_ufunc_exact

import tdflow


def _reference(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return erf_f64(x.astype(np.float64)).astype(np.float32)


def _ordered(v: np.ndarray) -> np.ndarray:
    """float32 bits as integers counting ulps across zero (-0.0 and 0.0 both 0)."""
    i = v.view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def _sample() -> np.ndarray:
    rng = np.random.default_rng(2026_12_03)
    bits = rng.integers(0, 2**32, 3_000_000, dtype=np.uint64).astype(np.uint32)  # all exponents
    near = rng.uniform(0, 4.5, 2_000_000)  # where the table works
    # Around every interval edge of the table (k / SCALE), a few ulps either side.
    edges = np.arange(int(ERF_F32_TOP * ERF_F32_SCALE) + 2, dtype=np.float32) / ERF_F32_SCALE
    steps = np.arange(-4, 5, dtype=np.int32)
    around = (edges.view(np.int32)[:, None] + steps[None, :]).ravel().view(np.float32)
    cut = np.float32(3.9)
    tail = (cut.view(np.int32) + np.arange(200_000, dtype=np.int32)).view(np.float32)  # to ~4.0
    small = np.arange(0, 2**23 + 4096, 37, dtype=np.int32).view(np.float32)  # subnormals, tiny
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45,
                         np.finfo(np.float32).tiny, np.finfo(np.float32).max, 4.0, 3.9999998,
                         0.5, 1.0, 2.0], np.float32)
    x = np.concatenate([bits.view(np.float32), near.astype(np.float32), around, tail, small,
                        specials])
    return np.concatenate([x, -x])


def test_within_one_ulp_of_the_float64_reference_and_almost_always_equal():
    x = _sample()
    got, want = erf_f32(x), _reference(x)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    diff = np.abs(_ordered(got[~nan]) - _ordered(want[~nan]))
    assert diff.max() <= 1, x[~nan][diff.argmax()]
    assert np.count_nonzero(diff) <= 20  # bench/erf_check.py: a handful in all 2^32
    # signed zeros keep their sign; erf is odd bit for bit
    assert np.array_equal(np.signbit(got[~nan]), np.signbit(want[~nan]))
    assert np.array_equal(erf_f32(-x[~nan]), -got[~nan])


def test_cut_off_and_specials():
    x = np.array([0.0, -0.0, np.inf, -np.inf, 3.93, 4.0, 1e30, -3e38], np.float32)
    got = erf_f32(x)
    assert got.tolist() == [0.0, -0.0, 1.0, -1.0, 1.0, 1.0, 1.0, -1.0]
    assert np.signbit(got[1]) and not np.signbit(got[0])
    tiny = np.array([1e-45, -1e-45, 1e-40], np.float32)  # subnormals: 2/sqrt(pi) x, rounded
    assert np.array_equal(erf_f32(tiny), _reference(tiny))


def test_layouts_in_place_and_blocks():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(70, 500)).astype(np.float32) * 2  # three blocks, a ragged last one
    want = erf_f32(x.copy())
    assert want.shape == x.shape and want.dtype == np.float32
    assert np.array_equal(erf_f32(x.T), want.T)  # non-contiguous input
    out = np.empty((500, 70), np.float32).T  # non-contiguous output
    assert erf_f32(x, out) is out and np.array_equal(out, want)
    y = x.copy()
    assert erf_f32(y, y) is y and np.array_equal(y, want)  # in place keeps the signs
    assert erf_f32(np.float32(-0.5)).shape == ()
    assert erf_f32(np.zeros((0, 4), np.float32)).shape == (0, 4)
    with pytest.raises(TypeError, match="float32"):
        erf_f32(np.zeros(3))


def test_dispatch_keeps_the_exact_path_for_other_types():
    rng = np.random.default_rng(9)
    x64 = rng.normal(size=1000) * 3
    assert np.array_equal(erf_ufunc(x64), erf_ufunc_exact(x64))
    x32 = x64.astype(np.float32)
    assert np.array_equal(erf_ufunc(x32), erf_f32(x32))
    out16 = np.empty(1000, np.float16)  # f16 stored from f32 computed: rounds through f32
    erf_ufunc(x32, out=out16, dtype=np.float32)
    assert np.array_equal(out16, erf_f32(x32).astype(np.float16))


def test_eager_and_graph_gelu_use_the_same_kernel(tmp_path):
    rng = np.random.default_rng(3)
    x = (rng.normal(size=(8, 64)) * 3).astype(np.float32)
    dy = rng.normal(size=(8, 64)).astype(np.float32)
    src = """func.func @f(%x: tensor<8x64xf32>, %dy: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>) {
  %0 = "tdflow.erf"(%x) : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %1 = "tdflow.gelu"(%x) : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %2 = "tdflow.gelu_grad"(%x, %dy) : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  return %0, %1, %2 : tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>
}
"""
    (tmp_path / "p.mlir").write_text(src)
    graph = tdflow.compile(str(tmp_path / "p.mlir"))(x, dy)
    F = tdflow.functional
    tx, tdy = tdflow.tensor(x), tdflow.tensor(dy)
    eager = (F.erf(tx).numpy(), F.gelu(tx).numpy(), F.gelu_grad(tx, tdy).numpy())
    for g, e in zip(graph, eager):
        assert np.array_equal(g, e)
    assert np.array_equal(graph[0], erf_f32(x))
    # GELU within a few f32 ulps of its float64 value (erf's 1 ulp plus the formula's roundings)
    x64 = x.astype(np.float64)
    gelu64 = 0.5 * x64 * (1 + erf_f64(x64 / np.sqrt(2.0)))
    np.testing.assert_allclose(graph[1], gelu64, rtol=1e-6, atol=1e-7)
