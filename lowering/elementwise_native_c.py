"""The C++ text of a native elementwise kernel (:mod:`tdflow.lowering.elementwise_native`).

A ``str.format`` template of one CPython extension module: numpy's semantics for the few
operations C would do otherwise (``max``/``min`` NaN and tie rules, the NaN a two-NaN
``+``/``*`` keeps, sign flips as bit operations), the loop over rows of the output, and the
``run(in..., out)`` entry point that takes numpy arrays through the buffer protocol, checks
their sizes, contiguity and overlap, and returns ``False`` (nothing done) when they do not fit.

A module holds one or more kernels (``PRELUDE``, then ``KERNEL`` once per kernel with its
number ``k`` and Python name, then ``TAIL`` listing them with ``METHOD``): the segments of one
expression (:mod:`tdflow.lowering.elementwise_segments`) are one compiler run.

>>> "PyInit_{module}" in TAIL and "tdf_run{k}" in KERNEL and "tdf_run{k}" in METHOD
True
"""

__all__ = ["KERNEL", "METHOD", "PRELUDE", "TAIL"]

PRELUDE = r"""#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float tdf_f32(uint32_t b) {{ float f; memcpy(&f, &b, 4); return f; }}
static inline double tdf_f64(uint64_t b) {{ double f; memcpy(&f, &b, 8); return f; }}
static inline float tdf_inf_f32(void) {{ return tdf_f32(0x7f800000u); }}
static inline double tdf_inf_f64(void) {{ return tdf_f64(0x7ff0000000000000ull); }}
/* numpy's maximum/minimum: a NaN first operand wins, then a NaN second one; on a tie
   (+0 against -0) the second operand, as its SIMD loops give. */
static inline float tdf_max_f32(float a, float b) {{ return a != a ? a : (a > b ? a : b); }}
static inline float tdf_min_f32(float a, float b) {{ return a != a ? a : (a < b ? a : b); }}
static inline double tdf_max_f64(double a, double b) {{ return a != a ? a : (a > b ? a : b); }}
static inline double tdf_min_f64(double a, double b) {{ return a != a ? a : (a < b ? a : b); }}
/* Sign flips as bit operations: the compiler may move an arithmetic negation across a product
   (-(a * b) for (-a) * b), which changes the sign of a NaN result; numpy flips the bit. */
static inline float tdf_neg_f32(float a) {{ uint32_t u; memcpy(&u, &a, 4); u ^= 0x80000000u; memcpy(&a, &u, 4); return a; }}
static inline float tdf_abs_f32(float a) {{ uint32_t u; memcpy(&u, &a, 4); u &= 0x7fffffffu; memcpy(&a, &u, 4); return a; }}
static inline double tdf_neg_f64(double a) {{ uint64_t u; memcpy(&u, &a, 8); u ^= 0x8000000000000000ull; memcpy(&a, &u, 8); return a; }}
static inline double tdf_abs_f64(double a) {{ uint64_t u; memcpy(&u, &a, 8); u &= 0x7fffffffffffffffull; memcpy(&a, &u, 8); return a; }}
/* With two NaN operands the hardware returns the first one (quieted), as numpy's loops give;
   the compiler may swap the operands of + and *, so that case is written out (a + a is a,
   quieted, whichever operand comes first). */
static inline float tdf_add_f32(float a, float b) {{ return a != a ? a + a : a + b; }}
static inline float tdf_mul_f32(float a, float b) {{ return a != a ? a * a : a * b; }}
static inline double tdf_add_f64(double a, double b) {{ return a != a ? a + a : a + b; }}
static inline double tdf_mul_f64(double a, double b) {{ return a != a ? a * a : a * b; }}

"""

