"""Hooks and the numpy kernel of the ops in my_ops.td (started from `tdflow gen-hooks`).

Loaded with ``tdflow verify --ops my_ops.td --hooks my_hooks.py``; importing it twice in one
process is a no-op (the hook files are idempotent).
"""

from __future__ import annotations

import numpy as np
from tdflow.dialect.hooks import InferContext, infer_data_type, infer_logical_tensor_desc
from tdflow.runtime.kernels.registry import register_kernel


@infer_logical_tensor_desc("mylib.scale_shift")
def scale_shift_infer_logical_tensor_desc(ctx: InferContext) -> None:
    """mylib.scale_shift: y has the shape of x."""
    ctx.set_output_shape("y", ctx.input_shape("x"))


@infer_data_type("mylib.scale_shift")
def scale_shift_infer_data_type(ctx: InferContext) -> None:
    """mylib.scale_shift: y has the element type of x."""
    ctx.set_output_dtype("y", ctx.input_dtype("x"))


@register_kernel("mylib.scale_shift", device="cpu", dtypes=("f32", "f64"), inplace={0: 0})
def scale_shift_cpu(attrs, inputs, outs):
    """y = x * scale + shift, computed in the output buffer."""
    (x,), (y,) = inputs, outs
    y = np.multiply(x, attrs["scale"], out=y)
    return [np.add(y, attrs["shift"], out=y)]
