"""The importer: ONNX models become onnx.* programs that print, re-parse, verify and lower;
every problem of a bad model is reported at once, naming its node."""

from __future__ import annotations

import numpy as np
import pytest
from models import classifier, onnx
from tdflow.dialect.ir import parse_module, verify_module

from tdflow.core.errors import TdflowError
from tdflow.onnx.convert import convert
from tdflow.onnx.importer import OnnxImportError, import_model, initializers, onnx_context

helper, TensorProto = onnx.helper, onnx.TensorProto


def _graph(nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _vi(name, dtype=TensorProto.FLOAT, shape=(2, 3)):
    return helper.make_tensor_value_info(name, dtype, list(shape))


def test_printed_program_reparses_verifies_and_keeps_the_weights():
    m = classifier(with_loss=False)
    module = import_model(m)
    text = str(module)
    assert '"onnx.Gemm"' in text and "dense_resource<w1>" in text  # big weights as blobs
    assert "%w1 = " in text and "%logits = " in text  # ONNX's value names
    again = parse_module(text, "imported.mlir")
    again.value_names = True  # a print option of the module: parsing keeps the names
    assert str(again) == text
    ctx = onnx_context()
    assert [d for d in verify_module(again, ctx) if d.severity == "error"] == []
    lowered = str(convert(again, ctx))
    assert "onnx." not in lowered and '"tdflow.matmul"' in lowered
    # the blob holds the initializer's bytes exactly
    w1 = initializers(m)["w1"]
    from tdflow.dialect.ir.elements import to_numpy

    const = next(op for op in again.funcs[0].body.ops if op.name == "onnx.Constant")
    np.testing.assert_array_equal(to_numpy(const.attributes["value"]), w1)


def test_versions_resolve_to_the_ops_of_the_opset():
    x = _vi("x", shape=(2, 3))
    ax = helper.make_tensor_value_info("axes", TensorProto.INT64, [1])
    old = _graph([helper.make_node("ReduceMean", ["x"], ["y"], axes=[1])], [x],
                 [_vi("y", shape=(2, 1))], opset=13)
    new = _graph([helper.make_node("ReduceMean", ["x", "axes"], ["y"])], [x, ax],
                 [_vi("y", shape=(2, 1))], opset=18)
    assert '"onnx.ReduceMeanV13"' in str(import_model(old))
    assert '"onnx.ReduceMean"' in str(import_model(new))


def _problems(model) -> list[str]:
    with pytest.raises(OnnxImportError) as e:
        import_model(model)
    return e.value.problems


def test_unknown_op_and_domain_are_reported_together_with_node_names():
    x = _vi("x")
    m = _graph([helper.make_node("NoSuchOp", ["x"], ["a"], name="n1"),
                helper.make_node("Foo", ["a"], ["y"], name="n2", domain="com.example")],
               [x], [_vi("y")])
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    m.graph.ClearField("value_info")
    with pytest.raises(OnnxImportError) as e:
        import_model(m)
    text = e.value.render()
    assert "node 'n1' (NoSuchOp)" in text and "node 'n2' (Foo)" in text  # both, at once
    assert "error:" in text


def test_wrong_attribute_type_names_node_and_attribute():
    x = _vi("x")
    node = helper.make_node("LeakyRelu", ["x"], ["y"], name="lr")
    node.attribute.append(helper.make_attribute("alpha", "fast"))  # a STRING, not a FLOAT
    probs = _problems(_graph([node], [x], [_vi("y")]))
    assert any("lr" in p and "alpha" in p for p in probs), probs


def test_not_a_model_and_truncated_model():
    with pytest.raises(OnnxImportError, match="not an ONNX model"):
        import_model(b"\x01\x02not protobuf at all")
    data = classifier().SerializeToString()
    with pytest.raises(OnnxImportError):
        import_model(data[: len(data) // 2])


def test_dangling_input_and_cycle_fail_the_checker():
    x = _vi("x")
    dangling = _graph([helper.make_node("Relu", ["nowhere"], ["y"], name="r")], [x], [_vi("y")])
    assert any("checker" in p or "nowhere" in p for p in _problems(dangling))
    cyc = _graph([helper.make_node("Add", ["x", "b"], ["a"], name="a1"),
                  helper.make_node("Relu", ["a"], ["b"], name="r1")], [x], [_vi("b")])
    assert _problems(cyc)


def test_shape_contradicting_data_is_an_error():
    x = _vi("x", shape=(2, 3))
    shape = onnx.numpy_helper.from_array(np.array([4, 4], np.int64), "s")
    m = _graph([helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")], [x],
               [_vi("y", shape=(4, 4))], [shape])
    with pytest.raises(TdflowError):  # 6 elements cannot become 16
        convert(import_model(m))


def test_unsupported_ops_are_listed_before_anything_runs():
    x = _vi("x")
    m = _graph([helper.make_node("DFT", ["x"], ["a"], name="d1"),
                helper.make_node("STFT", ["a", "x"], ["y"], name="d2")], [x], [_vi("y")])
    module = None
    try:
        module = import_model(m)
    except OnnxImportError:
        return  # the importer already refused (shape inference)
    with pytest.raises(TdflowError) as e:
        convert(module)
    assert "DFT" in str(e.value)


def test_sequences_of_known_length_lower_to_their_tensors():
    """SplitToSequence -> SequenceErase -> SequenceInsert -> ConcatFromSequence(new_axis):
    the sequence is a list while lowering, so the program is slices and one cat; a sequence
    that reaches the graph's output is a located error."""
    from tdflow.onnx.backend import TdflowBackend

    nodes = [helper.make_node("SplitToSequence", ["x"], ["s"], axis=1, keepdims=0),
             helper.make_node("Constant", [], ["p"], value=helper.make_tensor(
                 "p", TensorProto.INT64, [], [-2])),
             helper.make_node("SequenceErase", ["s", "p"], ["s2"]),
             helper.make_node("SequenceInsert", ["s2", "z"], ["s3"]),
             helper.make_node("ConcatFromSequence", ["s3"], ["y"], axis=0, new_axis=1),
             helper.make_node("SequenceLength", ["s3"], ["n"])]
    m = _graph(nodes, [_vi("x", shape=(2, 3)), _vi("z", shape=(2,))],
               [_vi("y", shape=(3, 2)), _vi("n", TensorProto.INT64, ())], opset=17)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    z = np.array([7, 8], np.float32)
    y, n = TdflowBackend.prepare(m).run({"x": x, "z": z})
    np.testing.assert_array_equal(y, np.stack([x[:, 0], x[:, 2], z]))
    assert int(n) == 3
    lowered = str(convert(import_model(m), onnx_context()))
    assert "onnx." not in lowered and lowered.count('"tdflow.cat"') == 1

    bad = _graph(nodes[:1], [_vi("x", shape=(2, 3))],
                 [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)])
    with pytest.raises(TdflowError, match="sequence as a graph output"):
        TdflowBackend.prepare(bad).run({"x": x})


def test_a_finished_model_leaves_no_weights_behind():
    """The blobs of a model that was imported, compiled and run are freed once the caller
    drops it: no memo (verified ops, inferred types, input modifiers, decoded constants) keeps
    a module's blob table alive. (A test session runs hundreds of models in one process.)"""
    import gc
    import weakref

    from tdflow.dialect.ir.core import Resources

    from tdflow.onnx.backend import TdflowBackend

    def tables() -> dict[int, weakref.ref]:
        return {id(o): weakref.ref(o) for o in gc.get_objects()
                if isinstance(o, Resources) and len(o)}

    before = tables()
    m = classifier(n_in=64, hidden=512, with_loss=False)
    rep = TdflowBackend.prepare(m, "CPU")
    (out,) = rep.run({"x": np.ones((32, 64), np.float32)})
    assert out.shape == (32, 3)
    new = [r for i, r in tables().items() if i not in before]
    assert new, "the model's weights were expected as blobs"
    del rep
    gc.collect()
    assert [r for r in new if r() is not None] == []


@pytest.mark.parametrize("shared", [False, True])
def test_a_batch_norm_after_a_conv_folds_into_its_weights(shared):
    """Conv -> BatchNormalization (inference, constant statistics) lowers to one conv2d with
    the normalisation in its weights and bias, and computes what onnxruntime computes; when
    the conv's result has another user the two stay separate ops."""
    import onnxruntime as ort
    from onnx import numpy_helper

    rng = np.random.default_rng(3)

    def init(name, *shape, positive=False):
        a = rng.standard_normal(shape).astype(np.float32)
        return numpy_helper.from_array(np.abs(a) + 0.5 if positive else a, name)

    inits = [init("w", 4, 3, 3, 3), init("b", 4), init("scale", 4), init("beta", 4),
             init("mean", 4), init("var", 4, positive=True)]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "scale", "beta", "mean", "var"],
                              ["y"], epsilon=1e-3)]
    outputs = [_vi("y", shape=(2, 4, 5, 5))]
    if shared:
        nodes.append(helper.make_node("Relu", ["c"], ["r"]))
        outputs.append(_vi("r", shape=(2, 4, 5, 5)))
    m = _graph(nodes, [_vi("x", shape=(2, 3, 5, 5))], outputs, inits)
    x = rng.standard_normal((2, 3, 5, 5)).astype(np.float32)
    lowered = str(convert(import_model(m), onnx_context()))
    assert lowered.count('"tdflow.conv2d"') == 1
    assert ('"tdflow.normalization"' in lowered) == shared
    from tdflow.onnx.backend import TdflowBackend

    got = TdflowBackend.prepare(m, "CPU").run({"x": x})
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
