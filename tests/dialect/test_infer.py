"""Shape and dtype inference of every op, against shapes numpy computes where it can."""

from __future__ import annotations

import math

import numpy as np
import pytest
from cpu_clock import cpu_clock
from hypothesis import given, settings
from hypothesis import strategies as st
from tdflow.dialect import InferError, standard_dialect
from tdflow.dialect.ir.attrs import ArrayAttr, BoolAttr, IntegerAttr
from tdflow.dialect.types import TensorType as T

D = standard_dialect()


def infer(op: str, inputs, attrs=None):
    return D.infer_result_types(f"tdflow.{op}", inputs, attrs)


def shape_of(op: str, inputs, attrs=None):
    (t,) = infer(op, inputs, attrs)
    return t.shape


def f32(*shape):
    return T(tuple(shape), "f32")


UNARY = ["relu", "leaky_relu", "sigmoid", "tanh", "gelu", "exp", "log", "sqrt", "negative",
         "square", "reciprocal"]


@pytest.mark.parametrize("op", UNARY)
def test_unary_keeps_the_type(op):
    for t in (f32(4, 8), T((None, 3), "f16"), T(None, "f64")):
        assert infer(op, [t]) == [t]


@pytest.mark.parametrize("op", ["sigmoid", "tanh", "gelu", "exp", "log", "sqrt", "reciprocal"])
def test_transcendental_ops_need_floats(op):
    with pytest.raises(InferError, match="floating-point"):
        infer(op, [T((4,), "i32")])


@pytest.mark.parametrize("op", ["relu", "negative", "square"])
def test_integer_unary(op):
    assert infer(op, [T((4,), "i64")]) == [T((4,), "i64")]


@pytest.mark.parametrize("op", ["scalar_add", "scalar_mul", "scalar_pow"])
def test_scalar_ops(op):
    assert infer(op, [f32(2, 3)], {"has_float_operand": True, "float_operand": 2.0}) == [f32(2, 3)]
    assert infer(op, [T((2,), "i32")], {"has_int_operand": True, "int_operand": 2}) == [T((2,), "i32")]
    with pytest.raises(InferError, match="exactly one"):
        infer(op, [f32(2)], {"has_int_operand": True, "has_float_operand": True})


shapes = st.lists(st.integers(1, 4), min_size=0, max_size=4).map(tuple)


@settings(max_examples=60, deadline=None)
@given(a=shapes, b=shapes, op=st.sampled_from(["broadcast_add", "broadcast_sub", "broadcast_mul",
                                              "broadcast_div", "broadcast_maximum"]))
def test_broadcasting_matches_numpy(a, b, op):
    try:
        expected = np.broadcast_shapes(a, b)
    except ValueError:
        with pytest.raises(InferError, match="broadcast"):
            infer(op, [f32(*a), f32(*b)])
        return
    assert shape_of(op, [f32(*a), f32(*b)]) == expected


def test_broadcast_unknown_dims():
    assert shape_of("broadcast_add", [T((None, 8), "f32"), f32(4, 1)]) == (4, 8)
    assert shape_of("broadcast_add", [T((None, 8), "f32"), f32(8)]) == (None, 8)
    assert shape_of("broadcast_add", [T(None, "f32"), f32(8)]) is None
    with pytest.raises(InferError, match="element type"):
        infer("broadcast_add", [f32(8), T((8,), "f16")])


def test_bias_add():
    assert shape_of("bias_add", [f32(8, 4), f32(4)], {"axis": 1}) == (8, 4)
    assert shape_of("bias_add", [f32(2, 3, 5), f32(3)], {"axis": -2}) == (2, 3, 5)
    with pytest.raises(InferError, match="4 along axis 1") as e:
        infer("bias_add", [f32(8, 4), f32(5)], {"axis": 1})
    assert e.value.operand == "b"
    with pytest.raises(InferError, match="out of range"):
        infer("bias_add", [f32(8, 4), f32(4)], {"axis": 2})


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_transposes_match_numpy(ta, tb):
    a, b = np.zeros((3, 5)), np.zeros((5, 7))
    a_in = a.T if ta else a
    b_in = b.T if tb else b
    expected = (a_in.T if ta else a_in) @ (b_in.T if tb else b_in)
    got = shape_of("matmul", [f32(*a_in.shape), f32(*b_in.shape)],
                   {"transpose_a": ta, "transpose_b": tb})
    assert got == expected.shape


