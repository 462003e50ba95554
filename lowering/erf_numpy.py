"""``erf`` for numpy, exact to float64 rounding, without scipy.

numpy has no erf and scipy is not a dependency, so erf is evaluated here, in float64, from
W. J. Cody, "Rational Chebyshev approximations for the error function", Math. Comp. 23 (1969)
631-638, plus a Taylor polynomial on 0.5 < |x| <= 1 where Cody's erfc form would lose accuracy
in 1 - erfc. f32 and f16 results are the float64 value rounded once.

>>> import math
>>> float(erf_f64(np.array([0.5]))[0]) == math.erf(0.5)
True
"""

from __future__ import annotations

from decimal import Decimal, localcontext
from typing import Any

import numpy as np

__all__ = ["erf_f64", "erf_ufunc_exact"]

# Cody's coefficients are his published decimal values (near-minimax, relative
# error under 1e-18 in exact arithmetic), each polynomial from its highest power down;
# denominators are monic.


def _decimals(*digits: str) -> tuple[Decimal, ...]:
    return tuple(Decimal(d) for d in digits)


# |x| <= 0.5: erf(x) = x * P(x^2) / Q(x^2).
_CODY_SMALL_P = _decimals("1.85777706184603153e-1", "3.16112374387056560e0",
                          "1.13864154151050156e2", "3.77485237685302021e2",
                          "3.20937758913846947e3")
_CODY_SMALL_Q = _decimals("1", "2.36012909523441209e1", "2.44024637934444173e2",
                          "1.28261652607737228e3", "2.84423683343917062e3")
# 1 < |x| <= 4: erfc(y) = exp(-y^2) * P(y) / Q(y).
_CODY_MID_P = (2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e0,
               6.61191906371416295e1, 2.98635138197400131e2, 8.81952221241769090e2,
               1.71204761263407058e3, 2.05107837782607147e3, 1.23033935479799725e3)
_CODY_MID_Q = (1.57449261107098347e1, 1.17693950891312499e2, 5.37181101862009858e2,
               1.62138957456669019e3, 3.29079923573345963e3, 4.36261909014324716e3,
               3.43936767414372164e3, 1.23033935480374942e3)
# |x| > 4: erfc(y) = exp(-y^2) / y * (1/sqrt(pi) - w P(w) / Q(w)), w = 1/y^2 (an economised
# asymptotic series).
_CODY_BIG_P = (1.63153871373020978e-2, 3.05326634961232344e-1, 3.60344899949804439e-1,
               1.25781726111229246e-1, 1.60837851487422766e-2, 6.58749161529837803e-4)
_CODY_BIG_Q = (2.56852019228982242e0, 1.87295284992346725e0, 5.27905102951428412e-1,
               6.05183413124413191e-2, 2.33520497626869185e-3)
_PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459")
_INV_SQRT_PI = 0.56418958354775628695
#: Elements per chunk of a large array: float64 temporaries of 128 KiB (see erf_f64; 4K, 8K
#: and 32K measured slower).
CHUNK = 16384
# erfc(6) ~ 2.2e-17 is under half an ulp of 1, so 1 - erfc is exactly 1 from here on: |x| is
# clamped to 6, which also keeps inf away from the exp split (inf - inf would make a nan).
_ERF_ONE = 6.0
# Rounding x*P/Q costs up to 3 ulp (two Horner chains, a division, a product); written as
# x + x*(P - Q)/Q the rounded part is only the small correction (erf(x)/x - 1 <= 0.13), so the
# error drops under 1 ulp. P - Q is taken in exact decimal arithmetic, then rounded once.
_ERF_SMALL_D = tuple(float(p - q) for p, q in zip(_CODY_SMALL_P, _CODY_SMALL_Q))
_ERF_SMALL_Q = tuple(float(q) for q in _CODY_SMALL_Q[1:])


