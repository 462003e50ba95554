"""Exhaustive accuracy check of the float32 erf against the exact float64 path, rounded.

Goes through every float32 bit pattern (or every ``--stride``-th one), in chunks, and counts
how far ``erf_f32`` is from ``float32(erf_f64(x))`` in ulps; prints the histogram, the worst
inputs and the time. For ``|x| >= 4`` the reference is +-1 (erf_f64(4) = 1 - 1.5e-8 rounds
to 1 in float32, and erf is monotone), so only ``|x| < 4`` pays for the slow reference.

    python bench/erf_check.py          # every x in [2^-24, 4), then every 101st bit pattern
    python bench/erf_check.py --all    # all 2^32 inputs (~35 min on one loaded core)
    python bench/erf_check.py --libm   # every x >= +0 (and +inf), against the C library's
                                       # double erf rounded to float32 (~1 min CPU)

The default's exhaustive range is where the table does its work (below 2^-24 erf(x) is
2x/sqrt(pi) to 1e-15 relative, above 4 it is +-1); negative inputs are the positive results
with the sign copied (bit for bit, tests/runtime/test_erf_f32.py), and the stride pass
samples every exponent of both signs, nan and inf.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from tdflow.lowering.erf_f32 import erf_f32
from tdflow.lowering.erf_numpy import erf_f64

_CHUNK = 1 << 22
_FOUR = int(np.float32(4.0).view(np.uint32))


def _ordered(v: np.ndarray) -> np.ndarray:
    i = v.view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def check(stride: int = 1, start: int = 0, stop: int = 1 << 32) -> dict:
    """ulp-difference histogram of erf_f32 over bit patterns ``start, start+stride, ... < stop``.

    >>> check(stride=1 << 20)["max_ulp"] <= 1
    True
    """
    assert float(erf_f64(np.array([4.0]))[0].astype(np.float32)) == 1.0
    hist: dict[int, int] = {}
    worst: list[tuple[float, float, float]] = []
    nan_ok = True
    total = 0
    for lo in range(start, stop, _CHUNK * stride):
        bits = np.arange(lo, min(stop, lo + _CHUNK * stride), stride, dtype=np.uint64)
        x = bits.astype(np.uint32).view(np.float32)
        got = erf_f32(x)
        nan = np.isnan(x)
        nan_ok &= bool(np.array_equal(np.isnan(got), nan))
        want = np.copysign(np.ones_like(x), x)
        mag = bits.astype(np.uint32) & 0x7FFFFFFF
        near = np.flatnonzero((mag < _FOUR) & ~nan)
        with np.errstate(invalid="ignore"):
            want[near] = erf_f64(x[near].astype(np.float64)).astype(np.float32)
        ok = ~nan
        diff = np.abs(_ordered(got[ok]) - _ordered(want[ok]))
        for d, n in zip(*np.unique(diff, return_counts=True)):
            hist[int(d)] = hist.get(int(d), 0) + int(n)
        bad = np.flatnonzero(diff)
        worst += [(float(x[ok][i]), float(got[ok][i]), float(want[ok][i])) for i in bad[:20]]
        total += x.size
    return {"inputs": total, "hist": hist, "max_ulp": max(hist), "nan_ok": nan_ok,
            "examples": worst[:10]}


_LIBM_SOURCE = r"""#include <math.h>
#include <stddef.h>
extern "C" void tdf_erf_reference(const float *x, float *out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = (float)erf((double)x[i]);
}
"""


def check_libm() -> dict:
    """ulp-difference histogram of erf_f32 (the native loop for these sizes) against
    ``float32(erf(double(x)))`` of the C library (glibc's double erf is within 1 ulp of double),
    over every non-negative float32 up to +inf; a C loop builds the reference, so the whole
    pass takes about a minute of CPU. Negative inputs are the same results with the sign set
    (``tests/runtime/test_erf_f32.py`` checks that bit for bit).
    """
    import ctypes

    import tdflow.runtime.kernels.elementwise  # noqa: F401 - installs the native builder
    from tdflow.runtime.backends.kernel_build import build_shared_object

    lib = ctypes.CDLL(str(build_shared_object(_LIBM_SOURCE, ("-O2",))))
    ref = lib.tdf_erf_reference
    ref.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
    hist: dict[int, int] = {}
    worst: list[tuple[float, float, float]] = []
    top = int(np.float32(np.inf).view(np.uint32)) + 1
    for lo in range(0, top, _CHUNK):
        x = np.arange(lo, min(top, lo + _CHUNK), dtype=np.uint32).view(np.float32)
        got = erf_f32(x)
        want = np.empty_like(x)
        ref(x.ctypes.data, want.ctypes.data, x.size)
        diff = np.abs(_ordered(got) - _ordered(want))
        for d, n in zip(*np.unique(diff, return_counts=True)):
            hist[int(d)] = hist.get(int(d), 0) + int(n)
        bad = np.flatnonzero(diff)
        worst += [(float(x[i]), float(got[i]), float(want[i])) for i in bad[:20]]
    return {"inputs": top, "hist": hist, "max_ulp": max(hist), "examples": worst[:10]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true", help="every one of the 2^32 bit patterns")
    ap.add_argument("--stride", type=int, default=101, help="the sampling pass's stride")
    ap.add_argument("--libm", action="store_true",
                    help="every x >= +0 against the C library's erf (a C loop: fast)")
    args = ap.parse_args()
    if args.libm:
        t = time.process_time()
        r = check_libm()
        print(f"every float32 in [+0, +inf]: {r['inputs']:,} inputs, "
              f"{time.process_time() - t:.0f} s CPU; ulp difference -> count {r['hist']}; "
              f"max {r['max_ulp']} ulp; differing (x, got, libm): {r['examples']}")
        return
    tiny = int(np.float32(2.0**-24).view(np.uint32))
    passes = ([("all 2^32", 1, 0, 1 << 32)] if args.all else
              [("every x in [2^-24, 4)", 1, tiny, _FOUR),
               (f"every {args.stride}th of 2^32", args.stride, 0, 1 << 32)])
    for name, stride, start, stop in passes:
        t = time.perf_counter()
        r = check(stride, start, stop)
        print(f"{name}: {r['inputs']:,} inputs, {time.perf_counter() - t:.0f} s; "
              f"ulp difference -> count {r['hist']}; nan kept {r['nan_ok']}; "
              f"max {r['max_ulp']} ulp; not correctly rounded (x, got, want): {r['examples']}")


if __name__ == "__main__":
    main()
