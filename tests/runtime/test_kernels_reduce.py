"""reduce_sum / reduce_max against loop references: axes (negative, several, empty), keepdims."""

from __future__ import annotations

import itertools

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tdflow.runtime.kernels.registry import select_kernel

NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i8": np.int8, "i32": np.int32,
      "i64": np.int64, "i1": np.bool_}


def ref_reduce(x, axes, keep, fn, init):
    axes = sorted({a % x.ndim for a in axes}) if axes else list(range(x.ndim))
    out_shape = [1 if i in axes else d for i, d in enumerate(x.shape)]
    out = np.full(out_shape, init, dtype=np.float64)
    for idx in itertools.product(*(range(d) for d in x.shape)):
        o = tuple(0 if i in axes else v for i, v in enumerate(idx))
        out[o] = fn(out[o], float(x[idx]))
    if not keep:
        out = out.reshape([d for i, d in enumerate(out_shape) if i not in axes])
    return out


def run(op, x, attrs, outs=None):
    dt = {v: k for k, v in NP.items()}[x.dtype.type]
    return select_kernel(op, "cpu", (dt,), attrs)(attrs, [x], outs)[0]


@pytest.mark.parametrize("dtype", ["f16", "f32", "f64", "i8", "i32", "i64"])
@pytest.mark.parametrize("axes,keep", [([0], False), ([-1], True), ([0, 2], False),
                                       ([1, -1], True), ([], False)])
def test_sum_and_max(dtype, axes, keep):
    x = (np.arange(24).reshape(2, 3, 4) % 7 - 3).astype(NP[dtype])
    for op, fn, init in [("tdflow.reduce_sum", lambda a, b: a + b, 0.0),
                         ("tdflow.reduce_max", max, -np.inf)]:
        got = run(op, x, {"axis": axes, "keepdims": keep})
        want = ref_reduce(x, axes, keep, fn, init)
        assert got.shape == want.shape and got.dtype == NP[dtype]
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-3)


def test_empty_and_size_one_and_buffers():
    e = np.ones((0, 3), np.float32)
    assert run("tdflow.reduce_sum", e, {"axis": [0]}).tolist() == [0, 0, 0]
    assert run("tdflow.reduce_max", e, {"axis": [0]}).tolist() == [-np.inf] * 3
    assert run("tdflow.reduce_max", np.ones((0, 2), np.int32), {"axis": [0]}).tolist() == [
        np.iinfo(np.int32).min] * 2
    one = np.ones((1, 1), np.float32)
    assert run("tdflow.reduce_sum", one, {"axis": [1], "keepdims": True}).shape == (1, 1)
    out = np.empty((3,), np.float32)
    assert run("tdflow.reduce_sum", np.ones((2, 3), np.float32), {"axis": [0]}, [out]) is out
    assert out.tolist() == [2, 2, 2]
    b = np.array([[False, True], [False, False]])
    assert run("tdflow.reduce_max", b, {"axis": [1]}).tolist() == [True, False]
    # a direct call's attributes go through the dialect's normalization (Kernel.__call__)
    with pytest.raises(ValueError, match="'tdflow.reduce_sum': attribute 'axis': axis 2 is out "
                                         "of range"):
        run("tdflow.reduce_sum", one, {"axis": [2]})


def test_half_accumulates_in_f32():
    x = np.full(4096, 0.1, np.float16)
    got = run("tdflow.reduce_sum", x, {"axis": [0]})
    assert got.dtype == np.float16 and abs(float(got) - 409.5) < 1.0


@settings(max_examples=25, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=3),
                  elements=st.floats(-10, 10)), st.data())
def test_sum_matches_loops(x, data):
    axes = data.draw(st.lists(st.integers(-x.ndim, x.ndim - 1), max_size=x.ndim, unique=True))
    if len({a % x.ndim for a in axes}) != len(axes):
        axes = list({a % x.ndim for a in axes})
    keep = data.draw(st.booleans())
    got = run("tdflow.reduce_sum", x, {"axis": axes, "keepdims": keep})
    want = ref_reduce(x, axes, keep, lambda a, b: a + b, 0.0)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
