"""ONNX's reductions onto tdflow's ``reduce_*`` ops: sums, extrema, products, means, norms.

Axes are an attribute up to an op's opset-13/18 version and an optional input after it; an
absent or empty list reduces every axis unless ``noop_with_empty_axes`` says to do nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .api import Lowerer, Node, rule
from .common import norm_axes, static_ints

# op -> the schema version from which axes are an input
_AXES_INPUT_SINCE = {"ReduceSum": 13}


def _axes(cx: Lowerer, n: Node, rank: int) -> list[int] | None:
    """The reduced axes; ``None`` means "none" (a no-op)."""
    if n.version >= _AXES_INPUT_SINCE.get(n.op_type, 18):
        axes = static_ints(cx, n.inputs[1], "axes") if n.has_input(1) else []
    else:
        axes = list(n.attrs.get("axes") or [])
    if not axes:
        return None if n.attrs.get("noop_with_empty_axes") else list(range(rank))
    return sorted(set(norm_axes(axes, rank, cx)))


def _reduce(cx: Lowerer, op: str, x: Any, axes: list[int], keepdims: bool) -> Any:
    if not axes:
        return x
    return cx.op(op, [x], {"axis": axes, "keepdims": keepdims})


def _count(cx: Lowerer, x: Any, axes: list[int]) -> int:
    shape = cx.shape_of(x)
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


def _empty_extremum(cx: Lowerer, x: Any, axes: list[int], keep: bool, is_max: bool) -> Any:
    """ReduceMax/ReduceMin over no elements: the identity of the reduction, as ONNX defines it
    (the lowest value of the type for a max, ``-inf`` for floats and ``False`` for bool; the
    highest for a min), in the reduced shape."""
    from tdflow.dialect.types import DTYPES

    shape = cx.shape_of(x)
    out = [1 if i in axes else d for i, d in enumerate(shape) if keep or i not in axes]
    dt = cx.type_of(x).dtype
    np_dt = np.dtype(DTYPES[dt]) if dt != "bf16" else np.dtype(np.float32)
    if np_dt.kind == "b":
        fill = not is_max
    elif np_dt.kind == "f":
        fill = -np.inf if is_max else np.inf
    else:
        info = np.iinfo(np_dt)
        fill = info.min if is_max else info.max
    return cx.constant(np.full(out, fill, np_dt), dtype="bf16" if dt == "bf16" else None)


def _square(cx: Lowerer, x: Any) -> Any:
    return cx.op("tdflow.broadcast_mul", [x, x])


@rule("ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceMean", "ReduceL1",
      "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare")
def reduce(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    rank = len(cx.shape_of(x))
    axes = _axes(cx, n, rank)
    keep = bool(n.attrs.get("keepdims", 1))
    t = n.op_type
    if axes is None:  # noop_with_empty_axes: the input itself (ReduceSumSquare etc. still map)
        axes = []
    if t in ("ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"):
        if _count(cx, x, axes) == 0 and axes and t in ("ReduceMax", "ReduceMin"):
            return [_empty_extremum(cx, x, axes, keep, t == "ReduceMax")]
        op = {"ReduceSum": "tdflow.reduce_sum", "ReduceMax": "tdflow.reduce_max",
              "ReduceMin": "tdflow.reduce_min", "ReduceProd": "tdflow.reduce_prod"}[t]
        return [_reduce(cx, op, x, axes, keep)]
    if t == "ReduceMean":
        s = _reduce(cx, "tdflow.reduce_sum", x, axes, keep)
        return [cx.op("tdflow.broadcast_div", [s, cx.scalar(max(_count(cx, x, axes), 1), s)])
                if axes else s]
    if t == "ReduceL1":
        return [_reduce(cx, "tdflow.reduce_sum", cx.op("tdflow.abs", [x]), axes, keep)]
    if t == "ReduceSumSquare":
        return [_reduce(cx, "tdflow.reduce_sum", _square(cx, x), axes, keep)]
    if t == "ReduceL2":
        s = _reduce(cx, "tdflow.reduce_sum", _square(cx, x), axes, keep)
        if cx.type_of(x).dtype.startswith(("i", "u")):
            s = cx.op("tdflow.cast", [s], {"dtype": "f64"})
            r = cx.op("tdflow.sqrt", [s])
            return [cx.op("tdflow.cast", [r], {"dtype": cx.type_of(x).dtype})]
        return [cx.op("tdflow.sqrt", [s])]
    if t == "ReduceLogSum":
        return [cx.op("tdflow.log", [_reduce(cx, "tdflow.reduce_sum", x, axes, keep)])]
    # ReduceLogSumExp: max + log(sum(exp(x - max))), finite for large inputs
    if not axes:
        return [x]
    m = cx.op("tdflow.reduce_max", [x], {"axis": axes, "keepdims": True})
    finite = cx.op("tdflow.where", [cx.op("tdflow.broadcast_equal", [m, m]), m,
                                    cx.scalar(0, m)])
    e = cx.op("tdflow.exp", [cx.op("tdflow.broadcast_sub", [x, finite])])
    s = cx.op("tdflow.log", [cx.op("tdflow.reduce_sum", [e], {"axis": axes, "keepdims": keep})])
    mk = finite if keep else cx.op("tdflow.reshape", [finite], {
        "shape": [d for i, d in enumerate(cx.shape_of(x)) if i not in axes]})
    return [cx.op("tdflow.broadcast_add", [s, mk])]
