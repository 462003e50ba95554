"""CUDA kernels of the reduce family: ``reduce_sum``, ``reduce_max``, ``reduce_min``,
``reduce_prod`` and ``reduce_sum_like`` (reductions over axes), ``argmax``, ``top_k``, ``cumsum``,
``cumprod`` and ``cumprod_grad`` (walks along one dim).

The reductions over axes are chains of stages, one per run of reduced dims, each picking its
kernel from the shape (:func:`~tdflow.lowering.cuda._reduce_tree.reduce_code`); they accumulate
as the numpy kernels do (half types in float, f32 sums and products in double, integers
wrapping) and max/min propagate NaN.

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

from tdflow.dialect.element_types import NUMERIC_DTYPES

from ._layout import empty_code, loop
from ._lines import UNSIGNED, is_nan, line_base, lines_along, prod
from ._reduce_tree import reduce_code
from .code import CudaCodegenError, KernelCode, LaunchSpec, TensorSpec, cuda_generator
from .common import acc_type, ctype, launch_1d, load, store


def _check(op: str, kind: str, x: TensorSpec, out: TensorSpec) -> None:
    allowed = ("i1",) if kind in ("max", "min") else ()
    if x.dtype not in NUMERIC_DTYPES + allowed:
        raise CudaCodegenError(f"{op}: no CUDA kernel for dtype {x.dtype}")
    if out.dtype != x.dtype:
        raise CudaCodegenError(f"{op}: result dtype {out.dtype} differs from the input's {x.dtype}")


def _generator(op: str, kind: str) -> None:
    def gen(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
            attrs: Mapping[str, Any]) -> KernelCode:
        x, out = ins[0], outs[0]
        _check(op, kind, x, out)
        # TDF_AxesAttr: non-negative and distinct; empty reduces every axis, except for
        # reduce_sum_like (none)
        axes = tuple(sorted(attrs["axis"]))
        if not axes and op != "tdflow.reduce_sum_like":
            axes = tuple(range(x.ndim))
        kept = x.numel // max(1, prod([x.shape[a] for a in axes])) if x.numel else None
        if kept is not None and kept != out.numel:
            raise CudaCodegenError(f"{op}: result of {out.numel} elements, the kept dims of "
                                   f"{x.shape} hold {kept}")
        return reduce_code(kind, x, axes, out, op)

    gen.__name__ = gen.__qualname__ = op.split(".")[1]
    gen.__doc__ = f"CUDA code of ``{op}`` (a {kind} reduction; see the module docstring)."
    cuda_generator(op)(gen)


for _op, _kind in (("tdflow.reduce_sum", "sum"), ("tdflow.reduce_max", "max"),
                   ("tdflow.reduce_min", "min"), ("tdflow.reduce_prod", "prod"),
                   ("tdflow.reduce_sum_like", "sum")):
    _generator(_op, _kind)


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
        lines, n, inner = lines_along(x.shape, dim)  # TDF_ScanAxisAttr: non-negative
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
        x.shape, attrs["dim"])
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
