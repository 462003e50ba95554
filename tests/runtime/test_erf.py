"""erf in the numpy renderer: float64 within 2 ulp of ``math.erf`` (libm) on the whole real line.

numpy has no erf and scipy is not a dependency, so ``lowering.elementwise_numpy`` evaluates it
(Cody's rational approximations plus a Taylor polynomial on 0.5 < |x| <= 1). float32 and
float16 results are rounded from the float64 value, so they must equal the libm value rounded.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from tdflow.dialect.formula.expr import Input, erf
from tdflow.lowering.elementwise_numpy import render_numpy
from tdflow.lowering.elementwise_ops import ELEMENTWISE_OPS
from tdflow.lowering.erf_numpy import erf_f64

verf = np.vectorize(math.erf, otypes=[np.float64])


def _ordered(v: np.ndarray) -> np.ndarray:
    """float64 bit patterns as integers that count ulps across zero (-0.0 and 0.0 both 0)."""
    i = np.asarray(v, np.float64).view(np.int64)
    return np.where(i < 0, np.int64(-(2**63)) - i, i)


def ulp_error(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    return np.abs(_ordered(got) - _ordered(want))


def _sweep() -> np.ndarray:
    rng = np.random.default_rng(20240601)
    return np.concatenate([
        np.linspace(-7.0, 7.0, 140_001),  # dense over every range
        rng.uniform(-6.0, 6.0, 60_000),
        # around each range boundary, where a wrong split point would show
        *(np.linspace(b - 1e-3, b + 1e-3, 2_001) for b in (-6, -4, -1, -0.5, 0.5, 1, 4, 6)),
        rng.choice([-1.0, 1.0], 20_000) * 10.0 ** rng.uniform(-320, 300, 20_000),  # magnitudes
    ])


SPECIALS = np.array([0.0, -0.0, 5e-324, -5e-324, 1e-310, -2.2250738585072014e-308, 1e-300,
                     1e-17, 0.5, np.nextafter(0.5, 1), 1.0, np.nextafter(1.0, 2), 4.0,
                     np.nextafter(4.0, 5), 6.0, np.nextafter(6.0, 0), 27.0, 1e154, 1e300,
                     np.finfo(np.float64).max, -np.finfo(np.float64).max, np.inf, -np.inf])


def test_f64_within_two_ulp_of_libm_on_a_dense_sweep():
    x = np.concatenate([_sweep(), SPECIALS])
    err = ulp_error(erf_f64(x), verf(x))
    assert err.max() <= 2, f"{err.max()} ulp at x={x[err.argmax()]!r}"
    # In practice the two differ by at most one ulp, on a few percent of arguments.
    assert np.mean(err > 0) < 0.1


def test_specials_exact():
    got = erf_f64(SPECIALS)
    want = verf(SPECIALS)
    assert np.array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))  # -0.0 -> -0.0, -inf -> -1
    assert got[SPECIALS == np.inf].tolist() == [1.0] and got[SPECIALS == -np.inf].tolist() == [-1.0]
    assert np.isnan(erf_f64(np.array([np.nan, -np.nan]))).all()
    # subnormals: erf(x) = 2/sqrt(pi) x exactly rounded
    tiny = np.array([5e-324, 1e-320, 3e-310, -4e-309])
    assert np.array_equal(erf_f64(tiny), verf(tiny))


def test_shapes_and_layouts():
    x = np.linspace(-3, 3, 24).reshape(2, 3, 4)
    flat = erf_f64(x.ravel())
    assert np.array_equal(erf_f64(x), flat.reshape(2, 3, 4))
    view = x[:, ::2, ::-1]  # non-contiguous: the same values as its contiguous copy
    assert np.array_equal(erf_f64(view), erf_f64(np.ascontiguousarray(view)))
    assert erf_f64(np.zeros((0, 3))).shape == (0, 3)
    assert erf_f64(np.array(-0.3)).shape == () and erf_f64(np.array(-0.3)) == math.erf(-0.3)
    before = x.copy()
    erf_f64(x)
    assert np.array_equal(x, before)  # the argument is never written


def test_rendered_f64_program_uses_it():
    prog = render_numpy(erf(Input(0)), ["f64"], "f64")
    x = np.linspace(-7, 7, 10_001)
    assert ulp_error(prog([x]), verf(x)).max() <= 2
    out = x.copy()
    assert prog([out], out) is out  # in place, as the executor runs it
    assert ulp_error(out, verf(x)).max() <= 2


def test_f32_is_libm_rounded_to_f32():
    rng = np.random.default_rng(7)
    x = np.concatenate([np.linspace(-7, 7, 200_001), rng.uniform(-4, 4, 100_000),
                        rng.choice([-1.0, 1.0], 10_000) * 10.0 ** rng.uniform(-45, 38, 10_000)])
    x = x.astype(np.float32)
    got = render_numpy(erf(Input(0)), ["f32"], "f32")([x])
    want = verf(x.astype(np.float64)).astype(np.float32)
    # Exact: the float64 result is within 1 ulp of libm's, so the two round to different
    # float32 values only when libm's value lies within 2^-29 relative of a float32 midpoint;
    # no argument in this sweep does (a rare one could, and would differ by one f32 ulp).
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"x={x[bad[:5]]!r} got={got[bad[:5]]!r} want={want[bad[:5]]!r}"


def test_f16_every_value():
    # f16 computes in f32 and rounds once when stored (see dialect/formula/types.py), so the
    # reference rounds libm's value to f32, then to f16; checked on all 65536 bit patterns.
    x = np.arange(2**16, dtype=np.uint16).view(np.float16)
    with np.errstate(invalid="ignore"):  # the nan patterns
        want = verf(x.astype(np.float64)).astype(np.float32).astype(np.float16)
    got = render_numpy(erf(Input(0)), ["f16"], "f16")([x])
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    assert same.all() and np.array_equal(np.signbit(got[~np.isnan(got)]),
                                         np.signbit(want[~np.isnan(want)]))


def test_gelu_f64_matches_libm_formula():
    x = np.linspace(-10, 10, 4001)
    got = render_numpy(ELEMENTWISE_OPS["tdflow.gelu"].bind(), ["f64"], "f64")([x])
    want = 0.5 * x * (1.0 + verf(x * (1 / math.sqrt(2.0))))
    # 1 + erf cancels for x < 0, so compare absolutely there (both sides have the same erf).
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-15)


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True))
def test_any_double(v):
    got = erf_f64(np.array([v]))[0]
    want = math.erf(v)
    if math.isnan(want):
        assert math.isnan(got)
    else:
        assert ulp_error(np.array([got]), np.array([want]))[0] <= 2, (v, got, want)
        assert math.copysign(1.0, got) == math.copysign(1.0, want)


def test_chunks_change_no_bit(monkeypatch):
    # erf_f64 and erf_ufunc_exact go chunk by chunk over large arrays (page faults of whole-array
    # temporaries cost more than the arithmetic); the results must be those of one pass.
    from tdflow.lowering import erf_numpy

    rng = np.random.default_rng(17)
    x = np.concatenate([rng.normal(size=3 * erf_numpy.CHUNK + 77) * 3, SPECIALS, [np.nan]])
    with np.errstate(over="ignore"):  # SPECIALS beyond float32 become inf
        x32 = x.astype(np.float32)
    chunked = erf_f64(x), erf_numpy.erf_ufunc_exact(x32), erf_numpy.erf_ufunc_exact(
        x32, out=np.empty(x.size, np.float16), dtype=np.float32)
    monkeypatch.setattr(erf_numpy, "CHUNK", 10 * x.size)
    whole = erf_f64(x), erf_numpy.erf_ufunc_exact(x32), erf_numpy.erf_ufunc_exact(
        x32, out=np.empty(x.size, np.float16), dtype=np.float32)
    for c, w in zip(chunked, whole):
        assert c.dtype == w.dtype and c.tobytes() == w.tobytes()
    y = x32.copy()
    assert erf_numpy.erf_ufunc_exact(y, out=y) is y and y.tobytes() == whole[1].tobytes()
