"""The rules of tdflow/onnx/rules/elementwise_math.py: one-node models run by tdflow's backend
against ONNX's own reference evaluator, on the attribute values each rule branches on (Mod's
``fmod``, IsInf's ``detect_positive``/``detect_negative``) and the values where the semantics
part (signs of remainders, halves for Round, NaN for Sign). The backend suite covers the same
ops on ONNX's cases; these run without its expected-failure list."""

from __future__ import annotations

import numpy as np
import pytest
from models import onnx

from tdflow.onnx import backend

helper, TensorProto = onnx.helper, onnx.TensorProto
ONNX_TYPE = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
             np.dtype(np.int32): TensorProto.INT32, np.dtype(np.int64): TensorProto.INT64,
             np.dtype(np.int8): TensorProto.INT8, np.dtype(np.bool_): TensorProto.BOOL}


def _run(op: str, inputs: list[np.ndarray], out_dtype, opset: int = 18, **attrs) -> None:
    """Run ``op`` on ``inputs`` with tdflow and ONNX's reference; the results must be equal
    (floats to 1e-6, relative)."""
    names = [f"x{i}" for i in range(len(inputs))]
    node = helper.make_node(op, names, ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, ONNX_TYPE[a.dtype], list(a.shape))
         for n, a in zip(names, inputs)],
        [helper.make_tensor_value_info("y", ONNX_TYPE[np.dtype(out_dtype)],
                                       list(np.broadcast_shapes(*(a.shape for a in inputs))))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    from onnx.reference import ReferenceEvaluator

    with np.errstate(all="ignore"):
        (want,) = ReferenceEvaluator(model).run(None, dict(zip(names, inputs)))
    (got,) = backend.prepare(model).run(inputs)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    else:
        np.testing.assert_array_equal(got, want)


X_INT = np.array([[7, -7, 7, -7, 0, 9], [5, -5, 12, -12, 3, -3]], np.int32)
Y_INT = np.array([3, 3, -3, -3, 4, -2], np.int32)


@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_mod_of_integers(fmod, dtype):
    _run("Mod", [X_INT.astype(dtype), Y_INT.astype(dtype)], dtype, fmod=fmod)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mod_of_floats(dtype):
    x = np.array([[5.5, -5.5, 5.5, -5.5], [0.25, -7.0, 7.0, 3.0]], dtype)
    y = np.array([2.0, 2.0, -2.0, -2.0], dtype)
    _run("Mod", [x, y], dtype, fmod=1)
    _run("Mod", [x, y], dtype, fmod=0)  # ONNX asks fmod=1 for floats; tdflow still floors


@pytest.mark.parametrize("pos, neg", [(1, 1), (1, 0), (0, 1), (0, 0)])
def test_isinf_detects_the_signs_asked(pos, neg):
    x = np.array([[np.inf, -np.inf, 1.0], [np.nan, 0.0, -np.inf]], np.float32)
    _run("IsInf", [x], np.bool_, detect_positive=pos, detect_negative=neg)


@pytest.mark.parametrize("op", ["And", "Or", "Xor"])
def test_logic_on_bool_broadcasts(op):
    a = np.array([[True, False, True], [False, False, True]])
    b = np.array([True, False, False])
    _run(op, [a, b], np.bool_)


def test_not():
    _run("Not", [np.array([[True, False], [False, False]])], np.bool_)


@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_bitwise_ops(op, dtype):
    a = np.array([[-1, 5, 12], [0, -128, 127]]).astype(dtype)
    b = np.array([3, -6, 10]).astype(dtype)
    _run(op, [a, b], dtype)


@pytest.mark.parametrize("dtype", [np.int8, np.int32])
def test_bitwise_not(dtype):
    _run("BitwiseNot", [np.array([[0, -1, 5], [127, -128, 42]]).astype(dtype)], dtype)


@pytest.mark.parametrize("op, x", [
    ("Round", np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49, -0.51], np.float32)),
    ("Sign", np.array([3.0, -0.5, 0.0, np.inf, -np.inf], np.float32)),
    ("Sign", np.array([-7, 0, 9], np.int32)),
    ("Floor", np.array([-1.5, 1.5, -0.0, 2.0], np.float32)),
    ("Ceil", np.array([-1.5, 1.5, -0.2, 2.0], np.float64)),
    ("Softsign", np.array([-3.0, 0.0, 10.0], np.float32)),
    ("IsNaN", np.array([np.nan, 1.0, np.inf], np.float32)),
    ("Acosh", np.array([1.0, 2.0, 10.0], np.float32)),
    ("Atanh", np.array([-0.5, 0.0, 0.9], np.float32)),
    ("Tan", np.array([-1.0, 0.0, 1.2], np.float64)),
])
def test_unary(op, x):
    _run(op, [x], np.bool_ if op == "IsNaN" else x.dtype)
