"""ONNX's DequantizeLinear: ``(x - zero_point) * scale`` per tensor, per axis or per block,
computed in the scale's float type."""

from __future__ import annotations

import numpy as np

from .api import Lowerer, Node, rule
from .common import cast, norm_axis, reshape
from .elementwise import onnx_dtype


def _along(cx: Lowerer, v, axis: int, rank: int, x_shape, block: int):
    """A per-axis (1-D) or blocked (same-rank) parameter shaped to broadcast against x."""
    shape = list(cx.shape_of(v))
    if len(shape) <= 1 and rank > 0 and (shape or [1])[0] != 1:
        axis = norm_axis(axis, rank, cx)
        return reshape(cx, v, [x_shape[axis] if d == axis else 1 for d in range(rank)])
    if len(shape) == rank and block:
        idx = np.arange(x_shape[axis], dtype=np.int64) // block
        return cx.op("tdflow.gather", [v, cx.constant(idx)], {"axis": axis})
    return v


@rule("DequantizeLinear")
def dequantize_linear(cx: Lowerer, n: Node) -> list:
    x, scale = n.input(0), n.input(1)
    xs = cx.shape_of(x)
    rank = len(xs)
    axis = int(n.attrs.get("axis", 1) or 0)
    axis = axis + rank if axis < 0 else axis  # checked only where a per-axis scale needs it
    block = int(n.attrs.get("block_size") or 0)
    code = n.attrs.get("output_dtype")
    dt = onnx_dtype(cx, int(code)) if code else cx.type_of(scale).dtype
    xf = cast(cx, x, dt)
    if n.has_input(2):
        zp = _along(cx, cast(cx, n.input(2), dt), axis, rank, xs, block)
        xf = cx.op("tdflow.broadcast_sub", [xf, zp])
    s = _along(cx, cast(cx, scale, dt), axis, rank, xs, block)
    return [cx.op("tdflow.broadcast_mul", [xf, s])]
