"""Hooks of the random family: dropout (its gradient, dropout_grad, is a formula op)."""

from __future__ import annotations

from ._sbp import signature
from ._shape import compatible, fmt, merge, require_float, require_same_dtype
from .context import HookError, InferContext
from .registry import (
    check_attr,
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_physical_tensor_desc,
)


# -- dropout --------------------------------------------------------------------------------------
@check_attr("tdflow.dropout")
def dropout_check(ctx: InferContext) -> None:
    rate = ctx.attr("rate")
    if not 0.0 <= rate < 1.0:
        raise HookError(f"rate must be in [0, 1), got {rate}", attr="rate")


@infer_logical_tensor_desc("tdflow.dropout")
@infer_physical_tensor_desc("tdflow.dropout")
def dropout_tensor_desc(ctx: InferContext) -> None:
    x = ctx.input_shape("in")
    if ctx.has_input("_add_to_output"):
        add = ctx.input_shape("_add_to_output")
        if not compatible(add, x):
            raise HookError(f"'_add_to_output' {fmt(add)} must have 'in''s shape {fmt(x)}",
                            operand="_add_to_output")
        x = merge(x, add)
    ctx.set_output_shape("out", x)
    ctx.set_output_shape("mask", x)


@infer_data_type("tdflow.dropout")
def dropout_data_type(ctx: InferContext) -> None:
    dtype = require_float(ctx, "in")
    if ctx.has_input("_add_to_output"):
        require_same_dtype(ctx, "in", "_add_to_output")
    ctx.set_output_dtype("out", dtype)
    ctx.set_output_dtype("mask", "i1")


@check_attr("tdflow.dropout_grad")
def dropout_grad_check(ctx: InferContext) -> None:
    if ctx.attr("scale") < 0.0:
        raise HookError(f"scale must be >= 0, got {ctx.attr('scale')}", attr="scale")
    # the formula (dy * mask * scale) takes any number mask; dropout's is bool or a byte
    if ctx.has_input("mask") and ctx.input_dtype("mask") not in ("i1", "i8"):
        raise HookError(f"'mask' must be an i1 (or i8) tensor, got {ctx.input_dtype('mask')}",
                        operand="mask")


@get_sbp("tdflow.dropout")
def dropout_sbp(ctx: InferContext):
    shape = ctx.input_shape("in")
    return [signature(ctx, f"S({i})", f"S({i})") for i in range(len(shape or ()))]