def test_matmul_errors_and_add_to_output():
    assert shape_of("matmul", [f32(3, 5), f32(5, 7), f32(3, 7)]) == (3, 7)
    assert shape_of("matmul", [T((None, 5), "f32"), T((5, None), "f32")]) == (None, None)
    with pytest.raises(InferError, match="contraction"):
        infer("matmul", [f32(3, 5), f32(6, 7)])
    with pytest.raises(InferError, match="_add_to_output"):
        infer("matmul", [f32(3, 5), f32(5, 7), f32(7, 3)])
    with pytest.raises(InferError, match="batch_matmul"):
        infer("matmul", [f32(2, 3, 5), f32(5, 7)])


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_batch_matmul_matches_numpy(ta, tb):
    a, b = np.zeros((2, 4, 3, 5)), np.zeros((2, 4, 5, 6))
    a_in = np.swapaxes(a, -1, -2) if ta else a
    b_in = np.swapaxes(b, -1, -2) if tb else b
    got = shape_of("batch_matmul", [f32(*a_in.shape), f32(*b_in.shape)],
                   {"transpose_a": ta, "transpose_b": tb})
    assert got == (a @ b).shape
    with pytest.raises(InferError, match="batch dim"):
        infer("batch_matmul", [f32(2, 3, 5), f32(3, 5, 6)])


@pytest.mark.parametrize("op,fn", [("reduce_sum", np.sum), ("reduce_max", np.max)])
@pytest.mark.parametrize("axis", [[0], [1], [-1], [0, 2], [-3, -1], []])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(op, fn, axis, keepdims):
    x = np.zeros((2, 3, 4))
    expected = fn(x, axis=tuple(axis) if axis else None, keepdims=keepdims).shape
    assert shape_of(op, [f32(2, 3, 4)], {"axis": axis, "keepdims": keepdims}) == expected


def test_reduction_errors():
    with pytest.raises(InferError, match="out of range") as e:
        infer("reduce_sum", [f32(2, 3)], {"axis": [2]})
    assert e.value.attr == "axis"
    with pytest.raises(InferError, match="twice"):
        infer("reduce_sum", [f32(2, 3)], {"axis": [1, -1]})
    with pytest.raises(InferError, match="missing required attribute 'axis'"):
        infer("reduce_sum", [f32(2, 3)])


def test_softmax_family():
    assert infer("softmax", [f32(4, 10)]) == [f32(4, 10)]
    assert infer("log_softmax", [f32(4, 10)]) == [f32(4, 10)]
    assert infer("softmax_grad", [f32(4, 10), f32(4, 10)]) == [f32(4, 10)]
    assert infer("sparse_softmax_cross_entropy", [f32(8, 10), T((8,), "i64")], {"depth": 10}) == [
        f32(8, 10), f32(8)]
    assert infer("sparse_softmax_cross_entropy_grad", [T((8,), "i32"), f32(8), f32(8, 10)]) == [
        f32(8, 10)]
    with pytest.raises(InferError, match="depth"):
        infer("sparse_softmax_cross_entropy", [f32(8, 10), T((8,), "i64")], {"depth": 9})


@pytest.mark.parametrize("src,shape", [((4, 8), (2, -1)), ((4, 8), (-1,)), ((2, 3, 4), (4, -1, 2)),
                                       ((6,), (1, 6, 1)), ((0, 3), (3, -1))])
def test_reshape_matches_numpy(src, shape):
    assert shape_of("reshape", [f32(*src)], {"shape": shape}) == np.zeros(src).reshape(shape).shape