def _erf_taylor(center: str, degree: int) -> tuple[float, float, tuple[float, ...]]:
    """erf(c + h) = erf(c) + sum a_n h^n: ``(erf(c) high, erf(c) low, (a_degree ... a_1))``.

    From d^n/dx^n erf(x) = 2/sqrt(pi) (-1)^(n-1) H_(n-1)(x) exp(-x^2) (physicists' Hermite
    polynomials), in 40-digit decimal so every coefficient is correctly rounded. erf(c) is
    split in two doubles: its rounding alone would otherwise cost half an ulp of the result.
    """
    with localcontext() as ctx:
        ctx.prec = 40
        c = Decimal(center)
        scale = 2 / _PI.sqrt()
        # erf(c) by its Maclaurin series (alternating, fast for c <= 1).
        term, total, n = c, c, 0
        while abs(term) > Decimal(10) ** -45:
            n += 1
            term = -term * c * c / n
            total += term / (2 * n + 1)
        erf_c = scale * total
        weight = scale * (-c * c).exp()
        coeffs = []
        h_prev, h = Decimal(0), Decimal(1)  # H_(-1) (unused), H_0
        factorial = Decimal(1)
        for n in range(1, degree + 1):
            factorial *= n
            coeffs.append(float(weight * (-1) ** (n - 1) * h / factorial))
            h_prev, h = h, 2 * c * h - 2 * (n - 1) * h_prev
        hi = float(erf_c)
        return hi, float(erf_c - Decimal(hi)), tuple(reversed(coeffs))


# 0.5 < |x| <= 1: around 0.75 with |h| <= 0.25 the terms fall below 1e-19 by degree 20.
_TAYLOR_CENTER = 0.75
_TAYLOR_HI, _TAYLOR_LO, _TAYLOR_COEFFS = _erf_taylor("0.75", 20)


def _polynomial(t: np.ndarray, coeffs: tuple[float, ...]) -> np.ndarray:
    """Horner's rule, in place on one fresh array."""
    p = t * coeffs[0]
    p += coeffs[1]
    for c in coeffs[2:]:
        p *= t
        p += c
    return p


def _ratio(t: np.ndarray, num: tuple[float, ...], den: tuple[float, ...]) -> np.ndarray:
    """``num(t) / den(t)`` (``den`` monic, its leading 1 left out)."""
    q = t + den[0]
    for c in den[1:]:
        q *= t
        q += c
    p = _polynomial(t, num)
    p /= q
    return p


def _exp_neg_square(y: np.ndarray) -> np.ndarray:
    """``exp(-y*y)`` without the rounding of ``y*y``, which exp turns into a relative error of
    up to ``y^2`` half-ulps: with ``s = y`` truncated to 1/16, ``y^2 = s^2 + (y - s)(y + s)``,
    ``s^2`` is exact and the small correction's rounding barely moves exp (Cody's split).

    This keeps erfc accurate to a few ulp of itself out to y = 6. erf needs less (erfc < 0.16
    past y = 1, so its error is mostly rounded away in 1 - erfc); the split costs ~10% of erf.
    """
    s = np.trunc(y * 16.0)
    s *= 1.0 / 16.0
    d = (y - s) * (y + s)
    s *= s
    np.negative(s, out=s)
    np.negative(d, out=d)
    return np.exp(s, out=s) * np.exp(d, out=d)


def _erf_small(a: np.ndarray, x: np.ndarray | None = None) -> np.ndarray:
    """erf on ``|x| <= 0.5`` from ``a = |x|``; with ``x`` given, signed like ``x``."""
    r = _ratio(a * a, _ERF_SMALL_D, _ERF_SMALL_Q)
    r *= a
    r += a  # last: the rounded part is the small correction (and subnormals stay exact)
    return r if x is None else np.copysign(r, x, out=r)


def _erf_taylor_range(y: np.ndarray) -> np.ndarray:
    """erf on ``0.5 < y <= 1``: Cody's erfc would leave ~2 ulp here after 1 - erfc."""
    h = y - _TAYLOR_CENTER  # exact: y and 0.75 are within a factor of two
    r = _polynomial(h, _TAYLOR_COEFFS)
    r *= h
    r += _TAYLOR_LO
    r += _TAYLOR_HI
    return r


