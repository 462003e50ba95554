"""Selects (``c ? a : b``) in numpy programs: the branch-free bit select and the
``x > 0 ? x : x * k`` -> ``max(x, x * k)`` rewrite give exactly ``np.where``'s results."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tdflow.dialect.formula.expr import Input, bind, ne, where
from tdflow.lowering.elementwise_numpy import render_numpy

x, y = Input(0), Input(1)
# The numpy references multiply infinities and NaNs on purpose.
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning",
                                        "ignore:overflow encountered:RuntimeWarning")
SPECIALS = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3.0e38, -3.0e38]


def _run(expr, arrays, dtype, out=None):
    prog = render_numpy(bind(expr, {}), [dtype] * len(arrays), dtype)
    return prog(arrays, out) if out is not None else prog(arrays)


def _same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", ["f16", "f32", "f64"])
@pytest.mark.parametrize("k", [0.0, 0.2, 1.0, 1.5, -0.3])
def test_leaky_forms_match_where_bit_for_bit(dtype, k):
    npdt = np.dtype({"f16": np.float16, "f32": np.float32, "f64": np.float64}[dtype])
    a = np.array(SPECIALS * 3, npdt)
    # f16 computes in f32: the reference is the f32 result rounded once
    c = a.astype(np.float32) if dtype == "f16" else a
    kk = c.dtype.type(k)
    forms = [(where(x > 0, x, x * k), np.where(c > 0, c, c * kk)),
             (where(x >= 0, x, k * x), np.where(c >= 0, c, kk * c)),
             (where(x < 0, x * k, x), np.where(c < 0, c * kk, c))]
    for expr, want in forms:
        got = _run(expr, [a], dtype, np.empty_like(a))
        _same_bits(got, want.astype(npdt))


def test_the_rewrite_applies_only_to_0_lt_k_le_1():
    assert repr(bind(where(x > 0, x, x * 0.2), {})) == "max(in0, mul(in0, 0.2))"
    assert repr(bind(where(x > 0, x, x * 1.0), {})) == "max(in0, mul(in0, 1.0))"
    for k in (0.0, 1.5, -0.2):  # k = 0 would turn inf * 0 into nan; k > 1 needs min
        assert repr(bind(where(x > 0, x, x * k), {})).startswith("where(")
    assert repr(bind(where(x > 0, y, x * 0.2), {})).startswith("where(")  # not the same x


@pytest.mark.parametrize("dtype, npdt", [("i8", np.int8), ("i32", np.int32), ("i64", np.int64),
                                         ("f32", np.float32), ("f64", np.float64)])
def test_bit_select_with_broadcast_and_scalar_branches(dtype, npdt):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((64, 8)) * 50).astype(npdt)
    b = (rng.standard_normal((8,)) * 50).astype(npdt)
    out = np.empty_like(a)
    _same_bits(_run(where(x > y, x, y), [a, b], dtype, out), np.where(a > b, a, b))
    _same_bits(_run(where(x > 3, x, 7), [a], dtype, out.copy()),
               np.where(a > 3, a, npdt(7)))
    # writing over the input that is the true branch (in place) is still right
    a2 = a.copy()
    _same_bits(_run(where(x > 0, x, 0), [a2], dtype, a2), np.where(a > 0, a, npdt(0)))


def test_bit_select_into_a_strided_view():
    a = np.array(SPECIALS, np.float32)
    big = np.zeros(2 * len(a), np.float32)
    _run(where(ne(x, x), 0.0, x), [a], "f32", big[::2])  # nan -> 0
    _same_bits(big[::2], np.where(a != a, np.float32(0), a))
    assert not big[1::2].any()


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float32, st.integers(1, 64),
                  elements=st.floats(width=32, allow_nan=True, allow_infinity=True)),
       st.floats(min_value=-2, max_value=2, width=32))
def test_random_selects_match_where(a, k):
    out = np.empty_like(a)
    want = np.where(a > 0, a, a * np.float32(k))
    _same_bits(_run(where(x > 0, x, x * k), [a], "f32", out), want)
