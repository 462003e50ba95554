"""CUDA kernels of the index family: gather, embedding, embedding_grad,
unsorted_segment_sum_like, one_hot, dim_gather, the dim_scatter family (dim_scatter_add_like,
_update, _add, _mul, _max, _min), gather_nd, scatter_nd_like and tensor_scatter_nd_update/add.

Gathers are strided reads with coalesced writes. The scatter-adds (``embedding_grad``,
``unsorted_segment_sum_like``) use ``atomicAdd`` (:mod:`._scatter_add`). The other scatters
copy ``input`` into the result, then give one thread each line of ``index`` along ``dim`` (the
tensor_scatter_nd ops: each element of the slice, walking the index tuples in order): distinct
threads write distinct elements of the result, so no atomics are needed and repeated indices
apply in numpy's (row-major) order, as ``numpy.add.at`` applies them (ONNX leaves the winner of
repeated plain writes undefined; here it is numpy's too). Integer adds and products run in
unsigned arithmetic (wrapping as numpy's do).

Index operands: numpy's ``gather``, ``embedding``, ``embedding_grad`` and ``one_hot`` raise on
an index outside ``[0, size)``. A kernel cannot raise; here such an index reads zeros (the
gathers), adds or writes nothing (``embedding_grad``, the scatters) and sets no hot element
(``one_hot``), so memory is never touched out of bounds. ``unsorted_segment_sum_like`` drops
out-of-range ids on both backends alike.

>>> from tdflow.lowering.cuda.code import TensorSpec
>>> code = gather([TensorSpec((4, 3), "f32"), TensorSpec((5,), "i64")],
...               [TensorSpec((4, 5), "f32")], {"axis": 1})
>>> "(long long)ix[" in code.source
True
>>> code = dim_scatter_add([TensorSpec((3, 4), "f32"), TensorSpec((2, 4), "i64"),
...                         TensorSpec((2, 4), "f32")], [TensorSpec((3, 4), "f32")], {"dim": 0})
>>> [ln.kernel for ln in code.launches]
['copy_in', 'scatter']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._layout import bits_type, empty_code, exact_value, index_type, literal, loop, suffix
from ._lines import UNSIGNED, line_base, lines_along, prod
from ._scatter_add import scatter_add
from .code import CudaCodegenError, KernelCode, LaunchSpec, TensorSpec, cuda_generator
from .common import acc_type, ctype, launch_1d, load, store, strides


# -- gather and embedding --------------------------------------------------------------------------
def gather_code(op: str, x: TensorSpec, idx: TensorSpec, out: TensorSpec, axis: int) -> KernelCode:
    """``out[o, j, r] = x[o, idx[j], r]`` (zero for an index outside ``[0, x.shape[axis])``)."""
    want = x.shape[:axis] + idx.shape + x.shape[axis + 1:]
    if out.shape != want:
        raise CudaCodegenError(f"{op}: the result has shape {out.shape}, expected {want}")
    if out.numel == 0:
        return empty_code(op)
    it = index_type(x, out)
    sfx = suffix(it)
    inner, n, size = prod(x.shape[axis + 1:]), idx.numel, x.shape[axis]
    t = bits_type(x.dtype)
    j = f"(i / {inner}{sfx}) % {n}{sfx}" if inner > 1 else f"i % {n}{sfx}"
    o = f"i / {inner * n}{sfx}"
    src = f"""extern "C" __global__ void gather(const {t}* __restrict__ x, const {ctype(idx.dtype)}* __restrict__ ix, {t}* __restrict__ y) {{
  {loop('i', out.numel, it)}
    const long long k = (long long)ix[{j}];
    y[i] = (k >= 0 && k < {size}LL) ? x[(({o}) * {size}{sfx} + ({it})k) * {inner}{sfx} + i % {inner}{sfx}] : ({t})0;
  }}
}}
"""
    grid, block = launch_1d(out.numel)
    return KernelCode(op, src, (LaunchSpec("gather", grid, block, ("in0", "in1", "out0")),))


@cuda_generator("tdflow.gather")
def gather(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
           attrs: Mapping[str, Any]) -> KernelCode:
    """``numpy.take(in, indices, axis)``."""
    axis = attrs["axis"]  # TDF_AxisAttr: non-negative, in range
    return gather_code("tdflow.gather", ins[0], ins[1], outs[0], axis)


@cuda_generator("tdflow.embedding")
def embedding(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
              attrs: Mapping[str, Any]) -> KernelCode:
    """``weight[indices]`` (rows of the 2-D weight)."""
    if ins[0].ndim != 2:
        raise CudaCodegenError(f"embedding: 'weight' must be 2-D, got shape {ins[0].shape}")
    return gather_code("tdflow.embedding", ins[0], ins[1], outs[0], 0)


# -- scatter-adds ---------------------------------------------------------------------------------
@cuda_generator("tdflow.unsorted_segment_sum_like")
def unsorted_segment_sum_like(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                              attrs: Mapping[str, Any]) -> KernelCode:
    """``out = zeros(like.shape); add.at(out, segment_ids, data)`` along ``axis``."""
    axis = attrs["axis"]  # TDF_AxisAttr of like
    return scatter_add("tdflow.unsorted_segment_sum_like", ins[0], ins[1], outs[0], axis)


@cuda_generator("tdflow.embedding_grad")
def embedding_grad(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                   attrs: Mapping[str, Any]) -> KernelCode:
    """Rows of ``dy`` added at ``indices`` (none at ``padding_idx``), divided by each index's
    count with ``scale_grad_by_freq``."""
    n = ins[1].shape[0]
    pad = int(attrs["padding_idx"])
    return scatter_add("tdflow.embedding_grad", ins[0], ins[2], outs[0], 0,
                       skip=pad if 0 <= pad < n else None,
                       by_freq=bool(attrs["scale_grad_by_freq"]))


# -- one_hot ---------------------------------------------------------------------------------------
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
    on, off = (literal(exact_value(conv(attrs[f"{kind}_{w}_value"]), dt), dt)
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
    d = attrs["dim"]  # TDF_AxisAttr
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
    if dt in UNSIGNED:
        u, t = UNSIGNED[dt], ctype(dt)
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


def _copy_in(t: str, out: TensorSpec) -> tuple[list[str], list[LaunchSpec]]:
    """The kernel that first copies the input into the result (a scatter then writes into it)."""
    part = (f'extern "C" __global__ void copy_in(const {t}* __restrict__ x, '
            f"{t}* __restrict__ y) {{\n  {loop('i', out.numel, index_type(out))} "
            f"y[i] = x[i]; }}\n}}\n")
    grid, block = launch_1d(out.numel)
    return [part], [LaunchSpec("copy_in", grid, block, ("in0", "out0"))]


def _scatter(op: str, how: str, ins: Sequence[TensorSpec], out: TensorSpec,
             attrs: Mapping[str, Any], like: bool = False) -> KernelCode:
    data, idx, src_spec = ins
    if idx.shape != src_spec.shape:
        raise CudaCodegenError(f"{op}: 'src' {src_spec.shape} and 'index' {idx.shape} differ")
    d = attrs["dim"]  # TDF_AxisAttr (every dim_scatter op)
    _check(op, idx, data, d)
    if out.numel == 0:
        return empty_code(op)
    dt = out.dtype
    t = bits_type(dt) if how == "update" else ctype(dt)
    parts, launches = ([], []) if like else _copy_in(t, out)
    if idx.numel:
        lines, n, inner = lines_along(idx.shape, d)
        parts.append(f"""extern "C" __global__ void scatter(const {ctype(idx.dtype)}* __restrict__ ix, const {t}* __restrict__ src, {t}* __restrict__ y) {{
  {loop('l', lines, 'unsigned long long')}
    const long long b = {line_base('(long long)l', n, inner)};
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
    return prod(idx.shape[:-1]), prod(data.shape[idx.shape[-1]:])


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
    parts, launches = ([], []) if like else _copy_in(t, out)
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
