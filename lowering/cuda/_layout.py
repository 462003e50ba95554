"""Pieces the data-movement generators share: index types, bit-exact literals, strided copies.

A data-movement op (transpose, slice, expand, ...) reads, for flat output element ``i``, the
input element at an affine function of ``i``'s coordinates. :func:`affine_offset` renders that
function with adjacent dimensions merged (one division and modulo per merged run) and
:func:`strided_copy` wraps it in a grid-stride loop. Index arithmetic runs in 32-bit unsigned
integers when every tensor has fewer than 2**31 elements (a 64-bit division by a constant costs
several times a 32-bit one), else in 64-bit.

>>> affine_offset("i", (4, 3, 2), (6, 2, 1), "u")      # contiguous: merged into one dim
'i'
>>> affine_offset("i", (3, 4), (1, 3), "u")             # a 2-D transpose
'(i / 4u) + (i % 4u) * 3u'
>>> literal(float("inf"), "f32")
'__int_as_float(0x7f800000)'
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from tdflow.dialect.element_types import INT_TYPES
from tdflow.dialect.types import DTYPES

from .code import KernelCode, LaunchSpec, TensorSpec
from .common import ctype, launch_1d, load, store, strides

__all__ = ["index_type", "suffix", "literal", "affine_offset", "merge_dims", "empty_code", "loop",
           "exact_value", "CONVERT_HELPERS", "bits_type",
           "strided_copy", "fill", "convert"]


_BIG = 1 << 31


def index_type(*specs: TensorSpec | int) -> str:
    """``"unsigned"`` when every tensor (or count) is below 2**31 elements, else 64-bit.

    >>> index_type(TensorSpec((1 << 16, 1 << 15), "f32"))
    'unsigned long long'
    """
    n = max([s if isinstance(s, int) else s.numel for s in specs] + [1])
    return "unsigned" if n < _BIG else "unsigned long long"


def suffix(it: str) -> str:
    """The literal suffix of index type ``it``: ``suffix("unsigned") == "u"``, else ``ull``."""
    return "u" if it == "unsigned" else "ull"


def loop(var: str, n: int, it: str) -> str:
    """The head of a grid-stride loop of ``var`` over ``[0, n)`` (the body's brace left open).

    >>> loop("i", 10, "unsigned").split(";")[1]
    ' i < 10u'
    """
    s = suffix(it)
    return (f"for ({it} {var} = ({it})blockIdx.x * blockDim.x + threadIdx.x; {var} < {n}{s}; "
            f"{var} += ({it})blockDim.x * gridDim.x) {{")


def exact_value(value: int | float | bool, dtype: str) -> np.generic:
    """``value`` converted to ``dtype`` as numpy converts it (``np.array(value).astype``).

    >>> exact_value(300, "i8"), exact_value(0.1, "f16")
    (np.int8(44), np.float16(0.1))
    """
    if dtype == "bf16":
        return np.float32(np.array(value).astype(np.float32))
    return np.array(value).astype(DTYPES[dtype])[()]


def literal(value: int | float | bool | np.generic, dtype: str) -> str:
    """A C expression of exactly ``value`` (already of ``dtype``) in ``dtype``'s C type; floats
    by their bits, so NaN, infinities and -0.0 survive."""
    if dtype == "i1":
        return "true" if bool(value) else "false"
    it = INT_TYPES.get(dtype)
    if it is not None:
        v = int(value)
        if not it.signed:
            return f"(({ctype(dtype)})({it.wrap(v)}ULL))"
        if dtype == "i64":
            # -2**63 has no literal: write it as an expression
            return "(-9223372036854775807LL - 1LL)" if v == -(1 << 63) else f"({v}LL)"
        return f"(({ctype(dtype)})({v}))"
    if dtype == "f64":
        bits = int(np.array(value, np.float64).view(np.uint64))
        return f"__longlong_as_double(0x{bits:016x}LL)"
    f = np.array(value).astype(np.float16 if dtype == "f16" else np.float32).astype(np.float32)
    text = f"__int_as_float(0x{int(f.view(np.uint32)):08x})"
    if dtype == "f16":
        return f"__float2half({text})"
    if dtype == "bf16":
        return f"__float2bfloat16({text})"
    return text


def merge_dims(shape: Sequence[int], in_strides: Sequence[Sequence[int]]
               ) -> list[tuple[int, list[int]]]:
    """``(size, [stride per input])`` of the output dims with size-1 dims dropped and adjacent
    dims merged where every input walks them as one (outer stride = inner stride * inner size).

    >>> merge_dims((2, 1, 3, 4), [(0, 0, 4, 1)])   # a broadcast row, then a contiguous block
    [(2, [0]), (12, [1])]
    """
    out: list[tuple[int, list[int]]] = []
    for k, d in enumerate(shape):
        if d == 1:
            continue
        st = [s[k] for s in in_strides]
        if out and all(ps == s * d for ps, s in zip(out[-1][1], st)):
            out[-1] = (out[-1][0] * d, st)
        else:
            out.append((d, st))
    return out


def affine_offset(var: str, shape: Sequence[int], in_strides: Sequence[int], sfx: str,
                  base: int = 0) -> str:
    """C expression of ``base + sum_d coord_d(var) * in_strides[d]`` over the row-major
    coordinates of flat index ``var`` in ``shape`` (a stride may be 0: broadcasting)."""
    dims = merge_dims(shape, [in_strides])
    terms = [str(base) + sfx] if base else []
    out_st = strides([d for d, _ in dims])
    for k, ((d, (s,)), o) in enumerate(zip(dims, out_st)):
        if s == 0:
            continue
        coord = var if len(dims) == 1 else (
            f"({var} / {o}{sfx})" if k == 0 else
            f"({var} % {d}{sfx})" if o == 1 else f"(({var} / {o}{sfx}) % {d}{sfx})")
        terms.append(coord if s == 1 else f"{coord} * {s}{sfx}")
    return " + ".join(terms) if terms else "0" + sfx


def empty_code(op: str) -> KernelCode:
    """The code of an op whose results are empty: nothing to launch.

    >>> empty_code("tdflow.cast").launches
    ()
    """
    return KernelCode(op, "// nothing to compute: every result is empty\n", ())


# Conversions a cast needs beyond common.load/store: double -> half types rounds once (numpy's
# float64 -> float16 is one rounding; going through float would round twice). cudasim's
# __half is g++'s _Float16, whose conversion from double also rounds once.
CONVERT_HELPERS = """__device__ __forceinline__ __half tdf_d2h(double d) {
#ifdef __CUDACC__
  return __double2half(d);
#else
  return (__half)d;
#endif
}
__device__ __forceinline__ __nv_bfloat16 tdf_d2bf(double d) {
#ifdef __CUDACC__
  return __double2bfloat16(d);
#else
  return __float2bfloat16((float)d);
#endif
}
"""


_BITS = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}


def bits_type(dtype: str) -> str:
    """The unsigned C integer as wide as ``dtype``, which copies move: ``bits_type("f16")``
    is ``"unsigned short"``."""
    it = INT_TYPES.get(dtype)
    if it is not None:
        return _BITS[it.bits // 8]
    return _BITS[{"i1": 1, "f16": 2, "bf16": 2, "f32": 4, "f64": 8}[dtype]]


def strided_copy(op: str, x: TensorSpec, out: TensorSpec, in_strides: Sequence[int],
                 base: int = 0) -> KernelCode:
    """``out[c] = x[base + sum c_d * in_strides[d]]`` over the output coordinates ``c``.

    >>> code = strided_copy("t", TensorSpec((3, 4), "f32"), TensorSpec((4, 3), "f32"), (1, 4))
    >>> "y[i] = x[(i / 3u) + (i % 3u) * 4u];" in code.source
    True
    """
    it = index_type(x, out)
    t = bits_type(x.dtype)
    off = affine_offset("i", out.shape, in_strides, suffix(it), base)
    if out.numel == 0:
        return empty_code(op)
    src = (f'extern "C" __global__ void copy_{x.dtype}(const {t}* __restrict__ x, '
           f"{t}* __restrict__ y) {{\n  {loop('i', out.numel, it)}\n    y[i] = x[{off}];\n"
           "  }\n}\n")
    grid, block = launch_1d(out.numel)
    return KernelCode(op, src, (LaunchSpec(f"copy_{x.dtype}", grid, block, ("in0", "out0")),))


def fill(op: str, out: TensorSpec, value: np.generic) -> KernelCode:
    """Every element of ``out`` set to ``value`` (already of ``out.dtype``), bit for bit.

    >>> "-0x" not in fill("f", TensorSpec((5,), "f32"), np.float32(-0.0)).source  # by its bits
    True
    """
    if out.numel == 0:
        return empty_code(op)
    it = index_type(out)
    name = f"fill_{out.dtype}"
    src = (f'extern "C" __global__ void {name}({ctype(out.dtype)}* __restrict__ y) {{\n'
           f"  const {ctype(out.dtype)} v = {literal(value, out.dtype)};\n"
           f"  {loop('i', out.numel, it)} y[i] = v; }}\n}}\n")
    grid, block = launch_1d(out.numel)
    return KernelCode(op, src, (LaunchSpec(name, grid, block, ("out0",)),))


def convert(src: str, dst: str, text: str) -> str:
    """``text`` (a ``src`` value) converted to ``dst`` as numpy's ``astype`` converts: floats to
    integers truncate, nonzero to ``i1`` is true, f64 to half types rounds once.

    >>> convert("f64", "f16", "x"), convert("i32", "f64", "x")
    ('tdf_d2h(x)', '((double)(x))')
    """
    if src == dst:
        return text
    if dst == "f16":
        return f"tdf_d2h({text})" if src == "f64" else store("f16", f"((float)({load(src, text)}))")
    if dst == "bf16":
        return (f"tdf_d2bf({text})" if src == "f64"
                else store("bf16", f"((float)({load(src, text)}))"))
    if dst == "i1" and src in ("f16", "bf16"):
        return f"({load(src, text)} != 0.0f)"
    return f"(({ctype(dst)})({load(src, text)}))"
