"""sgd_update: in-place update, every attribute and optional tensor operand (OneFlow semantics)."""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.dialect.types import dtype_from_numpy
from tdflow.runtime.kernels.registry import select_kernel


def run(inputs, attrs):
    dts = tuple(dtype_from_numpy(a.dtype) for a in inputs if a is not None)
    k = select_kernel("tdflow.sgd_update", "cpu", dts, attrs)
    assert k.num_outputs == 0
    return k(attrs, inputs, [])


def reference(model, diff, lr, scale=1.0, l1=0.0, l2=0.0, wd=0.0):
    out = []
    for m, g in zip(model.tolist(), diff.tolist()):
        sign = (m > 0) - (m < 0)
        g = scale * g + l1 * sign + l2 * m
        out.append(m - lr * (g + wd * m))
    return np.array(out)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_plain_and_regularised(dtype):
    rng = np.random.default_rng(0)
    m0 = rng.normal(size=6).astype(dtype)
    m0[0] = 0.0
    g = rng.normal(size=6).astype(dtype)
    m = m0.copy()
    assert run([m, g], {"learning_rate_val": 0.1}) == []
    np.testing.assert_allclose(m, reference(m0, g, 0.1), rtol=1e-6)
    m = m0.copy()
    attrs = {"learning_rate_val": 0.1, "learning_rate_scale": 0.5, "scale": 2.0, "l1": 0.01,
             "l2": 0.02, "weight_decay": 0.03}
    run([m, g], attrs)
    np.testing.assert_allclose(m, reference(m0, g, 0.05, 2.0, 0.01, 0.02, 0.03), rtol=1e-6)


def test_tensor_operands_copy_and_skip():
    m0 = np.array([1.0, -2.0, 3.0])
    g = np.array([0.5, 0.5, -1.0])
    m = m0.copy()
    copy = np.zeros(3, np.float16)
    lr = np.array([0.2])
    scale_t = np.array(3.0)
    run([m, g, copy, lr, scale_t, None], {"learning_rate_val": 99.0, "scale": 0.5})
    want = reference(m0, g, 0.2, scale=1.5)
    np.testing.assert_allclose(m, want)
    np.testing.assert_allclose(copy, want.astype(np.float16))
    m = m0.copy()
    run([m, g, None, None, None, np.array([1], np.int64)], {"learning_rate_val": 1.0})
    assert m.tolist() == m0.tolist()  # skip_if != 0: no update
    run([m, g, None, None, None, np.array([0], np.int64)], {"learning_rate_val": 1.0})
    np.testing.assert_allclose(m, m0 - g)
    # compact operands with operandSegmentSizes: model, diff, learning_rate
    m = m0.copy()
    run([m, g, np.array([0.5])], {"operandSegmentSizes": [1, 1, 0, 1, 0, 0]})
    np.testing.assert_allclose(m, m0 - 0.5 * g)


def test_half_model_updates_through_f32():
    m = np.array([1.0, 2.0], np.float16)
    run([m, np.array([1.0, 1.0], np.float16)], {"learning_rate_val": 0.001})
    assert m.dtype == np.float16
    np.testing.assert_allclose(m, [0.999, 1.999], rtol=1e-3)


def test_empty_model():
    m = np.zeros(0, np.float32)
    run([m, np.zeros(0, np.float32)], {"learning_rate_val": 0.1})
    assert m.shape == (0,)
