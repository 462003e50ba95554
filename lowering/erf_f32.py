"""``erf`` of float32 arrays, within 1 ulp of the float64 reference, ~6x faster than it.

The exact path (:mod:`tdflow.lowering.erf_numpy`) evaluates Cody's float64 formulas through
gathers and scatters by range and rounds once to float32. float32 needs far less: a table of
16 degree-9 polynomials of ``erf(a) / a`` over ``[0, 4)`` (intervals of 1/4, coefficients
fitted once, lazily, against the float64 reference; relative error ~1.6e-15), evaluated
branch-free in float64 over cache-sized blocks, then rounded once. 16 intervals, because the
native loop (:mod:`tdflow.lowering.erf_native`) then keeps each coefficient's column in two
AVX-512 registers and picks it with one permute, where 256 intervals of degree 4 needed a
memory gather per coefficient (~2.8 ns an element against ~0.5). Every float32 input gives the float64 reference's
float32 result or one of its neighbours (``bench/erf_check.py`` checks all 2^32 inputs and
records how many are not correctly rounded); ``tests/runtime/test_erf_f32.py`` checks a large
deterministic sample (every exponent, both signs, zeros, subnormals, inf, nan, the cut-off).

>>> x = np.array([-0.0, 0.5, -2.0, np.inf, np.nan, 1e-45], np.float32)
>>> erf_f32(x).tolist()[:4], bool(np.isnan(erf_f32(x)[4]))
([-0.0, 0.5204998850822449, -0.9953222870826721, 1.0], True)
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from tdflow.lowering.erf_native import MIN_NATIVE, native_erf
from tdflow.lowering.erf_numpy import erf_f64, erf_ufunc_exact

__all__ = ["erf_f32", "erf_ufunc", "gelu_f32_native", "ERF_F32_TOP", "ERF_F32_DEGREE", "ERF_F32_SCALE"]

#: Intervals per unit of |x|; a power of two, so scaling by it is exact. 4 x 4 = 16 intervals:
#: one AVX-512 register pair per coefficient (see the module's text).
ERF_F32_SCALE = 4
#: Degree of each interval's polynomial (10 coefficients): degree 8 leaves a relative error of
#: 5.6e-14 (too many misrounded results), 9 gives 1.6e-15, more gains nothing in float64.
ERF_F32_DEGREE = 9
#: erf(x) rounds to 1.0 in float32 from |x| ~ 3.92 on (erfc < 2^-25); |x| is clamped below 4,
#: which keeps the table finite and turns inf into 1.0.
ERF_F32_TOP = 4.0
# Elements per block (about 120 bytes of scratch each): measured 4K-16K, larger was faster
# (each block costs ~27 numpy calls); the scratch of 1.9 MiB stays in L2/L3.
_BLOCK = 16384
_LIMIT = np.float32(np.nextafter(np.float32(ERF_F32_TOP), np.float32(0)))

#: False sends float32 through the exact float64 path as before (``bench/erf_bench.py``
#: times the two in one run); read at every call.
USE_F32_PATH = True

_table: np.ndarray | None = None
_table_lock = threading.Lock()


def _fit_table() -> np.ndarray:
    """``(degree + 1, intervals)`` coefficients, highest power first, of ``erf(a) / a / SCALE``
    in the interval's local coordinate ``h = a * SCALE - i`` in ``[0, 1)``.

    Interpolation at Chebyshev nodes (near-minimax; the float64 reference is ~1 ulp) solved for
    all intervals at once: the nodes, hence the Vandermonde matrix, are the same for each.
    ``erf(a) / a`` keeps relative accuracy near 0 (the product with ``a`` is then exact to
    rounding), where a table of ``erf`` itself would have only absolute accuracy.
    """
    k = ERF_F32_DEGREE + 1
    nodes = 0.5 + 0.5 * np.cos(np.pi * (np.arange(k) + 0.5) / k)
    n = int(ERF_F32_TOP * ERF_F32_SCALE)
    a = (np.arange(n)[:, None] + nodes[None, :]) / ERF_F32_SCALE  # never 0: nodes are inside
    g = erf_f64(a) / a / ERF_F32_SCALE
    vander = np.vander(nodes, k)  # highest power first
    # (degree + 1, intervals): gathered coefficient by coefficient into contiguous rows, the
    # Horner steps run on contiguous arrays (twice as fast as on strided columns).
    return np.ascontiguousarray(np.linalg.solve(vander, g.T))


def _coefficients() -> np.ndarray:
    global _table
    if _table is None:
        with _table_lock:
            if _table is None:
                _table = _fit_table()
    return _table


_local = threading.local()


def _scratch(m: int) -> tuple[np.ndarray, ...]:
    """One block's scratch; a full block's (1.9 MiB) is kept per thread, since allocating it
    at every call maps fresh pages and page-faults them in."""
    cached = _local.__dict__.get("full")
    if cached is not None and len(cached[0]) == m:
        return cached
    bufs = (np.empty(m, np.float32), np.empty(m), np.empty(m), np.empty(m, np.intp),
            np.empty((ERF_F32_DEGREE + 1, m)), np.empty(m))
    if m == _BLOCK:
        _local.full = bufs
    return bufs


def erf_f32(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``erf`` of a float32 array into ``out`` (float32, same shape; a new array when ``None``).

    ``out`` may be ``x`` itself. nan stays nan, signed zeros keep their sign, |x| >= 3.92 and
    inf give +-1.

    >>> erf_f32(np.array([0.25, -1.0], np.float32)).tolist()
    [0.27632638812065125, -0.8427007794380188]
    """
    x = np.asarray(x)
    if x.dtype != np.float32:
        raise TypeError(f"erf_f32 takes float32, not {x.dtype}")
    if out is None:
        out = np.empty(x.shape, np.float32)
    flat_x = x.reshape(-1)
    flat_out = out.reshape(-1)  # a view when out is contiguous (checked below)
    if not np.shares_memory(flat_out, out) and flat_out.size:
        result = erf_f32(np.ascontiguousarray(x))
        np.copyto(out, result)
        return out
    table = _coefficients()
    n = flat_x.size
    if n >= MIN_NATIVE:  # one C loop, the same bits (erf_native); else, or when not built: numpy
        run = native_erf(table, ERF_F32_SCALE, ERF_F32_DEGREE, float(_LIMIT))
        if run is not None and run(x, out):
            return out
    in_place = np.shares_memory(flat_out, flat_x)
    m = min(n, _BLOCK)
    a32, s, h, idx, c, r = _scratch(m)
    with np.errstate(invalid="ignore"):  # nan -> int index (clipped by take; h stays nan)
        for lo in range(0, n, _BLOCK):
            hi = min(n, lo + _BLOCK)
            k = hi - lo
            xb = flat_x[lo:hi]
            ab, sb, hb, ib, rb = a32[:k], s[:k], h[:k], idx[:k], r[:k]
            cb = c if k == m else np.empty((ERF_F32_DEGREE + 1, k))  # take wants it contiguous
            np.absolute(xb, out=ab)
            np.minimum(ab, _LIMIT, out=ab)  # nan stays nan
            np.multiply(ab, ERF_F32_SCALE, out=sb, dtype=np.float64)  # exact: a power of two
            np.floor(sb, out=hb)
            np.copyto(ib, hb, casting="unsafe")
            np.subtract(sb, hb, out=hb)
            np.take(table, ib, axis=1, out=cb, mode="clip")
            np.multiply(cb[0], hb, out=rb)
            for j in range(1, ERF_F32_DEGREE):
                rb += cb[j]
                rb *= hb
            rb += cb[ERF_F32_DEGREE]
            rb *= sb  # g / SCALE * (a * SCALE): the table holds erf(a) / a / SCALE
            # erf is odd; the sign of x (zeros included) goes on the float32 result (rounding
            # first, then a float32 copysign: cheaper than copysign's mixed-type loop).
            ob = flat_out[lo:hi]
            if in_place:  # storing first would overwrite the signs
                np.copysign(rb, xb, out=ob, casting="unsafe")
            else:
                np.copyto(ob, rb, casting="same_kind")
                np.copysign(ob, xb, out=ob)
    return out


