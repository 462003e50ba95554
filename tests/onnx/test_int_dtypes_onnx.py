"""ONNX models over int16 and the unsigned types: graph inputs, outputs and initializers (small
ones inline, big ones as blobs) of those types import, lower and run against numpy, and a
uint8 MaxPool runs in uint8 (no widening cast)."""

from __future__ import annotations

import numpy as np
import pytest
from models import onnx

from tdflow.onnx.backend import TdflowBackend
from tdflow.onnx.convert import convert
from tdflow.onnx.importer import import_model, onnx_context

helper, numpy_helper, TensorProto = onnx.helper, onnx.numpy_helper, onnx.TensorProto

TYPES = {"int16": TensorProto.INT16, "uint8": TensorProto.UINT8, "uint16": TensorProto.UINT16,
         "uint32": TensorProto.UINT32, "uint64": TensorProto.UINT64}


def _model(np_dt: str, size: int):
    code = TYPES[np_dt]
    info = np.iinfo(np_dt)
    rng = np.random.default_rng(0)
    w = rng.integers(info.min, info.max, size=(size,), dtype=np_dt, endpoint=True)
    nodes = [helper.make_node("Mul", ["x", "w"], ["p"]),
             helper.make_node("Sub", ["p", "x"], ["d"]),
             helper.make_node("Max", ["d", "w"], ["y"]),
             helper.make_node("Less", ["x", "w"], ["lt"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", code, [size])],
                          [helper.make_tensor_value_info("y", code, [size]),
                           helper.make_tensor_value_info("lt", TensorProto.BOOL, [size])],
                          [numpy_helper.from_array(w, "w")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), w


@pytest.mark.parametrize("size", [4, 300])  # an inline dense constant, a blob
@pytest.mark.parametrize("np_dt", list(TYPES))
def test_inputs_outputs_and_initializers_run_and_wrap_as_numpy(np_dt, size):
    model, w = _model(np_dt, size)
    lowered = str(convert(import_model(model), onnx_context()))
    elem = {"int16": "i16", "uint8": "ui8", "uint16": "ui16", "uint32": "ui32",
            "uint64": "ui64"}[np_dt]
    assert f"x{elem}>" in lowered and '"tdflow.cast"' not in lowered
    info = np.iinfo(np_dt)
    x = np.random.default_rng(1).integers(info.min, info.max, size=(size,), dtype=np_dt,
                                          endpoint=True)
    y, lt = TdflowBackend.run_model(model, [x])
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(y, np.maximum(x * w - x, w))
    assert y.dtype == np.dtype(np_dt)
    np.testing.assert_array_equal(lt, x < w)


def test_uint8_max_pool_runs_in_uint8():
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
    g = helper.make_graph([node], "g",
                          [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 1, 4, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 1, 2, 2])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    lowered = str(convert(import_model(model), onnx_context()))
    assert '"tdflow.max_pool_2d"' in lowered and '"tdflow.cast"' not in lowered
    x = np.arange(16, dtype=np.uint8).reshape(1, 1, 4, 4) * 16
    (y,) = TdflowBackend.run_model(model, [x])
    np.testing.assert_array_equal(y, x.reshape(1, 1, 2, 2, 2, 2).max(axis=(3, 5)))
