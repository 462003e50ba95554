"""CUDA kernels of the slicing and indexing ops: slice, narrow (and their grads), gather,
embedding, embedding_grad, unsorted_segment_sum_like (one_hot, arange and tril are in
:mod:`~tdflow.lowering.cuda.patterns`).

Forward slices and gathers are strided reads with coalesced writes; the slice gradients write
every element of the result once (``dy`` inside the slice, zero outside), so they need no
zeroing pass. The scatter-adds (``embedding_grad``, ``unsorted_segment_sum_like``) use
``atomicAdd``: straight into the result for f32, f64, i32 and i64 (zeroed first), into a
zeroed 32-bit scratch for f16, bf16 (float, as numpy accumulates halves in f32) and i8
(unsigned, wrapping as numpy's int8 sums do), then converted.

Index operands: numpy's ``gather``, ``embedding``, ``embedding_grad`` and ``one_hot`` raise on
an index outside ``[0, size)``. A kernel cannot raise; here such an index reads zeros
(``gather``, ``embedding``), adds nothing (``embedding_grad``) and sets no hot element
(``one_hot``), so memory is never touched out of bounds. ``unsorted_segment_sum_like`` drops
out-of-range ids on both backends alike.

>>> from tdflow.lowering.cuda.code import TensorSpec
>>> code = gather([TensorSpec((4, 3), "f32"), TensorSpec((5,), "i64")],
...               [TensorSpec((4, 5), "f32")], {"axis": 1})
>>> "(long long)ix[" in code.source
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.dialect.element_types import INT_TYPES

from .code import CudaCodegenError, KernelCode, LaunchSpec, TensorSpec, cuda_generator
from .common import ctype, launch_1d, load, store, strides
from .layout import empty_code, exact_value, index_type, loop, suffix
from .shape import bits_type, fill, strided_copy


def _norm_axis(op: str, axis: int, ndim: int, what: str = "axis") -> int:
    a = int(axis)
    if not -ndim <= a < ndim:
        raise CudaCodegenError(f"{op}: {what} {axis} is out of range for a tensor of rank {ndim}")
    return a + ndim if a < 0 else a


def _prod(xs: Sequence[int]) -> int:
    return int(np.prod(list(xs), dtype=np.int64)) if xs else 1


def _coords(var: str, shape: Sequence[int], sfx: str) -> list[str]:
    st = strides(shape)
    return [f"(({var} / {s}{sfx}) % {d}{sfx})" if k else f"({var} / {s}{sfx})"
            for k, (s, d) in enumerate(zip(st, shape))]


# -- slice, narrow and their gradients ------------------------------------------------------------
def _slices(op: str, attrs: Mapping[str, Any], shape: Sequence[int]) -> list[tuple[int, int, int]]:
    """``(start, step, count)`` per dim of numpy's ``x[start:stop:step]`` over ``shape``."""
    out = []
    for k in ("start", "stop", "step"):
        if len(attrs[k]) != len(shape):
            raise CudaCodegenError(f"{op}: {k} has {len(attrs[k])} entries but the tensor has "
                                   f"rank {len(shape)}")
    for d, (a, b, c) in enumerate(zip(attrs["start"], attrs["stop"], attrs["step"])):
        if int(c) <= 0:
            raise CudaCodegenError(f"{op}: step[{d}] is {c}; only positive steps are supported")
        s, _, step = slice(int(a), int(b), int(c)).indices(shape[d])
        out.append((s, step, len(range(*slice(int(a), int(b), int(c)).indices(shape[d])))))
    return out


def _narrow(op: str, attrs: Mapping[str, Any], shape: Sequence[int]) -> list[tuple[int, int, int]]:
    d = _norm_axis(op, attrs.get("dim", 0), len(shape), "dim")
    start, length = int(attrs.get("start", 0)), int(attrs.get("length", 0))
    s = start + shape[d] if start < 0 else start
    if length < 0 or not 0 <= s <= shape[d] or s + length > shape[d]:
        raise CudaCodegenError(f"{op}: start {start}, length {length} leave dim {d} of size "
                               f"{shape[d]}")
    return [(s, 1, length) if k == d else (0, 1, n) for k, n in enumerate(shape)]


