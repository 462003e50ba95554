"""ONNX's index, scan and padding ops lowered by tdflow/onnx/rules/index.py, against onnx's
reference evaluator, on what the backend suite leaves out: integer extremes for ArgMin and
TopK's smallest, ties with select_last_index, reflect/edge/wrap with negative pads and axes,
the old attribute forms (Pad-2, Hardmax-11), negative and out-of-range indices, batch_dims,
CenterCropPad and TensorScatter."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from tdflow.onnx.backend import TdflowBackend  # noqa: E402
from tdflow.onnx.rules.pad import pad_indices  # noqa: E402

rng = np.random.default_rng(5)
I64 = np.iinfo(np.int64)


def _vi(name, v):
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)


def _model(op, inputs, attrs, consts, n_out, opset, results=None):
    ins = [_vi(k, v) for k, v in inputs]
    outs = [_vi(f"y{i}", results[i]) if results is not None else
            helper.make_tensor_value_info(f"y{i}", TensorProto.UNDEFINED, None)
            for i in range(n_out)]
    inits = [onnx.numpy_helper.from_array(v, k) for k, v in consts]
    names = [k for k, _ in inputs] + [k if v is not None else "" for k, v in consts]
    node = helper.make_node(op, names, [o.name for o in outs], **attrs)
    graph = helper.make_graph([node], "g", ins, outs, [i for i in inits])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def check(op, inputs, attrs=None, consts=(), n_out=1, opset=21):
    """tdflow's CPU backend gives exactly what onnx's reference evaluator gives."""
    attrs = attrs or {}
    want = ReferenceEvaluator(_model(op, inputs, attrs, consts, n_out, opset)).run(
        None, dict(inputs))
    m = _model(op, inputs, attrs, consts, n_out, opset, results=want)
    got = TdflowBackend.prepare(m, "CPU").run([v for _, v in inputs])
    for w, g in zip(want, got):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def _i64(*v):
    """A 1-D i64 constant of the arguments: ``_i64(1, 0)``."""
    return np.array(v, np.int64)


def _ix(nested):
    """An i64 index tensor of a nested list."""
    return np.array(nested, np.int64)


def test_pad_indices():
    assert pad_indices(3, 2, 2, "edge").tolist() == [0, 0, 0, 1, 2, 2, 2]
    assert pad_indices(2, 3, 0, "wrap").tolist() == [1, 0, 1, 0, 1]


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("last", [0, 1])
@pytest.mark.parametrize("keepdims, axis", [(1, 0), (0, -1), (0, 1)])
def test_arg_extremes_ties_and_last_index(op, last, keepdims, axis):
    x = np.array([[I64.min, 3, I64.max, I64.min], [3, 3, -1, I64.max], [0, I64.min, 3, 3]],
                 np.int64)
    check(op, [("x", x)], {"axis": axis, "keepdims": keepdims, "select_last_index": last})
    f = x.astype(np.float32) / 1e18
    check(op, [("x", f)], {"axis": axis, "keepdims": keepdims, "select_last_index": last})


@pytest.mark.parametrize("largest", [0, 1])
@pytest.mark.parametrize("axis, k", [(0, 2), (-1, 4), (1, 1)])
def test_top_k_integers_and_ties(largest, axis, k):
    x = np.array([[I64.min, 3, 3, I64.max], [3, I64.min, -1, 3], [0, 0, I64.max, 3]], np.int64)
    check("TopK", [("x", x)], {"axis": axis, "largest": largest}, consts=[("k", _i64(k))],
          n_out=2)
    f = rng.integers(-2, 3, size=(3, 4)).astype(np.float32)
    check("TopK", [("x", f)], {"axis": axis, "largest": largest}, consts=[("k", _i64(k))],
          n_out=2)


def _pad_model(x, mode, pads, axes):
    consts = [("pads", _i64(*pads)), ("value", np.array(2.5, np.float32))]
    if axes is not None:
        consts.append(("axes", _i64(*axes)))
    return consts


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
@pytest.mark.parametrize("pads, axes", [([1, 0, 2, 3], None), ([2, 1], [-1]),
                                        ([0, 3, 2, 1, 0, 0], None), ([1, 2], [0])])
def test_pad_modes_and_axes(mode, pads, axes):
    x = rng.normal(size=(3, 4, 5)).astype(np.float32)
    if axes is None and len(pads) == 4:
        x = x[0]
    check("Pad", [("x", x)], {"mode": mode}, consts=_pad_model(x, mode, pads, axes))


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_negative_pads_crop_first(mode):
    # onnx's reference pads with numpy.pad, which refuses negative pads: numpy by hand here
    x = rng.normal(size=(4, 5)).astype(np.float32)
    model = _model("Pad", [("x", x)], {"mode": mode},
                   _pad_model(x, mode, [-1, 2, 1, -2], None), 1, 21,
                   results=[np.zeros((4, 5), np.float32)])
    got = TdflowBackend.prepare(model, "CPU").run([x])[0]
    cropped = x[1:, :3]
    kw = {"constant_values": 2.5} if mode == "constant" else {}
    np.testing.assert_array_equal(got, np.pad(cropped, [(0, 1), (2, 0)], mode=mode, **kw))


def test_pad_old_attribute_form_and_integers():
    x = rng.integers(-5, 5, size=(2, 3)).astype(np.int32)
    check("Pad", [("x", x)], consts=[("pads", _i64(1, 0, 0, 2)), ("value", np.array(7, np.int32))])
    f = rng.normal(size=(2, 3)).astype(np.float32)
    check("Pad", [("x", f)], {"pads": [0, 1, 2, 0], "mode": "edge"}, opset=2)


@pytest.mark.parametrize("shape, axes", [([3, 6, 2], None), ([7, 1], [0, -1]), ([2], [1])])
def test_center_crop_pad_centres_odd_differences(shape, axes):
    x = rng.normal(size=(4, 3, 5)).astype(np.float32)
    attrs = {} if axes is None else {"axes": axes}
    check("CenterCropPad", [("x", x)], attrs, consts=[("s", _i64(*shape))], opset=18)


@pytest.mark.parametrize("mode", ["linear", "circular"])
@pytest.mark.parametrize("axis", [-2, 1])
def test_tensor_scatter_writes_rows_at_each_batch_position(mode, axis):
    past = rng.normal(size=(3, 5, 4, 2)).astype(np.float32)
    upd_shape = list(past.shape)
    upd_shape[axis] = 2
    upd = rng.normal(size=upd_shape).astype(np.float32)
    # linear: the rows fit (the last batch fills the cache's end); circular: the last wraps
    longest = past.shape[axis]
    starts = _i64(0, longest - 2, longest - 1 if mode == "circular" else 1)
    check("TensorScatter", [("p", past), ("u", upd), ("w", starts)],
          {"mode": mode, "axis": axis}, opset=24)
    check("TensorScatter", [("p", past), ("u", upd)], {"mode": mode, "axis": axis}, opset=24)


@pytest.mark.parametrize("op", ["CumSum", "CumProd"])
@pytest.mark.parametrize("exclusive, reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_scans_on_a_middle_axis(op, exclusive, reverse):
    x = rng.integers(-3, 4, size=(2, 4, 3)).astype(np.int64)
    opset = 26 if op == "CumProd" else 21
    check(op, [("x", x)], {"exclusive": exclusive, "reverse": reverse},
          consts=[("axis", np.array(-2, np.int32))], opset=opset)


def test_trilu_integers_and_k():
    x = rng.integers(-9, 9, size=(2, 3, 5)).astype(np.int32)
    for upper in (0, 1):
        for k in (-2, 0, 3):
            check("Trilu", [("x", x)], {"upper": upper}, consts=[("k", _i64(k))])


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_gather_and_scatter_elements_with_negative_indices(reduction):
    x = rng.normal(size=(3, 5)).astype(np.float32)
    idx = _ix([[-1, 0, 2], [4, -5, -5], [1, 1, -2]])
    check("GatherElements", [("x", x), ("i", idx)], {"axis": 1})
    if reduction == "none":
        idx = _ix([[-1, 0, 2], [3, -5, 1], [0, 1, 2]])  # no repeats: ONNX leaves the winner open
    upd = rng.normal(size=(3, 3)).astype(np.float32)
    check("ScatterElements", [("x", x), ("i", idx), ("u", upd)],
          {"axis": 1, "reduction": reduction})


def test_gather_nd_batch_dims_and_negative_indices():
    x = rng.normal(size=(2, 3, 4, 2)).astype(np.float32)
    check("GatherND", [("x", x), ("i", _ix([[[2, -1]], [[-3, 0]]]))], {"batch_dims": 1})
    check("GatherND", [("x", x), ("i", _ix([[1, -2, 3], [0, 0, 0]]))], {"batch_dims": 0})
    check("GatherND", [("x", x), ("i", _ix([[[1], [-1], [0]], [[0], [2], [3]]]))], {"batch_dims": 2})


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_nd_slices(reduction):
    x = rng.normal(size=(4, 3, 2)).astype(np.float32)
    idx = _ix([[1], [-1]]) if reduction == "none" else _ix([[1], [3], [1]])
    upd = rng.normal(size=(idx.shape[0], 3, 2)).astype(np.float32)
    check("ScatterND", [("x", x), ("i", idx), ("u", upd)], {"reduction": reduction})
    idx2 = _ix([[0, 2], [3, 1], [0, 2]]) if reduction != "none" else _ix([[0, 2], [3, 1]])
    upd2 = rng.normal(size=(idx2.shape[0], 2)).astype(np.float32)
    check("ScatterND", [("x", x), ("i", idx2), ("u", upd2)], {"reduction": reduction})


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_one_hot_float_negative_and_out_of_range_indices(axis):
    idx = np.array([[1.0, -1.0, 7.0], [0.0, 2.0, -4.0]], np.float32)
    check("OneHot", [("i", idx)], {"axis": axis},
          consts=[("depth", np.array(4.0, np.float32)), ("v", np.array([-2, 5], np.int32))])


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_hardmax_along_an_axis(axis):
    x = rng.integers(-2, 3, size=(2, 3, 4)).astype(np.float32)  # ties: the first wins
    check("Hardmax", [("x", x)], {"axis": axis}, opset=13)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_hardmax_before_13_flattens_at_axis(axis):
    # onnx's reference evaluator applies opset 13's meaning to every version: numpy by hand
    x = rng.integers(-2, 3, size=(2, 3, 4)).astype(np.float32)
    model = _model("Hardmax", [("x", x)], {"axis": axis}, (), 1, 11, results=[x])
    got = TdflowBackend.prepare(model, "CPU").run([x])[0]
    flat = x.reshape(int(np.prod(x.shape[:axis])), -1)
    want = np.zeros_like(flat)
    want[np.arange(flat.shape[0]), np.argmax(flat, axis=1)] = 1
    np.testing.assert_array_equal(got, want.reshape(x.shape))


def test_tile():
    x = rng.normal(size=(2, 1, 3)).astype(np.float32)
    check("Tile", [("x", x)], consts=[("r", _i64(1, 3, 2))])
    check("Tile", [("x", x.astype(np.int64))], consts=[("r", _i64(2, 1, 1))])
