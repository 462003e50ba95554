"""Hooks of the SBP boxing ops (dialect/include/tdflow/ops/boxing.td).

A boxing op's result shape is its ``out_shape`` attribute (the compiler's ``physicalize`` sets
it to the running rank's physical shape); its dtype is ``x``'s. Its one SBP signature is the
conversion it performs, e.g. ``boxing_all_reduce``: ``x`` P -> ``y`` B.
"""

from __future__ import annotations

from ._sbp import signature
from .context import HookError, InferContext
from .registry import (
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_physical_tensor_desc,
)

BOXING_OPS = ("tdflow.boxing_all_reduce", "tdflow.boxing_reduce_scatter",
              "tdflow.boxing_all_gather", "tdflow.boxing_all_to_all", "tdflow.boxing_slice",
              "tdflow.boxing_to_partial")


@infer_logical_tensor_desc(*BOXING_OPS)
@infer_physical_tensor_desc(*BOXING_OPS)
def boxing_tensor_desc(ctx: InferContext) -> None:
    """``y``'s shape is ``out_shape``; its rank must be ``x``'s (boxing never reshapes)."""
    out, x = tuple(ctx.attr("out_shape")), ctx.input_shape("x")
    if any(d < 0 for d in out):
        raise HookError(f"out_shape {list(out)} has a negative dim", attr="out_shape")
    if x is not None and len(x) != len(out):
        raise HookError(f"out_shape {list(out)} has rank {len(out)}; 'x' {list(x)} has rank "
                        f"{len(x)}", attr="out_shape")
    # axis, in_axis, out_axis: TDF_AxisAttr of x (whose rank is out_shape's)
    if ctx.attr("mesh_axis") < 0:
        raise HookError(f"mesh_axis must be >= 0, got {ctx.attr('mesh_axis')}", attr="mesh_axis")
    ctx.set_output_shape("y", out)


@infer_data_type(*BOXING_OPS)
def boxing_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("y", ctx.input_dtype("x"))


@get_sbp(*BOXING_OPS)
def boxing_sbp(ctx: InferContext):
    """The conversion the op performs (on its ``mesh_axis``)."""
    m = ctx.op.mnemonic
    axis = ctx.attr("axis") if ctx.op.attr("axis") is not None else None
    src, dst = {
        "boxing_all_reduce": ("P", "B"),
        "boxing_reduce_scatter": ("P", f"S({axis})"),
        "boxing_all_gather": (f"S({axis})", "B"),
        "boxing_slice": ("B", f"S({axis})"),
        "boxing_to_partial": ("B", "P"),
    }.get(m) or (f"S({ctx.attr('in_axis')})", f"S({ctx.attr('out_axis')})")
    return [signature(ctx, src, dst)]