def slice_read(op: str, x: TensorSpec, out: TensorSpec, sl: list[tuple[int, int, int]]
               ) -> KernelCode:
    """``out = x[slices]``: a strided copy from ``base + c_d * step_d * stride_d``."""
    if tuple(n for _, _, n in sl) != out.shape:
        raise CudaCodegenError(f"{op}: the slice of {x.shape} has shape "
                               f"{tuple(n for _, _, n in sl)}, the result {out.shape}")
    st = strides(x.shape)
    base = sum(s * q for (s, _, _), q in zip(sl, st))
    return strided_copy(op, x, out, [step * q for (_, step, _), q in zip(sl, st)], base)


def slice_write(op: str, dy: TensorSpec, dx: TensorSpec, sl: list[tuple[int, int, int]]
                ) -> KernelCode:
    """``dx = zeros; dx[slices] = dy``, each element of ``dx`` written once."""
    if tuple(n for _, _, n in sl) != dy.shape:
        raise CudaCodegenError(f"{op}: dy has shape {dy.shape} but the slice of "
                               f"{list(dx.shape)} has shape {tuple(n for _, _, n in sl)}")
    if dx.numel == 0:
        return empty_code(op)
    if dy.numel == 0:
        return fill(op, dx, exact_value(0, dx.dtype))
    it = index_type(dx)
    sfx = suffix(it)
    t = bits_type(dx.dtype)
    dy_st = strides(dy.shape)
    lines = [f'extern "C" __global__ void slice_write(const {t}* __restrict__ dy, '
             f"{t}* __restrict__ dx) {{", f"  {loop('i', dx.numel, it)}",
             "    bool inside = true;", f"    {it} off = 0{sfx};"]
    for d, (c, (s, step, n), q) in enumerate(zip(_coords("i", dx.shape, sfx), sl, dy_st)):
        if (s, step, n) == (0, 1, dx.shape[d]):
            lines.append(f"    off += {c} * {q}{sfx};")
            continue
        lines += [f"    {{ const {it} c = {c};",
                  f"      const {it} u = (c - {s}{sfx}) / {step}{sfx};" if step > 1 else
                  f"      const {it} u = c - {s}{sfx};",
                  f"      inside = inside && c >= {s}{sfx} && u < {n}{sfx}"
                  + (f" && (c - {s}{sfx}) % {step}{sfx} == 0{sfx};" if step > 1 else ";"),
                  f"      off += u * {q}{sfx}; }}"]
    lines += [f"    dx[i] = inside ? dy[off] : ({t})0;", "  }", "}"]
    grid, block = launch_1d(dx.numel)
    return KernelCode(op, "\n".join(lines) + "\n",
                      (LaunchSpec("slice_write", grid, block, ("in0", "out0")),))


@cuda_generator("tdflow.slice")
def slice_(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
           attrs: Mapping[str, Any]) -> KernelCode:
    """``x[start:stop:step, ...]`` (positive steps)."""
    return slice_read("tdflow.slice", ins[0], outs[0], _slices("tdflow.slice", attrs, ins[0].shape))


@cuda_generator("tdflow.slice_grad")
def slice_grad(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
               attrs: Mapping[str, Any]) -> KernelCode:
    """Zeros of ``like_shape`` with ``dy`` where ``slice`` reads."""
    sl = _slices("tdflow.slice_grad", attrs, outs[0].shape)
    return slice_write("tdflow.slice_grad", ins[0], outs[0], sl)


@cuda_generator("tdflow.narrow")
def narrow(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
           attrs: Mapping[str, Any]) -> KernelCode:
    """``in[..., start:start + length, ...]`` along ``dim``."""
    return slice_read("tdflow.narrow", ins[0], outs[0], _narrow("narrow", attrs, ins[0].shape))


@cuda_generator("tdflow.narrow_grad")
def narrow_grad(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                attrs: Mapping[str, Any]) -> KernelCode:
    """Zeros shaped like ``like`` with ``dy`` where ``narrow`` reads."""
    sl = _narrow("narrow_grad", attrs, ins[1].shape)
    return slice_write("tdflow.narrow_grad", ins[0], outs[0], sl)


