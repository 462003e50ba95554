"""Hooks and gradient rules of the reduce family: reduce_sum, reduce_max, reduce_min,
reduce_prod, reduce_sum_like, argmax, top_k, cumsum, cumprod and cumprod_grad.

Gradient rules are Python where axes come from shapes (a ``grad`` field cannot say them).

>>> top_k_shape((4, 10), 3), top_k_shape((2, 2), 5)
((4, 3), (2, 2))
"""

from __future__ import annotations

from typing import Any

from ..grad.core import Emitter, Forward, GradError, grad_rule
from ._like import like_data_type, like_input_args, like_sbp
from ._sbp import signature, split_dims
from ._shape import Shape, compatible, fmt, normalize_axes
from .context import HookError, InferContext
from .registry import (
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_physical_tensor_desc,
    modify_input_arg,
)


def _grad_axes(axes: Any, rank: int) -> list[int]:
    """``axis`` normalised to non-negative dims; an empty list means every dim. (Gradient
    rules read the forward op's attributes as written, not normalized.)"""
    return sorted(normalize_axes(list(axes), rank)) if axes else list(range(rank))


def _expand_to(g: Emitter, dy: Any, x: Any, axes: list[int], keepdims: bool) -> Any:
    """``dy`` (a reduction of ``x`` over ``axes``) broadcast back to ``x``'s shape."""
    if keepdims or not axes:
        return g.op("tdflow.broadcast_like", [dy, x], {"broadcast_axes": []})[0]
    return g.op("tdflow.broadcast_like", [dy, x], {"broadcast_axes": axes})[0]


@grad_rule("tdflow.reduce_sum", saves=("input_tensor",))
def _reduce_sum(g: Emitter, fwd: Forward) -> dict[str, Any]:
    x, dy = fwd.inputs["input_tensor"], fwd.douts["output_tensor"]
    axes = _grad_axes(fwd.attrs["axis"], len(g.type_of(x).shape))
    return {"input_tensor": _expand_to(g, dy, x, axes, fwd.attrs["keepdims"])}


@grad_rule("tdflow.reduce_max", saves=("input_tensor", "output_tensor"))
def _reduce_max(g: Emitter, fwd: Forward) -> dict[str, Any]:
    """The gradient goes to the maxima, split evenly between ties (PyTorch's ``amax``)."""
    x, y, dy = fwd.inputs["input_tensor"], fwd.outputs["output_tensor"], fwd.douts[
        "output_tensor"]
    rank = len(g.type_of(x).shape)
    axes = _grad_axes(fwd.attrs["axis"], rank)
    keep = fwd.attrs["keepdims"]
    yb = _expand_to(g, y, x, axes, keep)
    dyb = _expand_to(g, dy, x, axes, keep)
    dtype = g.type_of(x).dtype
    hit = g.op("tdflow.fused_elementwise", [[x, yb]],
               {"expr": f"cast(eq(in0, in1), {dtype})"})[0]
    count = g.op("tdflow.reduce_sum", [hit], {"axis": axes, "keepdims": True})[0]
    countb = g.op("tdflow.broadcast_like", [count, x], {"broadcast_axes": []})[0]
    dx = g.op("tdflow.fused_elementwise", [[hit, dyb, countb]],
              {"expr": "div(mul(in0, in1), in2)"})[0]
    return {"input_tensor": dx}


@grad_rule("tdflow.reduce_sum_like", saves=("x",), inputs=("x",))
def _reduce_sum_like(g: Emitter, fwd: Forward) -> dict[str, Any]:
    x, dy = fwd.inputs["x"], fwd.douts["y"]
    rank = len(g.type_of(x).shape)
    axes = sorted(normalize_axes(list(fwd.attrs["axis"]), rank)) if fwd.attrs["axis"] else []
    keep = len(g.type_of(dy).shape) == rank
    return {"x": _expand_to(g, dy, x, axes, keep)}


REDUCE = ("tdflow.reduce_sum", "tdflow.reduce_max")


def reduced_shape(shape, axes, keepdims: bool):
    """Shape after reducing ``axes`` (all when empty); ``None`` when unranked."""
    if shape is None:
        return None
    axes = normalize_axes(axes, len(shape)) if axes else tuple(range(len(shape)))
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


@infer_logical_tensor_desc(*REDUCE)
@infer_physical_tensor_desc(*REDUCE)
def reduce_tensor_desc(ctx: InferContext) -> None:
    shape = ctx.input_shape("input_tensor")
    ctx.set_output_shape("output_tensor",
                         reduced_shape(shape, ctx.attr("axis"), ctx.attr("keepdims")))


@infer_data_type(*REDUCE)
def reduce_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("output_tensor", ctx.input_dtype("input_tensor"))


