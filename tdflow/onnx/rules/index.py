"""ONNX's index and scan ops: ArgMax, ArgMin, Hardmax, TopK, CumSum, CumProd, Trilu,
GatherElements, ScatterElements (and the old Scatter), TensorScatter, GatherND, ScatterND,
OneHot, Tile (Pad and CenterCropPad are in :mod:`.pad`).

Most map onto one tdflow op with the axis moved last or a reversal around it; the rest are
compositions: ArgMin and TopK's ``largest=0`` run ``argmax``/``top_k`` on an order-reversing
key (``-x``, or ``-1 - x`` for integers, which cannot overflow and keeps ties in place), so
ties still go to the first position; ``select_last_index`` reverses the axis first. GatherND
with batch dims, and ScatterND's mul, max and min reductions, flatten the indexed dims into
one and use ``gather`` and the ``dim_scatter`` ops with row numbers computed from the index
tuples. OneHot and Hardmax compare positions with an ``arange`` constant.

>>> _SCATTER["max"]
'tdflow.dim_scatter_max'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tdflow.dialect.types import DTYPES

from .api import Lowerer, Node, rule
from .common import FLOATS, cast, move_axis_last, norm_axis, reshape, static_ints, transpose
from .pad import pad_attrs


# -- shared pieces --------------------------------------------------------------------------------
def reverse(cx: Lowerer, x: Any, axis: int) -> Any:
    """``x`` reversed along ``axis`` (a gather: tdflow's slice steps forward only)."""
    n = cx.shape_of(x)[axis]
    if n <= 1:
        return x
    return cx.op("tdflow.gather", [x, cx.constant(np.arange(n - 1, -1, -1, dtype=np.int64))],
                 {"axis": axis})


def order_reversed(cx: Lowerer, x: Any) -> Any:
    """A key whose order is ``x``'s reversed and whose ties are ``x``'s: ``-x`` for floats,
    ``-1 - x`` for integers (no overflow at the minimum, where ``-x`` wraps)."""
    dt = cx.type_of(x).dtype
    if dt in FLOATS:
        return cx.op("tdflow.negative", [x])
    # all bits set: -1 for signed types, the maximum for unsigned ones (then ``max - x``)
    ones = cx.constant(np.array(-1).astype(DTYPES[dt]))
    return cx.op("tdflow.broadcast_sub", [ones, x])


def wrap_negative(cx: Lowerer, idx: Any, size: Any) -> Any:
    """ONNX's negative indices counted from the end: ``idx + size`` where ``idx < 0``
    (``size`` a number or a constant broadcasting against ``idx``)."""
    known = cx.const(idx)
    sizes = size if isinstance(size, np.ndarray) else np.asarray(size)
    if known is not None:
        return cx.constant(np.where(known < 0, known + sizes, known).astype(known.dtype))
    bound = cx.constant(sizes.astype(DTYPES[cx.type_of(idx).dtype]))
    neg = cx.op("tdflow.broadcast_less", [idx, cx.scalar(0, idx)])
    return cx.op("tdflow.where", [neg, cx.op("tdflow.broadcast_add", [idx, bound]), idx])


def _positions(cx: Lowerer, n: int, axis: int, rank: int) -> Any:
    """``arange(n)`` as an i64 constant shaped to broadcast along ``axis`` of ``rank`` dims."""
    shape = [1] * rank
    shape[axis] = n
    return cx.constant(np.arange(n, dtype=np.int64).reshape(shape))


# -- ArgMax, ArgMin, Hardmax, TopK ----------------------------------------------------------------
def _arg(cx: Lowerer, n: Node, smallest: bool) -> list:
    x = n.input(0)
    shape = cx.shape_of(x)
    axis = norm_axis(n.attrs.get("axis") or 0, len(shape), cx)
    last = bool(n.attrs.get("select_last_index") or 0)
    if smallest:
        x = order_reversed(cx, x)
    if last:
        x = reverse(cx, x, axis)
    y, _ = move_axis_last(cx, x, axis)
    idx = cx.op("tdflow.argmax", [y])
    if last:
        idx = cx.op("tdflow.broadcast_sub", [cx.scalar(shape[axis] - 1, idx), idx])
    if n.attrs.get("keepdims", 1):
        idx = reshape(cx, idx, [1 if i == axis else d for i, d in enumerate(shape)])
    return [idx]


@rule("ArgMax")
def argmax(cx: Lowerer, n: Node) -> list:
    """``numpy.argmax`` along ``axis``; ``select_last_index`` picks the last of equal maxima."""
    return _arg(cx, n, smallest=False)


@rule("ArgMin")
def argmin(cx: Lowerer, n: Node) -> list:
    """``argmax`` of an order-reversing key (see :func:`order_reversed`)."""
    return _arg(cx, n, smallest=True)


@rule("Hardmax")
def hardmax(cx: Lowerer, n: Node) -> list:
    """1 at the first maximum along ``axis``, 0 elsewhere (before opset 13: of the input
    flattened to 2-D at ``axis``)."""
    x = n.input(0)
    shape = cx.shape_of(x)
    if n.version < 13:
        k = norm_axis(n.attrs.get("axis", 1), len(shape), cx) if shape else 0
        x = reshape(cx, x, [int(np.prod(shape[:k], dtype=np.int64)),
                            int(np.prod(shape[k:], dtype=np.int64))])
        axis = 1
    else:
        axis = norm_axis(n.attrs.get("axis", -1), len(shape), cx)
    y, inv = move_axis_last(cx, x, axis)
    ys = cx.shape_of(y)
    idx = reshape(cx, cx.op("tdflow.argmax", [y]), list(ys[:-1]) + [1])
    hot = cx.op("tdflow.broadcast_equal", [idx, _positions(cx, ys[-1], len(ys) - 1, len(ys))])
    out = cast(cx, hot, cx.type_of(x).dtype)
    out = out if inv is None else transpose(cx, out, inv)
    return [reshape(cx, out, shape)]


@rule("TopK")
def top_k(cx: Lowerer, n: Node) -> list:
    """Values and i64 positions of the ``k`` largest (``largest=0``: smallest) along ``axis``,
    in order, ties by position; tdflow always sorts, which ``sorted=0`` allows."""
    x = n.input(0)
    shape = cx.shape_of(x)
    axis = norm_axis(n.attrs.get("axis", -1), len(shape), cx)
    k = int(n.attrs["k"]) if n.version < 10 else static_ints(cx, n.input(1), "K")[0]
    if not 0 <= k <= shape[axis]:
        cx.unsupported(f"K = {k} is outside [0, {shape[axis]}] for axis {axis} of {list(shape)}")
    y, inv = move_axis_last(cx, x, axis)
    key = y if n.attrs.get("largest", 1) else order_reversed(cx, y)
    idx = cx.op("tdflow.top_k", [key], {"k": k, "sorted": True})
    vals = cx.op("tdflow.dim_gather", [y, idx], {"dim": len(shape) - 1})
    if inv is not None:
        vals, idx = transpose(cx, vals, inv), transpose(cx, idx, inv)
    return [vals, idx]


# -- CumSum, CumProd, Trilu -----------------------------------------------------------------------
def _scan(cx: Lowerer, n: Node, op: str, identity: int) -> list:
    x = n.input(0)
    shape = cx.shape_of(x)
    axis = norm_axis(static_ints(cx, n.input(1), "axis")[0], len(shape), cx)
    rev, excl = bool(n.attrs.get("reverse") or 0), bool(n.attrs.get("exclusive") or 0)
    if rev:
        x = reverse(cx, x, axis)
    if excl and shape[axis]:
        # shift one step along the axis: the identity first, the last element dropped
        before = [1 if i == axis else 0 for i in range(len(shape))]
        x = cx.op("tdflow.pad", [x], pad_attrs(cx, x, before, [0] * len(shape), identity))
        x = cx.op("tdflow.narrow", [x], {"dim": axis, "start": 0, "length": shape[axis]})
    y = cx.op(op, [x], {"dim": axis})
    return [reverse(cx, y, axis) if rev else y]


@rule("CumSum")
def cumsum(cx: Lowerer, n: Node) -> list:
    """``numpy.cumsum`` along the ``axis`` input; ``exclusive`` and ``reverse`` as ONNX says."""
    return _scan(cx, n, "tdflow.cumsum", 0)


@rule("CumProd")
def cumprod(cx: Lowerer, n: Node) -> list:
    """``numpy.cumprod`` along the ``axis`` input; ``exclusive`` and ``reverse`` as ONNX says."""
    return _scan(cx, n, "tdflow.cumprod", 1)


@rule("Trilu")
def trilu(cx: Lowerer, n: Node) -> list:
    """``numpy.triu`` (``upper=1``) or ``numpy.tril`` with the diagonal offset ``k``."""
    x = n.input(0)
    k = static_ints(cx, n.inputs[1], "k")[0] if n.has_input(1) else 0
    op = "tdflow.triu" if n.attrs.get("upper", 1) else "tdflow.tril"
    return [cx.op(op, [x], {"diagonal": k})]


# -- GatherElements, ScatterElements --------------------------------------------------------------
@rule("GatherElements")
def gather_elements(cx: Lowerer, n: Node) -> list:
    """``numpy.take_along_axis``: ``tdflow.dim_gather``; negative indices count from the end."""
    x = n.input(0)
    shape = cx.shape_of(x)
    axis = norm_axis(n.attrs.get("axis") or 0, len(shape), cx)
    idx = wrap_negative(cx, n.input(1), shape[axis])
    return [cx.op("tdflow.dim_gather", [x, idx], {"dim": axis})]


_SCATTER = {"none": "tdflow.dim_scatter_update", "add": "tdflow.dim_scatter_add",
            "mul": "tdflow.dim_scatter_mul", "max": "tdflow.dim_scatter_max",
            "min": "tdflow.dim_scatter_min"}


def _reduction(cx: Lowerer, n: Node) -> str:
    red = n.attrs.get("reduction") or "none"
    red = red.decode() if isinstance(red, bytes) else red
    if red not in _SCATTER:
        cx.unsupported(f"reduction '{red}'")
    return _SCATTER[red]


@rule("ScatterElements", "Scatter")
def scatter_elements(cx: Lowerer, n: Node) -> list:
    """``dim_scatter_update`` (or ``_add``, ``_mul``, ``_max``, ``_min`` as ``reduction``
    says) along ``axis``; negative indices count from the end."""
    x = n.input(0)
    shape = cx.shape_of(x)
    axis = norm_axis(n.attrs.get("axis") or 0, len(shape), cx)
    idx = wrap_negative(cx, n.input(1), shape[axis])
    return [cx.op(_reduction(cx, n), [x, idx, n.input(2)], {"dim": axis})]


@rule("TensorScatter")
def tensor_scatter(cx: Lowerer, n: Node) -> list:
    """A KV-cache write: ``update``'s rows along ``axis`` go to ``write_indices[b] + i`` of
    batch ``b`` (modulo the cache length in ``circular`` mode): ``dim_scatter_update`` with
    those positions broadcast over ``update``'s shape. ``write_indices`` lie in the cache
    length (ONNX's precondition), so one subtraction wraps a circular position."""
    past, upd = n.input(0), n.input(1)
    ps, us = list(cx.shape_of(past)), list(cx.shape_of(upd))
    rank = len(ps)
    axis = norm_axis(n.attrs.get("axis", -2), rank, cx)
    if axis == 0:
        cx.unsupported("axis 0 is the batch dim; the sequence axis must come after it")
    mode = n.attrs.get("mode") or "linear"
    mode = mode.decode() if isinstance(mode, bytes) else mode
    longest = ps[axis]
    idx: Any = _positions(cx, us[axis], axis, rank)
    if n.has_input(2):
        start = reshape(cx, cast(cx, n.inputs[2], "i64"), [ps[0]] + [1] * (rank - 1))
        idx = cx.op("tdflow.broadcast_add", [start, idx])
    if mode == "circular":
        wrapped = cx.op("tdflow.broadcast_sub", [idx, cx.scalar(longest, idx)])
        over = cx.op("tdflow.broadcast_greater_equal", [idx, cx.scalar(longest, idx)])
        idx = cx.op("tdflow.where", [over, wrapped, idx])
    elif mode != "linear":
        cx.unsupported(f"mode '{mode}'")
    if list(cx.shape_of(idx)) != us:
        idx = cx.op("tdflow.expand", [idx], {"expand_shape": us})
    return [cx.op("tdflow.dim_scatter_update", [past, idx, upd], {"dim": axis})]


# -- GatherND, ScatterND --------------------------------------------------------------------------
def _rows(cx: Lowerer, idx: Any, dims: list[int], batch: list[int]) -> Any:
    """The row of each index tuple (last dim of ``idx``, over ``dims``) in the data flattened
    to ``[prod(batch) * prod(dims), ...]``: negative entries wrapped, then a dot with the
    row-major strides, plus the batch position's offset."""
    k = len(dims)
    idx = cast(cx, idx, "i64")
    idx = wrap_negative(cx, idx, np.array(dims, np.int64))
    strides = np.array([int(np.prod(dims[j + 1:], dtype=np.int64)) for j in range(k)], np.int64)
    ishape = cx.shape_of(idx)
    known = cx.const(idx)
    if known is not None:
        rows = (known.astype(np.int64) * strides).sum(-1)
    else:
        prod = cx.op("tdflow.broadcast_mul", [idx, cx.constant(strides)])
        rows = cx.op("tdflow.reduce_sum", [prod], {"axis": [len(ishape) - 1], "keepdims": False})
    if batch:
        nb = int(np.prod(batch, dtype=np.int64))
        inner = len(ishape) - 1 - len(batch)
        off = (np.arange(nb, dtype=np.int64) * int(np.prod(dims, dtype=np.int64))).reshape(
            list(batch) + [1] * inner)
        rows = (cx.constant(rows + off) if known is not None else
                cx.op("tdflow.broadcast_add", [rows, cx.constant(off)]))
    elif known is not None:
        rows = cx.constant(rows)
    return rows


@rule("GatherND")
def gather_nd(cx: Lowerer, n: Node) -> list:
    """``data[batch..., idx[..., 0], ..., idx[..., k-1]]`` per index tuple: ``gather_nd``, or
    with batch dims a ``gather`` of the data flattened over the batch and indexed dims."""
    data, idx = n.input(0), n.input(1)
    ds, ishape = list(cx.shape_of(data)), list(cx.shape_of(idx))
    b = int(n.attrs.get("batch_dims") or 0)
    k = ishape[-1]
    if b + k > len(ds):
        cx.unsupported(f"index tuples of length {k} after {b} batch dims exceed the data's "
                       f"rank {len(ds)}")
    if b == 0:  # tdflow's own gather_nd, the tuples' negative entries wrapped
        idx = wrap_negative(cx, cast(cx, idx, "i64"), np.array(ds[:k], np.int64))
        return [cx.op("tdflow.gather_nd", [data, idx])]
    rows = _rows(cx, idx, ds[b:b + k], ds[:b])
    rest = ds[b + k:]
    flat = reshape(cx, data, [int(np.prod(ds[:b + k], dtype=np.int64))] + rest)
    out = cx.op("tdflow.gather", [flat, rows], {"axis": 0})
    return [reshape(cx, out, ishape[:-1] + rest)]


@rule("ScatterND")
def scatter_nd(cx: Lowerer, n: Node) -> list:
    """``data`` with ``updates`` written (or reduced) at each index tuple's slice:
    ``tensor_scatter_nd_update``/``_add``, or for mul, max and min a ``dim_scatter`` op along
    dim 0 of the data flattened to ``[rows, rest]``."""
    data, idx, upd = n.input(0), n.input(1), n.input(2)
    ds, ishape = list(cx.shape_of(data)), list(cx.shape_of(idx))
    k = ishape[-1]
    op = _reduction(cx, n)
    nd = {"tdflow.dim_scatter_update": "tdflow.tensor_scatter_nd_update",
          "tdflow.dim_scatter_add": "tdflow.tensor_scatter_nd_add"}.get(op)
    if nd is not None:  # tdflow's own tensor_scatter_nd ops, negative entries wrapped
        idx = wrap_negative(cx, cast(cx, idx, "i64"), np.array(ds[:k], np.int64))
        return [cx.op(nd, [data, upd, idx])]
    rows = int(np.prod(ds[:k], dtype=np.int64))
    inner = int(np.prod(ds[k:], dtype=np.int64))
    m = int(np.prod(ishape[:-1], dtype=np.int64))
    at = reshape(cx, _rows(cx, idx, ds[:k], []), [m, 1])
    if inner != 1:
        at = cx.op("tdflow.expand", [at], {"expand_shape": [m, inner]})
    out = cx.op(op, [reshape(cx, data, [rows, inner]), at,
                                    reshape(cx, upd, [m, inner])], {"dim": 0})
    return [reshape(cx, out, ds)]


# -- OneHot, Tile ---------------------------------------------------------------------------------
@rule("OneHot")
def one_hot(cx: Lowerer, n: Node) -> list:
    """``values[1]`` where an index equals its position along ``axis``, ``values[0]``
    elsewhere; negative indices count from the end, others out of range are all off."""
    idx, values = n.input(0), n.input(2)
    depth = int(cx.need_const(n.input(1), "depth").reshape(-1)[0])
    ishape = list(cx.shape_of(idx))
    rank = len(ishape) + 1
    axis = norm_axis(n.attrs.get("axis", -1), rank, cx)
    idx = cast(cx, idx, "i64")  # ONNX allows float indices: they are truncated
    idx = wrap_negative(cx, idx, depth)
    idx = reshape(cx, idx, ishape[:axis] + [1] + ishape[axis:])
    hot = cx.op("tdflow.broadcast_equal", [idx, _positions(cx, depth, axis, rank)])
    known = cx.const(values)
    if known is not None:
        off, on = (cx.constant(np.asarray(v), dtype=cx.type_of(values).dtype if
                                cx.type_of(values).dtype == "bf16" else None)
                   for v in known.reshape(-1)[:2])
    else:
        off, on = (reshape(cx, cx.op("tdflow.narrow", [values], {"dim": 0, "start": i,
                                                               "length": 1}), [])
                   for i in (0, 1))
    return [cx.op("tdflow.where", [hot, on, off])]


@rule("Tile")
def tile(cx: Lowerer, n: Node) -> list:
    """``numpy.tile``: each dim's ``repeats`` copies as a broadcast over a new dim before it,
    merged back by a reshape."""
    x = n.input(0)
    shape = list(cx.shape_of(x))
    reps = static_ints(cx, n.input(1), "repeats")
    if len(reps) != len(shape) or min(reps, default=0) < 0:
        cx.unsupported(f"repeats {reps} must have one non-negative entry per dim of "
                       f"{shape}")
    if all(r == 1 for r in reps):
        return [x]
    inter = [v for d in shape for v in (1, d)]
    big = [v for r, d in zip(reps, shape) for v in (r, d)]
    y = cx.op("tdflow.expand", [reshape(cx, x, inter)], {"expand_shape": big})
    return [reshape(cx, y, [r * d for r, d in zip(reps, shape)])]
