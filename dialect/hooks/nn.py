"""Hooks of conv2d, its two gradients, max_pool_2d (and grad), dropout (and grad).

``data_format`` is OneFlow's ``"channels_first"`` (NCHW) or ``"channels_last"`` (NHWC); the
spellings ``"NCHW"``/``"NHWC"`` are accepted too.
"""

from __future__ import annotations

from .context import HookError, InferContext
from .registry import (
    check_attr,
    compute_complexity,
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_physical_tensor_desc,
)
from .sbp import signature
from .shape_util import (
    compatible,
    conv_out_dim,
    fmt,
    merge,
    numel,
    require_float,
    require_rank,
    require_same_dtype,
    same_dim,
)

FORMATS = {"channels_first": True, "NCHW": True, "channels_last": False, "NHWC": False}


def channels_first(ctx: InferContext) -> bool:
    fmt_ = ctx.attr("data_format")
    if fmt_ not in FORMATS:
        raise HookError(f"data_format must be \"channels_first\" or \"channels_last\" (or "
                        f"\"NCHW\"/\"NHWC\"), got \"{fmt_}\"", attr="data_format")
    return FORMATS[fmt_]


def _pair(ctx: InferContext, name: str, minimum: int) -> tuple[int, int]:
    v = tuple(ctx.attr(name))
    if len(v) != 2:
        raise HookError(f"{name} must have 2 entries (one per spatial dim), got {list(v)}", attr=name)
    if any(x < minimum for x in v):
        raise HookError(f"{name} entries must be >= {minimum}, got {list(v)}", attr=name)
    return v  # type: ignore[return-value]


def _window_attrs(ctx: InferContext, names=("kernel_size", "strides", "dilation_rate",
                                              "padding_before")):
    k, s, d, p = (_pair(ctx, n, m) for n, m in zip(names, (1, 1, 1, 0)))
    return k, s, d, p


def _split_nchw(shape, first: bool):
    """(N, C, (H, W)) of a rank-4 shape in either layout."""
    if first:
        return shape[0], shape[1], shape[2:]
    return shape[0], shape[3], shape[1:3]


def _join(n, c, hw, first: bool):
    return (n, c, *hw) if first else (n, *hw, c)


