"""ONNX ``MaxPool`` without its indices output: the compiled plan binds ``max_pool_2d``'s
values-only form (``bind_unused``, chosen from ``executor.unused_outputs``), which must give
the general kernel's bits (NaN, infinities, signed zeros, padding) and onnxruntime's values;
with the indices output asked for, the general kernel runs and the indices are onnxruntime's."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from tdflow.runtime.kernels import pool

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

from tdflow.onnx.backend import TdflowBackend  # noqa: E402


def _model(shape, k, s, p, indices: bool):
    outs = ["y", "i"] if indices else ["y"]
    node = helper.make_node("MaxPool", ["x"], outs, kernel_shape=[k, k], strides=[s, s],
                            pads=[p, p, p, p])
    out = [*shape[:2], *((d + 2 * p - k) // s + 1 for d in shape[2:])]
    infos = [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)]
    if indices:
        infos.append(helper.make_tensor_value_info("i", TensorProto.INT64, out))
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, list(shape))], infos)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def _ort(model, x):
    """onnxruntime's outputs for ``model`` on ``x`` (the reference: one thread)."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})


def _input(shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape).astype(np.float32)
    flat = x.reshape(-1)
    picks = rng.choice(flat.size, 8, replace=False)
    flat[picks] = [np.nan, np.inf, -np.inf, -0.0, 0.0, -np.inf, np.nan, 3.0]
    x[0, 0, 0, :] = -np.inf  # windows at the top border hold only -inf and padding
    return x


@pytest.mark.parametrize("shape,k,s,p", [((1, 4, 12, 12), 3, 2, 1), ((2, 3, 9, 7), 2, 2, 0),
                                         ((1, 2, 8, 8), 3, 1, 1)])
def test_values_only_matches_the_general_kernel_and_onnxruntime(shape, k, s, p, monkeypatch):
    bound = []
    real = pool.max_pool_2d.bind_unused
    monkeypatch.setattr(pool.max_pool_2d, "bind_unused",
                        lambda *a: bound.append(a[3]) or real(*a))
    x = _input(shape, 0)
    model = _model(shape, k, s, p, False)
    got = TdflowBackend.prepare(model, "CPU").run([x])[0]
    assert bound == [frozenset({1})]
    attrs = {"kernel_size": [k, k], "stride": [s, s], "padding": [p, p], "dilation": [1, 1],
             "data_format": "channels_first", "ceil_mode": False, "return_indices": False}
    want = pool.max_pool_2d(attrs, [x], [None, None])[0]
    assert got.tobytes() == want.tobytes()  # every bit: NaN, infinities, signed zeros
    # onnxruntime's MaxPool skips a NaN where tdflow's (as torch's and numpy's max) propagates
    # it, so the reference run has the NaNs replaced (infinities and zeros kept)
    clean = np.where(np.isnan(x), np.float32(0.5), x)
    np.testing.assert_array_equal(TdflowBackend.prepare(model, "CPU").run([clean])[0],
                                  _ort(model, clean)[0])


def test_with_indices_the_general_kernel_runs(monkeypatch):
    bound = []
    real = pool.max_pool_2d.bind_unused
    monkeypatch.setattr(pool.max_pool_2d, "bind_unused",
                        lambda *a: bound.append(a[3]) or real(*a))
    x = np.random.default_rng(1).normal(size=(1, 3, 10, 10)).astype(np.float32)
    model = _model(x.shape, 3, 2, 1, True)
    y, i = TdflowBackend.prepare(model, "CPU").run([x])
    assert bound == []
    ry, ri = _ort(model, x)
    np.testing.assert_array_equal(y, ry)
    np.testing.assert_array_equal(i, ri)  # ONNX's indices: flat over the whole tensor