def gelu_f32_native(x: np.ndarray, out: np.ndarray) -> bool:
    """GELU's forward ``0.5 * x * (1 + erf(x * float32(rsqrt 2)))`` of the float32 ``x`` into
    ``out`` in one C loop (:mod:`tdflow.lowering.erf_native`, op 1): the numpy steps' float32
    operations in their order, :func:`erf_f32`'s erf, so the same bits. ``False`` and nothing
    written when it does not apply (not built, too small, not C-contiguous, ``out`` overlapping
    ``x`` other than being ``x``): the caller runs its steps.

    >>> x = np.linspace(-3, 3, 4096, dtype=np.float32); out = np.empty_like(x)
    >>> ok = gelu_f32_native(x, out)
    >>> not ok or bool(abs(out[-1] - 3 * 0.99865) < 1e-4)
    True
    """
    if x.dtype != np.float32 or x.size < MIN_NATIVE or not USE_F32_PATH:
        return False
    run = native_erf(_coefficients(), ERF_F32_SCALE, ERF_F32_DEGREE, float(_LIMIT))
    return run is not None and bool(run(x, out, 2, 1))


def erf_ufunc(x: Any, out: np.ndarray | None = None, dtype: Any = None, **kw: Any) -> np.ndarray:
    """``erf`` as the numpy renderer's steps call it (``f(x, out=, dtype=)``), eager and graph.

    float32 in and float32 computed: :func:`erf_f32`. Anything else (f64; f16 is computed in
    f32 by the renderers) keeps the exact float64 path,
    :func:`tdflow.lowering.erf_numpy.erf_ufunc_exact`.

    >>> erf_ufunc(np.array([0.5], np.float32)).tolist(), erf_ufunc(np.array([0.5])).tolist()
    ([0.5204998850822449], [0.5204998778130465])
    """
    x = np.asarray(x)
    if (x.dtype == np.float32 and (dtype is None or np.dtype(dtype) == np.float32)
            and USE_F32_PATH):
        if out is None or (out.dtype == np.float32 and out.shape == x.shape):
            return erf_f32(x, out)
        np.copyto(out, erf_f32(x), casting="unsafe")  # f16 stored: rounds through f32
        return out
    return erf_ufunc_exact(x, out=out, dtype=dtype, **kw)
