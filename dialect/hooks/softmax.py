"""Hooks and gradient rules of the softmax family: softmax, log_softmax, softmax_grad and the
cross-entropy losses (sparse and dense labels) with their gradients.
"""

from __future__ import annotations

from typing import Any

from ..grad.core import Emitter, Forward, grad_rule
from ._sbp import first_rank, signature, split_all
from ._shape import (
    INT_DTYPES,
    compatible,
    fmt,
    merge,
    numel,
    require_float,
    require_same_dtype,
    same_dim,
)
from .context import HookError, InferContext, InputArgModifier
from .registry import (
    compute_complexity,
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_physical_tensor_desc,
    modify_input_arg,
)

# -- softmax family -----------------------------------------------------------------------------
SOFTMAX = {"tdflow.softmax": "out", "tdflow.log_softmax": "prob"}


@infer_logical_tensor_desc(*SOFTMAX)
@infer_physical_tensor_desc(*SOFTMAX)
def softmax_tensor_desc(ctx: InferContext) -> None:
    shape = ctx.input_shape("in")
    if shape is not None and len(shape) == 0:
        raise HookError("softmax needs a tensor of rank >= 1, got a scalar", operand="in")
    ctx.set_output_shape(SOFTMAX[ctx.op.name], shape)


@infer_data_type(*SOFTMAX)
def softmax_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype(SOFTMAX[ctx.op.name], require_float(ctx, "in"))


@get_sbp(*SOFTMAX)
def softmax_sbp(ctx: InferContext):
    shape = ctx.input_shape("in")
    return [signature(ctx, f"S({i})", f"S({i})") for i in range(len(shape) - 1)] if shape else []


@compute_complexity("tdflow.softmax")
def softmax_complexity(ctx: InferContext) -> float | None:
    """About five operations per element: max, subtract, exp, sum, divide."""
    n = numel(ctx.input_shape("in"))
    return None if n is None else 5.0 * n


# -- sparse softmax cross-entropy ------------------------------------------------------------------
def _check_labels(ctx: InferContext, pred_shape) -> None:
    label = ctx.input_shape("label")
    if ctx.input_dtype("label") not in INT_DTYPES:
        raise HookError(f"'label' must hold integer class indices ({', '.join(INT_DTYPES)}), got "
                        f"{ctx.input_dtype('label')}", operand="label")
    if pred_shape is not None and label is not None and not compatible(label, pred_shape[:-1]):
        raise HookError(f"'label' has shape {fmt(label)} but 'prediction' {fmt(pred_shape)} needs "
                        f"labels of shape {fmt(pred_shape[:-1])}", operand="label")


def _check_depth(ctx: InferContext, shape) -> None:
    depth = ctx.attr("depth")
    if depth < 0:
        raise HookError(f"depth must be >= 0, got {depth}", attr="depth")
    if depth > 0 and shape is not None and not same_dim(shape[-1], depth):
        raise HookError(f"depth = {depth} but the class dim of the prediction is {shape[-1]}",
                        attr="depth")


@infer_logical_tensor_desc("tdflow.sparse_softmax_cross_entropy")
@infer_physical_tensor_desc("tdflow.sparse_softmax_cross_entropy")
def sce_tensor_desc(ctx: InferContext) -> None:
    pred = ctx.input_shape("prediction")
    if pred is not None and len(pred) < 1:
        raise HookError("'prediction' needs rank >= 1 (classes last)", operand="prediction")
    _check_labels(ctx, pred)
    _check_depth(ctx, pred)
    ctx.set_output_shape("prob", pred)
    ctx.set_output_shape("out", None if pred is None else pred[:-1])


@infer_data_type("tdflow.sparse_softmax_cross_entropy")
def sce_data_type(ctx: InferContext) -> None:
    dtype = require_float(ctx, "prediction")
    _check_labels(ctx, None)
    ctx.set_output_dtype("prob", dtype)
    ctx.set_output_dtype("out", dtype)


def check_loss_dy(ctx: InferContext, prob) -> None:
    """:class:`HookError` naming ``dy`` unless it has the shape of the loss of ``prob`` (its
    shape without the class dim); used by both cross-entropy gradients."""
    dy = ctx.input_shape("dy")
    if prob is not None and not compatible(dy, prob[:-1]):
        raise HookError(f"'dy' has shape {fmt(dy)} but the loss of 'prob' {fmt(prob)} has "
                        f"{fmt(prob[:-1])}", operand="dy")


def split_but_classes(ctx: InferContext, operand: str) -> list:
    """Every tensor split alike along one of the dims of ``operand`` but the last (classes);
    the soft targets of softmax_cross_entropy (train.py) split with the prediction too."""
    shape = ctx.input_shape(operand)
    rank = len(shape) if shape is not None else 2
    return split_all(ctx, range(rank - 1))


@get_sbp("tdflow.sparse_softmax_cross_entropy")
def sce_sbp(ctx: InferContext):
    return split_but_classes(ctx, "prediction")


@modify_input_arg("tdflow.sparse_softmax_cross_entropy")
def sce_input_args(ctx: InferContext):
    """Labels are data, not parameters: they never need a gradient (OneFlow's rule; train.py
    registers this hook for softmax_cross_entropy's soft targets too)."""
    return {"label": InputArgModifier(requires_grad=False)}


@infer_logical_tensor_desc("tdflow.sparse_softmax_cross_entropy_grad")
@infer_physical_tensor_desc("tdflow.sparse_softmax_cross_entropy_grad")
def sce_grad_tensor_desc(ctx: InferContext) -> None:
    prob = ctx.input_shape("prob")
    _check_labels(ctx, prob)
    _check_depth(ctx, prob)
    check_loss_dy(ctx, prob)
    ctx.set_output_shape("prediction_diff", prob)