def test_reshape_unknown_and_errors():
    assert shape_of("reshape", [T((None, 8), "f32")], {"shape": [-1, 4]}) == (None, 4)
    with pytest.raises(InferError, match="more than one -1"):
        infer("reshape", [f32(4, 8)], {"shape": [-1, -1]})
    with pytest.raises(InferError, match="32 elements"):
        infer("reshape", [f32(4, 8)], {"shape": [5, 7]})


@pytest.mark.parametrize("perm", [(0, 1, 2), (2, 0, 1), (1, 2, 0), (2, 1, 0)])
def test_transpose_matches_numpy(perm):
    assert shape_of("transpose", [f32(2, 3, 4)], {"perm": perm}) == np.zeros((2, 3, 4)).transpose(perm).shape
    with pytest.raises(InferError, match="permutation"):
        infer("transpose", [f32(2, 3, 4)], {"perm": [0, 1]})


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cat_matches_numpy(axis):
    arrays = [np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((2, 3))]
    expected = np.concatenate(arrays, axis=axis).shape
    assert shape_of("cat", [f32(2, 3)] * 3, {"axis": axis}) == expected
    assert shape_of("cat", [f32(2, 3), T((None, 3), "f32")], {"axis": 0}) == (None, 3)
    with pytest.raises(InferError, match="max_dim_size"):
        infer("cat", [f32(2, 3)] * 3, {"axis": 0, "max_dim_size": 5})


def test_cast_constant_ones_like():
    assert infer("cast", [f32(2, 3)], {"dtype": "f16"}) == [T((2, 3), "f16")]
    assert infer("cast", [f32(2, 3)], {"dtype": np.int64}) == [T((2, 3), "i64")]
    assert infer("constant", [], {"dtype": "f32", "shape": [2, 3], "is_floating_value": True,
                                 "floating_value": 1.5}) == [f32(2, 3)]
    assert infer("constant", [None], {"dtype": "i64", "shape": []}) == [T((), "i64")]
    assert infer("ones_like", [T((2, None), "i32")]) == [T((2, None), "i32")]


def test_like_ops():
    assert infer("reduce_sum_like", [f32(4, 8), f32(8)], {"axis": [0]}) == [f32(8)]
    assert infer("reduce_sum_like", [f32(4, 8), f32(1, 8)], {"axis": [0]}) == [f32(1, 8)]
    assert infer("broadcast_like", [f32(8), f32(4, 8)], {"broadcast_axes": [0]}) == [f32(4, 8)]
    assert infer("broadcast_like", [f32(1, 8), f32(4, 8)], {"broadcast_axes": []}) == [f32(4, 8)]
    with pytest.raises(InferError):
        infer("reduce_sum_like", [f32(4, 8), f32(4)], {"axis": [0]})
    with pytest.raises(InferError):
        infer("broadcast_like", [f32(5), f32(4, 8)], {"broadcast_axes": [0]})


