"""Elementwise expressions: the IR, fusion by composition, and the numpy renderer.

Every op of ``ELEMENTWISE_OPS`` is checked against an independent numpy (or ``math``) formula
written here, in float64, for each supported dtype; gradient ops against finite differences.
"""

from __future__ import annotations

import math

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tdflow.dialect.element_types import INT_TYPES
from tdflow.dialect.formula.expr import (
    Attr,
    Const,
    Input,
    bind,
    cast,
    compose,
    dedup_inputs,
    eq,
    erf,
    exp,
    fold_constants,
    inputs_used,
    log,
    maximum,
    remap_inputs,
    sigmoid,
    sqrt,
    tanh,
    where,
)
from tdflow.lowering.elementwise_numpy import render_numpy
from tdflow.lowering.elementwise_ops import ELEMENTWISE_OPS

x0, x1, x2, x3 = Input(0), Input(1), Input(2), Input(3)
verf = np.vectorize(math.erf, otypes=[np.float64])
RTOL = {"f16": 2e-2, "bf16": 1e-5, "f32": 2e-5, "f64": 1e-11}
ATOL = {"f16": 2e-2, "bf16": 1e-5, "f32": 1e-6, "f64": 1e-12}
NP = {"f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64,
      "i1": np.bool_, **{n: np.dtype(t.numpy).type for n, t in INT_TYPES.items()}}


# ---- IR ------------------------------------------------------------------------------------


def test_builders_repr_and_structural_equality():
    e = where(x0 > 0, x0, x0 * Attr("alpha"))
    assert repr(e) == "where(gt(in0, 0), in0, mul(in0, @alpha))"
    assert e == where(x0 > 0, x0, x0 * Attr("alpha"))
    assert hash(e) == hash(where(x0 > 0, x0, x0 * Attr("alpha")))
    assert repr(eq(x0, 1)) == "eq(in0, 1)"
    assert repr(2 - x0) == "sub(2, in0)" and repr(1 / x0) == "div(1, in0)"
    with pytest.raises(ValueError, match="unknown unary op"):
        from tdflow.dialect.formula.expr import Unary
        Unary("sec", x0)  # not in the vocabulary (cosh is)
    with pytest.raises(ValueError, match="cannot cast"):
        cast(x0, "u8")


def test_bind_and_fold():
    e = x0 * (Attr("a") / (1.0 - Attr("b")))
    assert bind(e, {"a": 1.0, "b": 0.5}) == x0 * Const(2.0)
    with pytest.raises(KeyError, match="'b' is not bound"):
        bind(e, {"a": 1.0})
    assert fold_constants(where(Const(True), x0, x1)) == x0
    assert fold_constants(exp(Const(0.0)) + x0) == Const(1.0) + x0
    # integer / integer depends on the runtime dtype: not folded
    assert fold_constants(Const(7) / Const(2)) == Const(7) / Const(2)


def test_compose_splices_inputs():
    outer = x0 * x1 + x2
    fused = compose(outer, {1: exp(x0) + x1})
    assert fused == x0 * (exp(x1) + x2) + x3
    assert compose(x0 + x1, {0: x0 * 2, 1: log(x0)}) == x0 * 2 + log(x1)
    # a constant-only inner expression removes the input
    assert compose(x0 + x1, {1: Const(3.0)}) == x0 + 3.0
    with pytest.raises(IndexError):
        compose(x0, {3: x0})
    # outer ignoring its last input still counts it with outer_arity
    assert compose(x0 * 2, {0: x1}, outer_arity=2) == x1 * 2


def test_dedup_and_remap():
    e, ops = dedup_inputs(x0 * x1 + x2, ["a", "b", "a"])
    assert e == x0 * x1 + x0 and ops == ["a", "b"]
    e, ops = dedup_inputs(x2 * 2, ["a", "b", "c"])
    assert e == x0 * 2 and ops == ["c"]
    assert remap_inputs(x0 - x1, {0: 1, 1: 0}) == x1 - x0
    assert inputs_used(x2 + x0) == {0, 2}


