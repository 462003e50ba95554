"""The ops of the elementwise and math families (ops/elementwise.td, ops/math.td) against references independent of the kernels
(Python's ``math`` and integer arithmetic, in float64 or exact integers).

Each op runs through the whole eager path (binding, the formula-derived inference hooks, the
kernel, the engine) over several shapes and dtypes, with broadcasting for the binary ones and
the edge values each is defined at: NaN and infinities, halves for ``round``, zero divisors for
the remainders (no crash: integer ``x % 0`` is 0), shift counts outside the type's width. A
compiled program fuses several of them and must agree with eager. Gradients are in
grad_cases_elementwise_math.py (run by test_grad_ops.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from tdflow.dialect import InferError, standard_dialect
from tdflow.dialect.types import TensorType as T

import tdflow

F = tdflow.functional
D = standard_dialect()
rng = np.random.default_rng(2812)

SHAPES = ((3, 4), (2, 3, 5), (7,), ())
FLOATS = (np.float16, np.float32, np.float64)
INTS = (np.int8, np.int32, np.int64)
TOL = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-12}


def t(a) -> tdflow.Tensor:
    return tdflow.tensor(np.asarray(a))


def vec(fn, otype=np.float64):
    """``fn`` applied element by element to Python numbers (the reference)."""
    return np.vectorize(fn, otypes=[otype])


def check(got: np.ndarray, want: np.ndarray, dtype) -> None:
    assert got.dtype == np.dtype(dtype) and got.shape == np.shape(want)
    tol = TOL[dtype]
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol)


def _uniform(lo, hi):
    return lambda s: rng.uniform(lo, hi, size=s)


UNARY = {  # op -> (reference on a Python float, input maker inside its domain)
    "sin": (math.sin, _uniform(-6, 6)), "cos": (math.cos, _uniform(-6, 6)),
    "tan": (math.tan, _uniform(-1.3, 1.3)), "asin": (math.asin, _uniform(-1, 1)),
    "acos": (math.acos, _uniform(-1, 1)), "atan": (math.atan, _uniform(-8, 8)),
    "sinh": (math.sinh, _uniform(-4, 4)), "cosh": (math.cosh, _uniform(-4, 4)),
    "asinh": (math.asinh, _uniform(-8, 8)), "acosh": (math.acosh, _uniform(1, 9)),
    "atanh": (math.atanh, _uniform(-0.95, 0.95)),
    "floor": (math.floor, _uniform(-5, 5)), "ceil": (math.ceil, _uniform(-5, 5)),
    "round": (round, _uniform(-5, 5)),  # Python's round is half to even too
    "softsign": (lambda v: v / (1 + abs(v)), _uniform(-9, 9)),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_float_ops_match_math(name, shape, dtype):
    ref, make = UNARY[name]
    x = np.asarray(make(shape)).astype(dtype)
    got = getattr(F, name)(t(x)).numpy()
    want = vec(ref)(x.astype(np.float64))
    if name in ("floor", "ceil", "round"):  # exact: the input's own value, rounded
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want.astype(dtype))
    else:
        check(got, want, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_round_takes_halves_to_even(dtype):
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.49, -3.51], dtype)
    got = F.round(t(x)).numpy()
    np.testing.assert_array_equal(got, np.array([0, 2, 2, -0.0, -2, -2, 3, -4], dtype))
    assert np.signbit(got[3])  # -0.5 rounds to -0


def test_outside_their_domains_the_inverse_functions_give_nan():
    x = np.array([-2.0, 2.0, np.inf], np.float32)
    for fn in (F.asin, F.acos, F.atanh):
        assert np.isnan(fn(t(x)).numpy()).all()
    assert np.isnan(F.acosh(t(np.array([0.5, -3.0], np.float32))).numpy()).all()
    np.testing.assert_array_equal(F.atanh(t(np.array([1.0, -1.0]))).numpy(), [np.inf, -np.inf])
    inf = np.array([np.inf, -np.inf])
    np.testing.assert_array_equal(F.floor(t(inf)).numpy(), inf)
    np.testing.assert_array_equal(F.softsign(t(inf)).numpy(), [np.nan, np.nan])  # inf / inf


@pytest.mark.parametrize("dtype", FLOATS)
def test_sign_of_floats_keeps_zero_and_nan(dtype):
    x = np.array([3.5, -0.25, 0.0, np.inf, -np.inf, np.nan], dtype)
    got = F.sign(t(x)).numpy()
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.array([1, -1, 0, 1, -1, np.nan], dtype))


@pytest.mark.parametrize("dtype", INTS)
def test_sign_of_integers_keeps_their_type(dtype):
    x = np.array([[-7, 0, 5], [1, -1, np.iinfo(dtype).min]], dtype)
    got = F.sign(t(x)).numpy()
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.array([[-1, 0, 1], [1, -1, -1]], dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_isnan_and_isinf_give_bool(dtype):
    x = np.array([[np.nan, np.inf, -np.inf], [0.0, -1.5, 65504.0]], dtype)
    nan, inf = F.isnan(t(x)).numpy(), F.isinf(t(x)).numpy()
    assert nan.dtype == np.bool_ and inf.dtype == np.bool_
    np.testing.assert_array_equal(nan, [[True, False, False], [False, False, False]])
    np.testing.assert_array_equal(inf, [[False, True, True], [False, False, False]])


# ---- logic ---------------------------------------------------------------------------------------

LOGIC = {"broadcast_logical_and": lambda a, b: a and b,
         "broadcast_logical_or": lambda a, b: a or b,
         "broadcast_logical_xor": lambda a, b: a != b}
PAIRS = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 3))]


def _truthy(shape, dtype):
    """Zeros and nonzeros (negative ones too) of ``dtype``."""
    return (rng.integers(-1, 2, size=shape) * (rng.integers(1, 3, size=shape))).astype(dtype)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("shapes", PAIRS, ids=str)
@pytest.mark.parametrize("name", list(LOGIC))
def test_logical_ops_give_bool_for_any_type(name, shapes, dtype):
    x, y = _truthy(shapes[0], dtype), _truthy(shapes[1], dtype)
    got = getattr(F, name)(t(x), t(y)).numpy()
    bx, by = np.broadcast_arrays(x != 0, y != 0)
    want = vec(lambda a, b: LOGIC[name](bool(a), bool(b)), np.bool_)(bx, by)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.float16])
def test_logical_not(dtype):
    x = _truthy((4, 5), dtype)
    got = F.logical_not(t(x)).numpy()
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, x == 0)


# ---- bits ----------------------------------------------------------------------------------------

def _wrap(v: int, bits: int) -> int:
    """``v`` as a two's complement integer of ``bits`` bits."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


