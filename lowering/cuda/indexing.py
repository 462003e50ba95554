"""CUDA kernels of the ops in tdflow/ops/indexing.td that walk lines along one dim: argmax,
top_k, cumsum, cumprod, cumprod_grad; and triu and pad (the gathers and scatters are in
:mod:`.scatter`).

The scans, arg-max and top-k give one thread a whole line along the reduced dim and walk it
in order, so every result is computed in numpy's order (bit-exact, cumprod_grad aside, whose
products numpy forms in another order). Integer running sums and products use unsigned
arithmetic (wrapping as numpy's do; signed overflow is undefined in C).

>>> from tdflow.lowering.cuda.code import TensorSpec
>>> code = cumsum([TensorSpec((3, 4), "f16")], [TensorSpec((3, 4), "f16")], {"dim": 0})
>>> "float acc" in code.source
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .code import CudaCodegenError, KernelCode, LaunchSpec, TensorSpec, cuda_generator
from .common import acc_type, ctype, is_float, launch_1d, load, store, strides
from .layout import empty_code, exact_value, index_type, literal, loop, suffix
from .shape import bits_type

UNSIGNED = {"i8": "unsigned", "i32": "unsigned", "i64": "unsigned long long"}


def norm_dim(op: str, d: int, ndim: int) -> int:
    """``d`` made non-negative for rank ``ndim``; :class:`CudaCodegenError` naming ``op``
    otherwise: ``norm_dim("tdflow.cumsum", -1, 3) == 2``."""
    if not -ndim <= int(d) < ndim:
        raise CudaCodegenError(f"{op}: dim {d} is out of range for a tensor of rank {ndim}")
    return int(d) % ndim


def prod(xs: Sequence[int]) -> int:
    """The product of ``xs`` in int64 (1 when empty): ``prod([2, 3]) == 6``."""
    return int(np.prod(list(xs), dtype=np.int64)) if len(xs) else 1


def lines_along(shape: Sequence[int], d: int) -> tuple[int, int, int]:
    """``(lines, n, inner)``: how many lines run along dim ``d``, their length and stride.

    >>> lines_along((2, 3, 4), 1)
    (8, 3, 4)
    """
    n, inner = shape[d], prod(shape[d + 1:])
    return prod(shape[:d]) * inner, n, inner


def line_base(var: str, n: int, inner: int) -> str:
    """C expression of the offset of line ``var``'s first element (lines along a dim of
    length ``n`` and stride ``inner``).

    >>> line_base("l", 3, 4)
    '(l / 4LL) * 12LL + l % 4LL'
    """
    return var if inner == 1 and n == 1 else (
        f"{var} * {n}LL" if inner == 1 else f"({var} / {inner}LL) * {n * inner}LL + {var} % {inner}LL")


def is_nan(dt: str, v: str) -> str:
    """C test of ``v`` (of ``dt``, widened) being NaN: ``false`` for integers.

    >>> is_nan("f32", "v"), is_nan("i64", "v")
    ('(v != v)', 'false')
    """
    return f"({v} != {v})" if is_float(dt) else "false"


# -- argmax and top_k -----------------------------------------------------------------------------
@cuda_generator("tdflow.argmax")
def argmax(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
           attrs: Mapping[str, Any]) -> KernelCode:
    """The first maximum of each last-dim line (a NaN wins, as in numpy)."""
    x, out = ins[0], outs[0]
    if x.ndim == 0 or x.shape[-1] == 0:
        raise CudaCodegenError(f"argmax: 'in' {x.shape} has no last dim to search")
    if out.numel == 0:
        return empty_code("tdflow.argmax")
    n, t, a = x.shape[-1], ctype(x.dtype), acc_type(x.dtype)
    src = f"""extern "C" __global__ void argmax(const {t}* __restrict__ x, long long* __restrict__ y) {{
  {loop('l', out.numel, 'unsigned long long')}
    const {t}* p = x + l * {n}LL;
    {a} best = {load(x.dtype, 'p[0]')};
    long long at = 0;
    for (long long j = 1; j < {n}LL && !{is_nan(x.dtype, 'best')}; ++j) {{
      const {a} v = {load(x.dtype, 'p[j]')};
      if ({is_nan(x.dtype, 'v')} || v > best) {{ best = v; at = j; }}
    }}
    y[l] = at;
  }}
}}
"""
    grid, block = launch_1d(out.numel)
    return KernelCode("tdflow.argmax", src, (LaunchSpec("argmax", grid, block, ("in0", "out0")),))


@cuda_generator("tdflow.top_k")
def top_k(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
          attrs: Mapping[str, Any]) -> KernelCode:
    """The positions of the ``k`` largest of each last-dim line, largest first, ties by
    position and NaNs last (numpy's stable sort of ``-x``): ``k`` selection passes per line,
    each picking the first element that follows the previous pick in that order."""
    x, out = ins[0], outs[0]
    if x.ndim == 0:
        raise CudaCodegenError("top_k: 'in' is a scalar")
    if out.numel == 0:
        return empty_code("tdflow.top_k")
    n, k = x.shape[-1], out.shape[-1]
    t, a = ctype(x.dtype), acc_type(x.dtype)
    lines = out.numel // k
    src = f"""__device__ __forceinline__ bool tdf_before({a} va, long long ia, {a} vb, long long ib) {{
  const bool na = {is_nan(x.dtype, 'va')}, nb = {is_nan(x.dtype, 'vb')};
  if (na || nb) return na ? (nb && ia < ib) : true;
  return va > vb || (va == vb && ia < ib);
}}
extern "C" __global__ void top_k(const {t}* __restrict__ x, long long* __restrict__ y) {{
  {loop('l', lines, 'unsigned long long')}
    const {t}* p = x + l * {n}LL;
    long long prev = -1;
    for (long long r = 0; r < {k}LL; ++r) {{
      long long best = -1;
      for (long long j = 0; j < {n}LL; ++j) {{
        const {a} v = {load(x.dtype, 'p[j]')};
        if (prev >= 0 && !tdf_before({load(x.dtype, 'p[prev]')}, prev, v, j)) continue;
        if (best < 0 || tdf_before(v, j, {load(x.dtype, 'p[best]')}, best)) best = j;
      }}
      y[l * {k}LL + r] = best;
      prev = best;
    }}
  }}
}}
"""
    grid, block = launch_1d(lines)
    return KernelCode("tdflow.top_k", src, (LaunchSpec("top_k", grid, block, ("in0", "out0")),))


# -- cumsum, cumprod, cumprod_grad ----------------------------------------------------------------
def _scan(op: str, x: TensorSpec, out: TensorSpec, dim: int, mul: bool) -> KernelCode:
    if out.numel == 0:
        return empty_code(op)
    if x.ndim == 0:
        lines, n, inner = 1, 1, 1
    else:
        lines, n, inner = lines_along(x.shape, norm_dim(op, dim, x.ndim))
    dt, t = x.dtype, ctype(x.dtype)
    a = UNSIGNED.get(dt, acc_type(dt))  # integers wrap in unsigned arithmetic
    step = "acc = acc * v;" if mul else "acc = acc + v;"
    value = f"({a}){load(dt, 'x[o]')}" if dt in UNSIGNED else load(dt, "x[o]")
    src = f"""extern "C" __global__ void scan(const {t}* __restrict__ x, {t}* __restrict__ y) {{
  {loop('l', lines, 'unsigned long long')}
    const long long b = {line_base('(long long)l', n, inner)};
    {a} acc = ({a}){1 if mul else 0};
    for (long long j = 0; j < {n}LL; ++j) {{
      const long long o = b + j * {inner}LL;
      const {a} v = {value};
      {step}
      y[o] = {store(dt, 'acc')};
    }}
  }}
}}
"""
    grid, block = launch_1d(lines)
    return KernelCode(op, src, (LaunchSpec("scan", grid, block, ("in0", "out0")),))


@cuda_generator("tdflow.cumsum")
def cumsum(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
           attrs: Mapping[str, Any]) -> KernelCode:
    """Running sums along ``dim`` (halves accumulate in float)."""
    return _scan("tdflow.cumsum", ins[0], outs[0], int(attrs["dim"]), mul=False)


@cuda_generator("tdflow.cumprod")
def cumprod(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
            attrs: Mapping[str, Any]) -> KernelCode:
    """Running products along ``dim``."""
    return _scan("tdflow.cumprod", ins[0], outs[0], int(attrs["dim"]), mul=True)


@cuda_generator("tdflow.cumprod_grad")
def cumprod_grad(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                 attrs: Mapping[str, Any]) -> KernelCode:
    """``dx[i] = sum_{j >= i} dy[j] * prod_{k <= j, k != i} x[k]`` per line: O(n^2), no
    division, so zeros in ``x`` give the exact gradient."""
    dy, x, dx = ins[0], ins[2], outs[0]
    if dx.numel == 0:
        return empty_code("tdflow.cumprod_grad")
    lines, n, inner = (1, 1, 1) if x.ndim == 0 else lines_along(
        x.shape, norm_dim("cumprod_grad", int(attrs["dim"]), x.ndim))
    dt, a = dy.dtype, acc_type(dy.dtype)
    t = ctype(dt)
    src = f"""extern "C" __global__ void cumprod_grad(const {t}* __restrict__ dy, const {t}* __restrict__ x, {t}* __restrict__ dx) {{
  {loop('l', lines, 'unsigned long long')}
    const long long b = {line_base('(long long)l', n, inner)};
    for (long long i = 0; i < {n}LL; ++i) {{
      {a} run = ({a})1;
      for (long long k = 0; k < i; ++k) run = run * {load(dt, f'x[b + k * {inner}LL]')};
      {a} acc = {load(dt, f'dy[b + i * {inner}LL]')} * run;
      for (long long j = i + 1; j < {n}LL; ++j) {{
        run = run * {load(dt, f'x[b + j * {inner}LL]')};
        acc = acc + {load(dt, f'dy[b + j * {inner}LL]')} * run;
      }}
      dx[b + i * {inner}LL] = {store(dt, 'acc')};
    }}
  }}
}}
"""
    grid, block = launch_1d(lines)
    return KernelCode("tdflow.cumprod_grad", src,
                      (LaunchSpec("cumprod_grad", grid, block, ("in0", "in2", "out0")),))


# -- triu and pad ---------------------------------------------------------------------------------
@cuda_generator("tdflow.triu")
def triu(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
         attrs: Mapping[str, Any]) -> KernelCode:
    """``in`` where ``col - row >= diagonal``, zero elsewhere."""
    x = ins[0]
    if x.ndim < 2:
        raise CudaCodegenError(f"triu: 'in' must have at least 2 dims, got shape {x.shape}")
    if x.numel == 0:
        return empty_code("tdflow.triu")
    rows, cols = x.shape[-2:]
    t, it = bits_type(x.dtype), index_type(x)
    sfx = suffix(it)
    src = f"""extern "C" __global__ void triu(const {t}* __restrict__ x, {t}* __restrict__ y) {{
  {loop('i', x.numel, it)}
    const long long col = (long long)(i % {cols}{sfx}), row = (long long)((i / {cols}{sfx}) % {rows}{sfx});
    y[i] = col - row >= {int(attrs.get("diagonal", 0))}LL ? x[i] : ({t})0;
  }}
}}
"""
    grid, block = launch_1d(x.numel)
    return KernelCode("tdflow.triu", src, (LaunchSpec("triu", grid, block, ("in0", "out0")),))


@cuda_generator("tdflow.pad")
def pad(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
        attrs: Mapping[str, Any]) -> KernelCode:
    """``x`` inside, the constant (converted as numpy converts) around it."""
    x, out = ins[0], outs[0]
    before = [int(p) for p in attrs["padding_before"]]
    after = [int(p) for p in attrs["padding_after"]]
    want = tuple(d + b + a for d, b, a in zip(x.shape, before, after))
    if len(before) != x.ndim or len(after) != x.ndim or out.shape != want:
        raise CudaCodegenError(f"pad: padding {before}/{after} of {x.shape} does not give "
                               f"{out.shape}")
    if out.numel == 0:
        return empty_code("tdflow.pad")
    dt, t = x.dtype, ctype(x.dtype)
    value = (float(attrs.get("floating_constant_value", 0.0)) if is_float(dt)
             else int(attrs.get("integral_constant_value", 0)))
    fill = literal(exact_value(value, dt), dt)
    lines = ["    bool inside = true;", "    long long off = 0;"]
    for d, (s, n, q) in enumerate(zip(strides(out.shape), out.shape, strides(x.shape))):
        lines.append(f"    {{ const long long c = (long long)((i / {s}ULL) % {n}ULL) - "
                     f"{before[d]}LL; inside = inside && c >= 0 && c < {x.shape[d]}LL; "
                     f"off += c * {q}LL; }}")
    body = "\n".join(lines)
    src = f"""extern "C" __global__ void pad(const {t}* __restrict__ x, {t}* __restrict__ y) {{
  const {t} fill = {fill};
  {loop('i', out.numel, 'unsigned long long')}
{body}
    y[i] = inside ? x[off] : fill;
  }}
}}
"""
    grid, block = launch_1d(out.numel)
    return KernelCode("tdflow.pad", src, (LaunchSpec("pad", grid, block, ("in0", "out0")),))