def test_composed_program_equals_chain():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    inner = ELEMENTWISE_OPS["tdflow.leaky_relu"].bind({"alpha": 0.1})
    outer = ELEMENTWISE_OPS["tdflow.broadcast_mul"].bind()
    fused = compose(outer, {0: compose(ELEMENTWISE_OPS["tdflow.tanh"].bind(), {0: inner})})
    got = render_numpy(fused, ["f64", "f64"])([a, b])
    np.testing.assert_allclose(got, np.tanh(np.where(a > 0, a, 0.1 * a)) * b, rtol=1e-13)


# ---- numpy renderer ------------------------------------------------------------------------


def test_program_types_out_and_inplace():
    prog = render_numpy(exp(x0) * 2 + x1, ["f32", "f32"])
    a = np.linspace(-1, 1, 6, dtype=np.float32)
    b = np.ones(6, np.float32)
    ref = np.exp(a.astype(np.float64)) * 2 + 1
    out = np.empty(6, np.float32)
    assert prog([a, b], out) is out
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    # in place over input 0 (only the last step writes out)
    prog([a, b], a)
    np.testing.assert_allclose(a, ref, rtol=1e-6)
    # out of another dtype casts on store
    o64 = np.empty(6, np.float64)
    prog([np.zeros(6, np.float32), b], o64)
    assert o64.tolist() == [3.0] * 6
    assert prog.n_temps <= 2


def test_broadcasting_path_and_scalar_inputs():
    prog = render_numpy(where(x0 > x1, x0, x1 * 2), ["f64", "f64"])
    a = np.arange(3.0)[:, None]
    b = np.arange(4.0)[None, :]
    np.testing.assert_array_equal(prog([a, b]), np.where(a > b, a, b * 2))
    out = np.empty((3, 4))
    assert prog([a, b], out) is out
    np.testing.assert_array_equal(out, np.where(a > b, a, b * 2))
    np.testing.assert_array_equal(prog([np.float64(2.0) * np.ones(()), b]),
                                  np.where(2 > b, 2.0, b * 2))
    zero_d = render_numpy(x0 + 1, ["f32"])([np.ones((), np.float32)])
    assert isinstance(zero_d, np.ndarray) and zero_d.shape == () and zero_d == 2
    zero_d = render_numpy(exp(x0) + 1, ["f32"])([np.zeros((), np.float32)])
    assert isinstance(zero_d, np.ndarray) and zero_d == 2
    empty = render_numpy(exp(x0) + x1, ["f32", "f32"])([np.ones((0, 3), np.float32),
                                                          np.ones((1, 3), np.float32)])
    assert empty.shape == (0, 3) and empty.dtype == np.float32


def test_select_writing_over_its_operands():
    prog = render_numpy(where(x0 > 0, x0, x1), ["f32", "f32"])
    a = np.array([-1.0, 2.0, -3.0], np.float32)
    b = np.array([10.0, 20.0, 30.0], np.float32)
    prog([a, b], a)  # out aliases the 'then' operand
    assert a.tolist() == [10.0, 2.0, 30.0]
    a = np.array([-1.0, 2.0, -3.0], np.float32)
    prog([a, b], b)  # out aliases the 'else' operand
    assert b.tolist() == [10.0, 2.0, 30.0]


def test_integer_semantics():
    div = render_numpy(x0 / x1, ["i32", "i32"])
    a = np.array([-7, 7, -7, 7, 0], np.int32)
    b = np.array([2, -2, -2, 2, 5], np.int32)
    got = div([a, b])
    assert got.dtype == np.int32 and got.tolist() == [-3, -3, 3, 3, 0]  # C truncation
    # a weak float constant converts to the integer type (as OneFlow casts the scalar to T)
    assert render_numpy(x0 * 2.5, ["i64"])([np.array([3])]).tolist() == [6]
    # float functions of integers compute in f32; the out dtype is explicit
    got = render_numpy(sqrt(x0), ["i32"], "f32")([np.array([4, 9], np.int32)])
    assert got.dtype == np.float32 and got.tolist() == [2.0, 3.0]
    pred = render_numpy(x0 > x1, ["i8", "i8"])
    assert pred.out_dtype == "i1"
    assert pred([np.array([1, 2], np.int8), np.array([2, 1], np.int8)]).tolist() == [False, True]


