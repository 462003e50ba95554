"""Winograd F(2x2, 3x3)'s add/subtract stages in C, bit for bit the numpy path's.

:mod:`tdflow.runtime.kernels._conv_winograd` computes the input transform ``V = B^T d B``, the
output transform ``Y = A^T M A`` and the filter gradient's ``dM = A dY A^T`` with 4-8
whole-array ufunc calls each, every one a pass over a grid-sized temporary: on the ResNet
example's 16-channel 8x8 layers (batch 64) about a third of a Winograd convolution. Every
element of each is a fixed few float adds, subtracts, copies or negations of its inputs, so a C
loop doing the same operations in the same order (no multiplies, so no contraction, and no
reassociation under the project's :data:`~tdflow.lowering.elementwise_native.NATIVE_FLAGS`)
gives the same bits, signed zeros included, in one pass per tile over blocks of
``TDF_BLOCK`` numbers (a row of ``N * C`` numbers is often 4 KiB, so a tile's 32 rows share one
L1 set: the blocks keep each inner loop to 8 of them). Built and cached by the native fused
loops' builder (:func:`tdflow.lowering.elementwise_native.build_extension`); float32 only. No
compiler, ``TDFLOW_NATIVE=0`` or :data:`USE_NATIVE_WINOGRAD` false: the numpy path, same values.

>>> "tdf_winograd_in" in c_source("tdf_winograd")
True
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["USE_NATIVE_WINOGRAD", "c_source", "native_transforms"]

#: False: numpy only (read at every call; tests and benches compare the two paths).
USE_NATIVE_WINOGRAD = True

_TEMPLATE = r"""#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]] on four rows of n numbers:
   the numpy path's four ufunc calls, per element and in its order. */
static inline void tdf_bt(const float *__restrict a0, const float *__restrict a1,
                          const float *__restrict a2, const float *__restrict a3,
                          float *__restrict o0, float *__restrict o1, float *__restrict o2,
                          float *__restrict o3, Py_ssize_t n) {{
  for (Py_ssize_t e = 0; e < n; ++e) {{
    o0[e] = a0[e] - a2[e];
    o1[e] = a1[e] + a2[e];
    o2[e] = a2[e] - a1[e];
    o3[e] = a1[e] - a3[e];
  }}
}}

/* the block of numbers per tile pass: each loop then streams 8 rows (a row of N * C numbers is
   often 4 KiB, so all 32 rows of a tile share one L1 set; 8 fit its ways) */
#define TDF_BLOCK 256

/* xp: the padded grid (2 th + 2, 2 tw + 2, m), pixels outermost; v: (4, 4, th, tw, m).
   rows[a] = B^T over the rows 2i..2i+3, then v[a][b] = B^T over the columns of rows[a]. */
static void tdf_winograd_in(const float *xp, float *v, Py_ssize_t th, Py_ssize_t tw,
                            Py_ssize_t m) {{
  const Py_ssize_t wp = 2 * tw + 2, plane = th * tw * m;
  float r[4][4][TDF_BLOCK];
  for (Py_ssize_t i = 0; i < th; ++i) {{
    for (Py_ssize_t j = 0; j < tw; ++j) {{
      for (Py_ssize_t e0 = 0; e0 < m; e0 += TDF_BLOCK) {{
        const Py_ssize_t n = m - e0 < TDF_BLOCK ? m - e0 : TDF_BLOCK;
        for (int l = 0; l < 4; ++l) {{
          const float *d = xp + ((2 * i) * wp + 2 * j + l) * m + e0;
          tdf_bt(d, d + wp * m, d + 2 * wp * m, d + 3 * wp * m,
                 r[0][l], r[1][l], r[2][l], r[3][l], n);
        }}
        for (int a = 0; a < 4; ++a) {{
          float *o = v + (Py_ssize_t)(a * 4) * plane + (i * tw + j) * m + e0;
          tdf_bt(r[a][0], r[a][1], r[a][2], r[a][3], o, o + plane, o + 2 * plane, o + 3 * plane, n);
        }}
      }}
    }}
  }}
}}

