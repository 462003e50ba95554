"""CUDA kernels of the shape and type ops: cast, transpose, cat, reshape, expand_dims, squeeze,
expand, broadcast_like, constant, dense_constant, ones_like and arange.

Pure data movement copies elements as same-size unsigned integers (the bits, whatever the
dtype). A transpose that keeps the innermost dimension is a strided copy whose reads and writes
are both coalesced; one that moves it goes through 32x33 shared-memory tiles (32x8 threads, each
moving four elements), so global reads and writes stay coalesced. ``reshape``, ``expand_dims``
and ``squeeze`` are copies of the whole buffer, 16 bytes per thread where the size allows. ``arange`` computes ``start + k * delta``
in f64 with two roundings (no fused multiply-add), as ``numpy.arange`` does, then
converts; integer ranges wrap in int64.

>>> from tdflow.lowering.cuda.code import TensorSpec
>>> code = transpose([TensorSpec((64, 48), "f32")], [TensorSpec((48, 64), "f32")], {"perm": [1, 0]})
>>> "__shared__" in code.source, code.launches[0].block
(True, (32, 8, 1))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.dialect.ir.elements import to_numpy
from tdflow.dialect.types import DTYPES

from ._layout import (
    CONVERT_HELPERS,
    bits_type,
    convert,
    empty_code,
    exact_value,
    fill,
    index_type,
    literal,
    loop,
    merge_dims,
    strided_copy,
    suffix,
)
from .code import CudaCodegenError, KernelCode, LaunchSpec, TensorSpec, cuda_generator
from .common import MAX_GRID, ctype, launch_1d, strides


def flat_copy(op: str, x: TensorSpec, out: TensorSpec) -> KernelCode:
    """The whole buffer copied (same bytes, new shape): 16 bytes per thread, then the tail.

    >>> len(flat_copy("r", TensorSpec((7,), "f32"), TensorSpec((7,), "f32")).source.split("for"))
    3
    """
    if x.numel != out.numel:
        raise CudaCodegenError(f"{op}: 'in' has {x.numel} elements, the result {out.numel}")
    if out.numel == 0:
        return empty_code(op)
    t = bits_type(x.dtype)
    size = {"unsigned char": 1, "unsigned short": 2, "unsigned int": 4, "unsigned long long": 8}[t]
    nbytes = out.numel * size
    vec, tail = nbytes // 16, (nbytes % 16) // size
    it = index_type(out)
    # `x` may be `y` (an in-place reshape): no __restrict__, each element rewrites itself
    lines = [f'extern "C" __global__ void flat_copy(const {t}* x, {t}* y) {{']
    if vec:
        lines += [f"  {loop('j', vec, it)}",
                  "    reinterpret_cast<float4*>(y)[j] = reinterpret_cast<const float4*>(x)[j];",
                  "  }"]
    if tail:
        first = vec * 16 // size
        lines += [f"  {loop('j', tail, it)}", f"    y[{first}{suffix(it)} + j] = "
                  f"x[{first}{suffix(it)} + j];", "  }"]
    lines.append("}")
    grid, block = launch_1d(max(vec, tail))
    return KernelCode(op, "\n".join(lines) + "\n",
                      (LaunchSpec("flat_copy", grid, block, ("in0", "out0")),))


@cuda_generator("tdflow.reshape", "tdflow.expand_dims", "tdflow.squeeze")
def same_elements(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                  attrs: Mapping[str, Any]) -> KernelCode:
    """reshape, expand_dims, squeeze: the same row-major elements under a new shape (the
    result's shape, from the op's shape hook, says which)."""
    return flat_copy("tdflow.reshape", ins[0], outs[0])


@cuda_generator("tdflow.cast")
def cast(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
         attrs: Mapping[str, Any]) -> KernelCode:
    """``out = (dtype) in`` elementwise (out-of-range float to integer conversions are
    undefined in C, as they are in numpy)."""
    x, out = ins[0], outs[0]
    if out.numel == 0:
        return empty_code("tdflow.cast")
    if x.dtype == out.dtype:
        return flat_copy("tdflow.cast", x, out)
    it = index_type(out)
    src = (CONVERT_HELPERS +
           f'extern "C" __global__ void cast_{x.dtype}_{out.dtype}(const {ctype(x.dtype)}* '
           f"__restrict__ x, {ctype(out.dtype)}* __restrict__ y) {{\n"
           f"  {loop('i', out.numel, it)}\n    y[i] = {convert(x.dtype, out.dtype, 'x[i]')};\n"
           "  }\n}\n")
    grid, block = launch_1d(out.numel)
    name = f"cast_{x.dtype}_{out.dtype}"
    return KernelCode("tdflow.cast", src, (LaunchSpec(name, grid, block, ("in0", "out0")),))


@cuda_generator("tdflow.transpose")
def transpose(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
              attrs: Mapping[str, Any]) -> KernelCode:
    """``out = in.transpose(perm)``: a strided copy, tiled through shared memory when the
    innermost dimension moves."""
    x, out = ins[0], outs[0]
    perm = attrs["perm"]  # TDF_PermAttr of input: a permutation, non-negative
    if out.numel == 0:
        return empty_code("tdflow.transpose")
    st = strides(x.shape)
    in_st = [st[p] for p in perm]
    dims = merge_dims(out.shape, [in_st])
    if not dims or dims[-1][1][0] == 1:
        return strided_copy("tdflow.transpose", x, out, in_st)
    return _tiled_transpose(x, [(d, s[0]) for d, s in dims])


def _tiled_transpose(x: TensorSpec, dims: list[tuple[int, int]]) -> KernelCode:
    """``dims``: the merged output dims as ``(size, input stride)``; the last one (``a``, the
    output's innermost) has a stride above 1, and one other (``b``) has stride 1."""
    it = index_type(x)
    sfx = suffix(it)
    out_st = strides([d for d, _ in dims])
    a = len(dims) - 1
    b = next(k for k, (_, s) in enumerate(dims) if s == 1)
    size_a, stride_a = dims[a]
    size_b, ostride_b = dims[b][0], out_st[b]
    rest = [(d, s, o) for k, ((d, s), o) in enumerate(zip(dims, out_st)) if k not in (a, b)]
    ta, tb = -(-size_a // 32), -(-size_b // 32)
    n_rest = int(np.prod([d for d, _, _ in rest], dtype=np.int64)) if rest else 1
    tiles = n_rest * ta * tb
    in_base, out_base = ["0" + sfx], ["0" + sfx]
    rst = strides([d for d, _, _ in rest])
    for (d, s, o), q in zip(rest, rst):
        c = f"((r / {q}{sfx}) % {d}{sfx})"
        in_base.append(f"{c} * {s}{sfx}")
        out_base.append(f"{c} * {o}{sfx}")
    t = bits_type(x.dtype)
    src = f"""extern "C" __global__ void transpose_tiled(const {t}* __restrict__ x, {t}* __restrict__ y) {{
  __shared__ {t} tile[32][33];  // 33: the column reads of the store phase hit 32 banks
  const unsigned tx = threadIdx.x, ty = threadIdx.y;
  for ({it} t = blockIdx.x; t < {tiles}{sfx}; t += gridDim.x) {{
    const {it} r = t / {ta * tb}{sfx}, ia0 = ((t / {tb}{sfx}) % {ta}{sfx}) * 32{sfx}, ib0 = (t % {tb}{sfx}) * 32{sfx};
    const {it} in_base = {" + ".join(in_base)}, out_base = {" + ".join(out_base)};
    for (unsigned k = ty; k < 32u; k += 8u) {{  // read rows of a, contiguous along b
      const {it} ia = ia0 + k, ib = ib0 + tx;
      if (ia < {size_a}{sfx} && ib < {size_b}{sfx}) tile[k][tx] = x[in_base + ia * {stride_a}{sfx} + ib];
    }}
    __syncthreads();
    for (unsigned k = ty; k < 32u; k += 8u) {{  // write rows of b, contiguous along a
      const {it} ib = ib0 + k, ia = ia0 + tx;
      if (ia < {size_a}{sfx} && ib < {size_b}{sfx}) y[out_base + ib * {ostride_b}{sfx} + ia] = tile[tx][k];
    }}
    __syncthreads();  // the tile is reloaded next iteration
  }}
}}
"""
    launch = LaunchSpec("transpose_tiled", min(tiles, MAX_GRID), (32, 8), ("in0", "out0"))
    return KernelCode("tdflow.transpose", src, (launch,))


@cuda_generator("tdflow.cat")
def cat(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
        attrs: Mapping[str, Any]) -> KernelCode:
    """Concatenation along ``axis``: one launch per non-empty input copying it into its
    slab of the result (coalesced on both sides)."""
    out = outs[0]
    if not ins:
        raise CudaCodegenError("tdflow.cat: needs at least one input")
    axis = attrs["axis"]  # TDF_AxisAttr
    inner = int(np.prod(out.shape[axis + 1:], dtype=np.int64))
    it = index_type(out)
    sfx = suffix(it)
    t = bits_type(out.dtype)
    parts, launches, off = [], [], 0
    for k, x in enumerate(ins):
        if x.ndim != out.ndim or any(a != b for d, (a, b) in enumerate(zip(x.shape, out.shape))
                                     if d != axis):
            raise CudaCodegenError(f"tdflow.cat: input {k} of shape {x.shape} does not fit the "
                                   f"result {out.shape} along axis {axis}")
        chunk, out_chunk = x.shape[axis] * inner, out.shape[axis] * inner
        if x.numel:
            dest = (f"{off * inner}{sfx} + e" if chunk == out_chunk or x.numel == chunk else
                    f"(e / {chunk}{sfx}) * {out_chunk}{sfx} + {off * inner}{sfx} + e % {chunk}{sfx}")
            parts.append(f'extern "C" __global__ void cat_part{k}(const {t}* __restrict__ x, '
                         f"{t}* __restrict__ y) {{\n  {loop('e', x.numel, it)}\n"
                         f"    y[{dest}] = x[e];\n  }}\n}}\n")
            grid, block = launch_1d(x.numel)
            launches.append(LaunchSpec(f"cat_part{k}", grid, block, (f"in{k}", "out0")))
        off += x.shape[axis]
    if off != out.shape[axis]:
        raise CudaCodegenError(f"tdflow.cat: the inputs add up to {off} along axis {axis}, the "
                               f"result has {out.shape[axis]}")
    return KernelCode("tdflow.cat", "".join(parts), tuple(launches))


def broadcast_copy(op: str, x: TensorSpec, shape: Sequence[int], out: TensorSpec) -> KernelCode:
    """``out = broadcast_to(x viewed as shape, out.shape)`` (stride 0 along repeated dims)."""
    shape = tuple(shape)
    if len(shape) != out.ndim or any(s not in (1, o) for s, o in zip(shape, out.shape)):
        raise CudaCodegenError(f"{op}: cannot broadcast {x.shape} to {out.shape}")
    st = strides(shape)
    return strided_copy(op, x, out, [0 if s == 1 else q for s, q in zip(shape, st)])


@cuda_generator("tdflow.expand")
def expand(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
           attrs: Mapping[str, Any]) -> KernelCode:
    """``broadcast_to(in, expand_shape)`` materialised (leading dims added)."""
    x, out = ins[0], outs[0]
    if out.ndim < x.ndim:
        raise CudaCodegenError(f"tdflow.expand: result {out.shape} has fewer dims than {x.shape}")
    return broadcast_copy("tdflow.expand", x, (1,) * (out.ndim - x.ndim) + x.shape, out)


@cuda_generator("tdflow.broadcast_like")
def broadcast_like(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                   attrs: Mapping[str, Any]) -> KernelCode:
    """``x`` broadcast to ``like``'s shape; missing dims go at ``broadcast_axes`` when those
    name exactly the missing ones, else in front (the CPU kernel's rule)."""
    x, like = ins[0], ins[1]
    nd = like.ndim
    axes = sorted(attrs["broadcast_axes"])  # TDF_AxesAttr of like: non-negative, distinct
    shape = list(x.shape)
    if x.ndim < nd:
        missing = nd - x.ndim
        if axes and len(axes) == missing:
            for a in axes:
                shape.insert(a, 1)
        else:
            shape = [1] * missing + shape
    return broadcast_copy("tdflow.broadcast_like", x, shape, outs[0])


@cuda_generator("tdflow.ones_like")
def ones_like(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
              attrs: Mapping[str, Any]) -> KernelCode:
    """Ones of ``like``'s shape and dtype."""
    return fill("tdflow.ones_like", outs[0], exact_value(1, outs[0].dtype))


#: A constant at most this big is uploaded from the host (no kernel to compile per value);
#: a bigger one is filled on the device (no host-to-device copy of its whole size).
UPLOAD_BYTES = 1 << 16


@cuda_generator("tdflow.constant")
def constant(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
             attrs: Mapping[str, Any]) -> KernelCode:
    """``shape`` filled with the value, converted to ``dtype`` exactly as the CPU kernel's
    ``fill`` converts it (an integer that does not fit the dtype is refused, as there)."""
    out = outs[0]
    np_dt = np.dtype(DTYPES[str(attrs["dtype"])])
    if attrs["is_floating_value"]:
        value: Any = float(attrs["floating_value"])
    else:
        value = int(attrs["integer_value"])
        if np_dt.kind in "iu" and not np.iinfo(np_dt).min <= value <= np.iinfo(np_dt).max:
            raise CudaCodegenError(f"tdflow.constant: integer_value {value} does not fit "
                                   f"{attrs['dtype']} [{np.iinfo(np_dt).min}, "
                                   f"{np.iinfo(np_dt).max}]")
    one = np.empty(1, np_dt)
    one.fill(value)
    # bf16 is float32 on the host: its device bits are filled by a kernel, never uploaded
    if out.dtype != "bf16" and out.numel * one.itemsize <= UPLOAD_BYTES:
        data = np.full(out.shape, one[0], one.dtype).tobytes()
        return KernelCode("tdflow.constant", "// the value is uploaded from the host\n", (),
                          uploads=((0, data),) if out.numel else ())
    return fill("tdflow.constant", out, one[0])


@cuda_generator("tdflow.dense_constant")
def dense_constant(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                   attrs: Mapping[str, Any]) -> KernelCode:
    """The value's bytes are uploaded from the host once, when the plan is loaded."""
    arr = to_numpy(attrs["value"])
    if outs[0].dtype == "bf16":  # the device holds bf16 bits: the upper half of each float32
        data = (np.ascontiguousarray(arr, np.float32).view(np.uint32) >> 16).astype(
            np.uint16).tobytes()
    else:
        data = np.ascontiguousarray(arr, DTYPES[outs[0].dtype]).tobytes()
    return KernelCode("tdflow.dense_constant", "// the value is uploaded from the host\n", (),
                      uploads=((0, data),) if arr.size else ())


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
        start, delta = (literal(float(attrs[f"float_{k}"]), "f64") for k in ("start", "delta"))
        value = convert("f64", dt, f"tdf_axpb((double)i, {delta}, {start})")
    else:
        s, d = (int(attrs[f"integer_{k}"]) & ((1 << 64) - 1) for k in ("start", "delta"))
        value = convert("i64", dt, f"(long long)({s}ull + (unsigned long long)i * {d}ull)")
    src = (CONVERT_HELPERS + _EXACT_D +
           f'extern "C" __global__ void arange({ctype(dt)}* __restrict__ y) {{\n'
           f"  {loop('i', out.numel, it)} y[i] = {value}; }}\n}}\n")
    grid, block = launch_1d(out.numel)
    return KernelCode("tdflow.arange", src, (LaunchSpec("arange", grid, block, ("out0",)),))


__all__ = ["cast", "transpose", "cat", "same_elements", "expand", "broadcast_like", "ones_like",
           "constant", "dense_constant", "arange", "flat_copy", "broadcast_copy"]