def test_half_computes_in_f32_and_rounds_once():
    prog = render_numpy((x0 + 1000.0) - 1000.0, ["f16"])
    a = np.array([0.1], np.float16)
    assert prog.out_dtype == "f16"
    got = prog([a])
    assert got.dtype == np.float16
    assert got[0] == np.float16(np.float32(a[0]) + np.float32(1000) - np.float32(1000))


def test_casts_and_constants():
    prog = render_numpy(cast(x0, "i32") * 2, ["f32"], "i32")
    assert prog([np.array([1.7, -1.7], np.float32)]).tolist() == [2, -2]
    prog = render_numpy(cast(x0, "f16"), ["f32"], "f32")
    assert prog([np.array([0.1], np.float32)])[0] == np.float32(np.float16(0.1))
    const = render_numpy(Const(2.0) + Const(1.0), ["f32"], "f32")
    out = np.zeros(3, np.float32)
    const([np.zeros(3, np.float32)], out)
    assert out.tolist() == [3.0] * 3
    ident = render_numpy(x0, ["f32"], "f64")
    assert ident([np.ones(2, np.float32)]).dtype == np.float64


def test_no_numpy_warnings_for_ieee_results():
    prog = render_numpy(sigmoid(x0) + log(x0 * 0), ["f32"])
    with np.errstate(all="raise"):
        got = prog([np.array([-1000.0, 1000.0], np.float32)])
    assert np.isneginf(got).all()


@settings(max_examples=25, deadline=None)
@given(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=4),
       st.integers(0, 2**31 - 1))
def test_broadcasting_matches_numpy(shapes, seed):
    rng = np.random.default_rng(seed)
    a, b, c = (np.asarray(rng.normal(size=s)) for s in shapes.input_shapes)
    e = maximum(x0 * x1, x2) - tanh(x1)
    got = render_numpy(e, ["f64"] * 3)([a, b, c])
    assert got.shape == shapes.result_shape
    np.testing.assert_allclose(got, np.maximum(a * b, c) - np.tanh(b), rtol=1e-12)
    out = np.empty(shapes.result_shape)
    prog = render_numpy(e, ["f64"] * 3)
    for _ in range(2):  # the second call reuses the scratch plan of these shapes
        prog([a, b, c], out)
        np.testing.assert_allclose(out, got)
    # scratch slots reused by values of different shapes
    e2 = exp(x2 * 0.1) * x0 + tanh(x1 * x2) - x0 * x1
    want = np.exp(c * 0.1) * a + np.tanh(b * c) - a * b
    np.testing.assert_allclose(render_numpy(e2, ["f64"] * 3)([a, b, c]), want, rtol=1e-12)


# ---- the op table against independent formulas --------------------------------------------

def _ref_gelu(x):
    return 0.5 * x * (1.0 + verf(x / math.sqrt(2.0)))


UNARY_REFS = {
    "tdflow.relu": (lambda x, a: x * (x > 0), {}),
    "tdflow.leaky_relu": (lambda x, a: np.where(x > 0, x, a["alpha"] * x), {"alpha": 0.15}),
    "tdflow.sigmoid": (lambda x, a: np.exp(-np.logaddexp(0.0, -x)), {}),
    "tdflow.tanh": (lambda x, a: np.vectorize(math.tanh)(x), {}),
    "tdflow.gelu": (lambda x, a: _ref_gelu(x), {}),
    "tdflow.exp": (lambda x, a: np.vectorize(math.exp)(x), {}),
    "tdflow.log": (lambda x, a: np.vectorize(math.log)(np.abs(x) + 0.5), {}),
    "tdflow.sqrt": (lambda x, a: np.vectorize(math.sqrt)(np.abs(x) + 0.5), {}),
    "tdflow.negative": (lambda x, a: 0 - x, {}),
    "tdflow.square": (lambda x, a: x ** 2, {}),
    "tdflow.reciprocal": (lambda x, a: np.vectorize(lambda t: 1 / t)(x), {}),
}
POSITIVE_DOMAIN = {"tdflow.log", "tdflow.sqrt"}


