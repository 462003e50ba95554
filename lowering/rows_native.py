"""Row kernels in C for float32: layer norm's forward, softmax's max and sum passes, row and
column sums, the attention mask, an embedding's gradient; bit for bit numpy's operations.

Numpy reduces a row along the last (contiguous) axis with its pairwise summation: eight running
sums over the first multiple of eight numbers (up to 128; longer rows split in two halves, a
multiple of eight long), combined as ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``, the
rest added one by one, and the whole added to the identity ``+0.0``. On the GPT example's rows
(64 or 128 floats, thousands of them) numpy's reductions pay its iterator per row: layer norm's
forward (two such sums and five whole-array passes) took ~290 us a 1024x128 launch and softmax's
max and sum ~400 of its ~620 us a 16x4x64x64 launch. The loops here do the same roundings in the
same order (no contraction and no reassociation under
:data:`~tdflow.lowering.elementwise_native.NATIVE_FLAGS`: the eight sums are eight lanes),
row by row in one or two passes. ``exp`` stays numpy's (the caller runs it between the passes).

* ``run(0, x, y, mean, inv, gamma, beta, rows, n, eps)``: layer norm over rows of ``n``:
  ``mean = f32(f64(0 + sum(x)) / n)`` (``np.mean`` divides by its intp count, in float64),
  ``y = x - mean``, ``var`` the same of ``y * y``, ``inv = 1 / sqrt(var + eps)``, then
  ``y *= inv; y *= gamma; y += beta`` (``gamma``/``beta`` ``None``: skipped).
* ``run(1, x, y, rows, n)``: ``y = x - max(x)`` per row (``max``'s sign of zero does not
  matter to ``exp(y)``).
* ``run(2, y, rows, n)``: ``y /= 0 + sum(y)`` per row, in place.
* ``run(3, x, s, rows, n)``: ``s = 0 + sum(x)`` per row.
* ``run(4, x, s, rows, n)``: ``s = 0 + x[0] + x[1] + ...`` per column (``np.add.reduce``
  over the leading axis adds row after row).
* ``run(5, x, y, mats, rows, cols, k, scale, fill)``: ``fused_scale_tril``: ``x * scale``
  where ``j - i <= k``, ``fill`` elsewhere (``y`` may be ``x``).
* ``run(6, acc, ids, data, rows, n, width, skip)``: ``np.add.at(acc, ids, data)`` over rows
  of ``width`` (``ids`` int64; those outside ``[0, n)`` or equal to ``skip`` left out): an
  embedding's gradient, row after row in order, as ``add.at``.

Each returns ``False`` when a buffer's size disagrees, (every kind but 2) the output
overlaps an input (kinds 1 and 5 may be given one buffer as both), or a NaN meets a sum or
a product of two operands (a NaN in kind 1's input, a NaN sum, a NaN in a layer norm's
results): which of two NaNs an x86 add keeps is its first operand's, and the compiler may swap
a commutative operation's operands. The caller then runs numpy, which writes every output
again (kinds 1 and 2 write nothing before they refuse; the others leave their inputs alone),
so NaN payloads and signs are numpy's too.

>>> "tdf_pw" in c_source("tdf_x")
True
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["MIN_SIZE", "USE_NATIVE_ROWS", "c_source", "native_rows"]

#: False: numpy only (read at every call; tests and benches compare the two paths).
USE_NATIVE_ROWS = True
#: The fewest elements a launch (or eager call) has for the kernels to use the loops: below
#: it numpy's few microseconds stand, and a small plan (``tdflow run`` of the MLP example) or
#: eager call builds or loads no module for them.
MIN_SIZE = 4096

_TEMPLATE = r"""#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>

/* numpy's FLOAT_pairwise_sum (loops_utils.h), stride 1, for n <= 128: inlined into each
   target clone below (so the eight sums are one vector there) */
__attribute__((always_inline))
static inline float tdf_pw_block(const float *a, Py_ssize_t n) {{
  if (n < 8) {{
    float res = -0.0f;
    for (Py_ssize_t i = 0; i < n; ++i) res += a[i];
    return res;
  }}
  float r[8];
  for (int j = 0; j < 8; ++j) r[j] = a[j];
  Py_ssize_t i = 8;
  for (; i < n - (n % 8); i += 8)
    for (int j = 0; j < 8; ++j) r[j] += a[i + j];
  float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
  for (; i < n; ++i) res += a[i];
  return res;
}}

