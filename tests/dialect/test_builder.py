"""The generated op builder: IR built from Python verifies, prints and re-parses equal."""

from __future__ import annotations

import inspect

import pytest
from tdflow.dialect import InferError, standard_dialect
from tdflow.dialect.ir import module_equal, verify_module
from tdflow.dialect.ir.parser import parse_module
from tdflow.dialect.ir.printer import print_module
from tdflow.dialect.types import TensorType as T

D = standard_dialect()


def roundtrip(module):
    assert verify_module(module, D) == []
    text = print_module(module)
    again = parse_module(text, "<built>")
    assert verify_module(again, D) == []
    assert module_equal(module, again)
    return text


def test_mlp_training_step():
    b = D.Builder()
    x, w, bias = T((8, 16), "f32"), T((16, 4), "f32"), T((4,), "f32")
    labels = T((8,), "i64")
    with b.func("step", [x, w, bias, labels], None, arg_names=["x", "w", "b", "labels"]) as f:
        xv, wv, bv, lv = f.args
        h = b.matmul(xv, wv)
        h = b.bias_add(h, bv, axis=1)
        h = b.leaky_relu(h, alpha=0.2)
        prob, loss = b.sparse_softmax_cross_entropy(h, lv, depth=4)
        total = b.reduce_sum(loss, axis=[0])
        dloss = b.ones_like(loss)
        dh = b.sparse_softmax_cross_entropy_grad(lv, dloss, prob, depth=4)
        dh = b.leaky_relu_grad(h, dh, alpha=0.2)
        dw = b.matmul(xv, dh, transpose_a=True)
        upd = b.sgd_update(wv, dw, learning_rate_val=0.1)
        b.ret(total)
    assert h.type == T((8, 4), "f32") and prob.type == T((8, 4), "f32")
    assert loss.type == T((8,), "f32") and total.type == T((), "f32")
    assert dw.type == T((16, 4), "f32")
    assert upd.name == "tdflow.sgd_update" and not upd.results
    assert str(upd.attributes["operandSegmentSizes"]) == "array<i32: 1, 1, 0, 0, 0, 0>"
    text = roundtrip(b.module)
    assert '"tdflow.leaky_relu"(%1) {alpha = 2.000000e-01 : f32}' in text


def test_optional_variadic_and_multi_result_ops():
    b = D.Builder()
    with b.func("f", [T((2, 3, 8, 8), "f32"), T((4, 3, 3, 3), "f32"), T((4,), "f32")], None) as f:
        x, w, bias = f.args
        y = b.conv2d(x, w, bias, data_format="channels_first", kernel_size=[3, 3],
                     strides=[1, 1], dilation_rate=[1, 1], padding_before=[1, 1])
        assert y.type == T((2, 4, 8, 8), "f32")
        assert list(y.op.attributes["operandSegmentSizes"]) == [1, 1, 1, 0]
        c = b.cat([y, y], axis=1)
        assert c.type == T((2, 8, 8, 8), "f32")
        out, mask = b.dropout(c, rate=0.5)
        assert mask.type.dtype == "i1"
        pooled, idx = b.max_pool_2d(out, data_format="channels_first", kernel_size=[2, 2],
                                    stride=[2, 2], dilation=[1, 1], padding=[0, 0])
        assert pooled.type == T((2, 8, 4, 4), "f32") and idx.type.dtype == "i64"
        k = b.constant(dtype="f32", shape=[4], is_floating_value=True, floating_value=1.0)
        h = b.cast(k, dtype="f16")
        b.ret(pooled, h)
    roundtrip(b.module)


def test_builder_errors():
    b = D.Builder()
    with b.func("f", [T((4, 8), "f32")], None) as f:
        (x,) = f.args
        with pytest.raises(TypeError, match="missing operand 'y'"):
            b.broadcast_add(x)
        with pytest.raises(TypeError, match="unexpected keyword 'alhpa'"):
            b.leaky_relu(x, alhpa=0.1)
        with pytest.raises(TypeError, match="takes 1 operand"):
            b.relu(x, x)
        with pytest.raises(InferError, match="contraction"):
            b.matmul(x, x)
        y = b.relu(x, result_types=[T((4, 8), "f32")])
        b.ret(y)


def test_builder_methods_have_signatures_and_docs():
    sig = inspect.signature(D.Builder.leaky_relu)
    assert list(sig.parameters) == ["self", "x", "alpha", "loc", "result_types"]
    assert sig.parameters["alpha"].default == 0.0
    assert "leaky rectified linear unit" in D.Builder.leaky_relu.__doc__
    assert all(hasattr(D.Builder, op.mnemonic) for op in D)
    assert "in_" in inspect.signature(D.Builder.conv2d).parameters
