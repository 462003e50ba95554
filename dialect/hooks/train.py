"""Hooks and gradient rules of the ops in tdflow/ops/train.td (issue 13): reduce_min and
reduce_prod, avg_pool_2d and adaptive_avg_pool2d (with their gradients), softmax_cross_entropy
(with its gradient) and adam_update.

The reductions reuse reduce_sum/reduce_max's shape and dtype hooks; their gradients are rules
here (axes come from shapes). The pools reuse max_pool_2d's SBP hook, softmax_cross_entropy
sparse_softmax_cross_entropy's SBP and input-arg hooks. ``data_format`` is ``"channels_first"`` (NCHW) or
``"channels_last"`` (NHWC), as for max_pool_2d.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..grad.core import Emitter, Forward, grad_rule
from .context import HookError, InferContext, InputArgModifier
from .nn import channels_first, pool_sbp, window_complexity
from .optim import check_like_model, check_scalars
from .reduce import (
    check_loss_dy,
    reduce_data_type,
    reduce_sbp,
    reduce_tensor_desc,
    sce_grad_sbp,
    sce_input_args,
    sce_sbp,
)
from .registry import (
    compute_complexity,
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_physical_tensor_desc,
    modify_input_arg,
)
from .sbp import signature
from .shape_util import (
    compatible,
    conv_out_dim,
    fmt,
    normalize_axes,
    require_dy,
    require_float,
    require_rank,
    require_same_dtype,
)

# -- reduce_min, reduce_prod ----------------------------------------------------------------------
REDUCE = ("tdflow.reduce_min", "tdflow.reduce_prod")

infer_logical_tensor_desc(*REDUCE)(reduce_tensor_desc)
infer_physical_tensor_desc(*REDUCE)(reduce_tensor_desc)
infer_data_type(*REDUCE)(reduce_data_type)
get_sbp(*REDUCE)(reduce_sbp)  # split reduced axes are not partial sums: only kept axes split


def _axes(axes: Any, rank: int) -> list[int]:
    """``axis`` normalised to non-negative dims; an empty list means every dim."""
    return sorted(normalize_axes(list(axes), rank)) if axes else list(range(rank))


def _expand(g: Emitter, y: Any, x: Any, axes: list[int], keepdims: bool) -> Any:
    """``y`` (a reduction of ``x`` over ``axes``) broadcast back to ``x``'s shape."""
    bcast = [] if keepdims or not axes else axes
    return g.op("tdflow.broadcast_like", [y, x], {"broadcast_axes": bcast})[0]


@grad_rule("tdflow.reduce_min", saves=("input_tensor", "output_tensor"))
def _reduce_min(g: Emitter, fwd: Forward) -> dict[str, Any]:
    """The gradient goes to the minima, split evenly between ties (PyTorch's ``amin``)."""
    x, y = fwd.inputs["input_tensor"], fwd.outputs["output_tensor"]
    dy = fwd.douts["output_tensor"]
    axes = _axes(fwd.attrs["axis"], len(g.type_of(x).shape))
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
    axes = _axes(fwd.attrs["axis"], len(g.type_of(x).shape))
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


# -- pooling --------------------------------------------------------------------------------------
def _pair(ctx: InferContext, name: str, minimum: int) -> tuple[int, int]:
    v = tuple(int(e) for e in ctx.attr(name))
    if len(v) != 2:
        raise HookError(f"{name} must have 2 entries (one per spatial dim), got {list(v)}",
                        attr=name)
    if any(e < minimum for e in v):
        raise HookError(f"{name} entries must be >= {minimum}, got {list(v)}", attr=name)
    return v  # type: ignore[return-value]


def _pooled(ctx: InferContext, first: bool,
            spatial: Callable[[tuple], Sequence[Any]]) -> tuple | None:
    """``x`` (rank 4, checked; NCHW when ``first``, else NHWC) with its two spatial dims
    replaced by ``spatial(hw)``; ``None`` when ``x`` is unranked."""
    x = require_rank(ctx, "x", 4)
    if x is None:
        return None
    n, c, hw = (x[0], x[1], x[2:]) if first else (x[0], x[3], x[1:3])
    out = spatial(hw)
    return (n, c, *out) if first else (n, *out, c)


