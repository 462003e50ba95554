"""CUDA kernels of elementwise ops: every ``formula`` op, ``fused_elementwise``,
``bias_add`` and ``add_n``.

The math comes from the op's formula (or a fused op's ``expr``), rendered by
:func:`~tdflow.lowering.elementwise_cuda.render_cuda`, the same expression tree the numpy
backend renders, so both backends compute one definition. The kernel is a grid-stride loop;
inputs of another shape are broadcast numpy-style by index arithmetic
(:func:`~tdflow.lowering.cuda.common.broadcast_index`); when every operand is a full-size
``f32`` tensor and the size is a multiple of 4, each thread moves ``float4`` vectors.
``add_n`` sums left to right, each sum rounded to the inputs' type (numpy's order and
roundings; integers wrap).

>>> from tdflow.lowering.cuda.code import TensorSpec
>>> from tdflow.dialect.formula.expr import Input, maximum
>>> code = elementwise_code("relu", [maximum(Input(0), 0)], [TensorSpec((2, 3), "f32")],
...                         [TensorSpec((2, 3), "f32")])
>>> "(a > b || a != a) ? a : b; }(v0, s0)" in code.source, code.scalars
(True, (('f32', 0.0),))

Numeric constants, attribute values included, are kernel arguments (``s<k>``, see
:mod:`~tdflow.lowering.cuda.code`): ``t * 0.25`` and ``t * 0.125`` share one source.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tdflow.dialect.element_types import INT_TYPES
from tdflow.dialect.formula.expr import Expr
from tdflow.lowering.elementwise_cuda import render_cuda
from tdflow.lowering.elementwise_ops import ElementwiseDef, elementwise_def

from ._layout import empty_code, index_type, loop
from .code import (
    CudaCodegenError,
    Generator,
    KernelCode,
    LaunchSpec,
    TensorSpec,
    add_fallback,
    cuda_generator,
)
from .common import broadcast_index, ctype, launch_1d, load, store

if TYPE_CHECKING:
    from tdflow.dialect.opdef import OpDef


def _ident(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


def elementwise_code(name: str, exprs: Sequence[Expr], inputs: Sequence[TensorSpec],
                     outputs: Sequence[TensorSpec], fast_math: bool = True) -> KernelCode:
    """One kernel computing ``outputs[k] = exprs[k](inputs...)`` elementwise (inputs broadcast
    to the output's shape)."""
    if not outputs:
        raise CudaCodegenError(f"{name}: an elementwise kernel needs a result")
    shape = outputs[0].shape
    if any(o.shape != shape for o in outputs):
        raise CudaCodegenError(f"{name}: results of different shapes {[o.shape for o in outputs]}")
    n = outputs[0].numel
    in_dts = [s.dtype for s in inputs]
    kname = f"{_ident(name)}_{'_'.join(o.dtype for o in outputs)}"
    params = [f"const {ctype(s.dtype)}* __restrict__ x{i}" for i, s in enumerate(inputs)]
    params += [f"{ctype(o.dtype)}* __restrict__ y{k}" for k, o in enumerate(outputs)]
    # numeric constants (bound attributes, formula literals) are kernel arguments: the source
    # depends on the expression's shape only, so a new scalar value does not recompile
    scalars: list[tuple[str, int | float]] = []
    rendered = [render_cuda(e, in_dts, o.dtype, names=[f"v{i}" for i in range(len(inputs))],
                            fast_math=fast_math, params=scalars) for e, o in zip(exprs, outputs)]
    params += [f"const {ctype(dt)} s{k}" for k, (dt, _) in enumerate(scalars)]
    vector = (n % 4 == 0 and n >= 4 and all(s.dtype == "f32" and s.shape == shape for s in inputs)
              and all(o.dtype == "f32" for o in outputs))
    lines = [f'extern "C" __global__ void {kname}({", ".join(params)}) {{']
    if vector:
        # float4: four elements per load and store (device buffers are 256-byte aligned).
        lines.append(f"  const long long n4 = {n // 4}LL;")
        lines.append("  for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; "
                     "j < n4; j += (long long)blockDim.x * gridDim.x) {")
        for i in range(len(inputs)):
            lines.append(f"    const float4 q{i} = reinterpret_cast<const float4*>(x{i})[j];")
        for k in range(len(outputs)):
            lines.append(f"    float4 r{k};")
        for c in "xyzw":
            lines.append("    {")
            for i in range(len(inputs)):
                lines.append(f"      const float v{i} = q{i}.{c};")
            for k, text in enumerate(rendered):
                lines.append(f"      r{k}.{c} = {text};")
            lines.append("    }")
        for k in range(len(outputs)):
            lines.append(f"    reinterpret_cast<float4*>(y{k})[j] = r{k};")
        lines.append("  }")
        grid, block = launch_1d(n // 4)
    else:
        lines.append("  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; "
                     f"i < {n}LL; i += (long long)blockDim.x * gridDim.x) {{")
        for i, s in enumerate(inputs):
            lines.append(f"    const {ctype(s.dtype)} v{i} = x{i}[{broadcast_index('i', shape, s.shape)}];")
        for k, text in enumerate(rendered):
            lines.append(f"    y{k}[i] = {text};")
        lines.append("  }")
        grid, block = launch_1d(n)
    lines.append("}")
    args = [f"in{i}" for i in range(len(inputs))] + [f"out{k}" for k in range(len(outputs))]
    args += [f"s{k}" for k in range(len(scalars))]
    return KernelCode(name, "\n".join(lines) + "\n", (LaunchSpec(kname, grid, block, args),),
                      scalars=tuple(scalars))


def _formula_generator(d: ElementwiseDef) -> Generator:
    def gen(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
            attrs: Mapping[str, Any]) -> KernelCode:
        exprs = [d.bind(attrs, k) for k in range(len(outs))]
        return elementwise_code(d.mnemonic, exprs, ins, outs)

    gen.__doc__ = f"CUDA kernel of {d.name} from its formula"
    return gen


def _formula_fallback(op: str, opdef: OpDef | None) -> Generator | None:
    """A generator for any op with a ``formula`` (a user library's included)."""
    if opdef is None:
        from tdflow.lowering.elementwise_ops import ELEMENTWISE_OPS

        d = ELEMENTWISE_OPS.get(op)
    else:
        d = elementwise_def(opdef)
    return _formula_generator(d) if d is not None else None


add_fallback(_formula_fallback)


@cuda_generator("tdflow.fused_elementwise")
def fused_elementwise(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                      attrs: Mapping[str, Any]) -> KernelCode:
    """A fused chain: ``attrs["expr"]`` (an Expr, or its text) over the inputs, one kernel."""
    expr = attrs["expr"]
    if isinstance(expr, str):
        from tdflow.dialect.formula.text import parse_expr

        expr = parse_expr(expr)
    return elementwise_code("fused", [expr], ins, outs)


@cuda_generator("tdflow.bias_add")
def bias_add(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
             attrs: Mapping[str, Any]) -> KernelCode:
    """``out = a + b`` with the 1-D ``b`` along ``axis``."""
    a, b = ins
    axis = attrs["axis"]  # TDF_AxisAttr of a: non-negative, in range
    if tuple(b.shape) != (a.shape[axis],):
        raise CudaCodegenError(f"tdflow.bias_add: b of shape {tuple(b.shape)} does not match "
                               f"axis {axis} of a with shape {tuple(a.shape)}")
    from tdflow.dialect.formula.expr import Input

    shape = [1] * a.ndim
    shape[axis] = b.shape[0]
    b_view = TensorSpec(tuple(shape), b.dtype)
    return elementwise_code("bias_add", [Input(0) + Input(1)], [a, b_view], outs)


@cuda_generator("tdflow.add_n")
def add_n(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
          attrs: Mapping[str, Any]) -> KernelCode:
    """``out = in0 + in1 + ...`` left to right, each sum rounded to the inputs' type (numpy's
    order and roundings; integers wrap)."""
    out = outs[0]
    if len(ins) < 2:
        raise CudaCodegenError(f"tdflow.add_n: needs at least 2 inputs, got {len(ins)}")
    for k, s in enumerate(ins):
        if s.shape != out.shape or s.dtype != out.dtype:
            raise CudaCodegenError(f"tdflow.add_n: input {k} is {s.shape}x{s.dtype}, the "
                                   f"result {out.shape}x{out.dtype}")
    if out.numel == 0:
        return empty_code("tdflow.add_n")
    dt, t = out.dtype, ctype(out.dtype)
    it = index_type(out)
    # x0 may be y (add_n runs in place on its first input): those two are not __restrict__
    params = ", ".join([f"const {t}* {'' if k == 0 else '__restrict__ '}x{k}"
                        for k in range(len(ins))] + [f"{t}* y"])
    if dt in ("f16", "bf16"):
        body = [f"    {t} s = x0[i];"]
        for k in range(1, len(ins)):
            total = load(dt, "s") + " + " + load(dt, f"x{k}[i]")
            body.append(f"    s = {store(dt, total)};")
    elif dt in ("f32", "f64"):
        body = [f"    {t} s = x0[i];"] + [f"    s = s + x{k}[i];" for k in range(1, len(ins))]
    else:  # wrap as numpy does: unsigned arithmetic (signed overflow is undefined in C)
        u = INT_TYPES[dt].c_unsigned
        body = [f"    {u} s = ({u})x0[i];"] + [f"    s = ({u})(s + ({u})x{k}[i]);"
                                             for k in range(1, len(ins))]
    body.append(f"    y[i] = ({t})s;")
    src = (f'extern "C" __global__ void add_n_{dt}({params}) {{\n  {loop("i", out.numel, it)}\n'
           + "\n".join(body) + "\n  }\n}\n")
    grid, block = launch_1d(out.numel)
    args = [f"in{k}" for k in range(len(ins))] + ["out0"]
    return KernelCode("tdflow.add_n", src, (LaunchSpec(f"add_n_{dt}", grid, block, args),))
