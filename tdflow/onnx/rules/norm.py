"""ONNX's normalizations: BatchNormalization (inference and training mode), LayerNormalization,
InstanceNormalization, GroupNormalization, RMSNormalization and LRN (local response
normalization over a window of channels)."""

from __future__ import annotations

import math

import numpy as np

from .api import Lowerer, Node, rule
from .common import norm_axis, reshape
from .windows import pad_value


@rule("BatchNormalization")
def batch_norm(cx: Lowerer, n: Node) -> list:
    """Inference with the running statistics: ``(x - mean) / sqrt(var + eps) * scale + B``;
    with ``training_mode`` the batch's own statistics (the population variance over every axis
    but 1) normalise, and the running ones come back updated by ``momentum``."""
    x, scale, bias, mean, var = (n.input(i) for i in range(5))
    if n.attrs.get("training_mode"):
        return _batch_norm_training(cx, n, x, scale, bias, mean, var)
    y = cx.ops("tdflow.normalization", [x, mean, var, scale, bias],
               {"axis": 1, "epsilon": float(n.attrs["epsilon"]), "training": False,
                "momentum": 0.0})
    return [y[0]]


def _batch_norm_training(cx: Lowerer, n: Node, x, scale, bias, mean, var) -> list:
    shape = cx.shape_of(x)
    axes = [a for a in range(len(shape)) if a != 1]
    count = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    stat = [1] * len(shape)
    stat[1] = shape[1]

    def batch_mean(v):
        s = cx.op("tdflow.reduce_sum", [v], {"axis": axes, "keepdims": True})
        return cx.op("tdflow.broadcast_div", [s, cx.scalar(count, s)])

    m = batch_mean(x)
    d = cx.op("tdflow.broadcast_sub", [x, m])
    v = batch_mean(cx.op("tdflow.broadcast_mul", [d, d]))
    m1, v1 = reshape(cx, m, [shape[1]]), reshape(cx, v, [shape[1]])
    y = cx.ops("tdflow.normalization", [x, m1, v1, scale, bias],
               {"axis": 1, "epsilon": float(n.attrs["epsilon"]), "training": False,
                "momentum": 0.0})[0]
    k = float(n.attrs["momentum"])

    def running(old, new):
        return cx.op("tdflow.broadcast_add", [cx.op("tdflow.broadcast_mul", [old, cx.scalar(k, old)]),
                                             cx.op("tdflow.broadcast_mul", [new, cx.scalar(1 - k, new)])])

    return [y, running(mean, m1), running(var, v1)][:n.num_outputs]


