"""The CLI on ONNX models: ``tdflow import-onnx``, ``run``/``lower``/``verify`` of ``.onnx``
files and of imported programs, ONNX's shape inference checking ``onnx.*`` programs, and a
corpus of bad models, each a located error with exit 1 and no traceback."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
import pytest
from tdflow.dialect.types import TensorType

from tdflow.onnx.context import infer_types

helper, TP = onnx.helper, onnx.TensorProto


def _tdflow(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "tdflow", *map(str, args)], capture_output=True,
                          text=True, input=stdin, timeout=300)


def _model(path, nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), path)
    return path


def _vi(name, dtype=TP.FLOAT, shape=(2, 3)):
    return helper.make_tensor_value_info(name, dtype, list(shape))


@pytest.fixture
def good(tmp_path):
    w = onnx.numpy_helper.from_array(np.arange(9, dtype=np.float32).reshape(3, 3), "w")
    return _model(tmp_path / "m.onnx", [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
                                        helper.make_node("Relu", ["h"], ["y/out"], name="act")],
                  [_vi("x")], [_vi("y/out")], [w])


def test_import_onnx_prints_names_and_locations_and_the_program_runs(good, tmp_path):
    proc = _tdflow("import-onnx", good, "-o", tmp_path / "m.mlir")
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "m.mlir").read_text()
    assert '%h = "onnx.MatMul"(%x, %w)' in text and 'loc("act")' in text and "%y_out" in text
    lowered = _tdflow("import-onnx", good, "--lower", "--no-locs")
    assert '"tdflow.matmul"' in lowered.stdout and "onnx." not in lowered.stdout
    for args in (["verify", tmp_path / "m.mlir"], ["verify", good], ["lower", good],
                 ["run", good], ["run", tmp_path / "m.mlir"]):
        proc = _tdflow(*args)
        assert proc.returncode == 0, (args, proc.stderr)
        assert "Traceback" not in proc.stderr


def test_verify_checks_onnx_programs_with_onnx_inference(good, tmp_path):
    text = _tdflow("import-onnx", good).stdout
    bad = text.replace('"onnx.Relu"(%h) : (tensor<2x3xf32>) -> tensor<2x3xf32>',
                       '"onnx.Relu"(%h) : (tensor<2x3xf32>) -> tensor<3x2xf32>')
    assert bad != text
    (tmp_path / "bad.mlir").write_text(bad)
    proc = _tdflow("verify", tmp_path / "bad.mlir")
    assert proc.returncode == 1
    assert "bad.mlir:4:3: error: 'onnx.Relu' op result #0 ('Y') is declared tensor<3x2xf32> " \
           "but the operands give tensor<2x3xf32>" in proc.stderr


def test_the_onnx_library_verifies_with_every_hook():
    from tdflow.onnx import ONNX_TD

    proc = _tdflow("verify", ONNX_TD)
    assert proc.returncode == 0 and "every declared hook is registered" in proc.stdout


@pytest.mark.parametrize("op, inputs, attrs, want", [
    ("onnx.Conv", {"X": [TensorType((1, 3, 8, 8), "f32")], "W": [TensorType((4, 3, 3, 3), "f32")]},
     {"strides": [2, 2]}, [(1, 4, 3, 3)]),
    ("onnx.ReduceSumV11", {"data": [TensorType((2, 3, 4), "f32")]}, {"axes": [1], "keepdims": 0},
     [(2, 4)]),
    ("onnx.TopK", {"X": [TensorType((5, 7), "f32")], "K": [TensorType((1,), "i64")]}, {},
     [(None, None), (None, None)]),  # K unknown: the rank only
])
def test_inference_is_onnx_own(op, inputs, attrs, want):
    got = infer_types(op, inputs, attrs)
    assert [t.shape for t in got] == want


BAD = {
    "not_onnx": b"this is not a protobuf \xff\xfe",
    "truncated": None,  # the good model cut in half
}


def test_bad_models_are_located_errors_with_exit_1(good, tmp_path):
    cases = {}
    cases["not_onnx.onnx"] = tmp_path / "not_onnx.onnx"
    cases["not_onnx.onnx"].write_bytes(BAD["not_onnx"])
    data = good.read_bytes()
    cases["truncated.onnx"] = tmp_path / "truncated.onnx"
    cases["truncated.onnx"].write_bytes(data[:len(data) // 2])
    cases["cycle.onnx"] = _model(tmp_path / "cycle.onnx", [
        helper.make_node("Relu", ["b"], ["a"], name="r1"),
        helper.make_node("Relu", ["a"], ["b"], name="r2")], [_vi("x")], [_vi("a")])
    cases["dangling.onnx"] = _model(tmp_path / "dangling.onnx", [
        helper.make_node("Add", ["x", "nowhere"], ["y"], name="add0")], [_vi("x")], [_vi("y")])
    cases["unknown_op.onnx"] = _model(tmp_path / "unknown_op.onnx", [
        helper.make_node("NoSuchOp", ["x"], ["y"], name="mystery")], [_vi("x")], [_vi("y")])
    cases["domain.onnx"] = _model(tmp_path / "domain.onnx", [
        helper.make_node("LabelEncoder", ["x"], ["y"], name="enc", domain="ai.onnx.ml")],
        [_vi("x")], [_vi("y")])
    cases["attr_type.onnx"] = _model(tmp_path / "attr_type.onnx", [
        helper.make_node("LeakyRelu", ["x"], ["y"], name="lr", alpha="high")],
        [_vi("x")], [_vi("y")])
    short = onnx.numpy_helper.from_array(np.ones((3, 3), np.float32), "w")
    short.raw_data = np.ones(2, np.float32).tobytes()  # 2 values for 9
    cases["short_data.onnx"] = _model(tmp_path / "short_data.onnx", [
        helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], [_vi("x")], [_vi("y")], [short])
    cases["bad_shape.onnx"] = _model(tmp_path / "bad_shape.onnx", [
        helper.make_node("MatMul", ["x", "x"], ["y"], name="mm")], [_vi("x")], [_vi("y")])
    expect = {"not_onnx.onnx": "not an ONNX model", "truncated.onnx": "not an ONNX model",
              "cycle.onnx": "checker", "dangling.onnx": "checker", "unknown_op.onnx": "mystery",
              "domain.onnx": "enc", "attr_type.onnx": "lr", "short_data.onnx": "w",
              "bad_shape.onnx": "shape inference"}
    for i, (name, path) in enumerate(cases.items()):
        # every model through import-onnx; run and verify (the same loader) on a few
        for cmd in ("import-onnx",) + (("run", "verify") if i % 4 == 0 else ()):
            proc = _tdflow(cmd, path)
            assert proc.returncode == 1, (name, cmd, proc.stdout, proc.stderr)
            assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, \
                (name, cmd, proc.stderr)
            assert f"{path.name}" in proc.stderr and expect[name] in proc.stderr, \
                (name, cmd, proc.stderr)
