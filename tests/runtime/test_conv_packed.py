"""Winograd filters kept across calls for a plan's constant weights (``packed_filter``), and
the executor's record of constant operands (``_util.mark_constant``) that allows it."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from tdflow.runtime.kernels import _conv_winograd as winograd
from tdflow.runtime.kernels import conv
from tdflow.runtime.kernels._util import mark_constant

ATTRS = {"data_format": "channels_first", "kernel_size": [3, 3], "padding_before": [1, 1],
         "strides": [1, 1], "dilation_rate": [1, 1], "groups": 1, "num_spatial_dims": 2}


def _conv(x, w):
    return conv.conv2d(ATTRS, [x, w], [None])[0]


def test_a_constant_weight_is_transformed_once_with_the_same_bits(monkeypatch):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1, 16, 16, 16)).astype(np.float32)
    w = rng.normal(size=(8, 16, 3, 3)).astype(np.float32)
    fresh = _conv(x, w)  # not constant: transformed per call
    calls = []
    real = winograd.filter_transform
    monkeypatch.setattr(winograd, "filter_transform", lambda a: calls.append(1) or real(a))
    wc = w.copy()
    mark_constant(wc)
    first, second = _conv(x, wc), _conv(x, wc)
    assert len(calls) == 1
    assert first.tobytes() == second.tobytes() == fresh.tobytes()
    _conv(x, w.copy())  # an equal array that is not the constant: no reuse
    assert len(calls) == 2


def test_a_changed_non_constant_weight_is_seen():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(1, 16, 16, 16)).astype(np.float32)
    w = rng.normal(size=(8, 16, 3, 3)).astype(np.float32)
    before = _conv(x, w)
    w *= 2  # an SGD step in place: the next call must use the new values
    after = _conv(x, w)
    np.testing.assert_allclose(after, 2 * before, rtol=1e-5, atol=1e-4)


def test_the_kept_filter_leaves_with_its_weight():
    w = np.ones((8, 8, 3, 3), np.float32)
    mark_constant(w)
    winograd.packed_filter(w)
    key = id(w)
    assert key in winograd._PACKED
    del w
    gc.collect()
    assert key not in winograd._PACKED


@pytest.mark.parametrize("weights_are_input", [False, True])
def test_a_plan_keeps_the_filter_of_its_constant_weights_only(weights_are_input, monkeypatch):
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    from tdflow.onnx.backend import TdflowBackend

    rng = np.random.default_rng(2)
    w = rng.normal(size=(16, 16, 3, 3)).astype(np.float32)
    node = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 14, 14])]
    if weights_are_input:
        inputs.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, list(w.shape)))
    g = helper.make_graph([node], "g", inputs,
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 14, 14])],
                          [] if weights_are_input else [numpy_helper.from_array(w, "w")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    x = rng.normal(size=(1, 16, 14, 14)).astype(np.float32)
    rep = TdflowBackend.prepare(model, "CPU")
    feeds = [x, w] if weights_are_input else [x]
    rep.run(feeds)  # compiles
    calls = []
    real = winograd.filter_transform
    monkeypatch.setattr(winograd, "filter_transform", lambda a: calls.append(1) or real(a))
    got = [rep.run(feeds)[0] for _ in range(3)]
    # an argument may change between calls: transformed each time; a constant never again
    assert len(calls) == (3 if weights_are_input else 0)
    want = _conv(x, w)  # the kernel on a plain copy of the weights: the same bits
    assert all(g.tobytes() == want.tobytes() for g in got)


@pytest.mark.parametrize("k,pad,stride", [(1, 0, 1), (3, 1, 2), (7, 3, 2), (3, 1, 1), (1, 0, 2)])
def test_batch_one_written_into_the_output_buffer_gives_the_same_bits(k, pad, stride):
    """Batch 1, channels first: the GEMM writes straight into the preallocated output (1x1 and
    im2col paths); the bits are those of the temporary-and-copy path, bias included."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(1, 12, 9, 9)).astype(np.float32)
    w = rng.normal(size=(10, 12, k, k)).astype(np.float32)
    bias = rng.normal(size=10).astype(np.float32)
    a = dict(ATTRS, kernel_size=[k, k], padding_before=[pad, pad], strides=[stride, stride])
    want = conv.conv2d(a, [x, w, bias], [None])[0]
    out = np.full(want.shape, np.nan, np.float32)
    got = conv.conv2d(a, [x, w, bias], [out])[0]
    assert got is out and got.tobytes() == want.tobytes()


def test_an_output_buffer_overlapping_the_input_is_not_written_early():
    rng = np.random.default_rng(4)
    buf = rng.normal(size=(1, 8, 6, 6)).astype(np.float32)
    w = rng.normal(size=(8, 8, 1, 1)).astype(np.float32)
    want = conv.conv2d(ATTRS | {"kernel_size": [1, 1], "padding_before": [0, 0]},
                       [buf.copy(), w], [None])[0]
    got = conv.conv2d(ATTRS | {"kernel_size": [1, 1], "padding_before": [0, 0]},
                      [buf, w], [buf])[0]  # the output is the input's own memory
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("k,pad", [(1, 0), (3, 1)])
def test_batch_one_with_no_output_channel_into_an_empty_buffer(k, pad):
    """An SBP shard of the filters may hold no output channel: the empty preallocated output
    is not taken as the GEMM's target (``reshape(0, -1)`` has no answer) and the result is the
    empty ``(1, 0, OH, OW)`` tensor."""
    x = np.random.default_rng(5).normal(size=(1, 4, 6, 6)).astype(np.float32)
    w = np.zeros((0, 4, k, k), np.float32)
    a = dict(ATTRS, kernel_size=[k, k], padding_before=[pad, pad])
    got = conv.conv2d(a, [x, w], [np.empty((1, 0, 6, 6), np.float32)])[0]
    assert got.shape == (1, 0, 6, 6)
