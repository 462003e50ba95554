"""ONNX's Softmax and LogSoftmax (on any axis; before opset 13, on the input flattened to 2-D
at ``axis``), and the losses NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss."""

from __future__ import annotations

from typing import Any

import numpy as np

from .api import Lowerer, Node, rule
from .common import cast, norm_axis, on_last_axis, reshape

_OPS = {"Softmax": "tdflow.softmax", "LogSoftmax": "tdflow.log_softmax"}


@rule("Softmax", "LogSoftmax")
def softmax(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    shape = list(cx.shape_of(x))
    op = _OPS[n.op_type]
    if n.version < 13:
        axis = norm_axis(n.attrs["axis"], len(shape), cx)
        flat = reshape(cx, x, [int(np.prod(shape[:axis], dtype=np.int64)),
                               int(np.prod(shape[axis:], dtype=np.int64))])
        return [reshape(cx, cx.op(op, [flat]), shape)]
    axis = norm_axis(n.attrs["axis"], len(shape), cx)
    return [on_last_axis(cx, x, axis, lambda y: cx.op(op, [y]))]


def nll(cx: Lowerer, logp: Any, target: Any, weight: Any, reduction: str,
        ignore_index: int | None) -> Any:
    """ONNX's NegativeLogLikelihoodLoss of ``logp`` (N, C, d1...) and ``target`` (N, d1...)."""
    shape = list(cx.shape_of(logp))
    c = shape[1]
    dt = cx.type_of(logp).dtype
    tgt = target
    valid = None
    if ignore_index is not None:
        valid = cx.op("tdflow.broadcast_not_equal", [tgt, cx.scalar(ignore_index, tgt)])
        tgt = cx.op("tdflow.where", [valid, tgt, cx.scalar(0, tgt)])
    onehot = cx.op("tdflow.one_hot", [tgt], {"depth": c, "dtype": dt, "floating_on_value": 1.0,
                                             "integer_on_value": 1})
    # one_hot appends the class axis: move it to axis 1
    rank = len(shape)
    if rank > 2:
        perm = [0, rank - 1, *range(1, rank - 1)]
        onehot = cx.op("tdflow.transpose", [onehot], {"perm": perm})
    picked = cx.op("tdflow.reduce_sum", [cx.op("tdflow.broadcast_mul", [logp, onehot])],
                   {"axis": [1], "keepdims": False})
    loss = cx.op("tdflow.negative", [picked])
    w = None
    if weight is not None:
        w = cx.op("tdflow.gather", [weight, tgt], {"axis": 0})
    if valid is not None:
        vf = cast(cx, valid, dt)
        w = vf if w is None else cx.op("tdflow.broadcast_mul", [w, vf])
    if w is not None:
        loss = cx.op("tdflow.broadcast_mul", [loss, w])
    if reduction == "none":
        return loss
    axes = list(range(len(shape) - 1))
    total = cx.op("tdflow.reduce_sum", [loss], {"axis": axes, "keepdims": False})
    if reduction == "sum":
        return total
    if w is None:
        count = int(np.prod(cx.shape_of(loss), dtype=np.int64))
        return cx.op("tdflow.broadcast_div", [total, cx.scalar(count, total)])
    wsum = cx.op("tdflow.reduce_sum", [w], {"axis": axes, "keepdims": False})
    return cx.op("tdflow.broadcast_div", [total, wsum])


@rule("NegativeLogLikelihoodLoss")
def nll_loss(cx: Lowerer, n: Node) -> list:
    weight = n.inputs[2] if n.has_input(2) else None
    return [nll(cx, n.input(0), n.input(1), weight, n.attrs["reduction"],
                n.attrs.get("ignore_index"))]


@rule("SoftmaxCrossEntropyLoss")
def softmax_ce(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    logp = on_last_axis(cx, x, 1, lambda y: cx.op("tdflow.log_softmax", [y]))
    weight = n.inputs[2] if n.has_input(2) else None
    loss = nll(cx, logp, n.input(1), weight, n.attrs["reduction"], n.attrs.get("ignore_index"))
    return [loss, logp] if n.num_outputs > 1 else [loss]