/* longer rows: numpy's split in two halves, the first a multiple of 8 long */
static float tdf_pw(const float *a, Py_ssize_t n) {{
  if (n <= 128) return tdf_pw_block(a, n);
  Py_ssize_t n2 = n / 2;
  n2 -= n2 % 8;
  return tdf_pw(a, n2) + tdf_pw(a + n2, n - n2);
}}

/* the row sum of np.add.reduce: the identity +0 first (so a row of -0 sums to +0) */
__attribute__((always_inline))
static inline float tdf_sum(const float *a, Py_ssize_t n) {{
  return 0.0f + (n <= 128 ? tdf_pw_block(a, n) : tdf_pw(a, n));
}}

/* any NaN among n numbers (vectorized: an OR of lanes) */
__attribute__((always_inline))
static inline int tdf_any_nan(const float *a, Py_ssize_t n) {{
  int bad = 0;
  for (Py_ssize_t i = 0; i < n; ++i) bad |= a[i] != a[i];
  return bad;
}}

/* The loops below return 0 where a NaN meets the work: which of two NaNs an add or multiply
   keeps is its first operand's on x86, and the compiler may swap a commutative operation's
   operands, so there the caller runs numpy, which then gives its own NaN bits. */

/* 0 (a NaN in a row's mean, inv or output: the outputs half written, x untouched) or 1 */
__attribute__((target_clones("avx512f", "avx2", "default")))
static int tdf_layer_norm(const float *x, float *y, float *mean, float *inv,
                          const float *g, const float *b, Py_ssize_t rows, Py_ssize_t n,
                          float eps, float *sq) {{
  for (Py_ssize_t r = 0; r < rows; ++r) {{
    const float *xr = x + r * n;
    float *yr = y + r * n;
    const float m = (float)((double)tdf_sum(xr, n) / (double)n);
    for (Py_ssize_t i = 0; i < n; ++i) {{
      const float d = xr[i] - m;
      yr[i] = d;
      sq[i] = d * d;
    }}
    const float var = (float)((double)tdf_sum(sq, n) / (double)n);
    const float s = 1.0f / sqrtf(var + eps);
    for (Py_ssize_t i = 0; i < n; ++i) yr[i] *= s;
    if (g) for (Py_ssize_t i = 0; i < n; ++i) yr[i] *= g[i];
    if (b) for (Py_ssize_t i = 0; i < n; ++i) yr[i] += b[i];
    mean[r] = m;
    inv[r] = s;
    if (m != m || s != s || tdf_any_nan(yr, n)) return 0;
  }}
  return 1;
}}

/* y = x - max(x) per row; 0, nothing written, when x holds a NaN (y may be x: so the maxes
   first, then the writes) */
__attribute__((target_clones("avx512f", "avx2", "default")))
static int tdf_sub_max(const float *x, float *y, Py_ssize_t rows, Py_ssize_t n, float *mx) {{
  int bad = 0;
  for (Py_ssize_t r = 0; r < rows; ++r) {{
    const float *xr = x + r * n;
    /* the max in 16 lanes: exact in any order (the sign of a zero max does not matter to
       exp(x - max)) */
    float mm[16];
    int nan[16];
    Py_ssize_t i = 0;
    for (int j = 0; j < 16; ++j) {{ mm[j] = xr[0]; nan[j] = 0; }}
    for (; i + 16 <= n; i += 16)
      for (int j = 0; j < 16; ++j) {{
        mm[j] = xr[i + j] > mm[j] ? xr[i + j] : mm[j];
        nan[j] |= xr[i + j] != xr[i + j];
      }}
    float m = mm[0];
    for (int j = 1; j < 16; ++j) {{ m = mm[j] > m ? mm[j] : m; bad |= nan[j]; }}
    bad |= nan[0];
    for (; i < n; ++i) {{ m = xr[i] > m ? xr[i] : m; bad |= xr[i] != xr[i]; }}
    mx[r] = m;
  }}
  if (bad) return 0;
  for (Py_ssize_t r = 0; r < rows; ++r) {{
    const float *xr = x + r * n;
    float *yr = y + r * n;
    const float m = mx[r];
    for (Py_ssize_t i = 0; i < n; ++i) yr[i] = xr[i] - m;
  }}
  return 1;
}}