def _inputs(dtype, shape=(3, 5), seed=0, nonzero=False):
    rng = np.random.default_rng(seed)
    if dtype in INT_TYPES:
        # unsigned types get small non-negative values; sub and neg then wrap
        v = rng.integers(-9 if INT_TYPES[dtype].signed else 0, 10, size=shape)
        if nonzero:
            v[v == 0] = 3
        return v.astype(NP[dtype])
    v = rng.normal(scale=2.0, size=shape)
    if nonzero:
        v[np.abs(v) < 0.1] = 0.5
    return v.astype(NP[dtype])


def _check(got, ref, dtype):
    assert got.dtype == NP[dtype]
    if dtype in INT_TYPES or dtype == "i1":
        # through int64, so a negative reference wraps into an unsigned type as numpy does
        np.testing.assert_array_equal(got, np.asarray(ref).astype(np.int64).astype(NP[dtype]))
    else:
        np.testing.assert_allclose(got.astype(np.float64), ref, rtol=RTOL[dtype], atol=ATOL[dtype])


@pytest.mark.parametrize("name", sorted(UNARY_REFS))
def test_unary_ops(name):
    ref, attrs = UNARY_REFS[name]
    d = ELEMENTWISE_OPS[name]
    for dtype in sorted(d.dtypes):
        x = _inputs(dtype, nonzero=name == "tdflow.reciprocal")
        if name in POSITIVE_DOMAIN:
            x = (np.abs(x) + NP[dtype](0.5)).astype(NP[dtype])
            want = ref(x.astype(np.float64) - 0.5, attrs)
        else:
            want = ref(x.astype(np.float64), attrs)
        got = render_numpy(d.bind(attrs), [dtype], dtype)([x])
        _check(got, want, dtype)


@pytest.mark.parametrize("op,flags", [("add", "int"), ("add", "float"), ("mul", "int"),
                                      ("mul", "float"), ("pow", "int"), ("pow", "float")])
def test_scalar_ops(op, flags):
    d = ELEMENTWISE_OPS[f"tdflow.scalar_{op}"]
    attrs = ({"has_int_operand": True, "int_operand": 3} if flags == "int"
             else {"has_float_operand": True, "float_operand": 0.5})
    operand = 3 if flags == "int" else 0.5
    for dtype in sorted(d.dtypes):
        x = _inputs(dtype)
        if op == "pow":
            x = np.abs(x).astype(NP[dtype]) + NP[dtype](1)
        xs = x.astype(np.float64)
        if dtype in INT_TYPES:
            operand_t = int(operand)  # the kernel casts the scalar to the tensor's type
            want = {"add": np.add, "mul": np.multiply, "pow": np.power}[op](xs, operand_t)
        else:
            want = {"add": np.add, "mul": np.multiply, "pow": np.power}[op](xs, operand)
        got = render_numpy(d.bind(attrs), [dtype], dtype)([x])
        _check(got, want, dtype)
    with pytest.raises(ValueError, match="has_int_operand or has_float_operand"):
        d.bind({})


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum"])
def test_broadcast_binary_ops(name):
    d = ELEMENTWISE_OPS[f"tdflow.broadcast_{name}"]
    for dtype in sorted(d.dtypes - {"i1"}):
        a = _inputs(dtype, (3, 1, 4), seed=1)
        b = _inputs(dtype, (5, 1), seed=2, nonzero=True)
        fa, fb = a.astype(np.float64), b.astype(np.float64)
        if name == "div" and dtype in INT_TYPES:
            want = np.trunc(fa / fb)
        else:
            want = {"add": fa + fb, "sub": fa - fb, "mul": fa * fb, "div": fa / fb,
                    "maximum": np.where(fa > fb, fa, fb)}[name]
        got = render_numpy(d.bind(), [dtype, dtype], dtype)([a, b])
        assert got.shape == (3, 5, 4)
        _check(got, want, dtype)


