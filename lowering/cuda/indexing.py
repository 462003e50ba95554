"""CUDA kernels of the ops in tdflow/ops/indexing.td: argmax, top_k, cumsum, cumprod,
cumprod_grad, dim_gather, the dim_scatter family, gather_nd, scatter_nd_like,
tensor_scatter_nd_update/add, triu and pad.

The scans, arg-max and top-k give one thread a whole line along the reduced dim and walk it
in order, so every result is computed in numpy's order (bit-exact, cumprod_grad aside, whose
products numpy forms in another order). The scatters copy ``input`` into the result, then give
one thread each line of ``index`` along ``dim``: distinct lines write distinct lines of the
result, so no atomics are needed and repeated indices apply in numpy's (row-major) order, as
``numpy.add.at`` applies them (ONNX leaves the winner of repeated plain writes undefined; here
it is numpy's too); the tensor_scatter_nd ops likewise give a thread one element of the
slice and walk the index tuples in order. Integer adds and products run in unsigned arithmetic (wrapping as numpy's
do; signed overflow is undefined in C). As in :mod:`.index`, an index outside its dim reads
zero (``dim_gather``) or writes nothing (the scatters) instead of raising.

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

_UNSIGNED = {"i8": "unsigned", "i32": "unsigned", "i64": "unsigned long long"}


def _dim(op: str, d: int, ndim: int) -> int:
    if not -ndim <= int(d) < ndim:
        raise CudaCodegenError(f"{op}: dim {d} is out of range for a tensor of rank {ndim}")
    return int(d) % ndim


def _prod(xs: Sequence[int]) -> int:
    return int(np.prod(list(xs), dtype=np.int64)) if len(xs) else 1


def _line(shape: Sequence[int], d: int) -> tuple[int, int, int]:
    """``(lines, n, inner)``: how many lines run along dim ``d``, their length and stride."""
    n, inner = shape[d], _prod(shape[d + 1:])
    return _prod(shape[:d]) * inner, n, inner


def _base(var: str, n: int, inner: int) -> str:
    """The offset of line ``var``'s first element (lines along a dim of length ``n`` and
    stride ``inner``)."""
    return var if inner == 1 and n == 1 else (
        f"{var} * {n}LL" if inner == 1 else f"({var} / {inner}LL) * {n * inner}LL + {var} % {inner}LL")


def _is_nan(dt: str, v: str) -> str:
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
    for (long long j = 1; j < {n}LL && !{_is_nan(x.dtype, 'best')}; ++j) {{
      const {a} v = {load(x.dtype, 'p[j]')};
      if ({_is_nan(x.dtype, 'v')} || v > best) {{ best = v; at = j; }}
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
  const bool na = {_is_nan(x.dtype, 'va')}, nb = {_is_nan(x.dtype, 'vb')};
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
        lines, n, inner = _line(x.shape, _dim(op, dim, x.ndim))
    dt, t = x.dtype, ctype(x.dtype)
    a = _UNSIGNED.get(dt, acc_type(dt))  # integers wrap in unsigned arithmetic
    step = "acc = acc * v;" if mul else "acc = acc + v;"
    value = f"({a}){load(dt, 'x[o]')}" if dt in _UNSIGNED else load(dt, "x[o]")
    src = f"""extern "C" __global__ void scan(const {t}* __restrict__ x, {t}* __restrict__ y) {{
  {loop('l', lines, 'unsigned long long')}
    const long long b = {_base('(long long)l', n, inner)};
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
    lines, n, inner = (1, 1, 1) if x.ndim == 0 else _line(
        x.shape, _dim("cumprod_grad", int(attrs["dim"]), x.ndim))
    dt, a = dy.dtype, acc_type(dy.dtype)
    t = ctype(dt)
    src = f"""extern "C" __global__ void cumprod_grad(const {t}* __restrict__ dy, const {t}* __restrict__ x, {t}* __restrict__ dx) {{
  {loop('l', lines, 'unsigned long long')}
    const long long b = {_base('(long long)l', n, inner)};
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


# -- dim_gather and the dim_scatter family --------------------------------------------------------
def _offset(var: str, idx_shape: Sequence[int], data_shape: Sequence[int], dim: int,
            k: str) -> str:
    """C expression of the data offset element ``var`` of the index names: its own
    coordinates (in ``idx_shape``) with the ``dim``-th replaced by ``k``."""
    terms = []
    for d, (s, n, q) in enumerate(zip(strides(idx_shape), idx_shape, strides(data_shape))):
        c = k if d == dim else f"(({var} / {s}LL) % {n}LL)"
        terms.append(f"{c} * {q}LL")
    return " + ".join(terms) or "0LL"


def _check(op: str, idx: TensorSpec, data: TensorSpec, dim: int) -> None:
    if idx.ndim != data.ndim or any(a > b for d, (a, b) in enumerate(zip(idx.shape, data.shape))
                                    if d != dim):
        raise CudaCodegenError(f"{op}: 'index' {idx.shape} does not fit the data {data.shape} "
                               f"outside dim {dim}")


@cuda_generator("tdflow.dim_gather")
def dim_gather(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
               attrs: Mapping[str, Any]) -> KernelCode:
    """``output[p] = input[p with coordinate dim replaced by index[p]]`` (zero out of range)."""
    x, idx, out = ins[0], ins[1], outs[0]
    d = _dim("dim_gather", int(attrs.get("dim", 0)), x.ndim)
    _check("dim_gather", idx, x, d)
    if out.numel == 0:
        return empty_code("tdflow.dim_gather")
    t, size = bits_type(x.dtype), x.shape[d]
    src = f"""extern "C" __global__ void dim_gather(const {t}* __restrict__ x, const {ctype(idx.dtype)}* __restrict__ ix, {t}* __restrict__ y) {{
  {loop('i', out.numel, 'unsigned long long')}
    const long long e = (long long)i, k = (long long)ix[i];
    y[i] = (k >= 0 && k < {size}LL) ? x[{_offset('e', idx.shape, x.shape, d, 'k')}] : ({t})0;
  }}
}}
"""
    grid, block = launch_1d(out.numel)
    return KernelCode("tdflow.dim_gather", src,
                      (LaunchSpec("dim_gather", grid, block, ("in0", "in1", "out0")),))


def _combine(how: str, dt: str) -> str:
    """The C statement folding ``s`` (a src element) into ``y[o]``."""
    if how == "update":
        return "y[o] = s;"
    if dt in _UNSIGNED:
        u, t = _UNSIGNED[dt], ctype(dt)
        if how in ("add", "mul"):
            sym = "+" if how == "add" else "*"
            return f"y[o] = ({t})(({u})y[o] {sym} ({u})s);"
        cmp = ">" if how == "max" else "<"
        return f"if (s {cmp} y[o]) y[o] = s;"
    a, b = load(dt, "y[o]"), load(dt, "s")
    if how in ("add", "mul"):
        sym = "+" if how == "add" else "*"
        return f"y[o] = {store(dt, f'{a} {sym} {b}')};"
    # numpy.maximum / minimum: a NaN on either side wins
    cmp = ">" if how == "max" else "<"
    return (f"{{ const {acc_type(dt)} u = {a}, v = {b};\n"
            f"      if (!(u != u) && (v != v || v {cmp} u)) y[o] = s; }}")


def _scatter(op: str, how: str, ins: Sequence[TensorSpec], out: TensorSpec,
             attrs: Mapping[str, Any], like: bool = False) -> KernelCode:
    data, idx, src_spec = ins
    if idx.shape != src_spec.shape:
        raise CudaCodegenError(f"{op}: 'src' {src_spec.shape} and 'index' {idx.shape} differ")
    d = _dim(op, int(attrs.get("dim", 0)), data.ndim)
    _check(op, idx, data, d)
    if out.numel == 0:
        return empty_code(op)
    dt = out.dtype
    t = bits_type(dt) if how == "update" else ctype(dt)
    parts, launches = [], []
    if not like:
        parts.append(f'extern "C" __global__ void copy_in(const {t}* __restrict__ x, '
                     f"{t}* __restrict__ y) {{\n  {loop('i', out.numel, index_type(out))} "
                     f"y[i] = x[i]; }}\n}}\n")
        grid, block = launch_1d(out.numel)
        launches.append(LaunchSpec("copy_in", grid, block, ("in0", "out0")))
    if idx.numel:
        lines, n, inner = _line(idx.shape, d)
        parts.append(f"""extern "C" __global__ void scatter(const {ctype(idx.dtype)}* __restrict__ ix, const {t}* __restrict__ src, {t}* __restrict__ y) {{
  {loop('l', lines, 'unsigned long long')}
    const long long b = {_base('(long long)l', n, inner)};
    for (long long j = 0; j < {n}LL; ++j) {{
      const long long e = b + j * {inner}LL, k = (long long)ix[e];
      if (k < 0 || k >= {data.shape[d]}LL) continue;
      const long long o = {_offset('e', idx.shape, data.shape, d, 'k')};
      const {t} s = src[e];
      {_combine(how, dt)}
    }}
  }}
}}
""")
        grid, block = launch_1d(lines)
        launches.append(LaunchSpec("scatter", grid, block, ("in1", "in2", "out0")))
    return KernelCode(op, "".join(parts) or "// nothing to scatter\n", tuple(launches),
                      zero_outputs=(0,) if like else ())


@cuda_generator("tdflow.dim_scatter_add_like")
def dim_scatter_add_like(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                         attrs: Mapping[str, Any]) -> KernelCode:
    """Zeros shaped like ``like`` with ``src`` added at the indices."""
    return _scatter("tdflow.dim_scatter_add_like", "add", ins, outs[0], attrs, like=True)


def _scatter_generator(how: str):
    op = f"tdflow.dim_scatter_{how}"

    @cuda_generator(op)
    def gen(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
            attrs: Mapping[str, Any]) -> KernelCode:
        return _scatter(op, how, ins, outs[0], attrs)

    gen.__doc__ = f"A copy of ``input`` with ``src`` folded in at the indices ({how})."
    return gen


dim_scatter_update, dim_scatter_add, dim_scatter_mul, dim_scatter_max, dim_scatter_min = (
    _scatter_generator(h) for h in ("update", "add", "mul", "max", "min"))


# -- gather_nd, scatter_nd_like, tensor_scatter_nd_update/add -------------------------------------
def _nd_row(data: TensorSpec, idx: TensorSpec, m: str) -> str:
    """C statements setting ``row`` (the flat position of tuple ``m`` among the data's first
    ``k`` dims) and ``ok`` (every index inside its dim)."""
    k = idx.shape[-1]
    lines = ["long long row = 0; bool ok = true;"]
    for j, (d, s) in enumerate(zip(data.shape[:k], strides(data.shape[:k]))):
        lines.append(f"{{ const long long c = (long long)ix[{m} * {k}LL + {j}LL]; "
                     f"ok = ok && c >= 0 && c < {d}LL; row += c * {s}LL; }}")
    return "\n    ".join(lines)


def _nd_shapes(op: str, data: TensorSpec, idx: TensorSpec) -> tuple[int, int]:
    """``(tuples, inner)``: how many index tuples, and the size of the slice each names."""
    if idx.ndim == 0 or idx.shape[-1] > data.ndim:
        raise CudaCodegenError(f"{op}: 'indices' {idx.shape} does not hold tuples into "
                               f"{data.shape}")
    return _prod(idx.shape[:-1]), _prod(data.shape[idx.shape[-1]:])


@cuda_generator("tdflow.gather_nd")
def gather_nd(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
              attrs: Mapping[str, Any]) -> KernelCode:
    """``out[m, r] = params[row(m), r]`` (zero for a tuple outside the data)."""
    x, idx, out = ins[0], ins[1], outs[0]
    _, inner = _nd_shapes("gather_nd", x, idx)
    if out.numel == 0:
        return empty_code("tdflow.gather_nd")
    t = bits_type(x.dtype)
    src = f"""extern "C" __global__ void gather_nd(const {t}* __restrict__ x, const {ctype(idx.dtype)}* __restrict__ ix, {t}* __restrict__ y) {{
  {loop('i', out.numel, 'unsigned long long')}
    const long long m = (long long)i / {inner}LL, r = (long long)i % {inner}LL;
    {_nd_row(x, idx, 'm')}
    y[i] = ok ? x[row * {inner}LL + r] : ({t})0;
  }}
}}
"""
    grid, block = launch_1d(out.numel)
    return KernelCode("tdflow.gather_nd", src,
                      (LaunchSpec("gather_nd", grid, block, ("in0", "in1", "out0")),))


def _scatter_nd(op: str, how: str, data: TensorSpec, idx: TensorSpec, upd: TensorSpec,
                out: TensorSpec, args: tuple[str, str], like: bool) -> KernelCode:
    """One thread per element of a slice, walking the tuples in order: threads own distinct
    result elements and repeated tuples apply in numpy's order."""
    tuples, inner = _nd_shapes(op, data, idx)
    if upd.shape != idx.shape[:-1] + data.shape[idx.shape[-1]:]:
        raise CudaCodegenError(f"{op}: 'updates' {upd.shape} does not match 'indices' "
                               f"{idx.shape} into {data.shape}")
    if out.numel == 0:
        return empty_code(op)
    dt = out.dtype
    t = bits_type(dt) if how == "update" else ctype(dt)
    parts, launches = [], []
    if not like:
        parts.append(f'extern "C" __global__ void copy_in(const {t}* __restrict__ x, '
                     f"{t}* __restrict__ y) {{\n  {loop('i', out.numel, index_type(out))} "
                     f"y[i] = x[i]; }}\n}}\n")
        grid, block = launch_1d(out.numel)
        launches.append(LaunchSpec("copy_in", grid, block, ("in0", "out0")))
    if tuples and inner:
        parts.append(f"""extern "C" __global__ void scatter_nd(const {ctype(idx.dtype)}* __restrict__ ix, const {t}* __restrict__ src, {t}* __restrict__ y) {{
  {loop('r', inner, 'unsigned long long')}
    for (long long m = 0; m < {tuples}LL; ++m) {{
      {_nd_row(data, idx, 'm')}
      if (!ok) continue;
      const long long o = row * {inner}LL + (long long)r;
      const {t} s = src[m * {inner}LL + (long long)r];
      {_combine(how, dt)}
    }}
  }}
}}
""")
        grid, block = launch_1d(inner)
        launches.append(LaunchSpec("scatter_nd", grid, block, args + ("out0",)))
    return KernelCode(op, "".join(parts) or "// nothing to scatter\n", tuple(launches),
                      zero_outputs=(0,) if like else ())


@cuda_generator("tdflow.scatter_nd_like")
def scatter_nd_like(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                    attrs: Mapping[str, Any]) -> KernelCode:
    """Zeros shaped like ``like`` with ``updates`` added at the tuples."""
    return _scatter_nd("tdflow.scatter_nd_like", "add", ins[0], ins[1], ins[2], outs[0],
                       ("in1", "in2"), like=True)


@cuda_generator("tdflow.tensor_scatter_nd_update")
def tensor_scatter_nd_update(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                             attrs: Mapping[str, Any]) -> KernelCode:
    """A copy of ``params`` with ``updates`` written at the tuples (the last one wins)."""
    return _scatter_nd("tdflow.tensor_scatter_nd_update", "update", ins[0], ins[2], ins[1],
                       outs[0], ("in2", "in1"), like=False)


@cuda_generator("tdflow.tensor_scatter_nd_add")
def tensor_scatter_nd_add(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                          attrs: Mapping[str, Any]) -> KernelCode:
    """A copy of ``params`` with ``updates`` added at the tuples."""
    return _scatter_nd("tdflow.tensor_scatter_nd_add", "add", ins[0], ins[2], ins[1], outs[0],
                       ("in2", "in1"), like=False)


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
