"""CUDA kernels of the slice family: slice, narrow (and their grads), pad, tril, triu and
fused_scale_tril.

Forward slices are strided reads with coalesced writes; the slice gradients write every element
of the result once (``dy`` inside the slice, zero outside), so they need no zeroing pass.
``pad`` writes ``x`` inside and the constant around it; ``tril``, ``triu`` and
``fused_scale_tril`` keep (and scale) the elements on one side of a diagonal and write the fill
value (zero for ``triu``) on the other. Fill, pad and scale values are converted to the
result's dtype as numpy converts them (``np.array(v).astype``) and written into the source by
their bits, so ``-inf`` fills and NaN survive.

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

from ._layout import (
    bits_type,
    empty_code,
    exact_value,
    fill,
    index_type,
    literal,
    loop,
    strided_copy,
    suffix,
)
from .code import CudaCodegenError, KernelCode, LaunchSpec, TensorSpec, cuda_generator
from .common import ctype, is_float, launch_1d, load, store, strides


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
    d = attrs["dim"]  # TDF_AxisAttr (narrow: of in, narrow_grad: of like)
    start, length = int(attrs["start"]), int(attrs["length"])
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


# -- pad, triu, tril, fused_scale_tril ----------------------------------------------------------
@cuda_generator("tdflow.pad")
def pad(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
        attrs: Mapping[str, Any]) -> KernelCode:
    """``x`` inside, the constant (converted as numpy converts) around it."""
    x, out = ins[0], outs[0]
    # TDF_DimsAttr of x: one non-negative entry per dim
    before, after = attrs["padding_before"], attrs["padding_after"]
    want = tuple(d + b + a for d, b, a in zip(x.shape, before, after))
    if out.shape != want:
        raise CudaCodegenError(f"pad: padding {before}/{after} of {x.shape} does not give "
                               f"{out.shape}")
    if out.numel == 0:
        return empty_code("tdflow.pad")
    dt, t = x.dtype, ctype(x.dtype)
    value = (float(attrs["floating_constant_value"]) if is_float(dt)
             else int(attrs["integral_constant_value"]))
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
    y[i] = col - row >= {int(attrs["diagonal"])}LL ? x[i] : ({t})0;
  }}
}}
"""
    grid, block = launch_1d(x.numel)
    return KernelCode("tdflow.triu", src, (LaunchSpec("triu", grid, block, ("in0", "out0")),))


def _value(attrs: Mapping[str, Any], what: str) -> int | float:
    """The ``fill`` or ``scale`` value: ``floating_<what>_value`` if ``is_floating_<what>_value``
    says so, else ``integer_<what>_value``."""
    if attrs[f"is_floating_{what}_value"]:
        return float(attrs[f"floating_{what}_value"])
    return int(attrs[f"integer_{what}_value"])


def _tril(op: str, x: TensorSpec, out: TensorSpec, attrs: Mapping[str, Any],
          scale: int | float | None) -> KernelCode:
    if x.ndim < 2:
        raise CudaCodegenError(f"{op}: 'in' must have at least 2 dims, got shape {x.shape}")
    if out.numel == 0:
        return empty_code(op)
    rows, cols = x.shape[-2:]
    dt, t = x.dtype, ctype(x.dtype)
    diag = int(attrs["diagonal"])
    fill_v = literal(exact_value(_value(attrs, "fill"), dt), dt)
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
    return _tril("tdflow.fused_scale_tril", ins[0], outs[0], attrs, _value(attrs, "scale"))