/* y /= sum(y) per row, in place; 0, nothing written, when a sum is NaN */
__attribute__((target_clones("avx512f", "avx2", "default")))
static int tdf_div_sum(float *y, Py_ssize_t rows, Py_ssize_t n, float *sums) {{
  for (Py_ssize_t r = 0; r < rows; ++r) {{
    sums[r] = tdf_sum(y + r * n, n);
    if (sums[r] != sums[r]) return 0;
  }}
  for (Py_ssize_t r = 0; r < rows; ++r) {{
    float *yr = y + r * n;
    const float s = sums[r];
    for (Py_ssize_t i = 0; i < n; ++i) yr[i] /= s;
  }}
  return 1;
}}

__attribute__((target_clones("avx512f", "avx2", "default")))
static int tdf_row_sums(const float *x, float *s, Py_ssize_t rows, Py_ssize_t n) {{
  for (Py_ssize_t r = 0; r < rows; ++r) s[r] = tdf_sum(x + r * n, n);
  return !tdf_any_nan(s, rows);
}}

/* numpy's add.reduce over the leading axis: each column's sum from +0, row after row (the
   columns are lanes: no reassociation) */
__attribute__((target_clones("avx512f", "avx2", "default")))
static int tdf_col_sums(const float *x, float *s, Py_ssize_t rows, Py_ssize_t n) {{
  for (Py_ssize_t j = 0; j < n; ++j) s[j] = 0.0f;
  for (Py_ssize_t r = 0; r < rows; ++r)
    for (Py_ssize_t j = 0; j < n; ++j) s[j] += x[r * n + j];
  return !tdf_any_nan(s, n);
}}

/* fused_scale_tril: x * scale where j - i <= k, fill elsewhere, for mats matrices of
   rows x cols (y may be x) */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void tdf_scale_tril(const float *x, float *y, Py_ssize_t mats, Py_ssize_t rows,
                           Py_ssize_t cols, Py_ssize_t k, float scale, float fill) {{
  for (Py_ssize_t m = 0; m < mats; ++m)
    for (Py_ssize_t i = 0; i < rows; ++i) {{
      const float *xr = x + (m * rows + i) * cols;
      float *yr = y + (m * rows + i) * cols;
      Py_ssize_t keep = i + k + 1;  /* columns below it are kept */
      keep = keep < 0 ? 0 : keep > cols ? cols : keep;
      for (Py_ssize_t j = 0; j < keep; ++j) yr[j] = xr[j] * scale;
      for (Py_ssize_t j = keep; j < cols; ++j) yr[j] = fill;
    }}
}}

/* np.add.at(acc, ids, data) for rows of `width`: row r of data added to row ids[r] of acc,
   r in order (so each element gets add.at's operands in add.at's order); ids outside
   [0, n) or equal to skip are left out. 0 where a NaN results (its bits: see above). */
__attribute__((target_clones("avx512f", "avx2", "default")))
static int tdf_add_rows(float *acc, const int64_t *ids, const float *data, Py_ssize_t rows,
                        Py_ssize_t n, Py_ssize_t width, int64_t skip) {{
  for (Py_ssize_t r = 0; r < rows; ++r) {{
    const int64_t id = ids[r];
    if (id < 0 || id >= n || id == skip) continue;
    float *a = acc + id * width;
    const float *d = data + r * width;
    for (Py_ssize_t j = 0; j < width; ++j) a[j] += d[j];
  }}
  return !tdf_any_nan(acc, n * width);
}}

static int tdf_apart(const Py_buffer *a, const Py_buffer *b) {{
  const char *p = (const char *)a->buf, *q = (const char *)b->buf;
  return p >= q + b->len || q >= p + a->len;
}}

