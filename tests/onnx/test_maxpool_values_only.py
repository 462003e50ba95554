"""ONNX ``MaxPool`` without its indices output: the compiled plan binds ``max_pool_2d``'s
values-only form (``bind_unused``, chosen from ``executor.unused_outputs``), which must give
the general kernel's bits (NaN, infinities, signed zeros, padding) and torch's values; with the
indices output asked for, the general kernel runs and the indices are right."""

from __future__ import annotations

import numpy as np
import pytest
import torch
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
def test_values_only_matches_the_general_kernel_and_torch(shape, k, s, p, monkeypatch):
    bound = []
    real = pool.max_pool_2d.bind_unused
    monkeypatch.setattr(pool.max_pool_2d, "bind_unused",
                        lambda *a: bound.append(a[3]) or real(*a))
    x = _input(shape, 0)
    got = TdflowBackend.prepare(_model(shape, k, s, p, False), "CPU").run([x])[0]
    assert bound == [frozenset({1})]
    attrs = {"kernel_size": [k, k], "stride": [s, s], "padding": [p, p], "dilation": [1, 1],
             "data_format": "channels_first", "ceil_mode": False, "return_indices": False}
    want = pool.max_pool_2d(attrs, [x], [None, None])[0]
    assert got.tobytes() == want.tobytes()  # every bit: NaN, infinities, signed zeros
    ref = torch.nn.functional.max_pool2d(torch.from_numpy(x), k, s, p).numpy()
    np.testing.assert_array_equal(got, ref)


def test_with_indices_the_general_kernel_runs(monkeypatch):
    bound = []
    real = pool.max_pool_2d.bind_unused
    monkeypatch.setattr(pool.max_pool_2d, "bind_unused",
                        lambda *a: bound.append(a[3]) or real(*a))
    x = np.random.default_rng(1).normal(size=(1, 3, 10, 10)).astype(np.float32)
    y, i = TdflowBackend.prepare(_model(x.shape, 3, 2, 1, True), "CPU").run([x])
    assert bound == []
    ry, ri = torch.nn.functional.max_pool2d(torch.from_numpy(x), 3, 2, 1, return_indices=True)
    np.testing.assert_array_equal(y, ry.numpy())
    # ONNX's indices are flat over the whole tensor; torch's are per (n, c) plane
    np.testing.assert_array_equal(i % 100, ri.numpy())
