"""matmul / batch_matmul against naive triple loops: transposes, alpha, _add_to_output, dtypes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from tdflow.runtime.kernels.linalg import batch_matmul
from tdflow.runtime.kernels.registry import (
    KernelNotFoundError,
    complete_kernel_attrs,
    select_kernel,
)

NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64}


def naive_mm(a, b):
    m, k = a.shape
    k2, n = b.shape
    assert k == k2
    out = np.zeros((m, n))
    for i, j in itertools.product(range(m), range(n)):
        out[i, j] = sum(float(a[i, t]) * float(b[t, j]) for t in range(k))
    return out


def call(op, dtype, inputs, attrs, outs=None):
    k = select_kernel(op, "cpu", (dtype,) * len([i for i in inputs if i is not None]), attrs)
    return k(attrs, inputs, outs)[0]


@pytest.mark.parametrize("dtype", ["f16", "f32", "f64", "i32", "i64"])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_transposes_alpha_add(dtype, ta, tb):
    rng = np.random.default_rng(1)
    a = rng.integers(-3, 4, size=(4, 3) if ta else (3, 4)).astype(NP[dtype])
    b = rng.integers(-3, 4, size=(5, 4) if tb else (4, 5)).astype(NP[dtype])
    base = naive_mm(a.T if ta else a, b.T if tb else b)
    attrs = {"transpose_a": ta, "transpose_b": tb}
    got = call("tdflow.matmul", dtype, [a, b], attrs)
    assert got.shape == (3, 5) and got.dtype == NP[dtype]
    np.testing.assert_allclose(got.astype(np.float64), base, rtol=1e-3)
    alpha = 2.0
    add = rng.integers(-3, 4, size=(3, 5)).astype(NP[dtype])
    got = call("tdflow.matmul", dtype, [a, b, add], {**attrs, "alpha": alpha})
    np.testing.assert_allclose(got.astype(np.float64), alpha * base + add, rtol=1e-3)


def test_matmul_output_buffers_and_accumulate_in_place():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    out = np.empty((3, 2))
    assert call("tdflow.matmul", "f64", [a, b], {}, [out]) is out
    np.testing.assert_allclose(out, naive_mm(a, b), rtol=1e-12)
    acc = np.ones((3, 2))
    got = call("tdflow.matmul", "f64", [a, b, acc], {"alpha": 0.5}, [acc])  # inplace={0: 2}
    assert got is acc
    np.testing.assert_allclose(acc, 1 + 0.5 * naive_mm(a, b), rtol=1e-12)
    # f16 with a preallocated f16 buffer
    o16 = np.empty((3, 2), np.float16)
    call("tdflow.matmul", "f16", [a.astype(np.float16), b.astype(np.float16)], {}, [o16])
    np.testing.assert_allclose(o16, naive_mm(a, b), rtol=1e-2, atol=1e-2)


def test_matmul_edge_shapes_and_errors():
    z = call("tdflow.matmul", "f32", [np.ones((0, 3), np.float32), np.ones((3, 2), np.float32)], {})
    assert z.shape == (0, 2)
    z = call("tdflow.matmul", "f32", [np.ones((2, 0), np.float32), np.ones((0, 2), np.float32)], {})
    assert z.tolist() == [[0, 0], [0, 0]]
    with pytest.raises(ValueError, match="inner dimensions differ"):
        call("tdflow.matmul", "f32", [np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)], {})
    with pytest.raises(KernelNotFoundError):
        select_kernel("tdflow.matmul", "cpu", ("f32", "f64"), {})
    # N-d a against 2-d b (OneFlow's matmul broadcasts a's leading dims)
    a = np.ones((2, 3, 4), np.float32)
    assert call("tdflow.matmul", "f32", [a, np.ones((4, 5), np.float32)], {}).shape == (2, 3, 5)


@pytest.mark.parametrize("ta,tb", [(False, False), (True, True), (False, True)])
def test_batch_matmul(ta, tb):
    rng = np.random.default_rng(3)
    a = rng.normal(size=(2, 4, 3) if ta else (2, 3, 4)).astype(np.float32)
    b = rng.normal(size=(2, 5, 4) if tb else (2, 4, 5)).astype(np.float32)
    add = rng.normal(size=(2, 3, 5)).astype(np.float32)
    got = call("tdflow.batch_matmul", "f32", [a, b, add],
               {"transpose_a": ta, "transpose_b": tb, "alpha": -1.0})
    for i in range(2):
        ai = a[i].T if ta else a[i]
        bi = b[i].T if tb else b[i]
        np.testing.assert_allclose(got[i], -naive_mm(ai, bi) + add[i], rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="not supported"):
        call("tdflow.batch_matmul", "f32", [np.ones(3, np.float32), np.ones(3, np.float32)], {})


@pytest.mark.parametrize("shape", [(16, 4, 64, 32), (64, 16, 16), (2, 512, 128), (3, 7, 5)])
@pytest.mark.parametrize("dt", ["f4", "f8"])
def test_batch_matmul_transposed_b_copied_gives_blas_bits(shape, dt):
    # batch_matmul(transpose_b) copies b^T to its plain layout before the product: the same
    # bits as numpy's product over the transposed view (BLAS's transposed kernel)
    rng = np.random.default_rng(shape[-1])
    a, b = (rng.standard_normal(shape) * 3).astype(dt), (rng.standard_normal(shape) * 3).astype(dt)
    a.reshape(-1)[::97] = -0.0
    attrs = complete_kernel_attrs("tdflow.batch_matmul", {"transpose_b": True})
    out = np.empty(shape[:-1] + shape[-2:-1], dt)
    got = batch_matmul(attrs, [a, b], [out])[0]
    want = np.matmul(a, np.swapaxes(b, -1, -2))
    assert np.array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))
