"""conv2d and its gradients against naive loops (small sizes) and finite differences."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tdflow.runtime.kernels.registry import select_kernel

MLIR = {np.float16: "f16", np.float32: "f32", np.float64: "f64", np.int32: "i32"}


def run(op, inputs, attrs, outs=None):
    dts = tuple(MLIR[a.dtype.type] for a in inputs if a is not None)
    return select_kernel(op, "cpu", dts, attrs)(attrs, inputs, outs)[0]


def naive_conv(x, w, pad, stride, dil, groups, bias=None):
    """NCHW / OIHW, symmetric zero padding; one multiply-add per loop iteration."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    og = o // groups
    oh = (h + 2 * pad[0] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * pad[1] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    for b, oc, i, j in itertools.product(range(n), range(o), range(oh), range(ow)):
        g = oc // og
        acc = 0.0 if bias is None else float(bias[oc])
        for ic, p, q in itertools.product(range(cg), range(kh), range(kw)):
            hi = i * stride[0] - pad[0] + p * dil[0]
            wi = j * stride[1] - pad[1] + q * dil[1]
            if 0 <= hi < h and 0 <= wi < wd:
                acc += float(x[b, g * cg + ic, hi, wi]) * float(w[oc, ic, p, q])
        out[b, oc, i, j] = acc
    return out


def attrs_for(k, pad, stride, dil, groups, fmt="channels_first", filters=0):
    return {"filters": filters, "padding_before": list(pad), "data_format": fmt,
            "kernel_size": list(k), "strides": list(stride), "dilation_rate": list(dil),
            "groups": groups}


CASES = [  # (N, C, H, W), (O, kh, kw), pad, stride, dil, groups
    ((2, 3, 5, 5), (4, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((1, 2, 7, 6), (2, 3, 2), (0, 1), (2, 1), (1, 2), 1),
    ((1, 4, 6, 6), (6, 3, 3), (2, 1), (2, 3), (2, 1), 2),
    ((2, 4, 4, 5), (4, 1, 1), (0, 0), (1, 1), (1, 1), 4),  # depthwise 1x1
    ((1, 1, 1, 1), (1, 1, 1), (0, 0), (1, 1), (1, 1), 1),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("fmt", ["channels_first", "channels_last"])
def test_conv2d_against_loops(case, fmt):
    (n, c, h, wd), (o, kh, kw), pad, stride, dil, groups = case
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, c, h, wd))
    w = rng.normal(size=(o, c // groups, kh, kw))
    bias = rng.normal(size=o)
    want = naive_conv(x, w, pad, stride, dil, groups, bias)
    a = attrs_for((kh, kw), pad, stride, dil, groups, fmt, filters=o)
    if fmt == "channels_last":
        xin, win = x.transpose(0, 2, 3, 1).copy(), w.transpose(0, 2, 3, 1).copy()
        got = run("tdflow.conv2d", [xin, win, bias], a).transpose(0, 3, 1, 2)
    else:
        got = run("tdflow.conv2d", [x, w, bias], a)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_conv2d_add_to_output_buffers_and_dtypes():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(1, 2, 4, 4)).astype(np.float32)
    w = rng.normal(size=(3, 2, 3, 3)).astype(np.float32)
    a = attrs_for((3, 3), (1, 1), (1, 1), (1, 1), 1)
    add = rng.normal(size=(1, 3, 4, 4)).astype(np.float32)
    base = naive_conv(x, w, (1, 1), (1, 1), (1, 1), 1)
    got = run("tdflow.conv2d", [x, w, None, add], a)  # bias absent, _add_to_output present
    np.testing.assert_allclose(got, base + add, rtol=1e-5, atol=1e-5)
    got = run("tdflow.conv2d", [x, w, add], {**a, "operandSegmentSizes": [1, 1, 0, 1]})
    np.testing.assert_allclose(got, base + add, rtol=1e-5, atol=1e-5)
    out = np.empty((1, 3, 4, 4), np.float32)
    assert run("tdflow.conv2d", [x, w], a, [out]) is out
    np.testing.assert_allclose(out, base, rtol=1e-5, atol=1e-5)
    h = run("tdflow.conv2d", [x.astype(np.float16), w.astype(np.float16)], a)
    assert h.dtype == np.float16
    np.testing.assert_allclose(h, base, rtol=2e-2, atol=2e-2)
    xi, wi = np.ones((1, 1, 3, 3), np.int32), np.ones((1, 1, 2, 2), np.int32)
    assert run("tdflow.conv2d", [xi, wi], attrs_for((2, 2), (0, 0), (1, 1), (1, 1), 1)).tolist() == [
        [[[4, 4], [4, 4]]]]


def test_conv2d_errors():
    x = np.ones((1, 3, 4, 4))
    with pytest.raises(ValueError, match="do not fit"):
        run("tdflow.conv2d", [x, np.ones((2, 2, 3, 3))], attrs_for((3, 3), (0, 0), (1, 1), (1, 1), 1))
    with pytest.raises(ValueError, match="kernel_size"):
        run("tdflow.conv2d", [x, np.ones((2, 3, 3, 3))], attrs_for((2, 2), (0, 0), (1, 1), (1, 1), 1))
    with pytest.raises(ValueError, match="smaller than the dilated kernel"):
        run("tdflow.conv2d", [x, np.ones((2, 3, 3, 3))], attrs_for((3, 3), (0, 0), (1, 1), (3, 3), 1))
    with pytest.raises(ValueError, match="unknown data_format"):
        run("tdflow.conv2d", [x, np.ones((2, 3, 3, 3))],
            attrs_for((3, 3), (0, 0), (1, 1), (1, 1), 1, fmt="CHWN"))


@pytest.mark.parametrize("case", CASES[:4])
@pytest.mark.parametrize("fmt", ["channels_first", "channels_last"])
def test_conv_grads_finite_differences(case, fmt):
    (n, c, h, wd), (o, kh, kw), pad, stride, dil, groups = case
    rng = np.random.default_rng(2)
    x = rng.normal(size=(n, c, h, wd))
    w = rng.normal(size=(o, c // groups, kh, kw))
    a = attrs_for((kh, kw), pad, stride, dil, groups, fmt)
    last = fmt == "channels_last"

    def lay(t):  # NCHW/OIHW -> the op's layout
        return t.transpose(0, 2, 3, 1).copy() if last else t

    def unlay(t):
        return t.transpose(0, 3, 1, 2) if last else t

    y = naive_conv(x, w, pad, stride, dil, groups)
    dy = rng.normal(size=y.shape)
    grad_attrs = {**a, "num_spatial_dims": 2, "groups": groups}
    dx = unlay(run("tdflow.conv_data_grad", [lay(dy), lay(w), lay(x)], grad_attrs))
    dw = unlay(run("tdflow.conv_filter_grad", [lay(dy), lay(x)], grad_attrs))
    # conv is linear: d<conv(x, w), dy>/dx is exact with a unit finite difference
    for idx in list(np.ndindex(x.shape))[::3]:
        e = np.zeros_like(x)
        e[idx] = 1.0
        num = (naive_conv(e, w, pad, stride, dil, groups) * dy).sum()
        assert abs(dx[idx] - num) < 1e-9
    for idx in np.ndindex(w.shape):
        e = np.zeros_like(w)
        e[idx] = 1.0
        num = (naive_conv(x, e, pad, stride, dil, groups) * dy).sum()
        assert abs(dw[idx] - num) < 1e-9


def test_conv_data_grad_add_and_buffers():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(1, 2, 5, 5)).astype(np.float32)
    w = rng.normal(size=(3, 2, 3, 3)).astype(np.float32)
    a = {**attrs_for((3, 3), (1, 1), (2, 2), (1, 1), 0), "num_spatial_dims": 2}
    dy = rng.normal(size=(1, 3, 3, 3)).astype(np.float32)
    base = run("tdflow.conv_data_grad", [dy, w, x], a)
    acc = np.ones_like(x)
    got = run("tdflow.conv_data_grad", [dy, w, x, acc], a)
    np.testing.assert_allclose(got, base + 1, rtol=1e-5)
    out = np.empty_like(x)
    assert run("tdflow.conv_data_grad", [dy, w, x], a, [out]) is out
    fw = np.empty_like(w)
    assert run("tdflow.conv_filter_grad", [dy, x], a, [fw]) is fw


def test_conv_1d_and_3d_gradients_run():
    x = np.ones((1, 2, 6))
    w = np.ones((3, 2, 3))
    # the dialect's records declare 2-D windows (TDF_PairAttr); the kernels also take 1-D and
    # 3-D ones from a direct call of their fn with complete attributes
    a = {"padding_before": [1], "data_format": "channels_first", "kernel_size": [3],
         "strides": [1], "dilation_rate": [1], "num_spatial_dims": 1, "groups": 1}
    dy = np.ones((1, 3, 6))
    data = select_kernel("tdflow.conv_data_grad", "cpu", ("f64",) * 3, a).fn
    filt = select_kernel("tdflow.conv_filter_grad", "cpu", ("f64",) * 2, a).fn
    assert data(a, [dy, w, x], [None])[0].shape == (1, 2, 6)
    assert filt(a, [dy, x], [None])[0].shape == (3, 2, 3)


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_conv2d_random_geometry(data):
    groups = data.draw(st.sampled_from([1, 2]))
    cg = data.draw(st.integers(1, 2))
    og = data.draw(st.integers(1, 2))
    kh, kw = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    pad = (data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2)))
    stride = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    dil = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    h = data.draw(st.integers(max(1, dil[0] * (kh - 1) + 1 - 2 * pad[0]), 7))
    w_ = data.draw(st.integers(max(1, dil[1] * (kw - 1) + 1 - 2 * pad[1]), 7))
    n = data.draw(st.integers(1, 2))
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    x = rng.normal(size=(n, cg * groups, h, w_))
    w = rng.normal(size=(og * groups, cg, kh, kw))
    a = attrs_for((kh, kw), pad, stride, dil, groups)
    want = naive_conv(x, w, pad, stride, dil, groups)
    np.testing.assert_allclose(run("tdflow.conv2d", [x, w], a), want, rtol=1e-10, atol=1e-10)
    dy = rng.normal(size=want.shape)
    ga = {**a, "num_spatial_dims": 2}
    dx = run("tdflow.conv_data_grad", [dy, w, x], ga)
    dw = run("tdflow.conv_filter_grad", [dy, x], ga)
    # adjoint identities: <conv(x, w), dy> = <x, dx> = <w, dw>
    inner = (want * dy).sum()
    assert abs((x * dx).sum() - inner) < 1e-8 * max(1.0, abs(inner))
    assert abs((w * dw).sum() - inner) < 1e-8 * max(1.0, abs(inner))
