"""Hooks, the numpy kernel and a hand-written CUDA kernel (a shared-memory tree reduction per
row) of hq.row_sum_plus (hq.td)."""

from __future__ import annotations

from tdflow.dialect.hooks import InferContext, infer_data_type, infer_logical_tensor_desc
from tdflow.runtime.kernels.registry import register_kernel


@infer_logical_tensor_desc("hq.row_sum_plus")
def row_sum_shape(ctx: InferContext) -> None:
    """hq.row_sum_plus: one value per row of the 2-D x."""
    ctx.set_output_shape("y", (ctx.input_shape("x")[0],))


@infer_data_type("hq.row_sum_plus")
def row_sum_dtype(ctx: InferContext) -> None:
    """hq.row_sum_plus: y has the element type of x."""
    ctx.set_output_dtype("y", ctx.input_dtype("x"))


@register_kernel("hq.row_sum_plus", device="cpu", dtypes=("f32", "f64"))
def row_sum_cpu(attrs, inputs, outs):
    """y = x.sum(axis=1) + shift (the reference)."""
    (x,) = inputs
    return [(x.sum(axis=1) + attrs["shift"]).astype(x.dtype)]


# 64 threads per row: strided partial sums, then a tree in shared memory (a barrier per level,
# reached by every thread of the block)
ROW_SUM_CU = """
__shared__ T part[64];
for (int row = blockIdx.x; row < IN0_DIM0; row += gridDim.x) {
  T acc = 0;
  for (int j = threadIdx.x; j < IN0_DIM1; j += 64) acc += in0[(long long)row * IN0_DIM1 + j];
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int s = 32; s > 0; s >>= 1) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out0[row] = part[0] + (T)ATTR_shift;
  __syncthreads();
}
"""


@register_kernel("hq.row_sum_plus", device="cuda", dtypes=("f32", "f64"), source=ROW_SUM_CU)
def row_sum_launch(ins, outs, attrs):
    """One block of 64 threads per row (at most 1024 blocks, the rest by the grid-stride loop)."""
    return min(ins[0].shape[0], 1024), 64
