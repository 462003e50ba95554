"""max_pool_2d (values, indices, ceil_mode, dilation, padding, layouts) and its gradient."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tdflow.runtime.kernels.registry import select_kernel

MLIR = {np.float16: "f16", np.float32: "f32", np.float64: "f64", np.int32: "i32", np.int64: "i64"}


def run(op, inputs, attrs, outs=None):
    dts = tuple(MLIR[a.dtype.type] for a in inputs)
    return select_kernel(op, "cpu", dts, attrs)(attrs, inputs, outs)


def out_len(size, k, p, s, d, ceil):
    eff = d * (k - 1) + 1
    o = (math.ceil if ceil else math.floor)((size + 2 * p - eff) / s) + 1
    if ceil and (o - 1) * s >= size + p:
        o -= 1
    return o


def naive_pool(x, k, p, s, d, ceil):
    n, c, h, w = x.shape
    oh, ow = (out_len(h, k[0], p[0], s[0], d[0], ceil), out_len(w, k[1], p[1], s[1], d[1], ceil))
    y = np.full((n, c, oh, ow), -np.inf)
    ind = np.full((n, c, oh, ow), -1, np.int64)  # -1: the window holds no input element
    for b, ch, i, j in itertools.product(range(n), range(c), range(oh), range(ow)):
        for a, e in itertools.product(range(k[0]), range(k[1])):
            hi, wi = i * s[0] - p[0] + a * d[0], j * s[1] - p[1] + e * d[1]
            if 0 <= hi < h and 0 <= wi < w and x[b, ch, hi, wi] > y[b, ch, i, j]:
                y[b, ch, i, j] = x[b, ch, hi, wi]
                ind[b, ch, i, j] = hi * w + wi
    return y, ind


def attrs_for(k, p, s, d, ceil, fmt="channels_first"):
    return {"kernel_size": list(k), "padding": list(p), "stride": list(s), "dilation": list(d),
            "ceil_mode": ceil, "return_indices": True, "data_format": fmt}


CASES = [  # shape, kernel, padding, stride, dilation, ceil_mode
    ((2, 3, 6, 6), (2, 2), (0, 0), (2, 2), (1, 1), False),
    ((1, 2, 7, 5), (3, 3), (1, 1), (2, 2), (1, 1), True),
    ((1, 1, 8, 9), (3, 2), (1, 0), (2, 3), (2, 2), False),
    ((1, 1, 5, 5), (2, 2), (0, 0), (2, 2), (1, 1), True),
    ((1, 2, 4, 4), (3, 3), (1, 1), (1, 1), (1, 1), False),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("fmt", ["channels_first", "channels_last"])
def test_max_pool_against_loops(case, fmt):
    shape, k, p, s, d, ceil = case
    x = np.random.default_rng(0).permutation(math.prod(shape)).reshape(shape).astype(np.float64)
    want_y, want_i = naive_pool(x, k, p, s, d, ceil)
    a = attrs_for(k, p, s, d, ceil, fmt)
    if fmt == "channels_last":
        y, ind = run("tdflow.max_pool_2d", [x.transpose(0, 2, 3, 1).copy()], a)
        y, ind = y.transpose(0, 3, 1, 2), ind.transpose(0, 3, 1, 2)
    else:
        y, ind = run("tdflow.max_pool_2d", [x], a)
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(ind, want_i)
    assert ind.dtype == np.int64


@pytest.mark.parametrize("case", CASES)
def test_max_pool_grad_scatters_to_argmax(case):
    shape, k, p, s, d, ceil = case
    rng = np.random.default_rng(1)
    x = rng.permutation(math.prod(shape)).reshape(shape).astype(np.float32)
    a = attrs_for(k, p, s, d, ceil)
    y, ind = run("tdflow.max_pool_2d", [x], a)
    dy = rng.normal(size=y.shape).astype(np.float32)
    (dx,) = run("tdflow.max_pool_2d_grad", [x, ind, dy], a)
    want = np.zeros(shape, np.float64)
    n, c, h, w = shape
    for b, ch, i, j in np.ndindex(y.shape):
        flat = ind[b, ch, i, j]
        want[b, ch, flat // w, flat % w] += dy[b, ch, i, j]  # overlapping windows add
    np.testing.assert_allclose(dx, want, rtol=1e-6, atol=1e-6)
    assert dx.dtype == np.float32
    out = np.empty_like(x)
    assert run("tdflow.max_pool_2d_grad", [x, ind, dy], a, [out])[0] is out


def test_max_pool_grad_channels_last():
    x = np.random.default_rng(2).normal(size=(1, 4, 4, 2))
    a = attrs_for((2, 2), (0, 0), (1, 1), (1, 1), False, "channels_last")
    y, ind = run("tdflow.max_pool_2d", [x], a)
    (dx,) = run("tdflow.max_pool_2d_grad", [x, ind, np.ones_like(y)], a)
    assert dx.shape == x.shape and dx.sum() == y.size


def test_max_pool_dtypes_buffers_and_errors():
    x = np.arange(16, dtype=np.int32).reshape(1, 1, 4, 4)
    a = attrs_for((2, 2), (0, 0), (2, 2), (1, 1), False)
    yb, ib = np.empty((1, 1, 2, 2), np.int32), np.empty((1, 1, 2, 2), np.int64)
    y, ind = run("tdflow.max_pool_2d", [x], a, [yb, ib])
    assert y is yb and ind is ib and y.tolist() == [[[[5, 7], [13, 15]]]]
    h, _ = run("tdflow.max_pool_2d", [x.astype(np.float16)], a)
    assert h.dtype == np.float16
    nan = x.astype(np.float32)
    nan[0, 0, 0, 0] = np.nan
    y, _ = run("tdflow.max_pool_2d", [nan], a)
    assert np.isnan(y[0, 0, 0, 0]) and y[0, 0, 1, 1] == 15
    # the lowest integer ties with the padding value: the index still points at a real element
    low = np.full((1, 1, 3, 3), np.iinfo(np.int32).min, np.int32)
    y, ind = run("tdflow.max_pool_2d", [low], attrs_for((3, 3), (1, 1), (1, 1), (1, 1), False))
    assert (y == low).all() and ind.min() >= 0 and ind[0, 0, 0, 0] == 0
    (dx,) = run("tdflow.max_pool_2d_grad", [low, ind, np.ones_like(y)],
                attrs_for((3, 3), (1, 1), (1, 1), (1, 1), False))
    assert dx.sum() == 9
    with pytest.raises(ValueError, match="at most half the kernel size"):
        run("tdflow.max_pool_2d", [x], attrs_for((2, 2), (2, 2), (1, 1), (1, 1), False))
    with pytest.raises(ValueError, match="4-D input"):
        run("tdflow.max_pool_2d", [x[0]], a)


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_max_pool_random_geometry(data):
    k = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    p = (data.draw(st.integers(0, k[0] // 2)), data.draw(st.integers(0, k[1] // 2)))
    s = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    d = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    ceil = data.draw(st.booleans())
    h = data.draw(st.integers(max(1, d[0] * (k[0] - 1) + 1 - 2 * p[0]), 8))
    w = data.draw(st.integers(max(1, d[1] * (k[1] - 1) + 1 - 2 * p[1]), 8))
    shape = (1, 2, h, w)
    x = np.random.default_rng(data.draw(st.integers(0, 999))).permutation(
        math.prod(shape)).reshape(shape).astype(np.float64)
    want_y, want_i = naive_pool(x, k, p, s, d, ceil)
    y, ind = run("tdflow.max_pool_2d", [x], attrs_for(k, p, s, d, ceil))
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(ind, want_i)