static PyObject *tdf_run(PyObject *self, PyObject *args) {{
  Py_ssize_t kind = PyLong_AsSsize_t(PyTuple_GET_ITEM(args, 0));
  if (kind == -1 && PyErr_Occurred()) return NULL;
  PyObject *result = Py_False;
  if (kind == 0) {{
    Py_buffer x, y, m, v, g = {{0}}, b = {{0}};
    PyObject *go, *bo;
    Py_ssize_t k, rows, n;
    float eps;
    if (!PyArg_ParseTuple(args, "ny*w*w*w*OOnnf", &k, &x, &y, &m, &v, &go, &bo, &rows, &n,
                          &eps)) return NULL;
    int ok = 1;
    if (go != Py_None) ok = PyObject_GetBuffer(go, &g, PyBUF_SIMPLE) == 0;
    if (ok && bo != Py_None) ok = PyObject_GetBuffer(bo, &b, PyBUF_SIMPLE) == 0;
    if (!ok) PyErr_Clear();
    const Py_ssize_t whole = rows * n * 4;
    ok = ok && rows > 0 && n > 0 && x.len == whole && y.len == whole && m.len == rows * 4
         && v.len == rows * 4 && (!g.buf || g.len == n * 4) && (!b.buf || b.len == n * 4)
         && tdf_apart(&x, &y) && tdf_apart(&y, &m) && tdf_apart(&y, &v) && tdf_apart(&m, &v)
         && tdf_apart(&x, &m) && tdf_apart(&x, &v)
         && (!g.buf || tdf_apart(&g, &y)) && (!b.buf || tdf_apart(&b, &y));
    float *sq = ok ? (float *)PyMem_RawMalloc((size_t)n * sizeof(float)) : NULL;
    if (sq) {{
      int done;
      Py_BEGIN_ALLOW_THREADS
      done = tdf_layer_norm((const float *)x.buf, (float *)y.buf, (float *)m.buf,
                            (float *)v.buf, (const float *)g.buf, (const float *)b.buf, rows,
                            n, eps, sq);
      Py_END_ALLOW_THREADS
      PyMem_RawFree(sq);
      if (done) result = Py_True;
    }}
    if (g.buf) PyBuffer_Release(&g);
    if (b.buf) PyBuffer_Release(&b);
    PyBuffer_Release(&x); PyBuffer_Release(&y); PyBuffer_Release(&m); PyBuffer_Release(&v);
  }} else if (kind == 1 || kind == 3) {{
    Py_buffer x, y;
    Py_ssize_t k, rows, n;
    if (!PyArg_ParseTuple(args, "ny*w*nn", &k, &x, &y, &rows, &n)) return NULL;
    const Py_ssize_t whole = rows * n * 4;
    /* kind 1 may work in place: a row's max is taken before the row is written */
    float *mx = NULL;
    if (rows > 0 && n > 0 && x.len == whole && y.len == (kind == 1 ? whole : rows * 4)
        && (tdf_apart(&x, &y) || (kind == 1 && x.buf == y.buf))
        && (kind == 3 || (mx = (float *)PyMem_RawMalloc((size_t)rows * sizeof(float))))) {{
      int done;
      Py_BEGIN_ALLOW_THREADS
      if (kind == 1) done = tdf_sub_max((const float *)x.buf, (float *)y.buf, rows, n, mx);
      else done = tdf_row_sums((const float *)x.buf, (float *)y.buf, rows, n);
      Py_END_ALLOW_THREADS
      if (done) result = Py_True;
    }}
    PyMem_RawFree(mx);
    PyBuffer_Release(&x); PyBuffer_Release(&y);
  }} else if (kind == 4) {{
    Py_buffer x, y;
    Py_ssize_t k, rows, n;
    if (!PyArg_ParseTuple(args, "ny*w*nn", &k, &x, &y, &rows, &n)) return NULL;
    if (rows > 0 && n > 0 && x.len == rows * n * 4 && y.len == n * 4 && tdf_apart(&x, &y)) {{
      int done;
      Py_BEGIN_ALLOW_THREADS
      done = tdf_col_sums((const float *)x.buf, (float *)y.buf, rows, n);
      Py_END_ALLOW_THREADS
      if (done) result = Py_True;
    }}
    PyBuffer_Release(&x); PyBuffer_Release(&y);
  }} else if (kind == 5) {{
    Py_buffer x, y;
    Py_ssize_t k, mats, rows, cols, diag;
    float scale, fill;
    if (!PyArg_ParseTuple(args, "ny*w*nnnnff", &k, &x, &y, &mats, &rows, &cols, &diag, &scale,
                          &fill)) return NULL;
    const Py_ssize_t whole = mats * rows * cols * 4;
    if (mats > 0 && rows > 0 && cols > 0 && x.len == whole && y.len == whole && scale == scale
        && (tdf_apart(&x, &y) || x.buf == y.buf)) {{
      Py_BEGIN_ALLOW_THREADS
      tdf_scale_tril((const float *)x.buf, (float *)y.buf, mats, rows, cols, diag, scale, fill);
      Py_END_ALLOW_THREADS
      result = Py_True;
    }}
    PyBuffer_Release(&x); PyBuffer_Release(&y);
  }} else if (kind == 6) {{
    Py_buffer acc, ids, d;
    Py_ssize_t k, rows, n, width;
    long long skip;
    if (!PyArg_ParseTuple(args, "nw*y*y*nnnL", &k, &acc, &ids, &d, &rows, &n, &width, &skip))
      return NULL;
    if (rows >= 0 && n > 0 && width > 0 && acc.len == n * width * 4 && ids.len == rows * 8
        && d.len == rows * width * 4 && tdf_apart(&acc, &d) && tdf_apart(&acc, &ids)) {{
      int done;
      Py_BEGIN_ALLOW_THREADS
      done = tdf_add_rows((float *)acc.buf, (const int64_t *)ids.buf, (const float *)d.buf,
                          rows, n, width, (int64_t)skip);
      Py_END_ALLOW_THREADS
      if (done) result = Py_True;
    }}
    PyBuffer_Release(&acc); PyBuffer_Release(&ids); PyBuffer_Release(&d);
  }} else if (kind == 2) {{
    Py_buffer y;
    Py_ssize_t k, rows, n;
    if (!PyArg_ParseTuple(args, "nw*nn", &k, &y, &rows, &n)) return NULL;
    float *sums = NULL;
    if (rows > 0 && n > 0 && y.len == rows * n * 4
        && (sums = (float *)PyMem_RawMalloc((size_t)rows * sizeof(float)))) {{
      int done;
      Py_BEGIN_ALLOW_THREADS
      done = tdf_div_sum((float *)y.buf, rows, n, sums);
      Py_END_ALLOW_THREADS
      if (done) result = Py_True;
    }}
    PyMem_RawFree(sums);
    PyBuffer_Release(&y);
  }}
  Py_INCREF(result);
  return result;
}}

