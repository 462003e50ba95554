"""float32 ``erf`` in one C loop, bit for bit :func:`tdflow.lowering.erf_f32.erf_f32`'s numpy path.

The numpy path of :mod:`tdflow.lowering.erf_f32` spends ~27 ufunc calls per block (a gather of
ten coefficients, Horner's steps, the sign) at ~15 ns an element. Every one of its steps is a
correctly rounded IEEE operation on float64 values (``|x|``, the clamp below 4, an exact scaling
by 4, ``floor``, a subtraction, nine multiply-adds written as separate roundings, the final
rounding to float32 and ``copysign``), so a C loop doing the same operations in the same order
(no fused multiply-add: ``-ffp-contract=off``, and none written in the intrinsics) with the
same table gives the same bits, NaN payloads included (a NaN input's payload is the only NaN in
play). Three loops, picked by the CPU: AVX-512 keeps the table's 16 intervals of each
coefficient in two registers and picks them with one permute (~1 ns an element here), AVX2
loads each lane's row of coefficients and transposes four rows into vectors (~2x slower), the
scalar loop reads them one by one. The loop is a
CPython extension built and cached by the same builder as the native fused loops
(:func:`tdflow.lowering.elementwise_native.build_extension`); the table's values are written
into its source, so a new table is a new object. No compiler, ``TDFLOW_NATIVE=0`` or
:data:`USE_NATIVE_ERF` false: the numpy path, same values.

>>> import numpy as np
>>> from tdflow.lowering.erf_f32 import _coefficients
>>> src = c_source(_coefficients(), 4, 9, 3.9999998)
>>> "static double tdf_erf_table" in src and "_mm512_permutex2var_pd" in src
True
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["USE_NATIVE_ERF", "MIN_NATIVE", "c_source", "native_erf"]

#: False: numpy only (read at every call; tests and benches compare the two paths).
USE_NATIVE_ERF = True
#: Fewer elements than this stay on numpy (a first use would pay a compiler run).
MIN_NATIVE = 1024

_TEMPLATE = r"""#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static const double tdf_erf_init[{rows}][{n}] = {{
{table}
}};
/* what the scalar and AVX-512 loops read (gcc vectorizes nothing from an initialized table); the module's
   init copies the values in */
static double tdf_erf_table[{rows}][{n}];
/* the same values interval by interval (padded with zeros to whole vectors), for the AVX2 loop */
static double tdf_erf_rows[{n}][{padded}] __attribute__((aligned(32)));

static inline float tdf_f32(uint32_t b) {{ float f; memcpy(&f, &b, 4); return f; }}

/* erf_f32's block, one element at a time: the same float64 operations in the same order. */
static void tdf_erf_loop(const float *x, float *out, Py_ssize_t n) {{
  const float limit = tdf_f32({limit_bits}u);
  const double scale = {scale}.0;
  for (Py_ssize_t i = 0; i < n; ++i) {{
    float xi = x[i];
    float a = fabsf(xi);               /* as numpy's absolute: the sign bit cleared */
    a = a > limit ? limit : a;         /* numpy's minimum(a, limit): a NaN stays */
    double s = (double)a * scale;      /* exact: a power of two */
    double f = floor(s);
    long k = (long)(f == f ? f : 0.0); /* numpy's take(mode="clip") of a NaN's index: 0 */
    double h = s - f;
    double r = tdf_erf_table[0][k] * h;
{horner}
    r = r + tdf_erf_table[{degree}][k];
    r = r * s;
    float o = (float)r;
    out[i] = copysignf(o, xi);
  }}
}}

#if defined(__x86_64__)
#include <immintrin.h>
/* The same, four elements at a time with AVX2: each lane's interval row (its coefficients,
   contiguous in tdf_erf_rows) loaded whole and four rows transposed into one vector per
   coefficient, which measured ~2x faster than a gather per coefficient; the same IEEE
   operations per lane; a NaN lane's index is 0, as above. */