@rule("LayerNormalization")
def layer_norm(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    shape = list(cx.shape_of(x))
    axis = norm_axis(n.attrs["axis"], len(shape), cx)
    scale = n.input(1)
    norm_shape = shape[axis:]
    scale = reshape(cx, cx.op("tdflow.expand", [reshape(cx, scale, [1] * (
        len(norm_shape) - len(cx.shape_of(scale))) + list(cx.shape_of(scale)))],
        {"expand_shape": norm_shape}), norm_shape) if list(cx.shape_of(scale)) != norm_shape \
        else scale
    operands = [x, n.inputs[2] if n.has_input(2) else None, scale]
    y, mean, inv = cx.ops("tdflow.layer_norm", operands, {
        "center": n.has_input(2), "scale": True, "begin_norm_axis": axis,
        "begin_params_axis": axis, "epsilon": float(n.attrs["epsilon"])})
    stat_shape = shape[:axis] + [1] * (len(shape) - axis)
    return [y, reshape(cx, mean, stat_shape), reshape(cx, inv, stat_shape)][:n.num_outputs]


@rule("InstanceNormalization")
def instance_norm(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    c = cx.shape_of(x)[1]
    y = cx.ops("tdflow.group_norm", [x, n.input(2), n.input(1)],
               {"affine": True, "num_groups": c, "epsilon": float(n.attrs["epsilon"])})
    return [y[0]]


@rule("GroupNormalization")
def group_norm(cx: Lowerer, n: Node) -> list:
    x, scale, bias = n.input(0), n.input(1), n.input(2)
    shape = cx.shape_of(x)
    g = int(n.attrs["num_groups"])
    c = shape[1]
    eps = float(n.attrs["epsilon"])
    if n.version < 21:  # scale and bias per group: repeat each for its channels
        idx = np.repeat(np.arange(g, dtype=np.int64), c // g)
        scale = cx.op("tdflow.gather", [scale, cx.constant(idx)], {"axis": 0})
        bias = cx.op("tdflow.gather", [bias, cx.constant(idx)], {"axis": 0})
    y = cx.ops("tdflow.group_norm", [x, bias, scale],
               {"affine": True, "num_groups": g, "epsilon": eps})
    return [y[0]]


@rule("RMSNormalization")
def rms_norm(cx: Lowerer, n: Node) -> list:
    """``x / sqrt(mean(x^2 over axis..) + eps) * scale``."""
    x, scale = n.input(0), n.input(1)
    shape = cx.shape_of(x)
    axis = norm_axis(n.attrs["axis"], len(shape), cx)
    axes = list(range(axis, len(shape)))
    count = int(np.prod(shape[axis:], dtype=np.int64))
    sq = cx.op("tdflow.broadcast_mul", [x, x])
    ms = cx.op("tdflow.broadcast_div", [cx.op("tdflow.reduce_sum", [sq], {
        "axis": axes, "keepdims": True}), cx.scalar(count, x)])
    inv = cx.op("tdflow.rsqrt", [cx.op("tdflow.broadcast_add", [ms, cx.scalar(
        float(n.attrs["epsilon"]), x)])])
    y = cx.op("tdflow.broadcast_mul", [x, inv])
    return [cx.op("tdflow.broadcast_mul", [y, scale])]


@rule("LpNormalization")
def lp_normalization(cx: Lowerer, n: Node) -> list:
    """``x / ||x||_p`` along ``axis`` (p = 1 or 2)."""
    x = n.input(0)
    axis = norm_axis(int(n.attrs.get("axis", -1)), len(cx.shape_of(x)), cx)
    p = int(n.attrs.get("p", 2))
    if p == 1:
        norm = cx.op("tdflow.reduce_sum", [cx.op("tdflow.abs", [x])],
                     {"axis": [axis], "keepdims": True})
    elif p == 2:
        sq = cx.op("tdflow.broadcast_mul", [x, x])
        norm = cx.op("tdflow.sqrt", [cx.op("tdflow.reduce_sum", [sq], {"axis": [axis],
                                                                       "keepdims": True})])
    else:
        cx.unsupported(f"p = {p} (ONNX allows 1 and 2)")
    return [cx.op("tdflow.broadcast_div", [x, norm])]


@rule("MeanVarianceNormalization")
def mean_variance_normalization(cx: Lowerer, n: Node) -> list:
    """``(x - mean) / sqrt(var + 1e-9)`` over ``axes`` (default N, H, W)."""
    x = n.input(0)
    rank = len(cx.shape_of(x))
    axes = sorted({norm_axis(int(a), rank, cx) for a in (n.attrs.get("axes") or [0, 2, 3])})
    count = int(np.prod([cx.shape_of(x)[a] for a in axes], dtype=np.int64))
    mean_of = lambda v: cx.op("tdflow.broadcast_div", [  # noqa: E731
        cx.op("tdflow.reduce_sum", [v], {"axis": axes, "keepdims": True}), cx.scalar(count, v)])
    centred = cx.op("tdflow.broadcast_sub", [x, mean_of(x)])
    var = mean_of(cx.op("tdflow.broadcast_mul", [centred, centred]))
    std = cx.op("tdflow.sqrt", [cx.op("tdflow.broadcast_add", [var, cx.scalar(1e-9, var)])])
    return [cx.op("tdflow.broadcast_div", [centred, std])]


@rule("LRN")
def lrn(cx: Lowerer, n: Node) -> list:
    """``x / (bias + alpha / size * sum of x^2 over the channel window)^beta``."""
    x = n.input(0)
    xs = cx.shape_of(x)
    size = int(n.attrs["size"])
    alpha, beta = float(n.attrs.get("alpha", 1e-4)), float(n.attrs.get("beta", 0.75))
    bias = float(n.attrs.get("bias", 1.0))
    sq = cx.op("tdflow.square", [x])
    rest = math.prod(xs[2:])
    sq = reshape(cx, sq, [xs[0], 1, xs[1], rest])
    lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
    sq = pad_value(cx, sq, [lo, 0], [hi, 0], 0.0)
    parts = [cx.op("tdflow.slice", [sq], {"start": [0, 0, j, 0],
                                          "stop": [xs[0], 1, j + xs[1], rest],
                                          "step": [1, 1, 1, 1]}) for j in range(size)]
    total = parts[0] if size == 1 else cx.op("tdflow.add_n", [parts])
    total = reshape(cx, total, xs)
    den = cx.op("tdflow.broadcast_add", [cx.op("tdflow.broadcast_mul", [
        total, cx.scalar(alpha / size, x)]), cx.scalar(bias, x)])
    den = cx.op("tdflow.broadcast_pow", [den, cx.scalar(beta, x)])
    return [cx.op("tdflow.broadcast_div", [x, den])]
