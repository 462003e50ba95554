"""hqerr.td's ops: y = 2 * x on the CPU; on the GPU devices a body that does not compile
(bad_body), a barrier that 28 of 32 threads never reach (divergent), nothing (cpu_only)."""

from __future__ import annotations

from tdflow.dialect.hooks import InferContext, infer_data_type, infer_logical_tensor_desc
from tdflow.runtime.kernels.registry import register_kernel

OPS = ("hqerr.bad_body", "hqerr.divergent", "hqerr.cpu_only")


def _same_shape(ctx: InferContext) -> None:
    ctx.set_output_shape("y", ctx.input_shape("x"))


def _same_dtype(ctx: InferContext) -> None:
    ctx.set_output_dtype("y", ctx.input_dtype("x"))


def _twice(attrs, inputs, outs):
    return [inputs[0] * 2]


for _op in OPS:
    infer_logical_tensor_desc(_op)(_same_shape)
    infer_data_type(_op)(_same_dtype)
    register_kernel(_op, device="cpu", dtypes=("f32",))(_twice)

BAD_BODY = """
for (long long i = threadIdx.x; i < N; i += blockDim.x)
  out0[i] = in0[i] * undefined_scale;
"""

DIVERGENT = """
__shared__ T stage[32];
if (threadIdx.x > 3) return;
stage[threadIdx.x] = in0[threadIdx.x];
__syncthreads();
for (long long i = threadIdx.x; i < N; i += 4) out0[i] = in0[i] * 2;
"""


def _one_warp(ins, outs, attrs):
    return 1, 32


register_kernel("hqerr.bad_body", device="cuda", dtypes=("f32",), source=BAD_BODY)(_one_warp)
register_kernel("hqerr.divergent", device="cuda", dtypes=("f32",), source=DIVERGENT)(_one_warp)
