"""ONNX's MatMul (numpy's matmul: 1-D promotion, broadcast batch dims) and Gemm."""

from __future__ import annotations

from typing import Any

import numpy as np

from .api import Lowerer, Node, rule
from .common import broadcast_shape, reshape


def matmul(cx: Lowerer, a: Any, b: Any, *, transpose_b: bool = False) -> Any:
    """``numpy.matmul(a, b)`` with tdflow's matmul / batch_matmul."""
    sa, sb = list(cx.shape_of(a)), list(cx.shape_of(b))
    va, vb = len(sa) == 1, len(sb) == 1
    if va:
        a, sa = reshape(cx, a, [1, sa[0]]), [1, sa[0]]
    if vb:
        b, sb = reshape(cx, b, [sb[0], 1]), [sb[0], 1]
    if len(sa) == 2 and len(sb) == 2:
        y = cx.op("tdflow.matmul", [a, b], {"transpose_b": transpose_b})
    else:
        batch = broadcast_shape(sa[:-2], sb[:-2])
        nb = int(np.prod(batch, dtype=np.int64))
        a = _batched(cx, a, sa, batch, nb)
        b = _batched(cx, b, sb, batch, nb)
        y = cx.op("tdflow.batch_matmul", [a, b], {"transpose_b": transpose_b})
        m, k = sa[-2], (sb[-2] if transpose_b else sb[-1])
        y = reshape(cx, y, [*batch, m, k])
    shape = list(cx.shape_of(y))
    if va:
        shape.pop(-2)
    if vb:
        shape.pop(-1)
    return reshape(cx, y, shape)


def _batched(cx: Lowerer, x: Any, s: list[int], batch: tuple[int, ...], nb: int) -> Any:
    full = [*batch, *s[-2:]]
    if list(s) != full:
        x = reshape(cx, x, [1] * (len(full) - len(s)) + s)
        x = cx.op("tdflow.expand", [x], {"expand_shape": full})
    return reshape(cx, x, [nb, *s[-2:]])


@rule("MatMul")
def matmul_(cx: Lowerer, n: Node) -> list:
    return [matmul(cx, n.input(0), n.input(1))]


@rule("Gemm")
def gemm(cx: Lowerer, n: Node) -> list:
    """``alpha * A' B' + beta * C``."""
    a, b = n.input(0), n.input(1)
    alpha, beta = n.attrs["alpha"], n.attrs["beta"]
    y = cx.op("tdflow.matmul", [a, b], {"transpose_a": bool(n.attrs["transA"]),
                                        "transpose_b": bool(n.attrs["transB"]),
                                        "alpha": float(alpha)})
    if n.has_input(2):
        c = n.input(2)
        if beta != 1.0:
            c = cx.op("tdflow.broadcast_mul", [c, cx.scalar(beta, c)])
        y = cx.op("tdflow.broadcast_add", [y, c])
    return [y]