@get_sbp(*REDUCE)
def reduce_sbp(ctx: InferContext):
    shape = ctx.input_shape("input_tensor")
    if shape is None:
        return []
    # the dialect normalized axis (TDF_AxesAttr): non-negative, in range, none twice
    axes = tuple(ctx.attr("axis")) or tuple(range(len(shape)))
    keep = ctx.attr("keepdims")
    sigs = []
    for i in range(len(shape)):
        if i in axes:
            if ctx.op.mnemonic == "reduce_sum":  # splitting a summed axis leaves partial sums
                sigs.append(signature(ctx, f"S({i})", "P"))
            continue
        out_axis = i if keep else i - sum(1 for a in axes if a < i)
        sigs.append(signature(ctx, f"S({i})", f"S({out_axis})"))
    return sigs


# -- argmax and top_k -----------------------------------------------------------------------------
def _last_dim(ctx: InferContext) -> Shape | None:
    shape = ctx.input_shape("in")
    if shape is not None and not shape:
        raise HookError("'in' is a scalar: the op works along its last dim", operand="in")
    return shape


def top_k_shape(shape: Shape, k: int) -> Shape:
    """The result shape of ``top_k``: the last dim cut to ``min(k, n)``."""
    n = shape[-1]
    return tuple(shape[:-1]) + ((None if n is None else min(k, n)),)


@infer_logical_tensor_desc("tdflow.argmax")
@infer_physical_tensor_desc("tdflow.argmax")
def argmax_tensor_desc(ctx: InferContext) -> None:
    shape = _last_dim(ctx)
    ctx.set_output_shape("out", None if shape is None else tuple(shape[:-1]))


@infer_logical_tensor_desc("tdflow.top_k")
@infer_physical_tensor_desc("tdflow.top_k")
def top_k_tensor_desc(ctx: InferContext) -> None:
    k = int(ctx.attr("k"))
    if k < 0:
        raise HookError(f"k must be >= 0, got {k}", attr="k")
    shape = _last_dim(ctx)
    ctx.set_output_shape("out", None if shape is None else top_k_shape(shape, k))


@infer_data_type("tdflow.argmax", "tdflow.top_k")
def positions_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("out", "i64")


@get_sbp("tdflow.argmax", "tdflow.top_k")
def last_dim_sbp(ctx: InferContext):
    """Splits along every dim but the last (the one reduced) survive."""
    shape = ctx.input_shape("in")
    return split_dims(ctx, shape[:-1] if shape else ())


# -- cumsum, cumprod, cumprod_grad ----------------------------------------------------------------
@infer_logical_tensor_desc("tdflow.cumsum", "tdflow.cumprod")
@infer_physical_tensor_desc("tdflow.cumsum", "tdflow.cumprod")
def scan_tensor_desc(ctx: InferContext) -> None:
    ctx.set_output_shape("y", ctx.input_shape("x"))  # dim: TDF_ScanAxisAttr of x


@infer_data_type("tdflow.cumsum", "tdflow.cumprod")
def scan_data_type(ctx: InferContext) -> None:
    dt = ctx.input_dtype("x")
    if dt == "i1":
        raise HookError("'x' is a boolean tensor: a running sum or product needs numbers",
                        operand="x")
    ctx.set_output_dtype("y", dt)


@infer_logical_tensor_desc("tdflow.cumprod_grad")
@infer_physical_tensor_desc("tdflow.cumprod_grad")
def cumprod_grad_tensor_desc(ctx: InferContext) -> None:
    shape = ctx.input_shape("input")
    for name in ("dy", "output"):
        other = ctx.input_shape(name)
        if shape is not None and other is not None and tuple(other) != tuple(shape):
            raise HookError(f"'{name}' has shape {fmt(other)}, 'input' {fmt(shape)}: they must "
                            f"agree", operand=name)
    ctx.set_output_shape("dx", shape)


@infer_data_type("tdflow.cumprod_grad")
def cumprod_grad_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("dx", ctx.input_dtype("dy"))


@get_sbp("tdflow.cumsum", "tdflow.cumprod", "tdflow.cumprod_grad")
def scan_sbp(ctx: InferContext):
    """Splits along every dim but the scanned one survive."""
    name = "input" if ctx.op_name.endswith("_grad") else "x"
    shape = ctx.input_shape(name)
    if not shape:
        return []
    return split_dims(ctx, shape, skip=(ctx.attr("dim"),))


@grad_rule("tdflow.cumsum", saves=())
def _cumsum(g: Emitter, fwd: Forward) -> dict[str, Any]:
    """The running sum of ``dy`` from the far end: ``sum(dy) - cumsum(dy) + dy``."""
    dy = fwd.douts["y"]
    shape = g.type_of(dy).shape
    if shape is None:
        raise GradError("the gradient of 'tdflow.cumsum' needs the rank of 'y'")
    dim = int(fwd.attrs["dim"]) % max(len(shape), 1)
    run = g.op("tdflow.cumsum", [dy], {"dim": dim})[0]
    total = g.op("tdflow.reduce_sum", [dy], {"axis": [dim], "keepdims": True})[0]
    total = g.op("tdflow.broadcast_like", [total, dy], {"broadcast_axes": []})[0]
    return {"x": g.op("tdflow.fused_elementwise", [[total, run, dy]],
                      {"expr": "add(sub(in0, in1), in2)"})[0]}


