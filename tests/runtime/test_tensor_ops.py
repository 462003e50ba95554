"""Python's operators on Tensor (runtime/tensor_ops.py) against numpy.

Each operator is a functional call; here the results are compared with numpy's for f32, f64
and i64 (where the op supports the type), tensor-tensor with broadcasting and the scalar and
reflected forms, with the result types tdflow gives; then ``@``, the errors, numpy interplay and
identity hashing.
"""

from __future__ import annotations

import operator
import sys

import numpy as np
import pytest
from tdflow.runtime import functional as F
from tdflow.runtime import tensor_ops
from tdflow.runtime.tensor import Tensor

import tdflow

RNG = np.random.default_rng(5)
NP = {"f32": np.float32, "f64": np.float64, "i64": np.int64}
SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1), (1, 5)), ((3,), ())]


def t(a):
    return tdflow.tensor(np.asarray(a))


def sample(shape, dtype, low=-5, high=6, nonzero=False):
    if dtype.startswith("f"):
        a = RNG.uniform(low, high, shape)
        if nonzero:
            a[np.abs(a) < 0.5] = 1.5
        # a few exact integers, so comparisons see ties
        return np.where(RNG.random(shape) < 0.3, np.round(a), a).astype(NP[dtype])
    a = RNG.integers(low, high, shape)
    if nonzero:
        a[a == 0] = 1
    return a.astype(NP[dtype])


def check(got, want, dtype):
    assert isinstance(got, Tensor)
    assert got.dtype == dtype
    g = got.numpy()
    assert g.shape == np.shape(want)
    if dtype.startswith("f"):
        np.testing.assert_allclose(g, want, rtol=1e-5 if dtype == "f32" else 1e-12, atol=1e-6)
    else:
        np.testing.assert_array_equal(g, want)


ARITH = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}


# -- arithmetic ------------------------------------------------------------------------------------
@pytest.mark.parametrize("sym", list(ARITH))
@pytest.mark.parametrize("dtype", list(NP))
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_tensor_tensor_arithmetic_broadcasts_like_numpy(sym, dtype, shapes):
    op = ARITH[sym]
    a, b = sample(shapes[0], dtype), sample(shapes[1], dtype, nonzero=sym == "/")
    if sym == "/" and dtype == "i64":
        # broadcast_div on integers is C's division (truncated toward zero, i64 result), as
        # OneFlow's; numpy's true division would give floats
        q = np.trunc(np.true_divide(a, b)).astype(np.int64)
        check(op(t(a), t(b)), q, dtype)
        return
    check(op(t(a), t(b)), op(a, b), dtype)


@pytest.mark.parametrize("sym", list(ARITH))
@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("scalar", [2, 0.5, -3.25, True])
def test_float_tensor_with_a_scalar_on_either_side(sym, dtype, scalar):
    op = ARITH[sym]
    a = sample((3, 4), dtype, nonzero=True)
    s = NP[dtype](scalar)  # numpy would promote f32 with a Python float to f64; tdflow keeps f32
    check(op(t(a), scalar), op(a, s), dtype)
    check(op(scalar, t(a)), op(s, a), dtype)  # __radd__, __rsub__ (ScalarRSub), __rmul__, ...


@pytest.mark.parametrize("sym", ["+", "-", "*"])
@pytest.mark.parametrize("scalar", [3, -2, True])
def test_int_tensor_with_an_int_scalar_on_either_side(sym, scalar):
    op = ARITH[sym]
    a = sample((2, 5), "i64")
    check(op(t(a), scalar), op(a, np.int64(scalar)), "i64")
    check(op(scalar, t(a)), op(np.int64(scalar), a), "i64")


def test_scalar_results_follow_the_functional_api():
    x = t(np.array([1.0, 2.0], np.float32))
    for got, want in ((x + 1, F.add(x, 1)), (1 - x, F.sub(1, x)), (2 / x, F.div(2, x)),
                      (x * 0.5, F.mul(x, 0.5)), (x ** 2, F.pow(x, 2))):
        assert got.dtype == want.dtype and got.numpy().tolist() == want.numpy().tolist()