def conv_out(size, k, p, s, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


CONV = {"data_format": "channels_first", "kernel_size": [3, 3], "strides": [1, 1],
        "dilation_rate": [1, 1], "padding_before": [1, 1]}


@pytest.mark.parametrize("k,p,s,d,g", [(3, 1, 1, 1, 1), (3, 0, 2, 1, 1), (5, 2, 2, 2, 1),
                                       (1, 0, 1, 1, 2), (3, 1, 3, 1, 4)])
def test_conv2d_nchw_nhwc(k, p, s, d, g):
    n, c, h, w, f = 2, 8, 17, 12, 16
    attrs = dict(CONV, kernel_size=[k, k], padding_before=[p, p], strides=[s, s],
                 dilation_rate=[d, d], groups=g)
    oh, ow = conv_out(h, k, p, s, d), conv_out(w, k, p, s, d)
    # independent check of the formula with numpy's sliding windows (dilation 1)
    if d == 1:
        padded = np.zeros((h + 2 * p, w + 2 * p))
        win = np.lib.stride_tricks.sliding_window_view(padded, (k, k))[::s, ::s]
        assert win.shape[:2] == (oh, ow)
    got = infer("conv2d", [f32(n, c, h, w), f32(f, c // g, k, k), f32(f)], attrs)
    assert got == [f32(n, f, oh, ow)]
    nhwc = dict(attrs, data_format="channels_last")
    got = infer("conv2d", [f32(n, h, w, c), f32(f, k, k, c // g)], nhwc)
    assert got == [f32(n, oh, ow, f)]
    grads_attrs = dict(attrs, num_spatial_dims=2)
    assert infer("conv_data_grad", [f32(n, f, oh, ow), f32(f, c // g, k, k), f32(n, c, h, w)],
                 grads_attrs) == [f32(n, c, h, w)]
    assert infer("conv_filter_grad", [f32(n, f, oh, ow), f32(n, c, h, w)], grads_attrs) == [
        f32(f, c // g, k, k)]


def test_conv2d_errors():
    with pytest.raises(InferError, match="groups"):
        infer("conv2d", [f32(1, 3, 8, 8), f32(4, 1, 3, 3)], dict(CONV, groups=2))
    with pytest.raises(InferError, match="input channels"):
        infer("conv2d", [f32(1, 3, 8, 8), f32(4, 4, 3, 3)], CONV)
    with pytest.raises(InferError, match="does not fit"):
        infer("conv2d", [f32(1, 3, 2, 2), f32(4, 3, 3, 3)], dict(CONV, padding_before=[0, 0]))
    with pytest.raises(InferError, match="num_spatial_dims"):
        infer("conv_data_grad", [f32(1, 4, 8, 8), f32(4, 3, 3, 3), f32(1, 3, 8, 8)],
              dict(CONV, num_spatial_dims=3, groups=1))


def pool_out(size, k, p, s, d, ceil):
    span = size + 2 * p - d * (k - 1) - 1
    out = (math.ceil(span / s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= size + p:
        out -= 1
    return out


POOL = {"data_format": "channels_first", "kernel_size": [2, 2], "stride": [2, 2],
        "dilation": [1, 1], "padding": [0, 0]}


@pytest.mark.parametrize("size,k,p,s,ceil,expected", [
    (32, 2, 0, 2, False, 16), (5, 2, 0, 2, False, 2), (5, 2, 0, 2, True, 3),
    (6, 3, 1, 2, True, 4), (5, 3, 1, 2, True, 3), (3, 2, 1, 2, True, 2), (7, 3, 1, 3, True, 3), (4, 3, 1, 2, False, 2)])
def test_max_pool_ceil_mode(size, k, p, s, ceil, expected):
    assert pool_out(size, k, p, s, 1, ceil) == expected  # the reference formula itself
    attrs = dict(POOL, kernel_size=[k, k], padding=[p, p], stride=[s, s], ceil_mode=ceil)
    y, idx = infer("max_pool_2d", [f32(1, 2, size, size)], attrs)
    assert y == f32(1, 2, expected, expected) and idx == T((1, 2, expected, expected), "i64")
    assert infer("max_pool_2d_grad", [f32(1, 2, size, size), idx, y], attrs) == [
        f32(1, 2, size, size)]


def test_dropout():
    assert infer("dropout", [f32(4, 8)], {"rate": 0.5}) == [f32(4, 8), T((4, 8), "i1")]
    assert infer("dropout_grad", [f32(4, 8), T((4, 8), "i1")], {"scale": 2.0}) == [f32(4, 8)]
    with pytest.raises(InferError, match=r"rate must be in \[0, 1\)") as e:
        infer("dropout", [f32(4, 8)], {"rate": 1.0})
    assert e.value.attr == "rate"


@pytest.mark.parametrize("op,ins", [
    ("relu_grad", ["y", "dy"]), ("leaky_relu_grad", ["x", "dy"]), ("sigmoid_grad", ["y", "dy"]),
    ("tanh_grad", ["y", "dy"]), ("gelu_grad", ["x", "dy"])])
def test_elementwise_grads(op, ins):
    assert infer(op, [f32(4, 8), f32(4, 8)]) == [f32(4, 8)]
    assert infer(op, [T((None, 8), "f32"), f32(4, 8)]) == [f32(4, 8)]
    with pytest.raises(InferError, match="must match") as e:
        infer(op, [f32(4, 8), f32(8, 4)])
    assert e.value.operand == "dy"


def test_sgd_update_has_no_results():
    assert infer("sgd_update", [f32(4, 8), f32(4, 8)]) == []
    assert infer("sgd_update", {"model": f32(4, 8), "model_diff": f32(4, 8),
                                "learning_rate": f32(1)}) == []
    with pytest.raises(InferError, match="exactly one element"):
        infer("sgd_update", {"model": f32(4, 8), "model_diff": f32(4, 8), "learning_rate": f32(2)})


def test_every_op_infers_from_its_description_example():
    """Each op's documented example is consistent with inference (parsed by the IR)."""
    from tdflow.dialect.ir import verify_module
    from tdflow.dialect.ir.parser import parse_module

    for op in D:
        example = op.description.split("```mlir", 1)[1].split("```", 1)[0].strip()
        lhs, _, rhs = example.rpartition(" : ")
        ins, _, outs = rhs.partition(" -> ")
        in_types = [t.strip() for t in ins.strip("()").split(", ") if t.strip()]
        operands = lhs[lhs.index('"(') + 2:lhs.index(")")].split(", ") if '"(' in lhs else []
        operands = [o for o in operands if o]
        args = ", ".join(f"{o}: {t}" for o, t in zip(operands, in_types))
        text = f"func.func @f({args}) {{\n  {example}\n  return\n}}\n"
        diags = verify_module(parse_module(text, f"<{op.name}>"), D)
        assert not diags, (op.name, [str(d) for d in diags])


# -- the API the runtime and lowering call -------------------------------------------------------
def test_infer_accepts_ir_attributes_placeholders_and_dicts():
    ir = {"axis": ArrayAttr((IntegerAttr(1, "si32"),)), "keepdims": BoolAttr(True)}
    assert infer("reduce_sum", [f32(4, 8)], ir) == [f32(4, 1)]
    args = [f32(2, 3, 8, 8), f32(4, 3, 3, 3), None, None]
    assert infer("conv2d", args, CONV) == [f32(2, 4, 8, 8)]
    assert infer("conv2d", {"in": f32(2, 3, 8, 8), "weight": f32(4, 3, 3, 3)}, CONV) == [
        f32(2, 4, 8, 8)]
    sized = dict(CONV, operandSegmentSizes=[1, 1, 1, 0])
    assert infer("conv2d", [f32(2, 3, 8, 8), f32(4, 3, 3, 3), f32(4)], sized) == [f32(2, 4, 8, 8)]
    assert infer("matmul", [f32(2, 3), f32(3, 4), None]) == [f32(2, 4)]
    assert infer("leaky_relu", [f32(2)], {"alpha": None}) == [f32(2)]


def test_infer_errors_name_op_and_attribute():
    with pytest.raises(InferError) as e:
        infer("leaky_relu", [f32(2)], {"alhpa": 0.1})
    assert "'tdflow.leaky_relu'" in str(e.value) and e.value.attr == "alhpa"
    with pytest.raises(InferError, match="expected a number"):
        infer("leaky_relu", [f32(2)], {"alpha": "big"})
    with pytest.raises(InferError, match="unknown operation 'tdflow.relus'; did you mean"):
        D.infer_result_types("tdflow.relus", [f32(2)])
    with pytest.raises(InferError, match="expected 1 operand"):
        infer("relu", [f32(2), f32(2)])
    assert isinstance(InferError("x", "y"), ValueError)


def test_infer_cache_returns_fresh_lists():
    a = infer("relu", [f32(3)])
    a.append("junk")
    assert infer("relu", [f32(3)]) == [f32(3)]


def test_infer_is_fast():
    x = f32(64, 128)
    infer("leaky_relu", [x], {"alpha": 0.2})
    n = 20000
    with cpu_clock() as clock:
        for _ in range(n):
            D.infer_result_types("tdflow.leaky_relu", [x], {"alpha": 0.2})
    per_call = clock.seconds / n
    assert per_call < 20e-6, f"{per_call * 1e6:.1f} us per cached call"
