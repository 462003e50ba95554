"""CUDA kernels of the ops that compute their values from coordinates: one_hot, arange, tril
and fused_scale_tril (one grid-stride pass each, every output element written once).

Attribute values (on/off values, fill and scale values) are converted to the result's dtype
as numpy converts them (``np.array(v).astype``) and written into the source by their bits, so
``-inf`` fills and NaN survive. ``arange`` computes ``start + k * delta`` in f64 with two
roundings (no fused multiply-add), as ``numpy.arange`` does, then converts; integer ranges wrap
in int64. An index of ``one_hot`` outside ``[0, depth)`` (numpy raises) sets no hot element.

>>> from tdflow.lowering.cuda.code import TensorSpec
>>> code = tril([TensorSpec((3, 4), "f32")], [TensorSpec((3, 4), "f32")],
...             {"diagonal": 0, "is_floating_fill_value": True, "floating_fill_value": 0.0})
>>> "col - row <= 0LL" in code.source
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tdflow.dialect.element_types import INT_TYPES

from .code import CudaCodegenError, KernelCode, LaunchSpec, TensorSpec, cuda_generator
from .common import ctype, launch_1d, load, store
from .layout import CONVERT_HELPERS, empty_code, exact_value, index_type, literal, loop, suffix
from .shape import convert


# -- one_hot, arange, tril ------------------------------------------------------------------------
@cuda_generator("tdflow.one_hot")
def one_hot(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
            attrs: Mapping[str, Any]) -> KernelCode:
    """``on`` where ``indices[...] == k``, ``off`` elsewhere, ``k`` in ``[0, depth)``."""
    idx, out = ins[0], outs[0]
    depth, dt = int(attrs["depth"]), out.dtype
    if out.shape != idx.shape + (depth,):
        raise CudaCodegenError(f"one_hot: the result has shape {out.shape}, expected "
                               f"{idx.shape + (depth,)}")
    if out.numel == 0:
        return empty_code("tdflow.one_hot")
    kind, conv = ("floating", float) if dt in ("f16", "bf16", "f32", "f64") else ("integer", int)
    on, off = (literal(exact_value(conv(attrs.get(f"{kind}_{w}_value", 0)), dt), dt)
               for w in ("on", "off"))
    it = index_type(out)
    sfx = suffix(it)
    src = f"""extern "C" __global__ void one_hot(const {ctype(idx.dtype)}* __restrict__ ix, {ctype(dt)}* __restrict__ y) {{
  const {ctype(dt)} on = {on}, off = {off};
  {loop('i', out.numel, it)}
    y[i] = (long long)ix[i / {depth}{sfx}] == (long long)(i % {depth}{sfx}) ? on : off;
  }}
}}
"""
    grid, block = launch_1d(out.numel)
    return KernelCode("tdflow.one_hot", src, (LaunchSpec("one_hot", grid, block, ("in0", "out0")),))


_EXACT_D = """__device__ __forceinline__ double tdf_axpb(double k, double d, double s) {
#ifdef __CUDACC__
  return __dadd_rn(s, __dmul_rn(k, d));  // two roundings, as numpy's start + k * delta
#else
  return s + k * d;
#endif
}
"""


@cuda_generator("tdflow.arange")
def arange(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
           attrs: Mapping[str, Any]) -> KernelCode:
    """``start + k * delta`` for ``k < len(out)``: in f64 for float dtypes, wrapping int64
    otherwise, then converted to ``dtype`` (numpy.arange's values)."""
    out = outs[0]
    dt = out.dtype
    if out.numel == 0:
        return empty_code("tdflow.arange")
    it = index_type(out)
    if dt in ("f16", "bf16", "f32", "f64"):
        start, delta = (literal(float(attrs.get(f"float_{k}", 0.0)), "f64") for k in ("start", "delta"))
        value = convert("f64", dt, f"tdf_axpb((double)i, {delta}, {start})")
    else:
        s, d = (int(attrs.get(f"integer_{k}", 0)) & ((1 << 64) - 1) for k in ("start", "delta"))
        value = convert("i64", dt, f"(long long)({s}ull + (unsigned long long)i * {d}ull)")
    src = (CONVERT_HELPERS + _EXACT_D +
           f'extern "C" __global__ void arange({ctype(dt)}* __restrict__ y) {{\n'
           f"  {loop('i', out.numel, it)} y[i] = {value}; }}\n}}\n")
    grid, block = launch_1d(out.numel)
    return KernelCode("tdflow.arange", src, (LaunchSpec("arange", grid, block, ("out0",)),))


def _value(attrs: Mapping[str, Any], what: str, default: int | float) -> int | float:
    if attrs.get(f"is_floating_{what}_value", False):
        return float(attrs.get(f"floating_{what}_value", default))
    return int(attrs.get(f"integer_{what}_value", default))


def _tril(op: str, x: TensorSpec, out: TensorSpec, attrs: Mapping[str, Any],
          scale: int | float | None) -> KernelCode:
    if x.ndim < 2:
        raise CudaCodegenError(f"{op}: 'in' must have at least 2 dims, got shape {x.shape}")
    if out.numel == 0:
        return empty_code(op)
    rows, cols = x.shape[-2:]
    dt, t = x.dtype, ctype(x.dtype)
    diag = int(attrs.get("diagonal", 0))
    fill_v = literal(exact_value(_value(attrs, "fill", 0), dt), dt)
    v = "x[i]"
    if scale is not None:
        if dt in ("f16", "bf16"):
            v = store(dt, f"{load(dt, 'x[i]')} * {load(dt, 's')}")
        elif dt in ("f32", "f64"):
            v = "x[i] * s"
        else:  # integers wrap, as numpy's do (unsigned: signed overflow is undefined in C)
            u = "unsigned long long" if INT_TYPES[dt].bits == 64 else "unsigned"
            v = f"({t})(({u})x[i] * ({u})s)"
    it = index_type(x)
    sfx = suffix(it)
    src = f"""extern "C" __global__ void tril(const {t}* __restrict__ x, {t}* __restrict__ y) {{
  const {t} fill = {fill_v};
  {f"const {t} s = {literal(exact_value(scale, dt), dt)};" if scale is not None else ""}
  {loop('i', x.numel, it)}
    const long long col = (long long)(i % {cols}{sfx}), row = (long long)((i / {cols}{sfx}) % {rows}{sfx});
    y[i] = col - row <= {diag}LL ? {v} : fill;
  }}
}}
"""
    grid, block = launch_1d(x.numel)
    return KernelCode(op, src, (LaunchSpec("tril", grid, block, ("in0", "out0")),))


@cuda_generator("tdflow.tril")
def tril(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
         attrs: Mapping[str, Any]) -> KernelCode:
    """``in`` where ``col - row <= diagonal``, the fill value elsewhere."""
    return _tril("tdflow.tril", ins[0], outs[0], attrs, None)


@cuda_generator("tdflow.fused_scale_tril")
def fused_scale_tril(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                     attrs: Mapping[str, Any]) -> KernelCode:
    """``in * scale`` where ``col - row <= diagonal``, the fill value elsewhere."""
    return _tril("tdflow.fused_scale_tril", ins[0], outs[0], attrs, _value(attrs, "scale", 1))
