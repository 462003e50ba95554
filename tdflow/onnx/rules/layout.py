"""ONNX ops that only move or select elements, as reshapes, transposes and gathers:
DepthToSpace, SpaceToDepth, Compress."""

from __future__ import annotations

import numpy as np

from .api import Lowerer, Node, rule
from .common import norm_axis, reshape, transpose


def _mode(n: Node, default: str) -> str:
    m = n.attrs.get("mode") or default
    return m.decode() if isinstance(m, bytes) else m


@rule("DepthToSpace")
def depth_to_space(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    b = int(n.attrs["blocksize"])
    N, C, H, W = cx.shape_of(x)
    c = C // (b * b)
    if _mode(n, "DCR") == "DCR":
        y = transpose(cx, reshape(cx, x, [N, b, b, c, H, W]), [0, 3, 4, 1, 5, 2])
    else:  # CRD
        y = transpose(cx, reshape(cx, x, [N, c, b, b, H, W]), [0, 1, 4, 2, 5, 3])
    return [reshape(cx, y, [N, c, H * b, W * b])]


@rule("SpaceToDepth")
def space_to_depth(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    b = int(n.attrs["blocksize"])
    N, C, H, W = cx.shape_of(x)
    y = reshape(cx, x, [N, C, H // b, b, W // b, b])
    perm = [0, 3, 5, 1, 2, 4] if _mode(n, "DCR") == "DCR" else [0, 1, 3, 5, 2, 4]
    return [reshape(cx, transpose(cx, y, perm), [N, C * b * b, H // b, W // b])]


@rule("Compress")
def compress(cx: Lowerer, n: Node) -> list:
    """The selected slices of ``input`` along ``axis`` (the flattened input without one):
    the condition decides the result's shape, so it must be known when compiling."""
    x = n.input(0)
    cond = np.asarray(cx.need_const(n.input(1), "the condition")).reshape(-1).astype(bool)
    axis = n.attrs.get("axis")
    if axis is None:
        x = reshape(cx, x, [int(np.prod(cx.shape_of(x), dtype=np.int64))])
        axis = 0
    axis = norm_axis(int(axis), len(cx.shape_of(x)), cx)
    idx = np.nonzero(cond[:cx.shape_of(x)[axis]])[0].astype(np.int64)
    return [cx.op("tdflow.gather", [x, cx.constant(idx)], {"axis": axis})]
