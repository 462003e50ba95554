"""The ops of tdflow/ops/math.td against independent numpy references.

``abs``, ``rsqrt``, ``erf``, ``silu``, ``fast_gelu``, ``softplus``, ``scalar_div``, ``where``
and ``add_n`` run through the whole eager path (binding, inference hooks, the kernel, the
engine) over several shapes and dtypes, with broadcasting where it applies, attribute values
and edge cases (zeros, infinities, the softplus threshold, integer division); a compiled
program fuses them and must agree with eager. Bad inputs are errors naming the op and the
operand or attribute. Gradients are in grad_cases_math.py (run by test_grad_ops.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from tdflow.dialect import InferError, standard_dialect
from tdflow.dialect.types import TensorType as T
from tdflow.runtime.eager import EagerError

import tdflow

F = tdflow.functional
D = standard_dialect()
rng = np.random.default_rng(1313)

SHAPES = ((3, 4), (2, 3, 5), (7,), ())
TOL = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-12}


def t(a) -> tdflow.Tensor:
    return tdflow.tensor(np.asarray(a))


def check(got: np.ndarray, want: np.ndarray, dtype) -> None:
    assert got.dtype == np.dtype(dtype) and got.shape == np.shape(want)
    tol = TOL[dtype]
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol)


# ---- references, in float64 --------------------------------------------------------------------

_erf = np.vectorize(math.erf, otypes=[np.float64])


def ref_silu(x):
    return x / (1.0 + np.exp(-x))


def ref_fast_gelu(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def ref_softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.logaddexp(0.0, x * beta) / beta)


UNARY = {  # op -> (reference, input maker)
    "abs": (np.abs, lambda s: rng.normal(size=s)),
    "rsqrt": (lambda x: 1.0 / np.sqrt(x), lambda s: rng.uniform(0.05, 9.0, size=s)),
    "erf": (_erf, lambda s: rng.normal(size=s) * 2),
    "silu": (ref_silu, lambda s: rng.normal(size=s) * 4),
    "fast_gelu": (ref_fast_gelu, lambda s: rng.normal(size=s) * 4),
    "softplus": (ref_softplus, lambda s: rng.normal(size=s) * 4),
}


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_ops_match_numpy(name, shape, dtype):
    ref, make = UNARY[name]
    x = np.asarray(make(shape)).astype(dtype)
    got = getattr(F, name)(t(x)).numpy()
    check(got, ref(x.astype(np.float64)), dtype)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_abs_of_integers_keeps_their_type(dtype):
    x = np.array([[-3, 0, 5], [7, -1, -100]], dtype)
    got = F.abs(t(x)).numpy()
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.abs(x))


def test_edge_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, 4.0, -1.0], np.float32)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(F.abs(t(x)).numpy(), np.abs(x))
        np.testing.assert_array_equal(F.rsqrt(t(x)).numpy(),
                                      np.float32(1) / np.sqrt(x))  # inf at 0, nan below
    finite = x[[0, 4, 5]]
    np.testing.assert_array_equal(F.erf(t(np.array([np.inf, -np.inf, 0.0]))).numpy(),
                                  [1.0, -1.0, 0.0])
    np.testing.assert_allclose(F.silu(t(finite)).numpy(), ref_silu(finite.astype(np.float64)),
                               rtol=1e-6)
    # large magnitudes stay finite: silu(-100) = -0, fast_gelu(+-50) = 50 / 0
    big = np.array([-100.0, 100.0, -50.0, 50.0], np.float32)
    for fn in (F.silu, F.fast_gelu):
        got = fn(t(big)).numpy()
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, [0.0, 100.0, 0.0, 50.0], atol=1e-12)


def test_fast_gelu_is_the_tanh_approximation_of_gelu():
    x = np.linspace(-4, 4, 81)
    fast, exact = F.fast_gelu(t(x)).numpy(), F.gelu(t(x)).numpy()
    assert 0 < np.max(np.abs(fast - exact)) < 1e-3  # close to gelu, but not gelu


@pytest.mark.parametrize("beta, threshold", [(1.0, 20.0), (2.0, 1.0), (0.5, 3.0), (3.0, -1.0)])
def test_softplus_attributes_and_the_linear_region(beta, threshold):
    x = np.linspace(-30, 30, 121)
    got = F.softplus(t(x), beta=beta, threshold=threshold).numpy()
    check(got, ref_softplus(x, beta, threshold), np.float64)
    above = x * beta > threshold
    np.testing.assert_array_equal(got[above], x[above])  # exactly x above the threshold
    # positional, as functional_api.yaml orders them
    np.testing.assert_array_equal(F.softplus(t(x), beta, threshold).numpy(), got)


def test_softplus_default_neither_overflows_nor_underflows():
    # OneFlow's (and tdflow's) log(1 + exp(x)), not log1p: far below 0 it is exact to an
    # absolute 1e-16 rather than to a relative one
    x = np.array([-800.0, -30.0, 0.0, 19.0, 21.0, 800.0])
    np.testing.assert_allclose(F.softplus(t(x)).numpy(), ref_softplus(x), rtol=1e-12,
                               atol=1e-15)
    assert F.softplus(t(x)).numpy()[-1] == 800.0  # no overflow: linear above 20


def test_functional_signatures_follow_oneflow():
    sigs = {n: [str(s) for s in getattr(F, n).signatures]
            for n in ("abs", "rsqrt", "erf", "silu", "fast_gelu", "softplus", "where", "add_n")}
    assert sigs == {
        "abs": ["Tensor (Tensor x)"], "rsqrt": ["Tensor (Tensor x)"],
        "erf": ["Tensor (Tensor x)"], "silu": ["Tensor (Tensor x)"],
        "fast_gelu": ["Tensor (Tensor x)"],
        "softplus": ["Tensor (Tensor x, Double beta=1.0, Double threshold=20.0)"],
        "where": ["Tensor (Tensor condition, Tensor x, Tensor y)"],
        "add_n": ["Tensor (TensorTuple inputs)"],
    }
    x = rng.normal(size=(2, 3))
    np.testing.assert_allclose(F.silu(x=t(x)).numpy(), ref_silu(x), rtol=1e-12)


# ---- scalar_div --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("scalar", [("float", 2.5), ("float", -0.125), ("int", 3), ("int", -7)])
def test_scalar_div_of_floats(scalar, shape, dtype):
    kind, v = scalar
    x = rng.normal(size=shape).astype(dtype)
    got = F.scalar_div(t(x), **{f"has_{kind}_operand": True, f"{kind}_operand": v}).numpy()
    check(got, x.astype(np.float64) / v, dtype)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_scalar_div_of_integers_truncates_toward_zero(dtype):
    x = np.array([7, -7, 6, -1, 0, 100], dtype)
    for v in (2, -3, 1):
        got = F.scalar_div(t(x), has_int_operand=True, int_operand=v).numpy()
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, np.trunc(x / v).astype(dtype))  # C's division


def test_scalar_div_by_zero_follows_ieee():
    x = np.array([1.0, -1.0, 0.0], np.float32)
    with np.errstate(all="ignore"):
        got = F.scalar_div(t(x), has_float_operand=True, float_operand=0.0).numpy()
    np.testing.assert_array_equal(got[:2], [np.inf, -np.inf])
    assert np.isnan(got[2])


# ---- where ---------------------------------------------------------------------------------------

WHERE_SHAPES = [((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), (3, 1)), ((4,), (3, 4), ()),
                ((2, 1, 4), (3, 1), (1, 4)), ((), (2, 3), (2, 3)), ((5, 1), (1,), (1, 6))]


@pytest.mark.parametrize("cdtype", [np.bool_, np.int8, np.int32, np.int64])
@pytest.mark.parametrize("shapes", WHERE_SHAPES, ids=str)
def test_where_broadcasts_like_numpy(shapes, cdtype):
    sc, sx, sy = shapes
    c = rng.integers(-2, 3, size=sc).astype(cdtype)  # nonzero is true
    x, y = rng.normal(size=sx).astype(np.float32), rng.normal(size=sy).astype(np.float32)
    got = F.where(t(c), t(x), t(y)).numpy()
    want = np.where(c != 0, x, y)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int32, np.int64, np.float16, np.float64])
def test_where_keeps_the_type_of_x_and_y(dtype):
    c = np.array([True, False, True, False])
    x = np.array([1, 0, 1, 1]).astype(dtype)
    y = np.array([0, 1, 0, 0]).astype(dtype)
    got = F.where(t(c), t(x), t(y)).numpy()
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.where(c, x, y))


def test_where_selects_nan_and_inf_untouched():
    c = np.array([True, False, True])
    x = np.array([np.nan, 1.0, -np.inf])
    y = np.array([2.0, np.inf, np.nan])
    np.testing.assert_array_equal(F.where(t(c), t(x), t(y)).numpy(), [np.nan, np.inf, -np.inf])


# ---- add_n ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("n", [2, 3, 6])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_add_n_adds_in_order(shape, n, dtype):
    arrays = [(rng.normal(size=shape) * 10).astype(dtype) for _ in range(n)]
    got = F.add_n([t(a) for a in arrays]).numpy()
    want = arrays[0] + arrays[1]
    for a in arrays[2:]:
        want = want + a  # left to right, in the inputs' type
    assert got.dtype == dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


# ---- graph mode ------------------------------------------------------------------------------------

PROGRAM = """func.func @f(%c: tensor<3x4xi8>, %x: tensor<3x4xf32>, %y: tensor<4xf32>) -> tensor<3x4xf32> {
  %0 = "tdflow.silu"(%x) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %1 = "tdflow.abs"(%y) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "tdflow.rsqrt"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = "tdflow.where"(%c, %0, %2) : (tensor<3x4xi8>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %4 = "tdflow.softplus"(%3) {beta = 2.0 : f64, threshold = 1.0 : f64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %5 = "tdflow.scalar_div"(%4) {has_int_operand = true, int_operand = 4 : si64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %6 = "tdflow.fast_gelu"(%5) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %7 = "tdflow.erf"(%6) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %8 = "tdflow.add_n"(%7, %x, %7) : (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %8 : tensor<3x4xf32>
}
"""


def test_a_compiled_program_agrees_with_eager_and_numpy(tmp_path):
    c = rng.integers(0, 2, size=(3, 4)).astype(np.int8)
    x = rng.normal(size=(3, 4)).astype(np.float32)
    y = rng.normal(size=(4,)).astype(np.float32)
    (tmp_path / "p.mlir").write_text(PROGRAM)
    got = tdflow.compile(str(tmp_path / "p.mlir"))(c, x, y)

    e = F.where(t(c), F.silu(t(x)), F.rsqrt(F.abs(t(y))))
    e = F.scalar_div(F.softplus(e, beta=2.0, threshold=1.0), has_int_operand=True, int_operand=4)
    e = F.erf(F.fast_gelu(e))
    eager = F.add_n([e, t(x), e]).numpy()
    np.testing.assert_allclose(got, eager, rtol=1e-6, atol=1e-7)

    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    r = np.where(c != 0, ref_silu(x64), 1 / np.sqrt(np.abs(y64)))
    r = _erf(ref_fast_gelu(ref_softplus(r, 2.0, 1.0) / 4))
    np.testing.assert_allclose(got, 2 * r + x64, rtol=1e-5, atol=1e-6)


# ---- errors --------------------------------------------------------------------------------------

@pytest.mark.parametrize("op, inputs, attrs, where, match", [
    ("tdflow.rsqrt", [T((2,), "i32")], {}, "x", "'x' must be a floating-point tensor"),
    ("tdflow.erf", [T((2,), "i64")], {}, "x", "'x' must be a floating-point tensor"),
    ("tdflow.silu", [T((2,), "i8")], {}, "in", "'in' must be a floating-point tensor"),
    ("tdflow.fast_gelu", [T((2,), "i1")], {}, "in", "'in' must be a floating-point tensor"),
    ("tdflow.softplus", [T((2,), "i32")], {"beta": 2.0}, "x", "'x' must be a floating-point"),
    ("tdflow.abs", [T((2,), "i1")], {}, "x", "'x' must be a number tensor"),
    ("tdflow.scalar_div", [T((2,), "f32")], {}, "has_float_operand",
     "exactly one of has_int_operand and has_float_operand"),
    ("tdflow.scalar_div", [T((2,), "f32")], {"has_int_operand": True, "has_float_operand": True},
     "has_float_operand", "exactly one of"),
    ("tdflow.scalar_div", [T((2,), "i32")], {"has_float_operand": True, "float_operand": 0.5},
     "float_operand", "integer tensor .i32. cannot be divided by a float scalar"),
    ("tdflow.where", [T((3,), "f32"), T((3,), "f32"), T((3,), "f32")], {}, "condition",
     "'condition' must be a bool .i1. or integer tensor, got f32"),
    ("tdflow.where", [T((3,), "i1"), T((3,), "f32"), T((3,), "f64")], {}, "y",
     "'y' has element type f64 but 'x' has f32"),
    ("tdflow.where", [T((3,), "i1"), T((2,), "f32"), T((3,), "f32")], {}, "y",
     "do not broadcast"),
    ("tdflow.where", [T((4,), "i1"), T((3,), "f32"), T((3,), "f32")], {}, "condition",
     "do not broadcast"),
])
def test_bad_inputs_name_the_op_and_the_operand_or_attribute(op, inputs, attrs, where, match):
    with pytest.raises(InferError, match=match) as e:
        D.infer_result_types(op, inputs, attrs)
    assert op in str(e.value)
    assert where in (e.value.attr, e.value.operand)


@pytest.mark.parametrize("inputs, match", [
    ([T((3,), "f32")], "add_n needs at least 2 inputs, got 1"),
    ([T((3,), "f32"), T((4,), "f32")], r"input 1 of add_n has shape \[4\] but input 0 has \[3\]"),
    ([T((3,), "f32"), T((3,), "f32"), T((3,), "f64")],
     "input 2 of add_n has element type f64 but input 0 has f32"),
    ([T((3,), "i1"), T((3,), "i1")], "add_n adds numbers"),
])
def test_add_n_errors_name_the_operand(inputs, match):
    with pytest.raises(InferError, match=match) as e:
        D.infer_result_types("tdflow.add_n", inputs, {})
    assert "tdflow.add_n" in str(e.value) and e.value.operand == "in"


def test_eager_errors_name_the_op():
    with pytest.raises(EagerError, match="'tdflow.where': 'condition' must be a bool"):
        F.where(t(np.ones(3)), t(np.ones(3)), t(np.ones(3)))
    with pytest.raises(EagerError, match="'tdflow.add_n': add_n needs at least 2 inputs"):
        F.add_n([t(np.ones(3))])
    with pytest.raises(EagerError, match="'tdflow.rsqrt': 'x' must be a floating-point"):
        F.rsqrt(t(np.array([1, 4])))


def test_inference_of_result_types():
    assert D.infer_result_types("tdflow.where", [T((2, 1, 4), "i1"), T((3, 1), "f16"),
                                                 T((1, 4), "f16")], {}) == [T((2, 3, 4), "f16")]
    assert D.infer_result_types("tdflow.where", [T((None, 4), "i64"), T((4,), "f32"),
                                                 T((1,), "f32")], {}) == [T((None, 4), "f32")]
    assert D.infer_result_types("tdflow.add_n", [T((None, 3), "f32"), T((2, None), "f32")],
                                {}) == [T((2, 3), "f32")]
    assert D.infer_result_types("tdflow.softplus", [T((5,), "bf16")], {}) == [T((5,), "bf16")]
    assert D.infer_result_types("tdflow.abs", [T((5,), "i8")], {}) == [T((5,), "i8")]


def test_where_takes_no_gradient_in_the_condition():
    c = tdflow.tensor(np.array([1.0, 0.0]) > 0.5)
    x = tdflow.tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = tdflow.tensor(np.array([3.0, 4.0]), requires_grad=True)
    F.reduce_sum(F.where(c, x, y), axis=[]).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0])
    np.testing.assert_array_equal(y.grad.numpy(), [0.0, 1.0])