@infer_data_type("tdflow.sparse_softmax_cross_entropy_grad")
def sce_grad_data_type(ctx: InferContext) -> None:
    dtype = require_float(ctx, "prob")
    if ctx.input_dtype("dy") != dtype:
        raise HookError(f"'dy' has element type {ctx.input_dtype('dy')} but 'prob' has {dtype}",
                        operand="dy")
    ctx.set_output_dtype("prediction_diff", dtype)


@get_sbp("tdflow.sparse_softmax_cross_entropy_grad")
def sce_grad_sbp(ctx: InferContext):
    return split_but_classes(ctx, "prob")


# -- sparse_softmax_cross_entropy_with_grad (fuse-elementwise makes it) ------------------------
SCE_WITH_GRAD = "tdflow.sparse_softmax_cross_entropy_with_grad"


@infer_logical_tensor_desc(SCE_WITH_GRAD)
@infer_physical_tensor_desc(SCE_WITH_GRAD)
def sce_with_grad_tensor_desc(ctx: InferContext) -> None:
    """The loss's shape checks, then ``dy``'s against the loss: ``out`` of shape
    ``prediction.shape[:-1]``, ``prediction_diff`` the prediction's."""
    pred = ctx.input_shape("prediction")
    if pred is not None and len(pred) < 1:
        raise HookError("'prediction' needs rank >= 1 (classes last)", operand="prediction")
    _check_labels(ctx, pred)
    _check_depth(ctx, pred)
    check_loss_dy(ctx, pred)
    ctx.set_output_shape("out", None if pred is None else pred[:-1])
    ctx.set_output_shape("prediction_diff", pred)


@infer_data_type(SCE_WITH_GRAD)
def sce_with_grad_data_type(ctx: InferContext) -> None:
    dtype = require_float(ctx, "prediction")
    _check_labels(ctx, None)
    if ctx.input_dtype("dy") != dtype:
        raise HookError(f"'dy' has element type {ctx.input_dtype('dy')} but 'prediction' has "
                        f"{dtype}", operand="dy")
    ctx.set_output_dtype("out", dtype)
    ctx.set_output_dtype("prediction_diff", dtype)


@get_sbp(SCE_WITH_GRAD)
def sce_with_grad_sbp(ctx: InferContext):
    """Split by rows as the two ops it replaces (never by class: a shard's loss would miss
    the other classes' softmax sum)."""
    return split_but_classes(ctx, "prediction")


# -- softmax_cross_entropy ------------------------------------------------------------------------
def _same_shape(ctx: InferContext, a: str, b: str) -> tuple | None:
    sa, sb = ctx.input_shape(a), ctx.input_shape(b)
    if not compatible(sa, sb):
        raise HookError(f"'{b}' has shape {fmt(sb)} but '{a}' has {fmt(sa)}; soft targets "
                        f"must have the prediction's shape", operand=b)
    return sa if sa is not None else sb


@infer_logical_tensor_desc("tdflow.softmax_cross_entropy")
@infer_physical_tensor_desc("tdflow.softmax_cross_entropy")
def dense_sce_tensor_desc(ctx: InferContext) -> None:
    pred = _same_shape(ctx, "prediction", "label")
    if pred is not None and len(pred) < 1:
        raise HookError("'prediction' needs rank >= 1 (classes last)", operand="prediction")
    ctx.set_output_shape("prob", pred)
    ctx.set_output_shape("out", None if pred is None else pred[:-1])


@infer_data_type("tdflow.softmax_cross_entropy")
def dense_sce_data_type(ctx: InferContext) -> None:
    require_float(ctx, "prediction")
    dtype = require_same_dtype(ctx, "prediction", "label")
    ctx.set_output_dtype("prob", dtype)
    ctx.set_output_dtype("out", dtype)


@infer_logical_tensor_desc("tdflow.softmax_cross_entropy_grad")
@infer_physical_tensor_desc("tdflow.softmax_cross_entropy_grad")
def dense_sce_grad_tensor_desc(ctx: InferContext) -> None:
    prob = _same_shape(ctx, "prob", "label")
    if prob is not None and len(prob) < 1:
        raise HookError("'prob' needs rank >= 1 (classes last)", operand="prob")
    check_loss_dy(ctx, prob)
    ctx.set_output_shape("prediction_diff", prob)


@infer_data_type("tdflow.softmax_cross_entropy_grad")
def dense_sce_grad_data_type(ctx: InferContext) -> None:
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


# -- softmax_grad ---------------------------------------------------------------------------------
@infer_logical_tensor_desc("tdflow.softmax_grad")
@infer_physical_tensor_desc("tdflow.softmax_grad")
def softmax_grad_tensor_desc(ctx: InferContext) -> None:
    fwd, grad = "y", "dy"
    a, b = ctx.input_shape(fwd), ctx.input_shape(grad)
    if not compatible(a, b):
        raise HookError(f"'{grad}' has shape {fmt(b)} but '{fwd}' has {fmt(a)}; they must match",
                        operand=grad)
    ctx.set_output_shape("dx", merge(b, a))


@infer_data_type("tdflow.softmax_grad")
def softmax_grad_data_type(ctx: InferContext) -> None:
    dtype = require_same_dtype(ctx, "y", "dy")
    require_float(ctx, "dy")
    ctx.set_output_dtype("dx", dtype)


@get_sbp("tdflow.softmax_grad")
def softmax_grad_sbp(ctx: InferContext):
    rank = first_rank(ctx) - 1  # reduces over the last axis
    return split_all(ctx, range(max(rank, 0)))
