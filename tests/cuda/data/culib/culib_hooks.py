"""Hooks, the numpy kernel and a hand-written CUDA kernel of culib.row_scale (culib.td)."""

from __future__ import annotations

import numpy as np
from tdflow.dialect.hooks import InferContext, infer_data_type, infer_logical_tensor_desc
from tdflow.runtime.kernels.registry import register_kernel


@infer_logical_tensor_desc("culib.row_scale")
def row_scale_shape(ctx: InferContext) -> None:
    """culib.row_scale: y has the shape of x (2-D), s one value per row."""
    ctx.set_output_shape("y", ctx.input_shape("x"))


@infer_data_type("culib.row_scale")
def row_scale_dtype(ctx: InferContext) -> None:
    """culib.row_scale: y has the element type of x."""
    ctx.set_output_dtype("y", ctx.input_dtype("x"))


@register_kernel("culib.row_scale", device="cpu", dtypes=("f32", "f64", "i32"))
def row_scale_cpu(attrs, inputs, outs):
    """y = x * s[:, None] + shift (the reference)."""
    x, s = inputs
    y = x * s[:, None] + np.asarray(attrs["shift"]).astype(x.dtype)
    return [y.astype(x.dtype)]


# one thread per element, a grid-stride loop over the rows*cols elements; IN0_DIM1 is the row
# length baked in as a constant, ATTR_shift the attribute
ROW_SCALE_CU = """
for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < N;
     i += (long long)gridDim.x * blockDim.x) {
  out0[i] = (T)(in0[i] * in1[i / IN0_DIM1] + (T)ATTR_shift);
}
"""


@register_kernel("culib.row_scale", device="cuda", dtypes=("f32", "f64", "i32"),
                 source=ROW_SCALE_CU)
def row_scale_launch(ins, outs, attrs):
    """Blocks of 128 threads, enough to cover the result once (at most 1024 blocks)."""
    return min(1024, (outs[0].numel + 127) // 128), 128
