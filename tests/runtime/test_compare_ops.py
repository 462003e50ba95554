"""The broadcasting comparisons, ``broadcast_minimum`` and ``broadcast_pow`` against numpy.

Each op runs through the whole eager path (binding, inference hooks, the formula kernel, the
engine) over f32/f64/i32/i64 and broadcasting shapes; comparisons return i1 (bool) tensors.
The short functional names (``eq``, ``lt``, ``minimum``, ``pow`` with a tensor exponent) are
checked to reach the same ops.
"""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.dialect import standard_dialect
from tdflow.dialect.ir import verify_module
from tdflow.dialect.ir.parser import parse_module
from tdflow.dialect.types import TensorType

import tdflow

F = tdflow.functional
RNG = np.random.default_rng(11)

COMPARE = {  # op -> (numpy reference, short functional name)
    "broadcast_equal": (np.equal, "eq"),
    "broadcast_not_equal": (np.not_equal, "ne"),
    "broadcast_less": (np.less, "lt"),
    "broadcast_less_equal": (np.less_equal, "le"),
    "broadcast_greater": (np.greater, "gt"),
    "broadcast_greater_equal": (np.greater_equal, "ge"),
}
DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64}
SHAPES = [  # (x, y): equal, trailing, both stretched, rank-padded, 0-d
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((4, 1), (1, 5)),
    ((2, 1, 3), (4, 1)),
    ((3,), ()),
]


def small_ints(shape, dtype, low=-3, high=4):
    """Values with many ties, so == and <= see equal elements, not just random floats."""
    return RNG.integers(low, high, size=shape).astype(dtype)


@pytest.mark.parametrize("op", list(COMPARE))
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_comparisons_match_numpy(op, dtype, shapes):
    ref = COMPARE[op][0]
    a, b = (small_ints(s, DTYPES[dtype]) for s in shapes)
    r = getattr(F, op)(tdflow.tensor(a), tdflow.tensor(b))
    assert r.dtype == "i1"
    got = r.numpy()
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, ref(a, b))


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_minimum_matches_numpy(dtype, shapes):
    a, b = (small_ints(s, DTYPES[dtype], -50, 50) for s in shapes)
    r = F.broadcast_minimum(tdflow.tensor(a), tdflow.tensor(b))
    assert r.dtype == dtype
    np.testing.assert_array_equal(r.numpy(), np.minimum(a, b))
    np.testing.assert_array_equal(F.minimum(tdflow.tensor(a), tdflow.tensor(b)).numpy(),
                                  np.minimum(a, b))


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_pow_matches_numpy(dtype, shapes):
    np_dtype = DTYPES[dtype]
    if dtype.startswith("f"):  # positive bases: real results for fractional exponents
        a = RNG.uniform(0.1, 3.0, shapes[0]).astype(np_dtype)
        b = RNG.uniform(-2.0, 3.0, shapes[1]).astype(np_dtype)
    else:  # numpy refuses negative integer exponents; keep the powers in range
        a, b = small_ints(shapes[0], np_dtype, -4, 5), small_ints(shapes[1], np_dtype, 0, 6)
    r = F.broadcast_pow(tdflow.tensor(a), tdflow.tensor(b))
    assert r.dtype == dtype
    rtol = 1e-5 if dtype == "f32" else 1e-12
    np.testing.assert_allclose(r.numpy(), np.power(a, b), rtol=rtol)
    np.testing.assert_allclose(F.pow(tdflow.tensor(a), tdflow.tensor(b)).numpy(),
                               np.power(a, b), rtol=rtol)


def test_float_comparisons_see_nan_and_signed_zero_as_numpy_does():
    a = np.array([np.nan, 0.0, -0.0, np.inf, 1.0], np.float32)
    b = np.array([np.nan, -0.0, 0.0, np.inf, np.nan], np.float32)
    for op, (ref, _) in COMPARE.items():
        got = getattr(F, op)(tdflow.tensor(a), tdflow.tensor(b)).numpy()
        np.testing.assert_array_equal(got, ref(a, b), err_msg=op)


@pytest.mark.parametrize("op", list(COMPARE))
def test_short_names_reach_the_comparison_ops(op):
    ref, short = COMPARE[op]
    assert [s.functor for s in F.signatures(short)] == [
        "".join(p.title() for p in op.split("_"))]
    a, b = small_ints((3, 4), np.float32), small_ints((4,), np.float32)
    r = getattr(F, short)(tdflow.tensor(a), tdflow.tensor(b))
    assert r.dtype == "i1"
    np.testing.assert_array_equal(r.numpy(), ref(a, b))


def test_pow_tries_the_tensor_exponent_first_and_keeps_the_scalar_one():
    assert [s.functor for s in F.signatures("pow")] == ["BroadcastPow", "ScalarPow"]
    a = RNG.uniform(0.5, 2.0, (2, 3)).astype(np.float32)
    x = tdflow.tensor(a)
    for e in (2.0, 2, 0.5):  # a Python number fails Tensor y, so ScalarPow serves it
        r = F.pow(x, e)
        assert r.dtype == "f32"
        np.testing.assert_allclose(r.numpy(), a ** np.float32(e), rtol=1e-6)
    with pytest.raises(TypeError, match=r"\*0: Tensor \(Tensor x, Tensor y\)"):
        F.pow(x, "two")


def test_comparisons_need_one_element_type():
    x = tdflow.tensor(np.zeros(3, np.float32))
    y = tdflow.tensor(np.zeros(3, np.int64))
    with pytest.raises(Exception, match="broadcast_less"):
        F.broadcast_less(x, y)
    with pytest.raises(Exception, match="do not broadcast"):
        F.lt(x, tdflow.tensor(np.zeros(4, np.float32)))


def test_inference_gives_i1_for_comparisons_and_the_operand_type_otherwise():
    d = standard_dialect()
    x, y = TensorType((4, 1), "f64"), TensorType((3,), "f64")
    for op in COMPARE:
        assert d.infer_result_types(f"tdflow.{op}", [x, y], {}) == [TensorType((4, 3), "i1")]
        assert d.lookup(f"tdflow.{op}").has_trait("NoGrad")
    for op in ("broadcast_minimum", "broadcast_pow"):
        assert d.infer_result_types(f"tdflow.{op}", [x, y], {}) == [TensorType((4, 3), "f64")]
        assert not d.lookup(f"tdflow.{op}").has_trait("NoGrad")


def test_a_program_with_comparisons_verifies_and_a_wrong_result_type_is_reported():
    good = """
func.func @f(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> tensor<4x8xi1> {
  %0 = "tdflow.broadcast_minimum"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "tdflow.broadcast_greater"(%0, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  return %1 : tensor<4x8xi1>
}
"""
    assert verify_module(parse_module(good), standard_dialect()) == []
    bad = good.replace("-> tensor<4x8xi1>\n  return", "-> tensor<4x8xf32>\n  return")
    diags = verify_module(parse_module(bad), standard_dialect())
    assert any("element type is i1" in str(d) for d in diags), diags
