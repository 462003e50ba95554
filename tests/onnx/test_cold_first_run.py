"""A cold cache's first ONNX run does not wait for its C compilers: ``TDFLOW_NATIVE_BUILDS``
defaults to ``background`` (lowering/elementwise_native_build.py), so the launches whose module
is still building run numpy, which must give the bits the native loops give once they are
ready (Winograd's transforms and the fused elementwise loops included); the test session
itself runs with ``wait`` (the root ``conftest.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import onnxruntime as ort
import pytest
from tdflow.lowering import elementwise_native, winograd_native
from tdflow.lowering import elementwise_native_build as nb
from tdflow.runtime.kernels import elementwise as _installs_the_builder  # noqa: F401

onnx = pytest.importorskip("onnx")
from native_support import need_native  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from tdflow.onnx.backend import TdflowBackend  # noqa: E402


def _mode(value: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "TDFLOW_NATIVE_BUILDS"}
    if value is not None:
        env["TDFLOW_NATIVE_BUILDS"] = value
    code = "from tdflow.lowering import elementwise_native_build as nb; print(nb.BACKGROUND)"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True).stdout.strip()


def test_background_is_the_default_and_the_test_session_waits():
    assert _mode(None) == "True"
    assert _mode("background") == "True"
    assert _mode("wait") == "False"
    assert _mode(" WAIT ") == "False"
    assert os.environ["TDFLOW_NATIVE_BUILDS"] == "wait" and nb.BACKGROUND is False


def _model(w: np.ndarray, b: np.ndarray):
    """``relu(conv3x3(x) + b) + x``: a Winograd convolution (16x16 output, 16 channels) and
    a fused elementwise tail."""
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Add", ["r", "x"], ["y"])]
    shape = [1, w.shape[1], 16, 16]
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def test_first_run_on_numpy_while_the_modules_build_gives_the_native_bits(monkeypatch):
    need_native()
    gate, sources = threading.Event(), []
    real = elementwise_native._builder

    def gated(source, flags):  # no `cached` probe: every module is a build on the pool
        sources.append(source)
        assert gate.wait(120)
        return real(source, flags)

    monkeypatch.setattr(elementwise_native, "_builder", gated)
    monkeypatch.setattr(nb, "BACKGROUND", True)
    monkeypatch.setattr(nb, "_built", {})  # a new process: nothing loaded
    monkeypatch.setattr(nb, "_jobs", {})
    monkeypatch.setattr(winograd_native, "_built", [])
    rng = np.random.default_rng(23)
    w = (rng.standard_normal((16, 16, 3, 3)) * 0.2).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    x = rng.standard_normal((1, 16, 16, 16)).astype(np.float32)
    special = x.copy()
    special[0, 0, 3, :5] = [np.nan, np.inf, -np.inf, -0.0, 0.0]
    special[0, 5, 9, 9] = -0.0
    try:
        rep = TdflowBackend.prepare(_model(w, b), "CPU")
        cold = [rep.run([a])[0].copy() for a in (x, special)]  # held at the gate: numpy
    finally:
        gate.set()
    assert nb.wait_all(120)
    assert any("tdf_winograd" in s for s in sources)  # the Winograd module was asked for
    monkeypatch.setattr(elementwise_native, "_builder", real)
    warm = [rep.run([a])[0] for a in (x, special)]  # the native loops now
    fresh = TdflowBackend.prepare(_model(w, b), "CPU")  # bound to the loaded modules
    for got_cold, got_warm, a in zip(cold, warm, (x, special)):
        np.testing.assert_array_equal(got_cold.view(np.uint32), got_warm.view(np.uint32))
        np.testing.assert_array_equal(got_cold.view(np.uint32),
                                      fresh.run([a])[0].view(np.uint32))
    sess = ort.InferenceSession(_model(w, b).SerializeToString(),
                                providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(cold[0], sess.run(None, {"x": x})[0], rtol=1e-4, atol=1e-4)