# -- gather and embedding -------------------------------------------------------------------------
def gather_code(op: str, x: TensorSpec, idx: TensorSpec, out: TensorSpec, axis: int) -> KernelCode:
    """``out[o, j, r] = x[o, idx[j], r]`` (zero for an index outside ``[0, x.shape[axis])``)."""
    want = x.shape[:axis] + idx.shape + x.shape[axis + 1:]
    if out.shape != want:
        raise CudaCodegenError(f"{op}: the result has shape {out.shape}, expected {want}")
    if out.numel == 0:
        return empty_code(op)
    it = index_type(x, out)
    sfx = suffix(it)
    inner, n, size = _prod(x.shape[axis + 1:]), idx.numel, x.shape[axis]
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
    axis = _norm_axis("gather", attrs.get("axis", 0), ins[0].ndim)
    return gather_code("tdflow.gather", ins[0], ins[1], outs[0], axis)


@cuda_generator("tdflow.embedding")
def embedding(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
              attrs: Mapping[str, Any]) -> KernelCode:
    """``weight[indices]`` (rows of the 2-D weight)."""
    if ins[0].ndim != 2:
        raise CudaCodegenError(f"embedding: 'weight' must be 2-D, got shape {ins[0].shape}")
    return gather_code("tdflow.embedding", ins[0], ins[1], outs[0], 0)


# -- scatter-adds ---------------------------------------------------------------------------------
_DIV_HELPERS = """__device__ __forceinline__ float tdf_div(float a, float b) {
#ifdef __CUDACC__
  return __fdiv_rn(a, b);  // IEEE division even under --use_fast_math, as numpy divides
#else
  return a / b;
#endif
}
__device__ __forceinline__ double tdf_div(double a, double b) { return a / b; }
"""


def _zero_kernel(name: str, words: int, arg: str) -> tuple[str, LaunchSpec, int]:
    """A kernel zeroing scratch buffer ``arg`` of ``words`` 32-bit words (the contract does not
    promise zeroed scratch): its source, launch and byte size."""
    it = index_type(words)
    src = (f'extern "C" __global__ void {name}(unsigned* __restrict__ p) {{\n'
           f"  {loop('i', words, it)} p[i] = 0u; }}\n}}\n")
    grid, block = launch_1d(words)
    return src, LaunchSpec(name, grid, block, (arg,)), words * 4