def avg_pool_out(ctx: InferContext) -> tuple | None:
    """avg_pool_2d's output shape from ``x`` and the attributes (checked)."""
    first = channels_first(ctx)
    k, s, p = _pair(ctx, "kernel_size", 1), _pair(ctx, "stride", 1), _pair(ctx, "padding", 0)
    if any(pp * 2 > kk for pp, kk in zip(p, k)):
        raise HookError(f"padding {list(p)} must be at most half the kernel size {list(k)}",
                        attr="padding")
    if ctx.attr("divisor_override") < 0:
        raise HookError(f"divisor_override must be >= 0 (0: none), got "
                        f"{ctx.attr('divisor_override')}", attr="divisor_override")

    def spatial(hw: tuple) -> list:
        out = []
        for i in range(2):
            o = conv_out_dim(hw[i], k[i], p[i], s[i], 1, ctx.attr("ceil_mode"))
            if o is not None and o <= 0:
                raise HookError(f"the {k[i]}-wide pooling window does not fit spatial dim {i} "
                                f"of size {hw[i]} with padding {p[i]}", operand="x")
            out.append(o)
        return out

    return _pooled(ctx, first, spatial)


def adaptive_out(ctx: InferContext) -> tuple | None:
    """adaptive_avg_pool2d's output shape (one ``output_size`` entry: square)."""
    first = channels_first(ctx)
    size = [int(e) for e in ctx.attr("output_size")]
    if len(size) == 1:
        size = size * 2
    if len(size) != 2 or any(e < 1 for e in size):
        raise HookError(f"output_size must be 1 or 2 entries >= 1, got "
                        f"{list(ctx.attr('output_size'))}", attr="output_size")
    return _pooled(ctx, first, lambda _: size)


POOL = {"tdflow.avg_pool_2d": avg_pool_out, "tdflow.adaptive_avg_pool2d": adaptive_out}
POOL_GRAD = {"tdflow.avg_pool_2d_grad": avg_pool_out,
             "tdflow.adaptive_avg_pool2d_grad": adaptive_out}


@infer_logical_tensor_desc(*POOL)
@infer_physical_tensor_desc(*POOL)
def pool_tensor_desc(ctx: InferContext) -> None:
    ctx.set_output_shape("y", POOL[ctx.op.name](ctx))


@infer_data_type(*POOL)
def pool_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("y", require_float(ctx, "x"))


@infer_logical_tensor_desc(*POOL_GRAD)
@infer_physical_tensor_desc(*POOL_GRAD)
def pool_grad_tensor_desc(ctx: InferContext) -> None:
    require_dy(ctx, POOL_GRAD[ctx.op.name](ctx), f"pooling 'x' {fmt(ctx.input_shape('x'))}")
    ctx.set_output_shape("dx", ctx.input_shape("x"))


@infer_data_type(*POOL_GRAD)
def pool_grad_data_type(ctx: InferContext) -> None:
    require_float(ctx, "x")
    ctx.set_output_dtype("dx", require_same_dtype(ctx, "x", "dy"))


get_sbp(*POOL, *POOL_GRAD)(pool_sbp)  # max_pool_2d's: split by batch or by channel


@compute_complexity("tdflow.avg_pool_2d", "tdflow.avg_pool_2d_grad")
def avg_pool_complexity(ctx: InferContext) -> float | None:
    """One addition per window element per output element."""
    return window_complexity(ctx, avg_pool_out(ctx))


# -- softmax_cross_entropy ------------------------------------------------------------------------
def _same_shape(ctx: InferContext, a: str, b: str) -> tuple | None:
    sa, sb = ctx.input_shape(a), ctx.input_shape(b)
    if not compatible(sa, sb):
        raise HookError(f"'{b}' has shape {fmt(sb)} but '{a}' has {fmt(sa)}; soft targets "
                        f"must have the prediction's shape", operand=b)
    return sa if sa is not None else sb


@infer_logical_tensor_desc("tdflow.softmax_cross_entropy")
@infer_physical_tensor_desc("tdflow.softmax_cross_entropy")
def sce_tensor_desc(ctx: InferContext) -> None:
    pred = _same_shape(ctx, "prediction", "label")
    if pred is not None and len(pred) < 1:
        raise HookError("'prediction' needs rank >= 1 (classes last)", operand="prediction")
    ctx.set_output_shape("prob", pred)
    ctx.set_output_shape("out", None if pred is None else pred[:-1])


@infer_data_type("tdflow.softmax_cross_entropy")
def sce_data_type(ctx: InferContext) -> None:
    require_float(ctx, "prediction")
    dtype = require_same_dtype(ctx, "prediction", "label")
    ctx.set_output_dtype("prob", dtype)
    ctx.set_output_dtype("out", dtype)