def _erfc_tail(y: np.ndarray) -> np.ndarray:
    """``erfc(y)`` for ``y > 1`` (Cody's two outer ranges); clamps ``y`` (a scratch copy) to 6."""
    np.minimum(y, _ERF_ONE, out=y)
    big = np.flatnonzero(y > 4.0)
    if len(big):
        r = _ratio(y, _CODY_MID_P, _CODY_MID_Q)
        yb = y[big]
        w = 1.0 / (yb * yb)
        r[big] = (_INV_SQRT_PI - w * _ratio(w, _CODY_BIG_P, _CODY_BIG_Q)) / yb
    else:
        r = _ratio(y, _CODY_MID_P, _CODY_MID_Q)
    r *= _exp_neg_square(y)
    return r


def erf_f64(x: np.ndarray) -> np.ndarray:
    """``erf`` of a float64 array as a new array, within about 1 ulp of the true value.

    Each element goes to one of three formulas by ``|x|``; the ranges are gathered and
    scattered through index arrays (much faster than boolean masks for mixed data).

    Large arrays go :data:`CHUNK` elements at a time (each element's result depends on its
    value alone, so this changes no bit): the ~20 temporaries then stay under glibc's mmap
    threshold and are reused from the heap instead of being mapped (and page-faulted) afresh
    at every call, which cost about half of the time at 64K elements and more.

    >>> erf_f64(np.array([-0.0, 0.5, -2.0, np.inf, np.nan])).tolist()
    [-0.0, 0.5204998778130465, -0.9953222650189527, 1.0, nan]
    """
    shape = x.shape
    x = x.reshape(-1)
    if x.size <= CHUNK:
        return _erf_flat(x).reshape(shape)
    res = np.empty(x.size)
    for lo in range(0, x.size, CHUNK):
        res[lo:lo + CHUNK] = _erf_flat(x[lo:lo + CHUNK])
    return res.reshape(shape)


def _erf_flat(x: np.ndarray) -> np.ndarray:
    """:func:`erf_f64` of a 1-d array."""
    a = np.abs(x)
    far = a > 0.5  # nan fails every comparison: it stays with the near range and comes out nan
    if not far.any():
        return _erf_small(a, x)
    res = np.empty_like(x)
    near = np.flatnonzero(~far)
    if len(near):
        res[near] = _erf_small(a[near])
    tail = a > 1.0
    mid = np.flatnonzero(far & ~tail)
    if len(mid):
        res[mid] = _erf_taylor_range(a[mid])
    tail = np.flatnonzero(tail)
    if len(tail):
        r = _erfc_tail(a[tail])
        np.subtract(1.0, r, out=r)
        res[tail] = r
    # erf is odd; every range worked on |x|.
    np.copysign(res, x, out=res)
    return res


def erf_ufunc_exact(x: Any, out: np.ndarray | None = None, dtype: Any = None, **_: Any) -> np.ndarray:
    """``erf`` as a ufunc-like callable (``f(x, out=, dtype=)``, as the steps call ufuncs).

    Always evaluated in float64 and rounded once to ``dtype``, so f32 and f16 results are the
    correctly rounded float64 values. The kernels call
    :func:`tdflow.lowering.erf_f32.erf_ufunc`, which sends float32 to the faster
    :func:`~tdflow.lowering.erf_f32.erf_f32` and everything else here.
    """
    x = np.asarray(x)
    dt = np.dtype(dtype) if dtype is not None else (x.dtype if x.dtype.kind == "f"
                                                     else np.dtype(np.float64))
    if x.size > CHUNK and x.dtype != np.float64 and x.flags.c_contiguous:
        # chunk by chunk, so the float64 copy of x is never made whole (see erf_f64)
        if out is None:
            out = np.empty(x.shape, dt)
        if out.shape == x.shape and out.flags.c_contiguous:
            flat_x, flat_out = x.reshape(-1), out.reshape(-1)
            for lo in range(0, x.size, CHUNK):
                y = erf_f64(flat_x[lo:lo + CHUNK].astype(np.float64))
                np.copyto(flat_out[lo:lo + CHUNK], y if out.dtype == dt else y.astype(dt),
                          casting="unsafe")
            return out
    y = erf_f64(x.astype(np.float64, copy=False))  # erf_f64 never writes its argument
    if out is None:
        return y.astype(dt, copy=False)
    # A store into another type (f32 computed, f16 stored) rounds through ``dtype`` first,
    # as every other op's result does.
    np.copyto(out, y if out.dtype == dt else y.astype(dt), casting="unsafe")
    return out