static PyMethodDef tdf_methods[] = {{
  {{"run", tdf_run, METH_VARARGS, "run(kind, ...) -> bool"}},
  {{NULL, NULL, 0, NULL}}
}};

static struct PyModuleDef tdf_module = {{PyModuleDef_HEAD_INIT, "{module}", NULL, -1, tdf_methods}};

extern "C" PyMODINIT_FUNC PyInit_{module}(void) {{ return PyModule_Create(&tdf_module); }}
"""


def c_source(module: str) -> str:
    """The C++ of the extension, named ``module``.

    >>> c_source("tdf_x").count("PyInit_tdf_x")
    1
    """
    return _TEMPLATE.format(module=module)


_lock = threading.Lock()
#: the built ``run`` (None: not buildable), once a build was tried with a builder installed
_built: list[Callable[..., Any] | None] = []


def native_rows() -> Callable[..., Any] | None:
    """``run(kind, ...) -> bool`` (see the module's docstring), built on first use; ``None``
    when it cannot be built, is switched off (``TDFLOW_NATIVE=0``, :data:`USE_NATIVE_ROWS`),
    then the caller runs numpy. Buffers are C-contiguous float32; ``False`` means nothing was
    done (sizes, overlap, or the module still building).

    >>> import numpy as np
    >>> run = native_rows()
    >>> x = np.arange(16, dtype=np.float32).reshape(2, 8); s = np.empty(2, np.float32)
    >>> run is None or not run(3, x, s, 2, 8) or s.tolist() == [28.0, 92.0]
    True
    """
    from tdflow.lowering.elementwise_native import extension_once

    return extension_once(_built, _lock, USE_NATIVE_ROWS, "tdf_rows", _TEMPLATE.encode(), c_source)
