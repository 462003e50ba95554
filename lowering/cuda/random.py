"""CUDA kernel of ``dropout`` (the random family).

Element ``i``'s uniform is ``tdf_uniform(key, counter + i)`` from the launch's
``rng = (stream key, first counter)`` (:mod:`tdflow.runtime.rng`), the numbers the numpy kernel
draws for the same seed and call sequence; each multiply and add rounds once, as numpy's
in-place ones do (:mod:`._exact`).

>>> from tdflow.lowering.cuda.code import TensorSpec
>>> f = TensorSpec((8,), "f32")
>>> dropout([f], [f, TensorSpec((8,), "i1")], {"rate": 0.5}).launches[0].args
('in0', 'out0', 'out1', 'rng')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._exact import EXACT, wide
from ._layout import empty_code, index_type, literal, loop
from .code import CudaCodegenError, KernelCode, LaunchSpec, TensorSpec, cuda_generator
from .common import ctype, launch_1d, load, store


@cuda_generator("tdflow.dropout")
def dropout(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
            attrs: Mapping[str, Any]) -> KernelCode:
    """``mask = uniform >= rate``; ``out = in * mask * 1/(1 - rate) (+ _add_to_output)``,
    each step rounded to ``in``'s type as numpy's in-place multiplies and add round."""
    x, out, mask = ins[0], outs[0], outs[1]
    add = ins[1] if len(ins) > 1 else None
    rate = float(attrs["rate"])
    if not 0.0 <= rate <= 1.0:
        raise CudaCodegenError(f"dropout: rate must be in [0, 1], got {rate}")
    if out.shape != x.shape or mask.shape != x.shape or (add is not None and add.shape != x.shape):
        raise CudaCodegenError(f"dropout: 'in' {x.shape}, '_add_to_output' "
                               f"{None if add is None else add.shape}, results {out.shape} and "
                               f"{mask.shape} must agree")
    if x.numel == 0:
        return empty_code("tdflow.dropout")
    dt, w = x.dtype, wide(x.dtype)
    half = dt in ("f16", "bf16")
    scale = 0.0 if rate >= 1.0 else 1.0 / (1.0 - rate)

    def rounded(text: str) -> str:  # a value rounded to dt, back in the compute type
        return load(dt, store(dt, text)) if half else text

    # numpy multiplies by a Python float in the array's type: scale rounds to dt first
    s = literal(scale, dt)
    s = load(dt, s) if half else s
    keep = f"u >= {literal(rate, 'f32')}" if rate > 0 else "true"
    lines = ["  const unsigned long long key = rng[0], first = rng[1];",
             f"  {loop('i', x.numel, index_type(x))}",
             "    const float u = tdf_uniform(key, first + (unsigned long long)i);",
             f"    const bool keep = {keep};",
             f"    {w} v = mul(({w}){load(dt, 'x[i]')}, keep ? ({w})1 : ({w})0);"]
    if scale != 1.0:
        lines.append(f"    v = {rounded(f'mul(v, ({w}){s})')};")
    if add is not None:
        other = load(add.dtype, "a[i]")
        lines.append(f"    v = {rounded(f'add(v, ({w}){other})')};")
    lines += [f"    y[i] = {store(dt, 'v')};", "    m[i] = keep;", "  }", "}"]
    t = ctype(dt)
    params = [f"const {t}* __restrict__ x"]
    if add is not None:
        params.append(f"const {ctype(add.dtype)}* __restrict__ a")
    params += [f"{t}* __restrict__ y", "bool* __restrict__ m",
               "const unsigned long long* __restrict__ rng"]
    src = (EXACT + f'extern "C" __global__ void dropout({", ".join(params)}) {{\n'
           + "\n".join(lines) + "\n")
    args = ["in0"] + (["in1"] if add is not None else []) + ["out0", "out1", "rng"]
    grid, block = launch_1d(x.numel)
    return KernelCode("tdflow.dropout", src, (LaunchSpec("dropout", grid, block, args),))
