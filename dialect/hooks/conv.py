"""Hooks of the conv family: conv2d and its two gradients (conv_data_grad, conv_filter_grad)."""

from __future__ import annotations

from ._sbp import signature
from ._shape import compatible, conv_out_dim, fmt, numel, require_rank, require_same_dtype, same_dim
from ._window import channels_first, join_nchw, split_nchw, window_attrs
from .context import HookError, InferContext
from .registry import (
    check_attr,
    compute_complexity,
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_physical_tensor_desc,
)


# -- conv2d ---------------------------------------------------------------------------------------
def _conv_check(ctx: InferContext) -> None:
    channels_first(ctx)
    window_attrs(ctx)
    groups = ctx.attr("groups")
    if groups < 1:
        raise HookError(f"groups must be >= 1, got {groups}", attr="groups")
    if "filters" in ctx.attrs and ctx.attr("filters") < 0:
        raise HookError(f"filters must be >= 0, got {ctx.attr('filters')}", attr="filters")
    if "num_spatial_dims" in ctx.attrs and ctx.attr("num_spatial_dims") != 2:
        raise HookError(f"num_spatial_dims must be 2 (only 2-D convolutions are supported), got "
                        f"{ctx.attr('num_spatial_dims')}", attr="num_spatial_dims")


check_attr("tdflow.conv2d", "tdflow.conv_data_grad", "tdflow.conv_filter_grad")(_conv_check)


def _conv_out(ctx: InferContext):
    """(out shape, weight shape expected) of conv2d from its input and attributes."""
    first = channels_first(ctx)
    k, s, d, p = window_attrs(ctx)
    x = require_rank(ctx, "in", 4)
    w = require_rank(ctx, "weight", 4)
    groups = ctx.attr("groups")
    filters = ctx.attr("filters") or (w[0] if w is not None else None)
    if w is not None and ctx.attr("filters") and not same_dim(w[0], ctx.attr("filters")):
        raise HookError(f"'weight' {fmt(w)} has {w[0]} filters but filters = {ctx.attr('filters')}",
                        operand="weight")
    if x is None:
        return None
    n, c, hw = split_nchw(x, first)
    if c is not None and c % groups:
        raise HookError(f"input channels {c} are not divisible by groups = {groups}", attr="groups")
    if w is not None:
        wk = w[2:] if first else w[1:3]
        wc = w[1] if first else w[3]
        if c is not None and wc is not None and wc * groups != c:
            raise HookError(f"'weight' {fmt(w)} expects {wc * groups} input channels "
                            f"({wc} per group x {groups} groups) but 'in' {fmt(x)} has {c}",
                            operand="weight")
        if any(a is not None and a != b for a, b in zip(wk, k)):
            raise HookError(f"'weight' {fmt(w)} has a {wk[0]}x{wk[1]} window but kernel_size = "
                            f"{list(k)}", operand="weight")
    if filters is not None and filters % groups:
        raise HookError(f"filters = {filters} is not divisible by groups = {groups}", attr="groups")
    out_hw = []
    for i in range(2):
        o = conv_out_dim(hw[i], k[i], p[i], s[i], d[i])
        if o is not None and o <= 0:
            raise HookError(f"the {k[i]}-wide window (dilation {d[i]}) does not fit spatial dim "
                            f"{i} of size {hw[i]} with padding {p[i]}", operand="in")
        out_hw.append(o)
    return join_nchw(n, filters, out_hw, first)


@infer_logical_tensor_desc("tdflow.conv2d")
@infer_physical_tensor_desc("tdflow.conv2d")
def conv2d_tensor_desc(ctx: InferContext) -> None:
    out = _conv_out(ctx)
    if ctx.has_input("bias"):
        b = require_rank(ctx, "bias", 1)
        filters = out[1 if channels_first(ctx) else 3] if out is not None else ctx.attr("filters") or None
        if b is not None and not same_dim(b[0], filters):
            raise HookError(f"'bias' {fmt(b)} must have one entry per filter ({filters})",
                            operand="bias")
    if ctx.has_input("_add_to_output") and not compatible(ctx.input_shape("_add_to_output"), out):
        raise HookError(f"'_add_to_output' {fmt(ctx.input_shape('_add_to_output'))} must have the "
                        f"output's shape {fmt(out)}", operand="_add_to_output")
    ctx.set_output_shape("out", out)


@infer_data_type("tdflow.conv2d")
def conv2d_data_type(ctx: InferContext) -> None:
    dtype = require_same_dtype(ctx, "in", "weight")
    for opt in ("bias", "_add_to_output"):
        if ctx.has_input(opt):
            require_same_dtype(ctx, "in", opt)
    ctx.set_output_dtype("out", dtype)


