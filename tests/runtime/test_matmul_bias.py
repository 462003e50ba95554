"""``matmul_bias`` (``runtime/kernels/linalg.py``): its general kernel and its bound launch give
the bits of ``matmul`` followed by a last-axis ``bias_add`` (the two kernels it replaces in a
plan), for every transpose, ``alpha``, f16/f32/f64, and NaN, inf and signed zeros in every
operand; the hooks reject a bias of the wrong length.
"""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.runtime.kernels.elementwise import bias_add
from tdflow.runtime.kernels.linalg import bind_matmul_bias, matmul, matmul_bias
from tdflow.runtime.kernels.registry import complete_kernel_attrs

import tdflow

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
SPECIAL = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40])


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def _operands(rng, dtype, ta, tb, m=5, k=7, n=6):
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(dtype)
    bias = rng.standard_normal(n).astype(dtype)
    for arr in (a, b, bias):
        flat = arr.reshape(-1)
        flat[rng.integers(0, flat.size, 2)] = rng.choice(SPECIAL, 2).astype(dtype)
    bias[:2] = np.array([-0.0, 0.0], dtype)  # -0 + -0 stays -0 only if the add is the same
    return a, b, bias


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("alpha", [1.0, 2.0])
def test_matmul_bias_is_matmul_then_bias_add(dtype, ta, tb, alpha):
    rng = np.random.default_rng(int(ta) + 2 * int(tb) + 4 * int(alpha))
    attrs = complete_kernel_attrs("tdflow.matmul_bias",
                                  {"transpose_a": ta, "transpose_b": tb, "alpha": alpha})
    a, b, bias = _operands(rng, dtype, ta, tb)
    mm = complete_kernel_attrs("tdflow.matmul", dict(attrs))
    product = matmul(mm, [a, b], [None])[0]
    want = bias_add({"axis": 1}, [product, bias], [product])[0]  # in place, as the plan ran it
    general = matmul_bias(attrs, [a, b, bias], [np.empty_like(want)])[0]
    fresh = matmul_bias(attrs, [a, b, bias], [None])[0]
    assert np.array_equal(_bits(general), _bits(want))
    assert np.array_equal(_bits(fresh), _bits(want))
    dt = np.dtype(dtype)
    bound = bind_matmul_bias(attrs, [(a.shape, dt), (b.shape, dt), (bias.shape, dt)],
                             [(want.shape, dt)])
    if dtype == np.float16 or alpha != 1.0:
        assert bound is None  # the general path (a wider product, a scaling) runs
        return
    out = np.full_like(want, np.nan)
    bound(attrs, [a, b, bias], [out])
    assert np.array_equal(_bits(out), _bits(want))


def test_the_registered_kernel_carries_its_bind():
    """The plan loader reads ``bind`` from the registered (BLAS-scoped) function: without it
    every launch took the general path inside the thread scope (measured ~2.5 us slower)."""
    from tdflow.runtime.kernels.registry import kernel_table

    (k,) = kernel_table("cpu").candidates("tdflow.matmul_bias")
    assert k.fn.bind is bind_matmul_bias


def test_bound_matmul_bias_declines_a_mismatched_bias():
    f4 = np.dtype("f4")
    attrs = complete_kernel_attrs("tdflow.matmul_bias", {})
    assert bind_matmul_bias(attrs, [((2, 3), f4), ((3, 4), f4), ((3,), f4)],
                            [((2, 4), f4)]) is None
    assert bind_matmul_bias(attrs, [((2, 3), f4), ((3, 4), f4), ((4,), np.dtype("f8"))],
                            [((2, 4), f4)]) is None
    with pytest.raises(ValueError, match="bias"):
        matmul_bias(attrs, [np.ones((2, 3), f4), np.ones((3, 4), f4), np.ones(3, f4)], [None])


def test_hooks_check_the_bias():
    ok = ('func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<4xf32>) '
          '-> tensor<2x4xf32> {\n  %0 = "tdflow.matmul_bias"(%a, %b, %c) : (tensor<2x3xf32>, '
          'tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>\n  return %0 : tensor<2x4xf32>\n}')
    f = tdflow.compile(ok)
    a, b, c = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32), np.arange(4, dtype=np.float32)
    assert np.array_equal(f(a, b, c), a @ b + c)
    bad = ok.replace("%c: tensor<4xf32>", "%c: tensor<3xf32>").replace(
        "tensor<4xf32>) -> tensor<2x4xf32>\n  return", "tensor<3xf32>) -> tensor<2x4xf32>\n  return")
    with pytest.raises(Exception, match="bias"):
        tdflow.compile(bad)