BITWISE = {"broadcast_bitwise_and": lambda a, b: a & b,
           "broadcast_bitwise_or": lambda a, b: a | b,
           "broadcast_bitwise_xor": lambda a, b: a ^ b}


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("shapes", PAIRS, ids=str)
@pytest.mark.parametrize("name", list(BITWISE))
def test_bitwise_ops_on_integers(name, shapes, dtype):
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, size=shapes[0], endpoint=True).astype(dtype)
    y = rng.integers(info.min, info.max, size=shapes[1], endpoint=True).astype(dtype)
    got = getattr(F, name)(t(x), t(y)).numpy()
    bx, by = np.broadcast_arrays(x, y)
    want = np.array([BITWISE[name](int(a), int(b)) for a, b in zip(bx.flat, by.flat)],
                    dtype).reshape(bx.shape)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


def test_bitwise_ops_on_bool_are_logic():
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    np.testing.assert_array_equal(F.broadcast_bitwise_and(t(a), t(b)).numpy(), a & b)
    np.testing.assert_array_equal(F.broadcast_bitwise_or(t(a), t(b)).numpy(), a | b)
    np.testing.assert_array_equal(F.broadcast_bitwise_xor(t(a), t(b)).numpy(), a ^ b)
    got = F.bitwise_not(t(a)).numpy()
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, ~a)


