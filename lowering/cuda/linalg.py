"""CUDA kernels of ``matmul``, ``matmul_bias`` and ``batch_matmul``: the tiled GEMM of :mod:`.gemm`.

``out = alpha * op(a) @ op(b) (+ _add_to_output)``: ``load_a``/``load_b`` read ``a`` and ``b``
with the transposes folded into the indexing (a transposed operand is walked, and staged in
shared memory, the way it lies in memory), batch dims broadcast numpy-style by index
arithmetic, and ``store_c`` applies ``alpha`` (rounded as numpy rounds it: f32 for f32 and half
types, truncated for integers) then adds ``_add_to_output`` before the single rounding to the
result type. See :mod:`.gemm` for tiles, tensor cores (f16/bf16; TF32 with
``TDFLOW_CUDA_TF32=1``) and split-K.

>>> from tdflow.lowering.cuda.code import TensorSpec
>>> code = matmul([TensorSpec((70, 40), "f32"), TensorSpec((40, 50), "f32")],
...               [TensorSpec((70, 50), "f32")], {"transpose_a": False, "transpose_b": False,
...                                                  "alpha": 1.0})
>>> [(ln.grid, ln.block) for ln in code.launches]
[((2, 3, 1), (64, 1, 1))]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.dialect.element_types import INT_TYPES

from ._gemm import INT_ACC, Gemm, gemm_acc, gemm_code
from .code import CudaCodegenError, KernelCode, TensorSpec, cuda_generator
from .common import broadcast_index, ctype, load, store


def c_scalar(dtype: str, value: float) -> str:
    """``value`` as a C literal of the type ``dtype`` computes in, rounded as numpy's
    ``dtype.type(value)`` rounds it (f32 for half types, truncation for integers).

    >>> c_scalar("f32", 0.1), c_scalar("i8", -2.5), c_scalar("f64", 0.1)
    ('0.10000000149011612f', '((uint32_t)254ULL)', '0.1')
    """
    if dtype == "f64":
        return repr(float(value))
    if dtype in INT_ACC:
        bits = INT_TYPES[dtype].bits
        return f"(({gemm_acc(dtype)}){int(value) % (1 << bits)}ULL)"
    return f"{float(np.float32(value))!r}f"


def _product(op: str, ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
             attrs: Mapping[str, Any], batched: bool, bias: bool = False) -> KernelCode:
    a, b = ins[0], ins[1]
    add = ins[2] if len(ins) > 2 and not bias else None
    row = ins[2] if bias else None  # matmul_bias's last-axis bias
    out = outs[0]
    dt = a.dtype
    if b.dtype != dt or out.dtype != dt or (add is not None and add.dtype != dt):
        raise CudaCodegenError(f"{op}: operands of different dtypes "
                               f"{[s.dtype for s in (*ins, out)]}")
    if a.ndim < 2 or b.ndim < 2 or (not batched and b.ndim != 2):
        raise CudaCodegenError(f"{op}: operand ranks {a.ndim} and {b.ndim} are not supported")
    ta, tb = bool(attrs["transpose_a"]), bool(attrs["transpose_b"])
    m, ka = (a.shape[-1], a.shape[-2]) if ta else a.shape[-2:]
    kb, n = (b.shape[-1], b.shape[-2]) if tb else b.shape[-2:]
    zshape = out.shape[:-2]
    if row is not None and (row.dtype != dt or row.shape != (n,)):
        raise CudaCodegenError(f"{op}: bias {row.shape} {row.dtype} is not ({n},) {dt}")
    if ka != kb or out.shape[-2:] != (m, n) or (add is not None and add.shape != out.shape):
        raise CudaCodegenError(f"{op}: a {a.shape} (transpose_a={ta}) and b {b.shape} "
                               f"(transpose_b={tb}) do not give {out.shape}")
    z, k = math.prod(zshape), ka
    big = max(a.numel, b.numel, out.numel) >= 2 ** 31
    za = broadcast_index("z", zshape, a.shape[:-2])
    zb = broadcast_index("z", zshape, b.shape[:-2])
    a_at = f"(I)k * {m} + m" if ta else f"(I)m * {k} + k"
    b_at = f"(I)n * {k} + k" if tb else f"(I)k * {n} + n"
    alpha = float(attrs["alpha"])
    t, acc = ctype(dt), gemm_acc(dt)
    value = "acc" if alpha == 1.0 else f"acc * {c_scalar(dt, alpha)}"
    if add is not None:
        value += f" + ({acc}){load(dt, 'P.add[o]')}"
    if row is not None:  # the product rounded to the result type, then the bias added to it,
        # as matmul and bias_add round on the CPU (a narrow type adds in its wider one)
        value = f"{load(dt, store(dt, value))} + {load(dt, 'P.bias[n]')}"
    fields = [(f"const {t}* __restrict__", "a", "in0"), (f"const {t}* __restrict__", "b", "in1")]
    if add is not None:
        fields.append((f"const {t}*", "add", "in2"))  # may be the result's buffer: no restrict
    if row is not None:
        fields.append((f"const {t}* __restrict__", "bias", "in2"))
    fields.append((f"{t}*", "c", "out0"))
    name = f"{op.split('.')[1]}_{dt}"
    if out.numel == 0:
        return KernelCode(op, "", ())
    g = Gemm(name, dt, z, m, n, k, fields,
             load_a=f"return P.a[(I)({za}) * {m * k} + {a_at}];",
             load_b=f"return P.b[(I)({zb}) * {k * n} + {b_at}];",
             store_c=f"const I o = (I)z * {m * n} + (I)m * {n} + n; "
                     f"P.c[o] = {store(dt, value)};",
             a_k_fast=not ta, b_n_fast=not tb, index="long long" if big else "int")
    source, launches, scratch = gemm_code(g)
    return KernelCode(op, source, tuple(launches), scratch)


@cuda_generator("tdflow.matmul")
def matmul(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
           attrs: Mapping[str, Any]) -> KernelCode:
    """``out = alpha * op(a) @ op(b) (+ _add_to_output)``; ``a`` may carry batch dims."""
    return _product("tdflow.matmul", ins, outs, attrs, batched=False)


@cuda_generator("tdflow.matmul_bias")
def matmul_bias(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                attrs: Mapping[str, Any]) -> KernelCode:
    """``out = alpha * op(a) @ op(b) + bias`` (``bias`` along the last axis): the GEMM's store
    rounds the product to the result type and adds the bias, the CPU's matmul then bias_add.

    >>> code = matmul_bias([TensorSpec((4, 3), "f32"), TensorSpec((3, 5), "f32"),
    ...                     TensorSpec((5,), "f32")], [TensorSpec((4, 5), "f32")],
    ...                    {"transpose_a": False, "transpose_b": False, "alpha": 1.0})
    >>> "P.bias[n]" in code.source
    True
    """
    return _product("tdflow.matmul_bias", ins, outs, attrs, batched=False, bias=True)


@cuda_generator("tdflow.batch_matmul")
def batch_matmul(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                 attrs: Mapping[str, Any]) -> KernelCode:
    """``matmul`` over the leading dims (broadcast numpy-style, as the CPU kernel does)."""
    return _product("tdflow.batch_matmul", ins, outs, attrs, batched=True)
