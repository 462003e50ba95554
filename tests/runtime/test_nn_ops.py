"""The ONNX convolution, pooling, LRN and resampling rules (tdflow/onnx/rules/conv.py,
pool.py, norm.py, resize.py): each lowered model against onnx's numpy reference
(``onnx.reference``) on cases the node tests leave out (1-D and 3-D, asymmetric and large pads,
dilated average pools, groups), and the gradients of a small CNN built from them against finite
differences."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import tdflow  # noqa: E402
from tdflow.onnx.backend import TdflowBackend  # noqa: E402
from tdflow.onnx.convert import convert  # noqa: E402
from tdflow.onnx.importer import import_model  # noqa: E402
from tdflow.onnx.rules.resize import interp_matrix  # noqa: E402
from tdflow.onnx.rules.windows import pool_out_size, same_pads  # noqa: E402

OPSET = 22


def _vi(name, v):
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)


def _model(op, inputs, attrs, n_out=1, consts=(), opset=OPSET, results=None):
    """One-node model: ``inputs`` (name, array) graph inputs, ``consts`` initializers;
    the outputs typed like ``results`` (untyped without)."""
    ins = [_vi(k, v) for k, v in inputs]
    outs = [_vi(f"y{i}", results[i]) if results is not None else
            helper.make_tensor_value_info(f"y{i}", TensorProto.UNDEFINED, None)
            for i in range(n_out)]
    inits = [onnx.numpy_helper.from_array(v, k) for k, v in consts]
    names = [k for k, _ in inputs] + [k for k, _ in consts]
    node = helper.make_node(op, names, [o.name for o in outs], **attrs)
    g = helper.make_graph([node], "g", ins, outs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _check(op, inputs, attrs, consts=(), n_out=1, tol=1e-4):
    want = ReferenceEvaluator(_model(op, inputs, attrs, n_out, consts)).run(None, dict(inputs))
    m = _model(op, inputs, attrs, n_out, consts, results=want)
    got = TdflowBackend.prepare(m, "CPU").run([v for _, v in inputs])
    for w, g in zip(want, got):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


rng = np.random.default_rng(0)


def _r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def test_helpers():
    assert same_pads([5], [3], [2], [1], "SAME_LOWER") == ([1], [1])
    assert same_pads([4], [2], [1], [1], "SAME_LOWER") == ([1], [0])
    assert pool_out_size(6, 3, 0, 0, 2, 1, True) == 3
    m, inside = interp_matrix(3, 5, 5 / 3, "cubic", "half_pixel")
    np.testing.assert_allclose(m.sum(axis=1), 1.0, atol=1e-12)  # partition of unity
    assert inside.all()


@pytest.mark.parametrize("attrs", [
    {"pads": [1, 2], "dilations": [2], "strides": [2]},
    {"auto_pad": "SAME_UPPER", "strides": [3]},
    {"group": 2, "pads": [0, 1]},
])
def test_conv_1d(attrs):
    c = 4 if attrs.get("group") else 3
    w = _r(6, c // attrs.get("group", 1), 3)
    _check("Conv", [("x", _r(2, c, 11))], attrs, consts=[("w", w), ("b", _r(6))])


@pytest.mark.parametrize("attrs", [
    {"pads": [0, 1, 2, 0], "dilations": [2, 1], "group": 3},
    {"auto_pad": "SAME_LOWER", "strides": [2, 2], "group": 3},
])
def test_conv_2d_asymmetric_groups_dilations(attrs):
    _check("Conv", [("x", _r(1, 6, 9, 8))], attrs, consts=[("w", _r(6, 2, 3, 3))])


@pytest.mark.parametrize("attrs", [
    {"pads": [1, 0, 1, 2, 1, 0], "dilations": [2, 1, 1], "strides": [1, 2, 1], "group": 2},
    {"auto_pad": "SAME_UPPER", "strides": [2, 1, 2]},
])
def test_conv_3d(attrs):
    _check("Conv", [("x", _r(2, 4, 7, 6, 5))], attrs,
           consts=[("w", _r(6, 4 // attrs.get("group", 1), 3, 2, 3)), ("b", _r(6))])


@pytest.mark.parametrize("attrs", [
    {"strides": [2], "pads": [1, 0], "output_padding": [1]},
    {"strides": [3], "dilations": [2], "auto_pad": "SAME_LOWER"},
])
def test_conv_transpose_1d(attrs):
    _check("ConvTranspose", [("x", _r(1, 4, 5))], attrs, consts=[("w", _r(4, 3, 3)),
                                                                  ("b", _r(3))])


@pytest.mark.parametrize("attrs", [
    {"strides": [2, 1, 3], "pads": [1, 0, 1, 0, 1, 2], "dilations": [2, 1, 1]},
    {"strides": [3, 2, 1], "output_padding": [1, 1, 0]},
])
def test_conv_transpose_3d(attrs):
    _check("ConvTranspose", [("x", _r(2, 4, 3, 4, 2))], attrs,
           consts=[("w", _r(4, 3, 3, 2, 2)), ("b", _r(3 * attrs.get("group", 1)))])


def test_conv_transpose_2d_asymmetric_pads():
    _check("ConvTranspose", [("x", _r(1, 4, 3, 4))], {"strides": [2, 1],
                                                       "pads": [1, 0, 0, 1]},
           consts=[("w", _r(4, 3, 3, 2))])


@pytest.mark.parametrize("op,attrs", [
    ("MaxPool", {"kernel_shape": [2, 2, 2], "strides": [1, 2, 1], "pads": [1, 0, 0, 0, 1, 1]}),
    ("MaxPool", {"kernel_shape": [3], "pads": [2, 2], "ceil_mode": 1, "strides": [2]}),
    ("MaxPool", {"kernel_shape": [3, 3], "pads": [0, 2, 1, 0], "dilations": [2, 1]}),
    ("AveragePool", {"kernel_shape": [3, 2], "dilations": [2, 2], "pads": [1, 1, 0, 1]}),
    ("AveragePool", {"kernel_shape": [3, 3], "pads": [1, 0, 2, 1], "count_include_pad": 1,
                     "strides": [2, 2], "ceil_mode": 1}),
    ("AveragePool", {"kernel_shape": [2, 2, 2], "auto_pad": "SAME_UPPER"}),
    ("LpPool", {"kernel_shape": [2, 3], "p": 3, "pads": [0, 1, 1, 0]}),
])
def test_pools_compositions(op, attrs):
    shape = (1, 2, 5, 6, 4) if len(attrs["kernel_shape"]) == 3 else \
        (2, 3, 9) if len(attrs["kernel_shape"]) == 1 else (1, 2, 7, 6)
    _check(op, [("x", _r(*shape))], attrs)


def test_maxpool_indices_row_and_column_major():
    x = _r(2, 3, 6, 5)
    for order in (0, 1):
        _check("MaxPool", [("x", x)], {"kernel_shape": [3, 2], "strides": [2, 1],
                                       "pads": [1, 0, 1, 0], "storage_order": order}, n_out=2)


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
def test_global_pools(op):
    _check(op, [("x", _r(2, 3, 4, 5))], {})


def _run(op, inputs, attrs, shapes):
    m = _model(op, inputs, attrs, results=[np.zeros(s, np.float32) for s in shapes])
    return TdflowBackend.prepare(m, "CPU").run([v for _, v in inputs])[0]


def test_global_lp_pool():
    x = _r(2, 3, 4, 5, 2)
    got = _run("GlobalLpPool", [("x", x)], {"p": 3}, [(2, 3, 1, 1, 1)])
    want = (np.abs(x.astype(np.float64)) ** 3).sum(axis=(2, 3, 4), keepdims=True) ** (1 / 3)
    np.testing.assert_allclose(got, want, rtol=1e-4)


@pytest.mark.parametrize("size", [3, 4])
def test_lrn(size):
    """The spec's window ``[c - floor((size-1)/2), c + ceil((size-1)/2)]`` (onnx's reference
    loops over the batch instead of the channels, so it is not the reference here)."""
    x = _r(2, 7, 3, 3)
    got = _run("LRN", [("x", x)], {"size": size, "alpha": 0.02, "beta": 0.6, "bias": 1.5},
               [x.shape])
    lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
    sq = np.pad(x.astype(np.float64) ** 2, [(0, 0), (lo, hi), (0, 0), (0, 0)])
    s = sum(sq[:, j:j + 7] for j in range(size))
    np.testing.assert_allclose(got, x / (1.5 + 0.02 / size * s) ** 0.6, rtol=1e-5)


@pytest.mark.parametrize("mode,ctm,extra", [
    ("linear", "pytorch_half_pixel", {}),
    ("linear", "half_pixel_symmetric", {}),
    ("cubic", "align_corners", {"exclude_outside": 1}),
    ("nearest", "tf_crop_and_resize", {"extrapolation_value": 7.0}),
    ("nearest", "half_pixel", {"nearest_mode": "ceil"}),
    ("linear", "half_pixel", {"antialias": 1}),
])
def test_resize(mode, ctm, extra):
    x = _r(1, 2, 5, 7)
    roi = np.array([0, 0, 0.1, -0.2, 1, 1, 0.8, 1.3], np.float32)
    scales = np.array([1, 1, 0.6, 1.7], np.float32)
    _check("Resize", [("x", x)], {"mode": mode, "coordinate_transformation_mode": ctm, **extra},
           consts=[("roi", roi), ("scales", scales)])


def test_small_cnn_gradients_match_finite_differences():
    """Conv (asymmetric pads, groups) -> MaxPool (large pads: the slice composition) ->
    AveragePool (dilated) -> LRN -> GlobalAveragePool -> sum: d loss / d weights."""
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w"], ["c"], pads=[0, 1, 1, 0], group=2),
        n("MaxPool", ["c"], ["m"], kernel_shape=[2, 2], pads=[1, 1, 1, 1]),
        n("AveragePool", ["m"], ["a"], kernel_shape=[2, 2], dilations=[2, 1]),
        n("LRN", ["a"], ["l"], size=3),
        n("GlobalAveragePool", ["l"], ["g"]),
        n("ReduceSum", ["g"], ["loss"], keepdims=0),
    ]
    g = helper.make_graph(nodes, "g", [
        helper.make_tensor_value_info("x", TensorProto.DOUBLE, [1, 4, 6, 6]),
        helper.make_tensor_value_info("w", TensorProto.DOUBLE, [4, 2, 2, 2])],
        [helper.make_tensor_value_info("loss", TensorProto.DOUBLE, [])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    f = tdflow.value_and_grad(convert(import_model(m)), wrt=["x", "w"])
    x = rng.standard_normal((1, 4, 6, 6))
    w = rng.standard_normal((4, 2, 2, 2))
    loss, (gx, gw) = f(x, w)
    assert np.isfinite(loss)
    eps = 1e-6
    for arr, grad, which in ((x, gx, 0), (w, gw, 1)):
        for idx in [tuple(int(rng.integers(0, d)) for d in arr.shape) for _ in range(6)]:
            vals = []
            for sign in (1, -1):
                a = arr.copy()
                a[idx] += sign * eps
                args = (a, w) if which == 0 else (x, a)
                vals.append(float(f(*args)[0]))
            fd = (vals[0] - vals[1]) / (2 * eps)
            assert abs(fd - grad[idx]) < 1e-6 + 1e-5 * abs(fd), (which, idx, fd, grad[idx])
