"""Small ONNX models the tests build (no downloads): a classifier with its loss, and helpers."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def classifier(n_in: int = 8, hidden: int = 16, classes: int = 3, batch: int = 32,
               seed: int = 0, with_loss: bool = True) -> onnx.ModelProto:
    """``Gemm -> Relu -> Gemm`` (+ ``SoftmaxCrossEntropyLoss`` of the labels, mean), seeded
    random weights, as an exporter writes a training graph."""
    rng = np.random.default_rng(seed)
    w1 = numpy_helper.from_array((rng.standard_normal((n_in, hidden)) * 0.3).astype(np.float32),
                                 "w1")
    b1 = numpy_helper.from_array(np.zeros(hidden, np.float32), "b1")
    w2 = numpy_helper.from_array((rng.standard_normal((hidden, classes)) * 0.3).astype(
        np.float32), "w2")
    b2 = numpy_helper.from_array(np.zeros(classes, np.float32), "b2")
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1"),
             helper.make_node("Relu", ["h"], ["a"], name="act"),
             helper.make_node("Gemm", ["a", "w2", "b2"], ["logits"], name="fc2")]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, n_in])]
    if with_loss:
        nodes.append(helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "y"], ["loss"],
                                      name="loss", reduction="mean"))
        inputs.append(helper.make_tensor_value_info("y", TensorProto.INT64, [batch]))
        outputs = [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])]
    else:
        outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, classes])]
    g = helper.make_graph(nodes, "classifier", inputs, outputs, [w1, b1, w2, b2])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def blobs(n: int = 64, n_in: int = 8, classes: int = 3, seed: int = 1):
    """Separable data: ``classes`` Gaussian blobs in ``n_in`` dims."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((classes, n_in)) * 2
    y = rng.integers(0, classes, n)
    x = (centers[y] + rng.standard_normal((n, n_in)) * 0.5).astype(np.float32)
    return x, y.astype(np.int64)