def _fd(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def _sig(x):
    return 1 / (1 + np.exp(-x))


GRAD_CASES = {
    # name: (forward f, which first input the grad op takes: "x" or "y", attrs)
    "tdflow.relu_grad": (lambda x: np.maximum(x, 0), "y", {}),
    "tdflow.leaky_relu_grad": (lambda x: np.where(x > 0, x, 0.3 * x), "x", {"alpha": 0.3}),
    "tdflow.sigmoid_grad": (_sig, "y", {}),
    "tdflow.tanh_grad": (np.tanh, "y", {}),
    "tdflow.gelu_grad": (_ref_gelu, "x", {}),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_grad_ops_against_finite_differences(name):
    f, first, attrs = GRAD_CASES[name]
    d = ELEMENTWISE_OPS[name]
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 6))
    x[np.abs(x) < 1e-2] = 0.5  # stay away from the kinks
    dy = rng.normal(size=x.shape)
    want = dy * _fd(f, x)
    for dtype in ("f32", "f64"):
        arg = f(x) if first == "y" else x
        got = render_numpy(d.bind(attrs), [dtype, dtype], dtype)(
            [arg.astype(NP[dtype]), dy.astype(NP[dtype])])
        tol = 1e-6 if dtype == "f64" else 1e-4
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_dropout_grad_with_bool_mask():
    d = ELEMENTWISE_OPS["tdflow.dropout_grad"]
    dy = np.arange(4, dtype=np.float32)
    mask = np.array([True, False, True, False])
    got = render_numpy(d.bind({"scale": 2.0}), ["f32", "i1"], "f32")([dy, mask])
    assert got.tolist() == [0.0, 0.0, 4.0, 0.0]
    assert d.bind({}) == x0 * x1 * 0.0  # scale defaults to 0. as in ops.td


def test_table_covers_the_spec():
    expected = {"relu", "leaky_relu", "sigmoid", "tanh", "gelu", "exp", "log", "sqrt", "negative",
                "square", "reciprocal", "scalar_add", "scalar_mul", "scalar_pow", "broadcast_add",
                "broadcast_sub", "broadcast_mul", "broadcast_div", "broadcast_maximum",
                "broadcast_minimum", "broadcast_pow", "broadcast_equal", "broadcast_not_equal",
                "broadcast_less", "broadcast_less_equal", "broadcast_greater",
                "broadcast_greater_equal", "relu_grad", "leaky_relu_grad", "sigmoid_grad",
                "tanh_grad", "gelu_grad", "dropout_grad",
                # added with the models (tdflow/ops/math.td)
                "abs", "erf", "fast_gelu", "rsqrt", "scalar_div", "silu", "softplus", "where",
                # added for ONNX (the elementwise and math families (ops/elementwise.td, ops/math.td))
                "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
                "atanh", "floor", "ceil", "round", "sign", "isnan", "isinf", "softsign",
                "logical_not", "bitwise_not", "broadcast_logical_and", "broadcast_logical_or",
                "broadcast_logical_xor", "broadcast_bitwise_and", "broadcast_bitwise_or",
                "broadcast_bitwise_xor", "broadcast_bitwise_left_shift",
                "broadcast_bitwise_right_shift", "broadcast_fmod", "broadcast_floor_mod"}
    assert {d.mnemonic for d in ELEMENTWISE_OPS.values()} == expected
    for d in ELEMENTWISE_OPS.values():
        assert d.name == f"tdflow.{d.mnemonic}"
        assert d.arity == len(d.inputs) >= 1


def test_gelu_formula_is_erf_form():
    e = ELEMENTWISE_OPS["tdflow.gelu"].bind()
    assert any(getattr(n, "op", None) == "erf" for n in _nodes(e))
    assert exp(x0) != erf(x0) and sqrt(x0) != log(x0)


def _nodes(e):
    from tdflow.dialect.formula.expr import walk
    return list(walk(e))