@get_sbp("tdflow.conv2d")
def conv2d_sbp(ctx: InferContext):
    ch = 1 if channels_first(ctx) else 3
    sigs = [signature(ctx, {"in": "S(0)", "weight": "B", "bias": "B", "_add_to_output": "S(0)"},
                      "S(0)")]
    # splitting the filters: each rank's block must hold whole groups, and its ``filters``
    # attribute becomes the physical count (lowering.sbp.physical_attrs)
    if ctx.attr("groups") == 1:
        sigs.append(signature(ctx, {"in": "B", "weight": "S(0)", "bias": "S(0)",
                                    "_add_to_output": f"S({ch})"}, f"S({ch})"))
    return sigs


def _conv_flops(out_shape, w_shape) -> float | None:
    n = numel(out_shape)
    per = numel(w_shape[1:]) if w_shape is not None else None
    return None if n is None or per is None else 2.0 * n * per


@compute_complexity("tdflow.conv2d")
def conv2d_complexity(ctx: InferContext) -> float | None:
    """2 * output elements * (C/groups * kH * kW) multiply-adds."""
    return _conv_flops(_conv_out(ctx), ctx.input_shape("weight"))


# -- conv gradients -------------------------------------------------------------------------------
@infer_logical_tensor_desc("tdflow.conv_data_grad")
@infer_physical_tensor_desc("tdflow.conv_data_grad")
def conv_data_grad_tensor_desc(ctx: InferContext) -> None:
    require_rank(ctx, "dy", 4)
    require_rank(ctx, "filter", 4)
    x = require_rank(ctx, "x_like", 4)
    if ctx.has_input("_add_to_output") and not compatible(ctx.input_shape("_add_to_output"), x):
        raise HookError(f"'_add_to_output' must have 'x_like''s shape {fmt(x)}",
                        operand="_add_to_output")
    ctx.set_output_shape("dx", x)


@infer_data_type("tdflow.conv_data_grad")
def conv_data_grad_data_type(ctx: InferContext) -> None:
    require_same_dtype(ctx, "dy", "filter")
    ctx.set_output_dtype("dx", require_same_dtype(ctx, "dy", "x_like"))


@infer_logical_tensor_desc("tdflow.conv_filter_grad")
@infer_physical_tensor_desc("tdflow.conv_filter_grad")
def conv_filter_grad_tensor_desc(ctx: InferContext) -> None:
    first = channels_first(ctx)
    k, _, _, _ = window_attrs(ctx)
    dy = require_rank(ctx, "dy", 4)
    x = require_rank(ctx, "x", 4)
    groups = ctx.attr("groups")
    c_out = split_nchw(dy, first)[1] if dy is not None else None
    c_in = split_nchw(x, first)[1] if x is not None else None
    if c_in is not None and c_in % groups:
        raise HookError(f"input channels {c_in} are not divisible by groups = {groups}",
                        attr="groups")
    per_group = None if c_in is None else c_in // groups
    out = (c_out, per_group, *k) if first else (c_out, *k, per_group)
    ctx.set_output_shape("filter_diff", out)


@infer_data_type("tdflow.conv_filter_grad")
def conv_filter_grad_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("filter_diff", require_same_dtype(ctx, "dy", "x"))


@get_sbp("tdflow.conv_data_grad")
def conv_data_grad_sbp(ctx: InferContext):
    return [signature(ctx, {"dy": "S(0)", "filter": "B", "x_like": "S(0)", "_add_to_output": "S(0)"},
                      "S(0)")]


@get_sbp("tdflow.conv_filter_grad")
def conv_filter_grad_sbp(ctx: InferContext):
    return [signature(ctx, {"dy": "S(0)", "x": "S(0)"}, "P")]


@compute_complexity("tdflow.conv_data_grad")
def conv_data_grad_complexity(ctx: InferContext) -> float | None:
    return _conv_flops(ctx.input_shape("dy"), ctx.input_shape("filter"))


@compute_complexity("tdflow.conv_filter_grad")
def conv_filter_grad_complexity(ctx: InferContext) -> float | None:
    dy = ctx.input_shape("dy")
    x = ctx.input_shape("x")
    if dy is None or x is None:
        return None
    first = channels_first(ctx)
    k = tuple(ctx.attr("kernel_size"))
    c_in = split_nchw(x, first)[1]
    n = numel(dy)
    return None if n is None or c_in is None else 2.0 * n * (c_in // ctx.attr("groups")) * k[0] * k[1]
