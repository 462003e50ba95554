"""Rounding-exact device arithmetic of the optimizer steps and ``dropout``: ``mul``, ``add``,
``div`` and ``sqrt`` helpers that round every operation once, as numpy's do (no fused
multiply-add, exact division and square root even under ``--use_fast_math``).

>>> wide("f16"), wide("f64"), "__fmul_rn" in EXACT
('float', 'double', True)
"""

from __future__ import annotations

# Rounding-exact arithmetic: nvcc would otherwise contract a * b + c into one fma and, under
# --use_fast_math, approximate / and sqrt; g++ for cudasim does neither at -O2 on x86-64.
EXACT = """#ifdef __CUDACC__
__device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float div(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ float root(float a) { return __fsqrt_rn(a); }
__device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ double div(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ double root(double a) { return __dsqrt_rn(a); }
#else
template <typename T> inline T mul(T a, T b) { return a * b; }
template <typename T> inline T add(T a, T b) { return a + b; }
template <typename T> inline T sub(T a, T b) { return a - b; }
template <typename T> inline T div(T a, T b) { return a / b; }
inline float root(float a) { return sqrtf(a); }
inline double root(double a) { return sqrt(a); }
#endif
// numpy's sign: NaN stays NaN, both zeros give +0
template <typename T> __device__ __forceinline__ T sign_of(T w) {
  return w > (T)0 ? (T)1 : (w < (T)0 ? (T)-1 : (w != w ? w : (T)0));
}
// numpy's maximum: NaN in either operand gives NaN
template <typename T> __device__ __forceinline__ T nan_max(T a, T b) {
  return (a != a || a > b) ? a : b;
}
"""


def wide(dt: str) -> str:
    """The C type a step of ``dt`` values computes in: ``double`` for f64, else ``float``."""
    return "double" if dt == "f64" else "float"
