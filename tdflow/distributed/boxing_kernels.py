"""CPU kernels of the boxing ops (``dialect/include/tdflow/ops/boxing.td``): the collectives
that turn one SBP into another, run on the calling rank's communicator
(:func:`tdflow.distributed.comm.current`).

Splits follow OneFlow's rule (``tdflow.dialect.sbp.split_range``): ``n`` elements over ``k``
ranks, rank ``i`` holds ``n // k`` plus one more when ``i < n % k``; so a rank's piece need
not be as long as its neighbour's, and every kernel here works with uneven pieces.

======================  ============  ==========================================
op                      SBP           collective
======================  ============  ==========================================
boxing_all_reduce       P -> B        allreduce
boxing_reduce_scatter   P -> S(axis)  reduce_scatter (counts by the split rule)
boxing_all_gather       S(axis) -> B  allgatherv
boxing_all_to_all       S(i) -> S(o)  alltoallv
boxing_slice            B -> S(axis)  none: the rank's own slice
boxing_to_partial       B -> P        none: rank 0 keeps x, the others hold zeros
======================  ============  ==========================================

>>> import numpy as np
>>> from tdflow.runtime.kernels.registry import kernel_table
>>> k = kernel_table("cpu").select("tdflow.boxing_slice", ("f64",), {"axis": 0})
>>> k({"axis": 0}, [np.arange(5.0)])[0].tolist()   # one rank: the whole tensor
[0.0, 1.0, 2.0, 3.0, 4.0]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tdflow.dialect.sbp import split_range
from tdflow.runtime.kernels.registry import register_kernel

from .comm import CommError, Communicator, current
from .overlap import active, wait_pending


def mesh_comm(attrs: Mapping[str, Any]) -> Communicator:
    """The communicator over the boxing op's ``mesh_axis`` of the running rank.

    Only a 1-D hierarchy (``mesh_axis`` 0: the whole group) is served for now.

    >>> mesh_comm({"mesh_axis": 0}).size
    1
    """
    comm = current()
    wait_pending()  # buckets in flight go first: one collective at a time, in plan order
    axis = int(attrs.get("mesh_axis", 0) or 0)
    sub = getattr(comm, "mesh_axis_comm", None)
    if sub is not None:
        return sub(axis)
    if axis != 0:
        raise CommError(f"boxing over mesh axis {axis}: the running communicator "
                        f"({type(comm).__name__}) spans a 1-D hierarchy only")
    return comm


def _axis_comm(attrs: Mapping[str, Any]) -> Communicator:
    comm, axis = current(), int(attrs.get("mesh_axis", 0) or 0)
    sub = getattr(comm, "mesh_axis_comm", None)
    return sub(axis) if sub is not None else comm


def _front(x: np.ndarray, axis: int) -> np.ndarray:
    """``x`` with ``axis`` moved first, contiguous: a split along ``axis`` is then a run of
    whole rows, so pieces travel as flat buffers."""
    return np.ascontiguousarray(np.moveaxis(x, axis, 0))


def _write(outs: Sequence[Any], y: np.ndarray) -> list[np.ndarray]:
    if outs and outs[0] is not None:
        np.copyto(outs[0], y)
        return [outs[0]]
    return [y]


def _rows(n: int, size: int) -> list[int]:
    return [b - a for a, b in (split_range(n, size, r) for r in range(size))]


@register_kernel("tdflow.boxing_all_reduce", device="cpu")
def all_reduce(attrs, inputs, outs):
    """P -> B: the sum over ranks, on every rank.

    >>> all_reduce({}, [np.ones(2)], [None])[0].tolist()   # one rank: itself
    [1.0, 1.0]
    """
    reducer = active()
    if reducer is not None and id(attrs) in reducer.async_ids and outs and outs[0] is not None:
        # a gradient nobody reads before the plan returns: summed in a bucket, overlapped
        reducer.submit(id(attrs), _axis_comm(attrs), np.asarray(inputs[0]), outs[0])
        return [outs[0]]
    return _write(outs, mesh_comm(attrs).allreduce(np.asarray(inputs[0])))


@register_kernel("tdflow.boxing_reduce_scatter", device="cpu")
def reduce_scatter(attrs, inputs, outs):
    """P -> S(axis): the sum over ranks, rank r keeping its rows of ``axis``.

    >>> reduce_scatter({"axis": 1}, [np.ones((1, 3))], [None])[0].shape
    (1, 3)
    """
    comm, x, axis = mesh_comm(attrs), np.asarray(inputs[0]), int(attrs.get("axis", 0))
    xf = _front(x, axis)
    row = int(np.prod(xf.shape[1:], dtype=np.int64))
    rows = _rows(xf.shape[0], comm.size)
    piece = comm.reduce_scatter(xf.ravel(), [r * row for r in rows])
    y = piece.reshape((rows[comm.rank],) + xf.shape[1:])
    return _write(outs, np.moveaxis(y, 0, axis))


@register_kernel("tdflow.boxing_all_gather", device="cpu")
def all_gather(attrs, inputs, outs):
    """S(axis) -> B: every rank's piece, concatenated along ``axis`` in rank order.

    >>> all_gather({"axis": 0}, [np.arange(3.0)], [None])[0].tolist()
    [0.0, 1.0, 2.0]
    """
    comm, x, axis = mesh_comm(attrs), np.asarray(inputs[0]), int(attrs.get("axis", 0))
    xf = _front(x, axis)
    flat = comm.allgather(xf.ravel())
    # the pieces' row counts differ (uneven splits); the row length is the same on all ranks
    y = flat.reshape((-1,) + xf.shape[1:])
    return _write(outs, np.moveaxis(y, 0, axis))


@register_kernel("tdflow.boxing_all_to_all", device="cpu")
def all_to_all(attrs, inputs, outs):
    """S(in_axis) -> S(out_axis): rank r sends rank j the rows of ``out_axis`` that j will
    own, and joins what it receives along ``in_axis``.

    >>> all_to_all({"in_axis": 0, "out_axis": 1}, [np.ones((2, 2))], [None])[0].shape
    (2, 2)
    """
    comm, x = mesh_comm(attrs), np.asarray(inputs[0])
    i_ax, o_ax = int(attrs.get("in_axis", 0)), int(attrs.get("out_axis", 0))
    if i_ax == o_ax:
        return _write(outs, np.array(x, copy=True))
    bounds = [split_range(x.shape[o_ax], comm.size, j) for j in range(comm.size)]
    pieces = [_front(np.take(x, np.arange(a, b), axis=o_ax), i_ax).ravel() for a, b in bounds]
    got = comm.alltoall(pieces)
    mine = list(x.shape)
    mine[o_ax] = bounds[comm.rank][1] - bounds[comm.rank][0]
    rest = tuple(d for k, d in enumerate(mine) if k != i_ax)  # the order _front leaves
    # each sender's row count along in_axis: from the logical length (out_shape, which the
    # compiler fills) by the split rule, else asked of every rank: with an empty piece
    # (more ranks than rows) the received sizes alone cannot tell it
    out_shape = tuple(attrs.get("out_shape") or ())
    if len(out_shape) == x.ndim:
        rows = _rows(int(out_shape[i_ax]), comm.size)
    else:
        rows = [int(n) for n in comm.allgather(np.array([x.shape[i_ax]], dtype=np.int64))]
    y = np.concatenate([g.reshape((n,) + rest) for g, n in zip(got, rows)], axis=0)
    return _write(outs, np.moveaxis(y, 0, i_ax).astype(x.dtype, copy=False))


@register_kernel("tdflow.boxing_slice", device="cpu")
def slice_(attrs, inputs, outs):
    """B -> S(axis): this rank's rows of ``axis``; no communication.

    >>> slice_({"axis": 0}, [np.arange(2.0)], [None])[0].tolist()
    [0.0, 1.0]
    """
    comm, x, axis = mesh_comm(attrs), np.asarray(inputs[0]), int(attrs.get("axis", 0))
    a, b = split_range(x.shape[axis], comm.size, comm.rank)
    return _write(outs, np.array(np.take(x, np.arange(a, b), axis=axis), copy=True))


@register_kernel("tdflow.boxing_to_partial", device="cpu")
def to_partial(attrs, inputs, outs):
    """B -> P: rank 0 keeps ``x``, the others hold zeros (the sum over ranks is ``x``).

    >>> to_partial({}, [np.ones(2)], [None])[0].tolist()   # rank 0
    [1.0, 1.0]
    """
    comm, x = mesh_comm(attrs), np.asarray(inputs[0])
    return _write(outs, np.array(x, copy=True) if comm.rank == 0 else np.zeros_like(x))