# -- conv2d ---------------------------------------------------------------------------------------
def _conv_check(ctx: InferContext) -> None:
    channels_first(ctx)
    _window_attrs(ctx)
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
    k, s, d, p = _window_attrs(ctx)
    x = require_rank(ctx, "in", 4)
    w = require_rank(ctx, "weight", 4)
    groups = ctx.attr("groups")
    filters = ctx.attr("filters") or (w[0] if w is not None else None)
    if w is not None and ctx.attr("filters") and not same_dim(w[0], ctx.attr("filters")):
        raise HookError(f"'weight' {fmt(w)} has {w[0]} filters but filters = {ctx.attr('filters')}",
                        operand="weight")
    if x is None:
        return None
    n, c, hw = _split_nchw(x, first)
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
    return _join(n, filters, out_hw, first)


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
    k, _, _, _ = _window_attrs(ctx)
    dy = require_rank(ctx, "dy", 4)
    x = require_rank(ctx, "x", 4)
    groups = ctx.attr("groups")
    c_out = _split_nchw(dy, first)[1] if dy is not None else None
    c_in = _split_nchw(x, first)[1] if x is not None else None
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
    c_in = _split_nchw(x, first)[1]
    n = numel(dy)
    return None if n is None or c_in is None else 2.0 * n * (c_in // ctx.attr("groups")) * k[0] * k[1]


# -- max pooling ----------------------------------------------------------------------------------
POOL_NAMES = ("kernel_size", "stride", "dilation", "padding")


def _pool_out(ctx: InferContext, name: str = "x"):
    first = channels_first(ctx)
    k, s, d, p = _window_attrs(ctx, POOL_NAMES)
    for i in range(2):
        if p[i] * 2 > k[i]:
            raise HookError(f"padding {list(p)} must be at most half the kernel size {list(k)}",
                            attr="padding")
    x = require_rank(ctx, name, 4)
    if x is None:
        return None
    n, c, hw = _split_nchw(x, first)
    out_hw = []
    for i in range(2):
        o = conv_out_dim(hw[i], k[i], p[i], s[i], d[i], ctx.attr("ceil_mode"))
        if o is not None and o <= 0:
            raise HookError(f"the {k[i]}-wide pooling window does not fit spatial dim {i} of size "
                            f"{hw[i]} with padding {p[i]}", operand=name)
        out_hw.append(o)
    return _join(n, c, out_hw, first)


@infer_logical_tensor_desc("tdflow.max_pool_2d")
@infer_physical_tensor_desc("tdflow.max_pool_2d")
def max_pool_tensor_desc(ctx: InferContext) -> None:
    out = _pool_out(ctx)
    ctx.set_output_shape("y", out)
    ctx.set_output_shape("indice", out)


@infer_data_type("tdflow.max_pool_2d")
def max_pool_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("y", ctx.input_dtype("x"))
    ctx.set_output_dtype("indice", "i64")


@infer_logical_tensor_desc("tdflow.max_pool_2d_grad")
@infer_physical_tensor_desc("tdflow.max_pool_2d_grad")
def max_pool_grad_tensor_desc(ctx: InferContext) -> None:
    out = _pool_out(ctx)
    for name in ("indice", "dy"):
        s = ctx.input_shape(name)
        if not compatible(s, out):
            raise HookError(f"'{name}' has shape {fmt(s)} but pooling 'x' "
                            f"{fmt(ctx.input_shape('x'))} gives {fmt(out)}", operand=name)
    ctx.set_output_shape("dx", ctx.input_shape("x"))


@infer_data_type("tdflow.max_pool_2d_grad")
def max_pool_grad_data_type(ctx: InferContext) -> None:
    if ctx.input_dtype("indice") not in ("i32", "i64"):
        raise HookError(f"'indice' must be an i64 (or i32) tensor, got {ctx.input_dtype('indice')}",
                        operand="indice")
    ctx.set_output_dtype("dx", require_same_dtype(ctx, "x", "dy"))


@get_sbp("tdflow.max_pool_2d", "tdflow.max_pool_2d_grad")
def pool_sbp(ctx: InferContext):
    """A 2-D pooling (or its gradient) splits by batch or by channel (NCHW or NHWC); train.py's
    average pools register it too."""
    ch = 1 if channels_first(ctx) else 3
    return [signature(ctx, "S(0)", "S(0)"), signature(ctx, f"S({ch})", f"S({ch})")]


def window_complexity(ctx: InferContext, out: tuple | None) -> float | None:
    """One operation per ``kernel_size`` window element per element of the pooled ``out``."""
    n = numel(out)
    k = tuple(ctx.attr("kernel_size"))
    return None if n is None else float(n * k[0] * k[1])


@compute_complexity("tdflow.max_pool_2d", "tdflow.max_pool_2d_grad")
def max_pool_complexity(ctx: InferContext) -> float | None:
    """One comparison per window element per output element."""
    return window_complexity(ctx, _pool_out(ctx))


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


@infer_logical_tensor_desc("tdflow.dropout_grad")
@infer_physical_tensor_desc("tdflow.dropout_grad")
def dropout_grad_tensor_desc(ctx: InferContext) -> None:
    dy, mask = ctx.input_shape("dy"), ctx.input_shape("mask")
    if not compatible(dy, mask):
        raise HookError(f"'mask' has shape {fmt(mask)} but 'dy' has {fmt(dy)}", operand="mask")
    ctx.set_output_shape("dx", merge(dy, mask))


@infer_data_type("tdflow.dropout_grad")
def dropout_grad_data_type(ctx: InferContext) -> None:
    if ctx.input_dtype("mask") not in ("i1", "i8"):
        raise HookError(f"'mask' must be an i1 (or i8) tensor, got {ctx.input_dtype('mask')}",
                        operand="mask")
    ctx.set_output_dtype("dx", require_float(ctx, "dy"))


@get_sbp("tdflow.dropout", "tdflow.dropout_grad")
def dropout_sbp(ctx: InferContext):
    shape = ctx.input_shape("in" if ctx.op.mnemonic == "dropout" else "dy")
    return [signature(ctx, f"S({i})", f"S({i})") for i in range(len(shape or ()))]