@pytest.mark.parametrize("dtype", list(NP))
def test_unary_minus_and_plus(dtype):
    a = sample((2, 3), dtype)
    x = t(a)
    check(-x, -a, dtype)
    assert +x is x


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_pow_tensor_exponent(dtype, shapes):
    a = RNG.uniform(0.2, 3.0, shapes[0]).astype(NP[dtype])
    b = RNG.uniform(-2.0, 2.0, shapes[1]).astype(NP[dtype])
    check(t(a) ** t(b), a ** b, dtype)


def test_pow_scalar_exponent_and_base():
    a = RNG.uniform(0.2, 3.0, (3, 2)).astype(np.float32)
    check(t(a) ** 2, a ** np.float32(2), "f32")
    check(t(a) ** 0.5, a ** np.float32(0.5), "f32")
    check(2 ** t(a), np.float32(2) ** a, "f32")  # broadcast_pow with a 0-d base
    check(2.5 ** t(a.astype(np.float64)), 2.5 ** a.astype(np.float64), "f64")
    i = np.array([0, 1, 2, 5], np.int64)
    check(t(i) ** 2, i ** 2, "i64")
    check(t(i) ** t(i), i ** i, "i64")
    check(3 ** t(i), 3 ** i, "i64")
    with pytest.raises(TypeError, match=r"2.5 \*\* tensor: the base does not fit .* i64"):
        2.5 ** t(i)
    with pytest.raises(TypeError):
        pow(t(i), 2, 5)  # no modular power


# -- comparisons -------------------------------------------------------------------------------------
CMP = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
       "==": operator.eq, "!=": operator.ne}


@pytest.mark.parametrize("sym", list(CMP))
@pytest.mark.parametrize("dtype", list(NP))
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_comparisons_give_i1_like_numpy(sym, dtype, shapes):
    op = CMP[sym]
    a, b = sample(shapes[0], dtype, -2, 3), sample(shapes[1], dtype, -2, 3)
    got = op(t(a), t(b))
    check(got, op(a, b), "i1")
    assert got.numpy().dtype == np.bool_


@pytest.mark.parametrize("sym", list(CMP))
@pytest.mark.parametrize("dtype", list(NP))
@pytest.mark.parametrize("scalar", [1, 0.5, -1.0, 2.0, True, 2**70, float("nan")])
def test_comparisons_with_a_scalar_on_either_side(sym, dtype, scalar):
    op = CMP[sym]
    a = np.array([-2, -1, 0, 0.5, 1, 2, 3]).astype(NP[dtype])
    # numpy's answer for the exact values (an i64 tensor against 0.5 compares as 0.5, not 0)
    want_r = op(a.astype(np.float64), float(scalar))
    want_l = op(float(scalar), a.astype(np.float64))
    check(op(t(a), scalar), want_r, "i1")
    check(op(scalar, t(a)), want_l, "i1")  # Python turns `2 < t` into `t > 2`


def test_bool_masks_compare_and_if_works_on_one_element():
    m = t(np.array([True, False]))
    check(m == True, np.array([True, False]), "i1")  # noqa: E712 - the operator is the test
    check(m != t(np.array([True, True])), np.array([False, True]), "i1")
    x, y = t(np.array([3.0], np.float32)), t(np.array([3.0], np.float32))
    assert x == y  # one element: __bool__ of the i1 result
    assert not (x != y)
    if x < 2:
        pytest.fail("3 < 2")
    with pytest.raises(ValueError, match="ambiguous"):
        bool(t(np.zeros(2, np.float32)) == 0)


# -- matmul ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_matmul_2d_batched_and_vectors(dtype):
    a, b = sample((3, 4), dtype), sample((4, 5), dtype)
    check(t(a) @ t(b), a @ b, dtype)
    p, q = sample((2, 3, 4), dtype), sample((2, 4, 2), dtype)
    check(t(p) @ t(q), p @ q, dtype)
    r, s = sample((2, 2, 3, 4), dtype), sample((2, 2, 4, 3), dtype)
    check(t(r) @ t(s), r @ s, dtype)
    v, w = sample((4,), dtype), sample((3,), dtype)
    check(t(v) @ t(b), v @ b, dtype)  # row vector
    check(t(a) @ t(v), a @ v, dtype)  # column vector
    check(t(v) @ t(v), v @ v, dtype)  # dot: 0-d
    check(t(w) @ t(a), w @ a, dtype)