# -- reduce_sum_like and broadcast_like -----------------------------------------------------------
@infer_logical_tensor_desc("tdflow.reduce_sum_like")
@infer_physical_tensor_desc("tdflow.reduce_sum_like")
def reduce_sum_like_tensor_desc(ctx: InferContext) -> None:
    x, like, axes = ctx.input_shape("x"), ctx.input_shape("like"), ctx.attr("axis")
    if x is not None and like is not None:
        if not axes:
            if not compatible(x, like):
                raise HookError(f"with an empty axis, 'x' {fmt(x)} and 'like' {fmt(like)} must "
                                f"have the same shape", operand="like")
        else:
            normalize_axes(axes, len(x))
            dropped, kept = reduced_shape(x, axes, False), reduced_shape(x, axes, True)
            if not (compatible(dropped, like) or compatible(kept, like)):
                raise HookError(f"summing 'x' {fmt(x)} over axis {list(axes)} gives {fmt(dropped)} "
                                f"(or {fmt(kept)} keeping dims), not 'like''s shape {fmt(like)}",
                                operand="like")
    ctx.set_output_shape("y", like)


# -- reduce_min, reduce_prod ----------------------------------------------------------------------
REDUCE_MIN_PROD = ("tdflow.reduce_min", "tdflow.reduce_prod")


infer_logical_tensor_desc(*REDUCE_MIN_PROD)(reduce_tensor_desc)


infer_physical_tensor_desc(*REDUCE_MIN_PROD)(reduce_tensor_desc)


infer_data_type(*REDUCE_MIN_PROD)(reduce_data_type)


get_sbp(*REDUCE_MIN_PROD)(reduce_sbp)  # split reduced axes are not partial sums: only kept axes split


def _expand(g: Emitter, y: Any, x: Any, axes: list[int], keepdims: bool) -> Any:
    """``y`` (a reduction of ``x`` over ``axes``) broadcast back to ``x``'s shape."""
    bcast = [] if keepdims or not axes else axes
    return g.op("tdflow.broadcast_like", [y, x], {"broadcast_axes": bcast})[0]


@grad_rule("tdflow.reduce_min", saves=("input_tensor", "output_tensor"))
def _reduce_min(g: Emitter, fwd: Forward) -> dict[str, Any]:
    """The gradient goes to the minima, split evenly between ties (PyTorch's ``amin``)."""
    x, y = fwd.inputs["input_tensor"], fwd.outputs["output_tensor"]
    dy = fwd.douts["output_tensor"]
    axes = _grad_axes(fwd.attrs["axis"], len(g.type_of(x).shape))
    keep = fwd.attrs["keepdims"]
    dtype = g.type_of(x).dtype
    hit = g.op("tdflow.fused_elementwise", [[x, _expand(g, y, x, axes, keep)]],
               {"expr": f"cast(eq(in0, in1), {dtype})"})[0]
    count = g.op("tdflow.reduce_sum", [hit], {"axis": axes, "keepdims": True})[0]
    dx = g.op("tdflow.fused_elementwise", [[hit, _expand(g, dy, x, axes, keep), count]],
              {"expr": "div(mul(in0, in1), in2)"})[0]
    return {"input_tensor": dx}


@grad_rule("tdflow.reduce_prod", saves=("input_tensor",))
def _reduce_prod(g: Emitter, fwd: Forward) -> dict[str, Any]:
    """``dy * prod / x`` without dividing by zero: per reduced slice, with no zero it is
    ``prod / x``; with one zero the zero's entry is the product of the others and the rest 0;
    with two or more zeros every entry is 0."""
    x, dy = fwd.inputs["input_tensor"], fwd.douts["output_tensor"]
    axes = _grad_axes(fwd.attrs["axis"], len(g.type_of(x).shape))
    dtype = g.type_of(x).dtype
    zero = g.op("tdflow.fused_elementwise", [[x]], {"expr": f"cast(eq(in0, 0.0), {dtype})"})[0]
    safe = g.op("tdflow.fused_elementwise", [[x]], {"expr": "where(eq(in0, 0.0), 1.0, in0)"})[0]
    zeros = g.op("tdflow.reduce_sum", [zero], {"axis": axes, "keepdims": True})[0]
    prod = g.op("tdflow.reduce_prod", [safe], {"axis": axes, "keepdims": True})[0]
    dyb = _expand(g, dy, x, axes, fwd.attrs["keepdims"])
    # in0 zero mask, in1 zeros per slice, in2 product of the non-zeros, in3 safe x, in4 dy
    expr = ("mul(in4, where(eq(in1, 0.0), div(in2, in3), "
            f"mul(mul(in0, cast(eq(in1, 1.0), {dtype})), in2)))")
    dx = g.op("tdflow.fused_elementwise", [[zero, zeros, prod, safe, dyb]], {"expr": expr})[0]
    return {"input_tensor": dx}


# reduce_sum_like shares broadcast_like's dtype, SBP and input-arg rules (each is the other's
# gradient: the result takes ``like``'s shape and ``x``'s dtype).
infer_data_type("tdflow.reduce_sum_like")(like_data_type)
get_sbp("tdflow.reduce_sum_like")(like_sbp)
modify_input_arg("tdflow.reduce_sum_like")(like_input_args)