def scatter_add(op: str, data: TensorSpec, ids: TensorSpec, out: TensorSpec, axis: int,
                skip: int | None = None, by_freq: bool = False) -> KernelCode:
    """``out = zeros; out[o, ids[j], r] += data[o, j, r]`` for ids in ``[0, n)`` other than
    ``skip``; with ``by_freq`` each ``data`` row is first divided by its id's count."""
    like = out.shape
    n, inner = like[axis], _prod(like[axis + 1:])
    want = like[:axis] + ids.shape + like[axis + 1:]
    if data.shape != want:
        raise CudaCodegenError(f"{op}: data has shape {data.shape}, expected {want}")
    if out.numel == 0:
        return empty_code(op)
    dt = out.dtype
    if data.numel == 0 or n == 0:
        return fill(op, out, exact_value(0, dt))
    it = index_type(data, out)
    sfx = suffix(it)
    J = ids.numel
    # where to accumulate: the result itself where CUDA has the atomic, else 32-bit scratch
    direct = {"f32": "float", "f64": "double", "i32": "int", "i64": "unsigned long long",
              "ui32": "unsigned", "ui64": "unsigned long long"}
    acc = direct.get(dt) or ("float" if dt in ("f16", "bf16") else "unsigned")
    parts, launches, scratch = [_DIV_HELPERS], [], []
    target = "out0" if dt in direct else "tmp0"
    if dt not in direct:
        src, ln, nbytes = _zero_kernel("zero_acc", out.numel, "tmp0")
        parts.append(src)
        launches.append(ln)
        scratch.append(nbytes)
    ok = f"k >= 0 && k < {n}LL" + (f" && k != {skip}LL" if skip is not None else "")
    t, ti = ctype(data.dtype), ctype(ids.dtype)
    cnt = "tmp1" if scratch else "tmp0"
    if by_freq:
        src, ln, nbytes = _zero_kernel("zero_count", n, cnt)
        parts.append(src)
        launches.append(ln)
        scratch.append(nbytes)
        parts.append(f'extern "C" __global__ void count(const {ti}* __restrict__ ix, '
                     f"int* __restrict__ cnt) {{\n  {loop('j', J, index_type(J))}\n"
                     f"    const long long k = (long long)ix[j];\n"
                     f"    if (k >= 0 && k < {n}LL) atomicAdd(&cnt[k], 1);\n  }}\n}}\n")
        grid, block = launch_1d(J)
        launches.append(LaunchSpec("count", grid, block, ("in2" if op.endswith("grad") else "in1",
                                                          cnt)))
    j = f"(e / {inner}{sfx}) % {J}{sfx}" if inner > 1 else f"e % {J}{sfx}"
    value = load(data.dtype, "d[e]")
    if by_freq:  # numpy: dy / max(count, 1) in the accumulation type, rounded back to dy's
        wide = "double" if data.dtype == "f64" else "float"
        q = f"tdf_div(({wide}){value}, ({wide})(c < 1 ? 1 : c))"
        value = load(data.dtype, store(data.dtype, q)) if data.dtype in ("f16", "bf16") else q
    add = (f"atomicAdd(&a[slot], ({acc})({value}))" if acc != "unsigned long long" else
           f"atomicAdd(&a[slot], (unsigned long long)(long long)({value}))")
    params = [f"const {t}* __restrict__ d", f"const {ti}* __restrict__ ix", f"{acc}* a"]
    if by_freq:
        params.append("const int* __restrict__ cnt")
    parts.append(f"""extern "C" __global__ void scatter_add({", ".join(params)}) {{
  {loop('e', data.numel, it)}
    const long long k = (long long)ix[{j}];
    if ({ok}) {{
      const {it} slot = ((e / {J * inner}{sfx}) * {n}{sfx} + ({it})k) * {inner}{sfx} + e % {inner}{sfx};
      {"const int c = cnt[k];" if by_freq else ""}
      {add};
    }}
  }}
}}
""")
    ins_ = ("in0", "in2" if op.endswith("grad") else "in1")
    grid, block = launch_1d(data.numel)
    launches.append(LaunchSpec("scatter_add", grid, block,
                               ins_ + (target,) + ((cnt,) if by_freq else ())))
    if dt not in direct:
        # 8- and 16-bit integers wrap as numpy's sums do: the low bits of the 32-bit sum
        cv = (store(dt, "a[i]") if dt in ("f16", "bf16")
              else f"({ctype(dt)})({INT_TYPES[dt].c_unsigned})a[i]")
        parts.append(f'extern "C" __global__ void finish(const {acc}* __restrict__ a, '
                     f"{ctype(dt)}* __restrict__ y) {{\n  {loop('i', out.numel, index_type(out))}"
                     f" y[i] = {cv}; }}\n}}\n")
        grid, block = launch_1d(out.numel)
        launches.append(LaunchSpec("finish", grid, block, ("tmp0", "out0")))
    return KernelCode(op, "".join(parts), tuple(launches), tuple(scratch),
                      zero_outputs=(0,) if dt in direct else ())


@cuda_generator("tdflow.unsorted_segment_sum_like")
def unsorted_segment_sum_like(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                              attrs: Mapping[str, Any]) -> KernelCode:
    """``out = zeros(like.shape); add.at(out, segment_ids, data)`` along ``axis``."""
    axis = _norm_axis("unsorted_segment_sum_like", attrs.get("axis", 0), ins[2].ndim)
    return scatter_add("tdflow.unsorted_segment_sum_like", ins[0], ins[1], outs[0], axis)


@cuda_generator("tdflow.embedding_grad")
def embedding_grad(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                   attrs: Mapping[str, Any]) -> KernelCode:
    """Rows of ``dy`` added at ``indices`` (none at ``padding_idx``), divided by each index's
    count with ``scale_grad_by_freq``."""
    n = ins[1].shape[0]
    pad = int(attrs.get("padding_idx", -1))
    return scatter_add("tdflow.embedding_grad", ins[0], ins[2], outs[0], 0,
                       skip=pad if 0 <= pad < n else None,
                       by_freq=bool(attrs.get("scale_grad_by_freq", False)))