/* A^T = [[1, 1, 1, 0], [0, 1, -1, -1]] on four rows of n numbers: the numpy path's
   add-then-add and subtract-then-subtract, in its order. */
static inline void tdf_at(const float *__restrict a0, const float *__restrict a1,
                          const float *__restrict a2, const float *__restrict a3,
                          float *__restrict o0, float *__restrict o1, Py_ssize_t n) {{
  for (Py_ssize_t e = 0; e < n; ++e) {{
    o0[e] = (a0[e] + a1[e]) + a2[e];
    o1[e] = (a1[e] - a2[e]) - a3[e];
  }}
}}

/* mm: the products (4, 4, th, tw, m); y: (th, 2, tw, 2, m + pitch), each tile's 2x2 outputs.
   p[r][b] = A^T over mm[.][b], then y[i][r][j][s] = A^T over p[r][.]. */
static void tdf_winograd_out(const float *mm, float *y, Py_ssize_t th, Py_ssize_t tw,
                             Py_ssize_t m, Py_ssize_t pitch) {{
  const Py_ssize_t plane = th * tw * m, row = m + pitch;
  float p[2][4][TDF_BLOCK];
  for (Py_ssize_t i = 0; i < th; ++i) {{
    for (Py_ssize_t j = 0; j < tw; ++j) {{
      for (Py_ssize_t e0 = 0; e0 < m; e0 += TDF_BLOCK) {{
        const Py_ssize_t n = m - e0 < TDF_BLOCK ? m - e0 : TDF_BLOCK;
        for (int b = 0; b < 4; ++b) {{
          const float *d = mm + (Py_ssize_t)b * plane + (i * tw + j) * m + e0;
          tdf_at(d, d + 4 * plane, d + 8 * plane, d + 12 * plane, p[0][b], p[1][b], n);
        }}
        for (int r = 0; r < 2; ++r) {{
          float *o = y + ((i * 2 + r) * tw + j) * 2 * row + e0;
          tdf_at(p[r][0], p[r][1], p[r][2], p[r][3], o, o + row, n);
        }}
      }}
    }}
  }}
}}

/* A = [[1, 0], [1, 1], [1, -1], [0, -1]] on two rows of n numbers (the filter gradient's
   dM = A dY A^T): the numpy path's copy, add, subtract and negation. */
static inline void tdf_a(const float *__restrict a0, const float *__restrict a1,
                         float *__restrict o0, float *__restrict o1, float *__restrict o2,
                         float *__restrict o3, Py_ssize_t n) {{
  for (Py_ssize_t e = 0; e < n; ++e) {{
    o0[e] = a0[e];
    o1[e] = a0[e] + a1[e];
    o2[e] = a0[e] - a1[e];
    o3[e] = -a1[e];
  }}
}}

/* d: the output gradient (th, 2, tw, 2, m); dm: (4, 4, th, tw, m).
   q[a][s] = A over d[i][.][j][s], then dm[a][b] = A over q[a][.]. */
static void tdf_winograd_dm(const float *d, float *dm, Py_ssize_t th, Py_ssize_t tw,
                            Py_ssize_t m) {{
  const Py_ssize_t plane = th * tw * m;
  float q[4][2][TDF_BLOCK];
  for (Py_ssize_t i = 0; i < th; ++i) {{
    for (Py_ssize_t j = 0; j < tw; ++j) {{
      for (Py_ssize_t e0 = 0; e0 < m; e0 += TDF_BLOCK) {{
        const Py_ssize_t n = m - e0 < TDF_BLOCK ? m - e0 : TDF_BLOCK;
        for (int s = 0; s < 2; ++s) {{
          const float *r0 = d + ((i * 2) * tw + j) * 2 * m + s * m + e0;
          tdf_a(r0, r0 + 2 * tw * m, q[0][s], q[1][s], q[2][s], q[3][s], n);
        }}
        for (int a = 0; a < 4; ++a) {{
          float *o = dm + (Py_ssize_t)(a * 4) * plane + (i * tw + j) * m + e0;
          tdf_a(q[a][0], q[a][1], o, o + plane, o + 2 * plane, o + 3 * plane, n);
        }}
      }}
    }}
  }}
}}