@infer_logical_tensor_desc("tdflow.softmax_cross_entropy_grad")
@infer_physical_tensor_desc("tdflow.softmax_cross_entropy_grad")
def sce_grad_tensor_desc(ctx: InferContext) -> None:
    prob = _same_shape(ctx, "prob", "label")
    if prob is not None and len(prob) < 1:
        raise HookError("'prob' needs rank >= 1 (classes last)", operand="prob")
    check_loss_dy(ctx, prob)
    ctx.set_output_shape("prediction_diff", prob)


@infer_data_type("tdflow.softmax_cross_entropy_grad")
def sce_grad_data_type(ctx: InferContext) -> None:
    require_float(ctx, "prob")
    require_same_dtype(ctx, "prob", "label")
    ctx.set_output_dtype("prediction_diff", require_same_dtype(ctx, "prob", "dy"))


# sparse_softmax_cross_entropy's: rows split alike (the soft targets with the prediction), and
# the targets are data
get_sbp("tdflow.softmax_cross_entropy")(sce_sbp)
get_sbp("tdflow.softmax_cross_entropy_grad")(sce_grad_sbp)
modify_input_arg("tdflow.softmax_cross_entropy")(sce_input_args)


@grad_rule("tdflow.softmax_cross_entropy_grad", saves=("dy", "label", "prob"))
def _sce_grad(g: Emitter, fwd: Forward) -> dict[str, Any]:
    """``prediction_diff = (prob - label) * dy[..., None]`` is bilinear: ``d dy`` sums
    ``ddiff * (prob - label)`` over the classes, ``d prob = ddiff * dy[..., None] = -d label``."""
    dd = fwd.douts["prediction_diff"]
    dy, label, prob = fwd.inputs["dy"], fwd.inputs["label"], fwd.inputs["prob"]
    rank = len(g.type_of(prob).shape)
    out: dict[str, Any] = {}
    if "dy" in fwd.wants:
        t = g.op("tdflow.fused_elementwise", [[dd, prob, label]],
                 {"expr": "mul(in0, sub(in1, in2))"})[0]
        out["dy"] = g.op("tdflow.reduce_sum", [t], {"axis": [rank - 1], "keepdims": False})[0]
    if fwd.wants & {"prob", "label"}:
        dyb = g.op("tdflow.broadcast_like", [dy, prob], {"broadcast_axes": [rank - 1]})[0]
        if "prob" in fwd.wants:
            out["prob"] = g.op("tdflow.fused_elementwise", [[dd, dyb]],
                               {"expr": "mul(in0, in1)"})[0]
        if "label" in fwd.wants:
            out["label"] = g.op("tdflow.fused_elementwise", [[dd, dyb]],
                                {"expr": "neg(mul(in0, in1))"})[0]
    return out


# -- adam_update ----------------------------------------------------------------------------------
_STATE = ("m", "v", "max_v", "model_copy")
_SCALARS = ("learning_rate", "scale_by_tensor", "skip_if", "bias_correction1", "bias_correction2")


@infer_logical_tensor_desc("tdflow.adam_update")
@infer_physical_tensor_desc("tdflow.adam_update")
def adam_tensor_desc(ctx: InferContext) -> None:
    check_like_model(ctx, ("model_diff", *_STATE))
    if ctx.attr("amsgrad") and not ctx.has_input("max_v"):
        raise HookError("amsgrad = true needs the 'max_v' operand (the running maximum of v)",
                        attr="amsgrad")
    check_scalars(ctx, _SCALARS)


@infer_data_type("tdflow.adam_update")
def adam_data_type(ctx: InferContext) -> None:
    dtype = require_float(ctx, "model")
    for name in ("model_diff", "m", "v", "max_v"):
        if ctx.has_input(name) and ctx.input_dtype(name) != dtype:
            raise HookError(f"'{name}' has element type {ctx.input_dtype(name)} but 'model' "
                            f"has {dtype}", operand=name)


@get_sbp("tdflow.adam_update")
def adam_sbp(ctx: InferContext):
    model = ctx.input_shape("model")
    scalars = dict.fromkeys(_SCALARS, "B")
    return [signature(ctx, {"model": f"S({i})", "model_diff": f"S({i})",
                            **{n: f"S({i})" for n in _STATE}, **scalars}, {})
            for i in range(len(model or ()))]


@modify_input_arg("tdflow.adam_update")
def adam_input_args(ctx: InferContext):
    """``model``, its ``model_copy`` and the moments ``m``, ``v``, ``max_v`` are written in
    place; nothing here needs a gradient."""
    mutable = InputArgModifier(is_mutable=True, requires_grad=False)
    return {"model": mutable, **dict.fromkeys(_STATE, mutable),
            "model_diff": InputArgModifier(requires_grad=False)}