__attribute__((target("avx2")))
static void tdf_erf_loop_avx2(const float *x, float *out, Py_ssize_t n) {{
  const __m128 absmask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
  const __m128 limit = _mm_castsi128_ps(_mm_set1_epi32((int){limit_bits}u));
  const __m256d scale = _mm256_set1_pd({scale}.0);
  Py_ssize_t i = 0;
  for (; i + 4 <= n; i += 4) {{
    __m128 xv = _mm_loadu_ps(x + i);
    __m128 a = _mm_and_ps(xv, absmask);
    a = _mm_blendv_ps(a, limit, _mm_cmp_ps(a, limit, _CMP_GT_OQ));
    __m256d s = _mm256_mul_pd(_mm256_cvtps_pd(a), scale);
    __m256d f = _mm256_floor_pd(s);
    __m128i k = _mm256_cvttpd_epi32(_mm256_and_pd(f, _mm256_cmp_pd(f, f, _CMP_ORD_Q)));
    __m256d h = _mm256_sub_pd(s, f);
    const double *p0 = tdf_erf_rows[_mm_extract_epi32(k, 0)];
    const double *p1 = tdf_erf_rows[_mm_extract_epi32(k, 1)];
    const double *p2 = tdf_erf_rows[_mm_extract_epi32(k, 2)];
    const double *p3 = tdf_erf_rows[_mm_extract_epi32(k, 3)];
    __m256d c[{padded}];
#pragma GCC unroll 8
    for (int g = 0; g < {padded}; g += 4) {{
      __m256d r0 = _mm256_load_pd(p0 + g), r1 = _mm256_load_pd(p1 + g);
      __m256d r2 = _mm256_load_pd(p2 + g), r3 = _mm256_load_pd(p3 + g);
      __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
      __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
      c[g] = _mm256_permute2f128_pd(t0, t2, 0x20);
      c[g + 1] = _mm256_permute2f128_pd(t1, t3, 0x20);
      c[g + 2] = _mm256_permute2f128_pd(t0, t2, 0x31);
      c[g + 3] = _mm256_permute2f128_pd(t1, t3, 0x31);
    }}
    __m256d r = _mm256_mul_pd(c[0], h);
#pragma GCC unroll 16
    for (int j = 1; j < {degree}; ++j) r = _mm256_mul_pd(_mm256_add_pd(r, c[j]), h);
    r = _mm256_add_pd(r, c[{degree}]);
    r = _mm256_mul_pd(r, s);
    __m128 o = _mm256_cvtpd_ps(r);
    o = _mm_or_ps(_mm_and_ps(o, absmask), _mm_andnot_ps(absmask, xv));  /* copysign */
    _mm_storeu_ps(out + i, o);
  }}
  tdf_erf_loop(x + i, out + i, n - i);
}}
{avx512}#endif

/* widest: 2 lets every loop run, 1 stops at AVX2, 0 runs the scalar loop (tests compare them) */
static void tdf_erf(const float *x, float *out, Py_ssize_t n, long widest) {{
#if defined(__x86_64__)
{avx512_dispatch}  if (widest >= 1 && __builtin_cpu_supports("avx2")) {{
    tdf_erf_loop_avx2(x, out, n);
    return;
  }}
#endif
  tdf_erf_loop(x, out, n);
}}

/* GELU's forward, 0.5 * x * (1 + erf(x * c)) in float32 (c = float32 rsqrt(2)), as numpy's
   steps compute it: x * c, the erf above, then (0.5 * x) * (1 + t), each product and sum one
   float32 rounding (no contraction: -ffp-contract=off), in chunks that stay in L1 instead of
   three passes over memory. A NaN x gives its own payload quieted, with its sign, from both
   factors of the last product, so the operand order the compiler picks does not matter. */
#define TDF_CHUNK 1024
__attribute__((target_clones("avx512f", "avx2", "default")))
static void tdf_gelu(const float *x, float *out, Py_ssize_t n, long widest) {{
  const float c = tdf_f32(0x3f3504f3u), half = 0.5f, one = 1.0f;
  float t[TDF_CHUNK] __attribute__((aligned(64)));
  for (Py_ssize_t lo = 0; lo < n; lo += TDF_CHUNK) {{
    Py_ssize_t m = n - lo < TDF_CHUNK ? n - lo : TDF_CHUNK;
    const float *xb = x + lo;
    float *ob = out + lo;
    for (Py_ssize_t i = 0; i < m; ++i) t[i] = xb[i] * c;
    tdf_erf(t, t, m, widest);
    for (Py_ssize_t i = 0; i < m; ++i) ob[i] = (half * xb[i]) * (one + t[i]);
  }}
}}

/* run(x, out[, widest[, op]]): op 0 erf, 1 GELU's forward (one entry point: the builder hands
   back a module's run only) */