/* run(kind, src, dst, th, tw, m, pitch): kind 0 the input transform (src the padded grid),
   1 the output transform (src the products), 2 the filter gradient's dM (src dY's tiles) */
static PyObject *tdf_run(PyObject *self, PyObject *args) {{
  Py_buffer x, v;
  Py_ssize_t kind, th, tw, m, pitch;
  if (!PyArg_ParseTuple(args, "ny*w*nnnn", &kind, &x, &v, &th, &tw, &m, &pitch)) return NULL;
  PyObject *result = Py_False;
  const char *xb = (const char *)x.buf, *vb = (const char *)v.buf;
  const Py_ssize_t grid = (2 * th + 2) * (2 * tw + 2) * m * 4, prods = 16 * th * tw * m * 4,
                   outs = th * tw * 4 * (m + pitch) * 4;
  /* the sizes the caller promises, and no overlap: else numpy does it */
  int ok = th > 0 && tw > 0 && m > 0 && pitch >= 0 && (vb >= xb + x.len || xb >= vb + v.len)
           && ((kind == 0 && x.len == grid && v.len == prods)
               || (kind == 1 && x.len == prods && v.len == outs)
               || (kind == 2 && pitch == 0 && x.len == outs && v.len == prods));
  if (ok) {{
    Py_BEGIN_ALLOW_THREADS
    if (kind == 0) tdf_winograd_in((const float *)x.buf, (float *)v.buf, th, tw, m);
    else if (kind == 1) tdf_winograd_out((const float *)x.buf, (float *)v.buf, th, tw, m, pitch);
    else tdf_winograd_dm((const float *)x.buf, (float *)v.buf, th, tw, m);
    Py_END_ALLOW_THREADS
    result = Py_True;
  }}
  PyBuffer_Release(&x);
  PyBuffer_Release(&v);
  Py_INCREF(result);
  return result;
}}

static PyMethodDef tdf_methods[] = {{
  {{"run", tdf_run, METH_VARARGS, "run(kind, src, dst, th, tw, m, pitch) -> bool"}},
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


def native_transforms() -> Callable[..., Any] | None:
    """``run(kind, src, dst, th, tw, m, pitch) -> bool``, built on first use; ``None`` when it
    cannot be built (then numpy). Kind 0: ``V`` of the C-contiguous float32 padded grid ``src``
    ``(2 th + 2, 2 tw + 2, m)`` into the C-contiguous float32 ``dst`` ``(4, 4, th, tw, m)``
    (``pitch`` 0). Kind 1: ``Y = A^T M A`` of the products ``src (4, 4, th, tw, m)`` into
    ``dst (th, 2, tw, 2, m + pitch)`` (the last ``pitch`` numbers of each row untouched).
    Kind 2: the filter gradient's ``dM = A dY A^T`` of ``src (th, 2, tw, 2, m)`` into
    ``dst (4, 4, th, tw, m)`` (``pitch`` 0).
    ``False`` and nothing done when the sizes disagree or the buffers overlap.

    >>> import numpy as np
    >>> run = native_transforms()
    >>> xp = np.ones((4, 4, 1), np.float32); v = np.empty((4, 4, 1, 1, 1), np.float32)
    >>> run is None or (run(0, xp, v, 1, 1, 1, 0), float(v[1, 1, 0, 0, 0]))[1] == 4.0
    True
    """
    from tdflow.lowering.elementwise_native import extension_once

    return extension_once(_built, _lock, USE_NATIVE_WINOGRAD, "tdf_winograd", _TEMPLATE.encode(), c_source)
