"""ONNX's shape ops: Reshape, Flatten, (Un)Squeeze, Transpose, Concat, Split, Slice, Gather,
Expand, Shape, Size, Constant, ConstantOfShape, Range.

Shapes, axes and indices that ONNX passes as tensors must be known when the model is compiled
(``cx.need_const``): constants fold at import, and graph inputs are specialised on by the
backend. ``Shape`` of a statically shaped value is itself a constant, so exporters' shape
arithmetic (``Shape -> Gather -> Concat -> Reshape``) folds away.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .api import Lowerer, Node, rule
from .common import broadcast_shape, norm_axes, norm_axis, reshape, static_ints, transpose


@rule("Reshape")
def reshape_(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    in_shape = cx.shape_of(x)
    shape = (list(n.attrs["shape"]) if n.version < 5 else
             static_ints(cx, n.input(1), "the target shape"))
    allowzero = n.attrs.get("allowzero") or 0
    out = []
    for i, d in enumerate(shape):
        out.append(in_shape[i] if d == 0 and not allowzero else d)
    if -1 in out:
        known = int(np.prod([d for d in out if d != -1], dtype=np.int64))
        total = int(np.prod(in_shape, dtype=np.int64))
        if known == 0 or total % known:
            cx.unsupported(f"cannot reshape {list(in_shape)} to {shape}")
        out[out.index(-1)] = total // known
    if int(np.prod(out, dtype=np.int64)) != int(np.prod(in_shape, dtype=np.int64)):
        cx.unsupported(f"cannot reshape {list(in_shape)} ({int(np.prod(in_shape))} elements) "
                       f"to {out}")
    return [reshape(cx, x, out)]


@rule("Flatten")
def flatten(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    shape = cx.shape_of(x)
    axis = n.attrs["axis"]
    axis = axis + len(shape) if axis < 0 else axis
    return [reshape(cx, x, [int(np.prod(shape[:axis], dtype=np.int64)),
                            int(np.prod(shape[axis:], dtype=np.int64))])]


def _axes_of(cx: Lowerer, n: Node, attr_until: int) -> list[int] | None:
    if n.version < attr_until:
        return n.attrs.get("axes")
    return static_ints(cx, n.inputs[1], "axes") if n.has_input(1) else None


@rule("Squeeze")
def squeeze(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    shape = cx.shape_of(x)
    axes = _axes_of(cx, n, 13)
    axes = ([i for i, d in enumerate(shape) if d == 1] if axes is None
            else norm_axes(axes, len(shape), cx))
    for a in axes:
        if shape[a] != 1:
            cx.unsupported(f"cannot squeeze axis {a} of size {shape[a]}")
    return [reshape(cx, x, [d for i, d in enumerate(shape) if i not in axes])]


@rule("Unsqueeze")
def unsqueeze(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    shape = list(cx.shape_of(x))
    axes = _axes_of(cx, n, 13) or []
    rank = len(shape) + len(axes)
    for a in sorted(norm_axes(axes, rank, cx)):
        shape.insert(a, 1)
    return [reshape(cx, x, shape)]


@rule("Transpose")
def transpose_(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    rank = len(cx.shape_of(x))
    perm = n.attrs.get("perm")
    perm = list(reversed(range(rank))) if perm is None else norm_axes(perm, rank, cx)
    return [transpose(cx, x, perm)]


@rule("Concat")
def concat(cx: Lowerer, n: Node) -> list:
    vals = [v for v in n.inputs if v is not None]
    rank = len(cx.shape_of(vals[0]))
    axis = norm_axis(n.attrs["axis"], rank, cx)
    vals = [v for v in vals if cx.shape_of(v)[axis] != 0] or vals[:1]
    if len(vals) == 1:
        return [vals[0]]
    return [cx.op("tdflow.cat", [vals], {"axis": axis})]


def static_slice(cx: Lowerer, x: Any, starts: list[int], ends: list[int], axes: list[int],
                 steps: list[int]) -> Any:
    """numpy's ``x[start:end:step]`` on ``axes``, with ONNX's clamping of the bounds, built with
    ``cx``: ``static_slice(cx, x, [1], [-1], [0], [1])`` is ``x[1:-1]``, ``x`` itself when the
    slice takes everything (shared by ``Slice``, ``Split`` and ``SplitToSequence``)."""
    shape = cx.shape_of(x)
    start = [0] * len(shape)
    stop = list(shape)
    step = [1] * len(shape)
    for s, e, a, k in zip(starts, ends, axes, steps):
        if k == 0:
            cx.unsupported("a slice step of 0")
        dim = shape[a]
        rng = slice(s, e, k).indices(dim)  # Python's clamping is ONNX's
        start[a], stop[a], step[a] = rng
    if start == [0] * len(shape) and stop == list(shape) and step == [1] * len(shape):
        return x
    if any(k < 0 for k in step):  # tdflow's slice steps forward: reverse through gather
        for a, k in enumerate(step):
            if k < 0:
                idx = np.arange(start[a], stop[a], k, dtype=np.int64)
                x = cx.op("tdflow.gather", [x, cx.constant(idx)], {"axis": a})
                start[a], stop[a], step[a] = 0, len(idx), 1
        if start == [0] * len(shape) and all(s == d for s, d in zip(stop, cx.shape_of(x))):
            return x
    empty = any(len(range(s, e, k)) == 0 for s, e, k in zip(start, stop, step))
    if empty:
        out_shape = [len(range(s, e, k)) for s, e, k in zip(start, stop, step)]
        return cx.constant(np.zeros(out_shape, _np(cx, x)))
    return cx.op("tdflow.slice", [x], {"start": start, "stop": stop, "step": step})


def _np(cx: Lowerer, x: Any) -> Any:
    from tdflow.dialect.types import DTYPES

    return DTYPES[cx.type_of(x).dtype]


@rule("Slice")
def slice_(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    rank = len(cx.shape_of(x))
    if n.version < 10:
        starts, ends = list(n.attrs["starts"]), list(n.attrs["ends"])
        axes = n.attrs.get("axes") or list(range(len(starts)))
        steps = [1] * len(starts)
    else:
        starts = static_ints(cx, n.input(1), "starts")
        ends = static_ints(cx, n.input(2), "ends")
        axes = static_ints(cx, n.inputs[3], "axes") if n.has_input(3) else list(
            range(len(starts)))
        steps = static_ints(cx, n.inputs[4], "steps") if n.has_input(4) else [1] * len(starts)
    return [static_slice(cx, x, starts, ends, norm_axes(axes, rank, cx), steps)]


@rule("Gather")
def gather(cx: Lowerer, n: Node) -> list:
    """``numpy.take(x, indices, axis)``; negative indices count from the end."""
    x, idx = n.input(0), n.input(1)
    shape = cx.shape_of(x)
    axis = norm_axis(n.attrs["axis"], len(shape), cx)
    known = cx.const(idx)
    if known is not None:
        idx = cx.constant(np.where(known < 0, known + shape[axis], known).astype(np.int64))
    else:
        zero = cx.scalar(0, idx)
        wrapped = cx.op("tdflow.broadcast_add", [idx, cx.scalar(shape[axis], idx)])
        idx = cx.op("tdflow.where", [cx.op("tdflow.broadcast_less", [idx, zero]), wrapped, idx])
    return [cx.op("tdflow.gather", [x, idx], {"axis": axis})]


@rule("Expand")
def expand(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    shape = broadcast_shape(cx.shape_of(x), static_ints(cx, n.input(1), "the shape"))
    if tuple(cx.shape_of(x)) == shape:
        return [x]
    xs = list(cx.shape_of(x))
    if len(xs) < len(shape):
        x = reshape(cx, x, [1] * (len(shape) - len(xs)) + xs)
    return [cx.op("tdflow.expand", [x], {"expand_shape": list(shape)})]


@rule("Shape")
def shape_(cx: Lowerer, n: Node) -> list:
    shape = cx.shape_of(n.input(0))
    start = n.attrs.get("start") or 0
    end = n.attrs.get("end")
    return [cx.constant(np.array(shape[slice(start, end)], np.int64))]


@rule("Size")
def size(cx: Lowerer, n: Node) -> list:
    return [cx.constant(np.array(int(np.prod(cx.shape_of(n.input(0)), dtype=np.int64)),
                                 np.int64))]


@rule("Constant")
def constant(cx: Lowerer, n: Node) -> list:
    a = n.attrs
    for key, dtype in (("value", None), ("value_float", np.float32),
                       ("value_floats", np.float32), ("value_int", np.int64),
                       ("value_ints", np.int64)):
        v = a.get(key)
        if v is not None:
            return [cx.constant(np.asarray(v, dtype) if dtype is not None else v)]
    cx.unsupported("only value, value_float(s) and value_int(s) constants are supported")


@rule("ConstantOfShape")
def constant_of_shape(cx: Lowerer, n: Node) -> list:
    shape = static_ints(cx, n.input(0), "the shape")
    value = n.attrs.get("value")
    fill = np.zeros((), np.float32) if value is None else np.asarray(value).reshape(-1)[:1]
    return [cx.constant(np.full(shape, fill.reshape(()), fill.dtype))]


@rule("Range")
def range_(cx: Lowerer, n: Node) -> list:
    start = cx.need_const(n.input(0), "start")
    limit = cx.need_const(n.input(1), "limit")
    delta = cx.need_const(n.input(2), "delta")
    return [cx.constant(np.arange(start, limit, delta, dtype=np.asarray(start).dtype))]


@rule("Split")
def split(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    shape = cx.shape_of(x)
    axis = norm_axis(n.attrs["axis"], len(shape), cx)
    if n.version >= 13 and n.has_input(1):
        sizes = static_ints(cx, n.input(1), "split")
    elif n.version < 13 and n.attrs.get("split"):
        sizes = list(n.attrs["split"])
    else:
        k = n.attrs.get("num_outputs") or n.num_outputs
        dim = shape[axis]
        each = -(-dim // k)
        sizes = [min(each, dim - i * each) for i in range(k)]
    if sum(sizes) != shape[axis]:
        cx.unsupported(f"split sizes {sizes} do not add up to dim {axis} of {list(shape)}")
    outs, start = [], 0
    for s in sizes:
        outs.append(static_slice(cx, x, [start], [start + s], [axis], [1]))
        start += s
    return outs