static PyObject *tdf_run(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {{
  Py_buffer v[2];
  int got = 0;
  PyObject *result = Py_False;
  long widest = 2, op = 0;
  void (*fn)(const float *, float *, Py_ssize_t, long) = tdf_erf;
  if (nargs < 2 || nargs > 4) {{
    PyErr_SetString(PyExc_TypeError, "run() takes 2 buffers, an optional loop level and op");
    return NULL;
  }}
  if (nargs >= 3) {{
    widest = PyLong_AsLong(args[2]);
    if (widest == -1 && PyErr_Occurred()) return NULL;
  }}
  if (nargs == 4) {{
    op = PyLong_AsLong(args[3]);
    if (op == -1 && PyErr_Occurred()) return NULL;
    if (op == 1) fn = tdf_gelu;
    else if (op != 0) {{
      PyErr_SetString(PyExc_ValueError, "run(): op is 0 (erf) or 1 (gelu)");
      return NULL;
    }}
  }}
  for (; got < 2; ++got) {{
    if (PyObject_GetBuffer(args[got], &v[got], PyBUF_C_CONTIGUOUS | (got ? PyBUF_WRITABLE : 0)) < 0) {{
      if (!PyErr_ExceptionMatches(PyExc_BufferError)
          && !PyErr_ExceptionMatches(PyExc_ValueError)) {{ result = NULL; goto done; }}
      PyErr_Clear();  /* not contiguous (or read-only out): the caller uses numpy */
      goto done;
    }}
  }}
  {{
    char *p = (char *)v[0].buf, *o = (char *)v[1].buf;
    /* same length, and out is x itself or does not overlap it */
    if (v[0].len != v[1].len || v[0].len % 4
        || (p != o && p < o + v[1].len && o < p + v[0].len)) goto done;
    Py_ssize_t n = v[0].len / 4;
    Py_BEGIN_ALLOW_THREADS
    fn((const float *)p, (float *)o, n, widest);
    Py_END_ALLOW_THREADS
    result = Py_True;
  }}
done:
  Py_XINCREF(result);
  for (int k = 0; k < got; ++k) PyBuffer_Release(&v[k]);
  return result;
}}

static PyMethodDef tdf_methods[] = {{
  {{"run", (PyCFunction)(void (*)(void))tdf_run, METH_FASTCALL, "run(x, out[, widest[, op]]) -> bool"}},
  {{NULL, NULL, 0, NULL}}
}};

static struct PyModuleDef tdf_module = {{PyModuleDef_HEAD_INIT, "{module}", NULL, -1, tdf_methods}};

extern "C" PyMODINIT_FUNC PyInit_{module}(void) {{
  memcpy(tdf_erf_table, tdf_erf_init, sizeof tdf_erf_table);
  for (int j = 0; j < {rows}; ++j)
    for (int k = 0; k < {n}; ++k) tdf_erf_rows[k][j] = tdf_erf_init[j][k];
  return PyModule_Create(&tdf_module);
}}
"""


_AVX512 = r"""/* A table of 16 intervals: each coefficient's 16 values sit in two registers and one permute
   picks every lane's (the low 4 bits of its index), instead of a gather from memory: eight
   elements at a time, the same IEEE operations per lane as tdf_erf_loop. */
__attribute__((target("avx512f"), always_inline))
static inline __m256 tdf_erf8(__m256 xv, const __m512d *lo, const __m512d *hi) {{
  const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 limit = _mm256_castsi256_ps(_mm256_set1_epi32((int){limit_bits}u));
  __m256 a = _mm256_and_ps(xv, absmask);
  a = _mm256_blendv_ps(a, limit, _mm256_cmp_ps(a, limit, _CMP_GT_OQ));
  __m512d s = _mm512_mul_pd(_mm512_cvtps_pd(a), _mm512_set1_pd({scale}.0));
  __m512d f = _mm512_roundscale_pd(s, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  /* a NaN converts to 0x80000000: its low bits pick interval 0, as the scalar loop does */
  __m512i k = _mm512_cvtepi32_epi64(_mm512_cvttpd_epi32(f));
  __m512d h = _mm512_sub_pd(s, f);
  __m512d r = _mm512_mul_pd(_mm512_permutex2var_pd(lo[0], k, hi[0]), h);
  /* unrolled, so the 20 table registers stay registers (a loop reloads them from the stack) */
#pragma GCC unroll 16
  for (int j = 1; j < {degree}; ++j)
    r = _mm512_mul_pd(_mm512_add_pd(r, _mm512_permutex2var_pd(lo[j], k, hi[j])), h);
  r = _mm512_add_pd(r, _mm512_permutex2var_pd(lo[{degree}], k, hi[{degree}]));
  r = _mm512_mul_pd(r, s);
  __m256 o = _mm512_cvtpd_ps(r);
  return _mm256_or_ps(_mm256_and_ps(o, absmask), _mm256_andnot_ps(absmask, xv));  /* copysign */
}}

__attribute__((target("avx512f")))
static void tdf_erf_loop_avx512(const float *x, float *out, Py_ssize_t n) {{
  __m512d lo[{rows}], hi[{rows}];
#pragma GCC unroll 16
  for (int j = 0; j < {rows}; ++j) {{
    lo[j] = _mm512_loadu_pd(tdf_erf_table[j]);
    hi[j] = _mm512_loadu_pd(tdf_erf_table[j] + 8);
  }}
  Py_ssize_t i = 0;
  /* (two vectors an iteration measured no faster: the permutes and the arithmetic, not the
     Horner chain's latency, bound it) */
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, tdf_erf8(_mm256_loadu_ps(x + i), lo, hi));
  tdf_erf_loop(x + i, out + i, n - i);
}}
"""
_AVX512_DISPATCH = """  if (widest >= 2 && __builtin_cpu_supports("avx512f")) {
    tdf_erf_loop_avx512(x, out, n);
    return;
  }
"""


def c_source(table: np.ndarray, scale: int, degree: int, limit: float,
             module: str = "tdf_erf") -> str:
    """The C++ of the extension for ``table`` (``(degree + 1, intervals)`` float64, highest
    power first), ``scale`` intervals per unit and the float32 clamp ``limit``; every value
    written exactly (hex literals), so the C reads exactly the numbers numpy uses."""
    rows = ["  {" + ", ".join(float(v).hex() for v in row) + "}"  # exact hex literals
            for row in np.ascontiguousarray(table, np.float64)]
    horner = "\n".join(f"    r = (r + tdf_erf_table[{j}][k]) * h;" for j in range(1, degree))
    limit_bits = f"0x{int(np.float32(limit).view(np.uint32)):08x}"
    # the permute loop needs exactly 16 intervals (two registers of 8 per coefficient)
    wide = table.shape[1] == 16
    avx512 = (_AVX512.format(rows=degree + 1, degree=degree, scale=int(scale),
                             limit_bits=limit_bits) if wide else "")
    return _TEMPLATE.format(rows=degree + 1, n=table.shape[1], table=",\n".join(rows),
                            horner=horner, padded=(degree + 4) // 4 * 4, degree=degree, scale=int(scale),
                            limit_bits=limit_bits, module=module, avx512=avx512,
                            avx512_dispatch=_AVX512_DISPATCH if wide else "")


_lock = threading.Lock()
# id(table) -> (table, run): the table is fitted once per process; its source is written once.
_by_table: dict[int, tuple[np.ndarray, Callable[..., Any] | None]] = {}


def native_erf(table: np.ndarray, scale: int, degree: int,
               limit: float) -> Callable[..., Any] | None:
    """``run(x, out) -> bool``: float32 erf of the C-contiguous ``x`` into ``out`` (same size,
    ``x`` itself or not overlapping it; ``False`` and nothing done otherwise), built on first
    use; ``None`` when it cannot be built (then numpy). ``run(x, out, widest)`` caps the loop
    the CPU would pick (0 scalar, 1 AVX2 rows, 2 AVX-512 permutes): all give the same bits,
    which tests check on one machine.

    >>> from tdflow.lowering.erf_f32 import _coefficients
    >>> run = native_erf(_coefficients(), 4, 9, 3.9999998)
    >>> x = np.array([0.5, -1.0], np.float32); out = np.empty(2, np.float32)
    >>> run is None or (run(x, out), out.tolist())[1] == [0.5204998850822449, -0.8427007794380188]
    True
    """
    from tdflow.lowering.elementwise_native import named_extension, native_enabled

    if not USE_NATIVE_ERF or not native_enabled():
        return None
    hit = _by_table.get(id(table))
    if hit is not None and hit[0] is table:
        return hit[1]
    with _lock:
        # named by what the source is made of: one module per table (and template) a process
        # meets, the source written once
        inputs = (_TEMPLATE.encode() + _AVX512.encode()
                  + np.ascontiguousarray(table, np.float64).tobytes()
                  + repr((int(scale), int(degree), float(limit))).encode())
        run, final = named_extension(
            "tdf_erf", inputs, lambda module: c_source(table, scale, degree, limit, module))
        if final:  # else: try again once a builder is installed
            _by_table[id(table)] = (table, run)
        return run