KERNEL = r"""/* One clone per instruction set, picked when the module loads (ifunc): the values are the
   same in each, every op being exactly rounded (no FMA: "avx2" does not enable it). The output
   is rows of m elements; a broadcast input repeats with a period of per[k] rows (its counter
   j<k> wraps instead of a division per row): a row input is per[k] rows read in turn, a
   per-row input one value a row, hoisted out of the contiguous inner loop. */
__attribute__((target_clones("avx2", "default")))
static void tdf_loop{k}({params}, {out_c} *out, Py_ssize_t rows, Py_ssize_t m,
                        const Py_ssize_t *per) {{
  (void)per;
{state}
  for (Py_ssize_t r = 0; r < rows; ++r) {{
{offsets}
    {out_c} *outr = out + r * m;
#pragma GCC ivdep
    for (Py_ssize_t i = 0; i < m; ++i) {{
{body}
      outr[i] = ({out_c})({root});
    }}
{advance}
  }}
}}

static const Py_ssize_t tdf_itemsize{k}[{n_args}] = {{{views}}};
/* 1: whole rows read again in turn (a trailing-dims broadcast); 2: one value a row (a
   (..., 1) or a channel's (1, C, 1, 1) broadcast); 0: one value per element */
static const int tdf_is_row{k}[{n_args}] = {{{rows}}};

static PyObject *tdf_run{k}(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {{
  Py_buffer v[{n_args}];
  int got = 0;
  PyObject *result = NULL;
  Py_ssize_t given = -1;  /* the row length m, when the caller says it (a trailing int) */
  if (nargs != {n_args} && nargs != {n_args} + 1) {{
    PyErr_SetString(PyExc_TypeError, "{name}() takes {n_args} buffers and an optional row length");
    return NULL;
  }}
  if (nargs == {n_args} + 1) {{
    given = PyLong_AsSsize_t(args[{n_args}]);
    if (given == -1 && PyErr_Occurred()) return NULL;
    if (given <= 0) {{
      PyErr_SetString(PyExc_ValueError, "{name}(): the row length must be positive");
      return NULL;
    }}
  }}
  Py_ssize_t len[{n_args}], per[{n_args}];
  Py_ssize_t n = 0, m = -1, c = -1, rows = 0;  /* declared before the first goto (C++ forbids jumping past) */
  for (; got < {n_args}; ++got) {{
    int flags = PyBUF_C_CONTIGUOUS | (got == {n_args} - 1 ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(args[got], &v[got], flags) < 0) {{
      /* numpy says ValueError ("not C-contiguous"), others BufferError */
      if (!PyErr_ExceptionMatches(PyExc_BufferError)
          && !PyErr_ExceptionMatches(PyExc_ValueError)) goto done;
      PyErr_Clear();  /* not C-contiguous (or read-only out): the caller uses numpy */
      result = Py_False;
      Py_INCREF(result);
      goto done;
    }}
    if (v[got].len % tdf_itemsize{k}[got]) {{
      ++got;
      PyErr_SetString(PyExc_ValueError, "buffer size is not a whole number of items");
      goto done;
    }}
    len[got] = v[got].len / tdf_itemsize{k}[got];
  }}
  n = len[{n_args} - 1];
  if (given < 0) {{
    /* no row length given: every row input is one row, every per-row input one value for each
       row, all of one length */
    for (int k = 0; k < {n_args} - 1; ++k) {{
      int kind = tdf_is_row{k}[k];
      if (kind == 1 ? (m >= 0 && len[k] != m) || len[k] == 0 || n % len[k]
          : kind == 2 ? (c >= 0 && len[k] != c) || len[k] == 0 || n % len[k]
          : len[k] != n) {{
        result = Py_False;  /* not the shapes this variant was built for: numpy */
        Py_INCREF(result);
        goto done;
      }}
      if (kind == 1) m = len[k];
      if (kind == 2) c = len[k];
    }}
    if (c > 0 && m >= 0 && n / c != m) {{
      result = Py_False;  /* rows of one length, columns of another: numpy */
      Py_INCREF(result);
      goto done;
    }}
    if (c > 0) m = n / c;
    if (m < 0) m = n;
  }} else {{
    m = given;
  }}
  if (m == 0) {{
    result = Py_False;  /* nothing to compute: numpy's (an empty output) */
    Py_INCREF(result);
    goto done;
  }}
  rows = n / m;
  for (int k = 0; k < {n_args} - 1; ++k) {{
    /* a row input: whole rows, repeating over the output; a per-row input: repeating over the
       rows (the caller checked that this period is numpy's broadcast) */
    int kind = tdf_is_row{k}[k];
    per[k] = kind == 1 ? len[k] / m : kind == 2 ? len[k] : 0;
    if (n % m || (kind == 0 && len[k] != n)
        || (kind == 1 && (len[k] == 0 || len[k] % m || n % len[k]))
        || (kind == 2 && (len[k] == 0 || rows % len[k]))) {{
      result = Py_False;
      Py_INCREF(result);
      goto done;
    }}
  }}
  {{
    /* the output may be an input (in place) but must not overlap one elsewhere: element i
       is read before it is written only at the same address */
    char *o = (char *)v[{n_args} - 1].buf;
    for (int k = 0; k < {n_args} - 1; ++k) {{
      char *p = (char *)v[k].buf;
      if ((p != o || tdf_is_row{k}[k]) && p < o + v[{n_args} - 1].len && o < p + v[k].len) {{
        result = Py_False;
        Py_INCREF(result);
        goto done;
      }}
    }}
  }}
  if (n < 8192) {{
    /* a small loop keeps the GIL (as numpy's do below 500 elements): handing it over costs
       more than the loop, and taking it back waits out another thread's switch interval */
    tdf_loop{k}({call}, rows, m, per);
  }} else {{
    Py_BEGIN_ALLOW_THREADS
    tdf_loop{k}({call}, rows, m, per);
    Py_END_ALLOW_THREADS
  }}
  Py_INCREF(Py_True);
  result = Py_True;
done:
  for (int k = 0; k < got; ++k) PyBuffer_Release(&v[k]);
  return result;
}}

"""

METHOD = r"""  {{"{name}", (PyCFunction)(void (*)(void))tdf_run{k}, METH_FASTCALL, "{name}(in..., out)"}},
"""

TAIL = r"""static PyMethodDef tdf_methods[] = {{
{methods}  {{NULL, NULL, 0, NULL}}
}};

static struct PyModuleDef tdf_module = {{PyModuleDef_HEAD_INIT, "{module}", NULL, -1, tdf_methods}};

extern "C" PyMODINIT_FUNC PyInit_{module}(void) {{ return PyModule_Create(&tdf_module); }}
"""