def test_matmul_errors_are_clear():
    m3, m2 = t(np.zeros((2, 3, 4), np.float32)), t(np.zeros((4, 2), np.float32))
    with pytest.raises(TypeError, match=r"equal rank >= 3 .* shapes \[2, 3, 4\] and \[4, 2\]"):
        m3 @ m2
    with pytest.raises(TypeError, match="needs 1-D or 2-D operands"):
        t(np.float32(1.0)) @ m2
    with pytest.raises(ValueError, match="matmul"):  # the hooks' shape check, via the API
        m2 @ m2
    with pytest.raises(TypeError):
        m2 @ np.zeros((2, 2), np.float32)


# -- foreign operands, numpy --------------------------------------------------------------------------
@pytest.mark.parametrize("other", [np.ones(3, np.float32), np.array(2.0), [1.0, 2.0, 3.0], "2",
                                   None, 1 + 2j])
@pytest.mark.parametrize("sym", ["+", "-", "*", "/", "**", "<", "<=", ">", ">="])
def test_unsupported_operands_raise_type_error_on_either_side(other, sym):
    op = {**ARITH, "**": operator.pow, **CMP}[sym]
    x = t(np.array([1.0, 2.0, 3.0], np.float32))
    with pytest.raises(TypeError):
        op(x, other)
    with pytest.raises(TypeError):
        op(other, x)


def test_equality_with_foreign_values():
    x = t(np.array([1.0, 2.0], np.float32))
    assert (x == "a") is False and (x != None) is True  # noqa: E711 - Python's identity fallback
    with pytest.raises(TypeError):  # numpy refuses an array next to a tensor, == included
        x == np.array([1.0, 2.0], np.float32)  # noqa: B015


def test_numpy_scalars_are_numbers_and_ufuncs_still_read_values():
    x = t(np.array([1.0, 2.0], np.float32))
    for got, want in ((np.float32(2) + x, [3.0, 4.0]), (np.float64(2) * x, [2.0, 4.0]),
                      (np.int64(3) - x, [2.0, 1.0]), (x / np.float32(2), [0.5, 1.0]),
                      (np.float32(2) ** x, [2.0, 4.0]), (x > np.float32(1.5), [False, True])):
        assert isinstance(got, Tensor) and got.numpy().tolist() == want
    assert (np.float32(2) + x).dtype == "f32"
    e = np.exp(x)  # a ufunc on the tensor alone reads its values, as before operators existed
    assert isinstance(e, np.ndarray)
    np.testing.assert_allclose(e, np.exp([1.0, 2.0]), rtol=1e-6)
    assert np.sum(x) == 3.0
    np.testing.assert_allclose(x, [1.0, 2.0])


# -- identity hashing, installation ---------------------------------------------------------------
def test_tensors_hash_by_identity_in_sets_and_dicts():
    a = t(np.array([1.0, 2.0], np.float32))
    b = t(np.array([1.0, 2.0], np.float32))  # equal values, another tensor
    assert hash(a) == object.__hash__(a) != hash(b)
    seen = {a}
    assert a in seen and b not in seen
    d = {a: "a", b: "b"}
    assert d[a] == "a" and d[b] == "b" and len(d) == 2
    c = a + 0
    assert c not in seen and len({a, b, c}) == 3


def test_installed_on_tensor():
    for name, fn in tensor_ops.OPERATORS.items():
        assert Tensor.__dict__[name] is fn, name
    assert "__getitem__" in tensor_ops.OPERATORS  # basic indexing: tests/runtime/test_slice_ops.py
    assert Tensor.__add__.__name__ == "__add__" and Tensor.__rtruediv__.__name__ == "__rtruediv__"


def test_importing_tdflow_stays_light():
    import subprocess

    code = ("import sys, tdflow; x = tdflow.tensor([1.0]); "
            "assert 'tdflow.runtime.tensor_ops' in sys.modules; "
            "assert 'tdflow.runtime.functional' not in sys.modules; "
            "assert not any(m.startswith('pycuda') for m in sys.modules); "
            "y = x + 1; assert 'tdflow.runtime.functional' in sys.modules; print(y.numpy())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[2.]"