@pytest.mark.parametrize("dtype", INTS)
def test_bitwise_not_is_minus_x_minus_one(dtype):
    info = np.iinfo(dtype)
    x = np.array([0, -1, 5, info.min, info.max], dtype)
    got = F.bitwise_not(t(x)).numpy()
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.array([-int(v) - 1 for v in x], dtype))


@pytest.mark.parametrize("dtype", INTS)
def test_shifts_follow_numpy_outside_the_width(dtype):
    bits = np.iinfo(dtype).bits
    x = np.array([1, -1, 5, -128, 100, -7, 3, 3], dtype)
    n = np.array([0, 3, bits - 1, 1, bits, bits + 4, -1, 2], dtype)
    left = F.broadcast_bitwise_left_shift(t(x), t(n)).numpy()
    right = F.broadcast_bitwise_right_shift(t(x), t(n)).numpy()
    # in range: two's complement shifts; outside [0, width): 0, or -1 shifting a negative right
    want_left = [_wrap(int(a) << int(k), bits) if 0 <= k < bits else 0 for a, k in zip(x, n)]
    want_right = [int(a) >> int(k) if 0 <= k < bits else (-1 if a < 0 else 0)
                  for a, k in zip(x, n)]
    assert left.dtype == dtype and right.dtype == dtype
    np.testing.assert_array_equal(left, np.array(want_left, dtype))
    np.testing.assert_array_equal(right, np.array(want_right, dtype))


def test_shift_broadcasts():
    x = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
    n = np.array([0, 1, 2, 3], np.int32)
    np.testing.assert_array_equal(F.broadcast_bitwise_left_shift(t(x), t(n)).numpy(), x << n)
    np.testing.assert_array_equal(F.broadcast_bitwise_right_shift(t(x), t(n)).numpy(), x >> n)


# ---- remainders ----------------------------------------------------------------------------------

def _c_fmod_int(a: int, b: int) -> int:
    """C's remainder (the dividend's sign); tdflow's x % 0 and x % -1 are 0."""
    if b in (0, -1):
        return 0
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _floor_mod_int(a: int, b: int) -> int:
    return 0 if b == 0 else a % b  # Python's: the divisor's sign


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("shapes", PAIRS, ids=str)
def test_integer_remainders_with_zero_divisors(shapes, dtype):
    x = rng.integers(-20, 21, size=shapes[0]).astype(dtype)
    y = rng.integers(-4, 5, size=shapes[1]).astype(dtype)  # zeros included: no crash
    bx, by = np.broadcast_arrays(x, y)
    for name, ref in (("broadcast_fmod", _c_fmod_int), ("broadcast_floor_mod", _floor_mod_int)):
        got = getattr(F, name)(t(x), t(y)).numpy()
        want = np.array([ref(int(a), int(b)) for a, b in zip(bx.flat, by.flat)],
                        dtype).reshape(bx.shape)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want, err_msg=name)


@pytest.mark.parametrize("dtype", INTS)
def test_integer_remainder_of_the_minimum_by_minus_one(dtype):
    low = np.iinfo(dtype).min
    x, y = np.array([low, low, 7], dtype), np.array([-1, 0, -1], dtype)
    for fn in (F.broadcast_fmod, F.broadcast_floor_mod):  # C traps on INT_MIN % -1
        np.testing.assert_array_equal(fn(t(x), t(y)).numpy(), [0, 0, 0])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", PAIRS, ids=str)
def test_float_remainders_match_python(shapes, dtype):
    x = (rng.uniform(-9, 9, size=shapes[0])).astype(dtype)
    y = (rng.choice([-1, 1], size=shapes[1]) * rng.uniform(0.5, 4, size=shapes[1])).astype(dtype)
    xy = [a.astype(np.float64) for a in np.broadcast_arrays(x, y)]
    fmod = F.broadcast_fmod(t(x), t(y)).numpy()
    floor_mod = F.broadcast_floor_mod(t(x), t(y)).numpy()
    # float64 references of the (rounded) inputs; the f16 result rounds once more
    check(fmod, vec(math.fmod)(*xy), dtype)
    check(floor_mod, vec(lambda a, b: a % b)(*xy), dtype)
    assert np.all((floor_mod == 0) | (np.sign(floor_mod) == np.sign(xy[1])))
    assert np.all((fmod == 0) | (np.sign(fmod) == np.sign(xy[0])))


