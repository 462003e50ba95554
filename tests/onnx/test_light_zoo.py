"""ONNX's light model zoo with seeded random weights, run by tdflow and by onnxruntime (the
reference, single-threaded) on the same inputs: the class probabilities and the logits before
the final softmax agree. The zoo's stored outputs come from placeholder weights (every class
scores the same), so the backend suite's pass on them says little; this comparison does."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from tdflow.onnx.backend import TdflowBackend
from tdflow.onnx.zoo import light_models, load_light, randomized


def _with_logits(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with the input of its last Softmax as a second output."""
    model = onnx.shape_inference.infer_shapes(model)
    soft = [n for n in model.graph.node if n.op_type == "Softmax"]
    if soft:
        vi = next(v for v in model.graph.value_info if v.name == soft[-1].input[0])
        model.graph.output.append(vi)
    return model


def _ort(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


@pytest.mark.parametrize("name", light_models())
def test_light_model_matches_onnxruntime(name):
    model, feeds = randomized(load_light(name), seed=7)
    model = _with_logits(model)
    want = _ort(model, feeds)
    rep = TdflowBackend.prepare(model, "CPU")
    got = rep.run(feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        scale = max(1.0, float(np.abs(w).max()))
        np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-4 * scale, err_msg=name)
    assert np.argmax(got[0]) == np.argmax(want[0])