def test_float_remainder_edge_values():
    x = np.array([5.0, -5.0, 6.0, -6.0, 1.0, np.inf, 3.0], np.float32)
    y = np.array([3.0, 3.0, -3.0, 3.0, 0.0, 2.0, np.inf], np.float32)
    fmod = F.broadcast_fmod(t(x), t(y)).numpy()
    floor_mod = F.broadcast_floor_mod(t(x), t(y)).numpy()
    np.testing.assert_array_equal(fmod, [2.0, -2.0, 0.0, -0.0, np.nan, np.nan, 3.0])
    np.testing.assert_array_equal(floor_mod[:6], [2.0, 1.0, -0.0, 0.0, np.nan, np.nan])
    assert np.signbit(floor_mod[2]) and not np.signbit(floor_mod[3])  # the divisor's sign
    assert np.signbit(fmod[3])  # the dividend's sign


# ---- a compiled program, and errors --------------------------------------------------------------

PROGRAM = """
func.func @f(%x: tensor<3x4xf32>, %y: tensor<4xf32>) -> (tensor<3x4xf32>, tensor<3x4xi1>) {
  %0 = "tdflow.sin"(%x) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %1 = "tdflow.broadcast_floor_mod"(%0, %y) : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %2 = "tdflow.softsign"(%1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %3 = "tdflow.round"(%2) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %4 = "tdflow.atan"(%x) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %5 = "tdflow.broadcast_add"(%3, %4) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %6 = "tdflow.isnan"(%1) : (tensor<3x4xf32>) -> tensor<3x4xi1>
  %7 = "tdflow.logical_not"(%6) : (tensor<3x4xi1>) -> tensor<3x4xi1>
  return %5, %7 : tensor<3x4xf32>, tensor<3x4xi1>
}
"""


def test_a_compiled_program_agrees_with_eager_and_math(tmp_path):
    x = rng.normal(size=(3, 4)).astype(np.float32) * 3
    y = np.array([0.3, -0.4, 0.0, 0.7], np.float32)  # a zero divisor: NaN, caught by isnan
    (tmp_path / "p.mlir").write_text(PROGRAM)
    got, ok = tdflow.compile(str(tmp_path / "p.mlir"))(x, y)

    m = F.broadcast_floor_mod(F.sin(t(x)), t(y))
    eager = F.broadcast_add(F.round(F.softsign(m)), F.atan(t(x))).numpy()
    np.testing.assert_array_equal(got, eager)
    np.testing.assert_array_equal(ok, F.logical_not(F.isnan(m)).numpy())
    assert not ok[:, 2].any() and ok[:, [0, 1, 3]].all()


@pytest.mark.parametrize("op, inputs, where, match", [
    ("tdflow.sin", [T((2,), "i32")], "x", "the formula admits f16|bf16|f32|f64"),
    ("tdflow.isnan", [T((2,), "i64")], "in", "the formula admits f16|bf16|f32|f64"),
    ("tdflow.round", [T((2,), "i1")], "x", "the formula admits f16|bf16|f32|f64"),
    ("tdflow.bitwise_not", [T((2,), "f32")], "x", "the formula admits i1|i8|i32|i64"),
    ("tdflow.broadcast_bitwise_or", [T((2,), "f16"), T((2,), "f16")], "x",
     "the formula admits i1|i8|i32|i64"),
    ("tdflow.broadcast_bitwise_left_shift", [T((2,), "i1"), T((2,), "i1")], "x",
     "the formula admits i8|i32|i64"),
    ("tdflow.broadcast_fmod", [T((2,), "f32"), T((2,), "f64")], "y", "they must match"),
    ("tdflow.broadcast_logical_and", [T((3,), "i1"), T((2,), "i1")], None, "do not broadcast"),
])
def test_bad_inputs_name_the_op_and_the_operand(op, inputs, where, match):
    with pytest.raises(InferError, match=match) as e:
        D.infer_result_types(op, inputs, {})
    assert op in str(e.value)
    if where is not None:
        assert e.value.operand == where
