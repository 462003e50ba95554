"""Gather and scatter: ``gather``, ``gather_nd``, ``embedding`` (and grad), ``one_hot``,
``dim_gather``, the ``dim_scatter`` family, ``scatter_nd_like``, ``tensor_scatter_nd_update``/
``add`` and ``unsorted_segment_sum_like`` (numpy's ``take``, advanced indexing and ``ufunc.at``).

Index operands are checked before numpy sees them: an index out of range is a ``ValueError``
naming the op, the operand and the bad value (the engine reports it with the op's name), never
a bare ``IndexError`` from deep inside numpy.

>>> import numpy as np
>>> gather({"axis": -1}, [np.arange(6).reshape(2, 3), np.array([2, 0, 2])], [None])[0].tolist()
[[2, 0, 2], [5, 3, 5]]
>>> seg = unsorted_segment_sum_like({"axis": 0},
...     [np.ones((3, 2)), np.array([1, 1, 0]), np.zeros((2, 2))], [None])
>>> seg[0].tolist()
[[1.0, 1.0], [2.0, 2.0]]
>>> dim_scatter_add({"dim": 1}, [np.zeros((1, 4)), np.array([[1, 1, 3]]),
...                              np.array([[1.0, 2.0, 5.0]])], [None])[0].tolist()
[[0.0, 3.0, 0.0, 5.0]]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.dialect.types import DTYPES
from tdflow.runtime.kernels._rows import native_rows_for
from tdflow.runtime.kernels._util import (
    ALL_DTYPES,
    FLOATS,
    INDEX_DTYPES,
    NUMERIC,
    acc_dtype,
    check_indices,
    out_buffer,
    store,
)
from tdflow.runtime.kernels.registry import input_dtype_in, register_kernel


# -- gather and unsorted_segment_sum_like ---------------------------------------------------------
@register_kernel("tdflow.gather", "cpu", dtypes=ALL_DTYPES, match=input_dtype_in(1, INDEX_DTYPES))
def gather(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """``numpy.take(in, indices, axis)`` with every index in ``[0, in.shape[axis])``."""
    x, idx = inputs[0], inputs[1]
    axis = attrs["axis"]  # non-negative, in range: TDF_AxisAttr
    idx = check_indices("gather", "indices", idx, x.shape[axis])
    return [store(outs, np.take(x, idx, axis=axis), x.dtype)]


def add_at_in_order(acc: np.ndarray, ids: np.ndarray, data: np.ndarray) -> None:
    """``np.add.at(acc, (slice(None), ids), data)`` (``acc[:, ids[i]] += data[:, i]`` for ``i``
    in order), the same bits, faster when no id repeats often.

    ``np.add.at`` with a leading slice adds one row at a time (about 1 us a row). Here the ids
    are sorted stably and the k-th occurrence of every id is added in one vectorised step, for
    k = 0, 1, ...: each target row still receives its rows in their original order, each add
    the same two operands, so sums, signed zeros and infs are ``add.at``'s bits (where two NaNs
    meet, which payload survives may differ: numpy's inner loops choose differently). When one
    id holds more than an eighth of the rows (many steps of few rows) ``add.at`` runs instead.

    >>> acc = np.zeros((1, 3)); add_at_in_order(acc, np.array([2, 0, 2]), np.array([[1., 2, 4]]))
    >>> acc.tolist()
    [[2.0, 0.0, 5.0]]
    """
    if ids.size == 0:
        return
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_ids[1:] != sorted_ids[:-1])))
    counts = np.diff(np.append(starts, ids.size))
    most = int(counts.max())
    if most * 8 > ids.size:
        np.add.at(acc, (slice(None), ids), data)
        return
    for k in range(most):
        live = starts[counts > k]
        # the rows of one step are distinct ids: a fancy-indexed += adds each once
        acc[:, sorted_ids[live]] += data[:, order[live + k]]


def segment_sum(data: np.ndarray, ids: np.ndarray, like_shape: tuple[int, ...], axis: int,
                outs: Sequence[Any], skip: int | None = None) -> np.ndarray:
    """Zeros of ``like_shape`` with ``data``'s slices added at ``ids`` along ``axis``; ids
    outside ``[0, like_shape[axis])`` (and ``skip``) are dropped. Accumulates in f32 for f16."""
    n = like_shape[axis]
    want = like_shape[:axis] + ids.shape + like_shape[axis + 1:]
    if data.shape != want:
        raise ValueError(f"data has shape {data.shape}, expected {want}")
    ids = ids.astype(np.int64, copy=False).reshape(-1)
    lead, rest = int(np.prod(like_shape[:axis], dtype=np.int64)), like_shape[axis + 1:]
    flat = data.reshape((lead, ids.size) + rest).astype(acc_dtype(data.dtype), copy=False)
    if lead == 1 and flat.dtype == np.float32 and n and flat.size:
        done = _native_add_rows(flat, ids, n, skip, like_shape, outs, data.dtype)
        if done is not None:
            return done
    keep = (ids >= 0) & (ids < n)
    if skip is not None:
        keep &= ids != skip
    acc = np.zeros((lead, n) + rest, flat.dtype)
    add_at_in_order(acc, ids[keep], flat[:, keep])
    out = out_buffer(outs, 0, like_shape, data.dtype)
    np.copyto(out, acc.reshape(like_shape), casting="unsafe")
    return out


def _native_add_rows(flat: np.ndarray, ids: np.ndarray, n: int, skip: int | None,
                     like_shape: tuple[int, ...], outs: Sequence[Any],
                     dtype: np.dtype) -> np.ndarray | None:
    """:func:`segment_sum` of float32 rows (``flat`` of shape ``(1, len(ids), ...)``) by the
    C loop of :mod:`tdflow.lowering.rows_native`: ``add.at``'s adds in its order, so its
    bits; ``None`` (numpy runs) when the loop is not there or a NaN results. The numpy path
    sorts the ids and adds in vectorised steps: ~400 us for the GPT's 1024 token rows.

    >>> flat = np.ones((1, 3, 2), np.float32)
    >>> r = _native_add_rows(flat, np.array([1, 1, 5]), 2, None, (2, 2), [None], flat.dtype)
    >>> r is None or r.tolist() == [[0.0, 0.0], [2.0, 2.0]]
    True
    """
    run = native_rows_for(flat.size)
    data = np.ascontiguousarray(flat)
    acc = np.zeros(like_shape, np.float32)
    if run is None or not run(6, acc, np.ascontiguousarray(ids), data, ids.size, n,
                              acc.size // n, -1 if skip is None else skip):
        return None
    out = out_buffer(outs, 0, like_shape, dtype)
    np.copyto(out, acc, casting="unsafe")
    return out


@register_kernel("tdflow.unsorted_segment_sum_like", "cpu", dtypes=NUMERIC,
                 match=input_dtype_in(1, INDEX_DTYPES))
def unsorted_segment_sum_like(attrs: Mapping[str, Any], inputs: Sequence[Any],
                              outs: Sequence[Any]) -> list[np.ndarray]:
    """``out = zeros(like.shape); numpy.add.at(out, ids, data)`` along ``axis``."""
    data, ids, like = inputs[0], inputs[1], inputs[2]
    axis = attrs["axis"]  # TDF_AxisAttr of like
    try:
        return [segment_sum(data, ids, tuple(like.shape), axis, outs)]
    except ValueError as e:
        raise ValueError(f"unsorted_segment_sum_like: {e}") from None


# -- embedding and embedding_grad -----------------------------------------------------------------
@register_kernel("tdflow.embedding", "cpu", dtypes=ALL_DTYPES, match=input_dtype_in(1, INDEX_DTYPES))
def embedding(attrs: Mapping[str, Any], inputs: Sequence[Any],
              outs: Sequence[Any]) -> list[np.ndarray]:
    """``weight[indices]``."""
    w, idx = inputs[0], inputs[1]
    if w.ndim != 2:
        raise ValueError(f"embedding: 'weight' must be 2-D, got shape {w.shape}")
    idx = check_indices("embedding", "indices", idx, w.shape[0])
    return [store(outs, w[idx], w.dtype)]


@register_kernel("tdflow.embedding_grad", "cpu", dtypes=FLOATS, match=input_dtype_in(2, INDEX_DTYPES))
def embedding_grad(attrs: Mapping[str, Any], inputs: Sequence[Any],
                   outs: Sequence[Any]) -> list[np.ndarray]:
    """Rows of ``dy`` added at ``indices`` (none at ``padding_idx``), divided by each index's
    count with ``scale_grad_by_freq``."""
    dy, w, idx = inputs[0], inputs[1], inputs[2]
    n = w.shape[0]
    idx = check_indices("embedding_grad", "indices", idx, n)
    pad = int(attrs["padding_idx"])
    skip = pad if 0 <= pad < n else None
    if attrs["scale_grad_by_freq"]:
        counts = np.bincount(idx.reshape(-1), minlength=n)
        dy = dy / np.maximum(counts[idx], 1)[..., None].astype(acc_dtype(dy.dtype))
        dy = dy.astype(inputs[0].dtype, copy=False)
    try:
        return [segment_sum(dy, idx, tuple(w.shape), 0, outs, skip=skip)]
    except ValueError as e:
        raise ValueError(f"embedding_grad: {e}") from None


@register_kernel("tdflow.one_hot", "cpu", dtypes=INDEX_DTYPES)
def one_hot(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """``on`` where ``indices[...] == k``, ``off`` elsewhere, for ``k`` in ``[0, depth)``."""
    depth = int(attrs["depth"])
    dtype = str(attrs["dtype"])
    idx = check_indices("one_hot", "indices", inputs[0], depth)
    kind = "floating" if dtype in FLOATS else "integer"
    conv = float if kind == "floating" else int
    on, off = (np.array(conv(attrs[f"{kind}_{w}_value"])).astype(DTYPES[dtype])
               for w in ("on", "off"))
    hot = idx[..., None] == np.arange(depth)
    return [store(outs, np.where(hot, on, off), DTYPES[dtype])]


# -- dim_gather and the dim_scatter family --------------------------------------------------------
def _coords(op: str, data_shape: tuple[int, ...], idx: np.ndarray, dim: int) -> tuple:
    """The coordinates into the data that each element of ``idx`` names: its own, with the
    ``dim``-th replaced by its value (checked to lie in range)."""
    if idx.ndim != len(data_shape):
        raise ValueError(f"{op}: 'index' has rank {idx.ndim}, the data {len(data_shape)}")
    for i, (a, b) in enumerate(zip(idx.shape, data_shape)):
        if i != dim and a > b:
            raise ValueError(f"{op}: 'index' {idx.shape} is larger than the data {data_shape} "
                             f"in dim {i}")
    idx = check_indices(op, "index", idx, data_shape[dim])
    grid = list(np.indices(idx.shape, sparse=True))
    grid[dim] = idx
    return tuple(grid)


@register_kernel("tdflow.dim_gather", "cpu", dtypes=ALL_DTYPES, match=input_dtype_in(1, INDEX_DTYPES))
def dim_gather(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """``output[p] = input[p with coordinate dim replaced by index[p]]``."""
    x, idx = inputs[0], inputs[1]
    d = attrs["dim"]  # TDF_AxisAttr
    return [store(outs, x[_coords("dim_gather", x.shape, idx, d)], x.dtype)]


def _scatter(op: str, how: Any, attrs: Mapping[str, Any], inputs: Sequence[Any],
             outs: Sequence[Any], like: bool = False) -> list[np.ndarray]:
    data, idx, src = inputs[0], inputs[1], inputs[2]
    if idx.shape != src.shape:
        raise ValueError(f"{op}: 'src' {src.shape} and 'index' {idx.shape} differ")
    d = attrs["dim"]  # TDF_AxisAttr (every dim_scatter op)
    at = _coords(op, data.shape, idx, d)
    out = out_buffer(outs, 0, tuple(data.shape), src.dtype)
    if like:
        out.fill(0)
    else:
        np.copyto(out, data, casting="unsafe")
    if how is None:
        # numpy's assignment with repeated indices keeps the last value written
        out[at] = src
    else:
        how.at(out, at, src)
    return [out]


@register_kernel("tdflow.dim_scatter_add_like", "cpu", dtypes=NUMERIC,
                 match=input_dtype_in(1, INDEX_DTYPES))
def dim_scatter_add_like(attrs: Mapping[str, Any], inputs: Sequence[Any],
                         outs: Sequence[Any]) -> list[np.ndarray]:
    """Zeros shaped like ``like`` with ``src`` added at the indices (``numpy.add.at``)."""
    return _scatter("dim_scatter_add_like", np.add, attrs, inputs, outs, like=True)


@register_kernel("tdflow.dim_scatter_update", "cpu", dtypes=ALL_DTYPES,
                 match=input_dtype_in(1, INDEX_DTYPES))
def dim_scatter_update(attrs: Mapping[str, Any], inputs: Sequence[Any],
                       outs: Sequence[Any]) -> list[np.ndarray]:
    """A copy of ``input`` with ``src`` written at the indices (the last write wins)."""
    return _scatter("dim_scatter_update", None, attrs, inputs, outs)


@register_kernel("tdflow.dim_scatter_add", "cpu", dtypes=NUMERIC, match=input_dtype_in(1, INDEX_DTYPES))
def dim_scatter_add(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """A copy of ``input`` with ``src`` added at the indices (``numpy.add.at``)."""
    return _scatter("dim_scatter_add", np.add, attrs, inputs, outs)


@register_kernel("tdflow.dim_scatter_mul", "cpu", dtypes=NUMERIC, match=input_dtype_in(1, INDEX_DTYPES))
def dim_scatter_mul(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """A copy of ``input`` multiplied by ``src`` at the indices (``numpy.multiply.at``)."""
    return _scatter("dim_scatter_mul", np.multiply, attrs, inputs, outs)


@register_kernel("tdflow.dim_scatter_max", "cpu", dtypes=NUMERIC, match=input_dtype_in(1, INDEX_DTYPES))
def dim_scatter_max(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """A copy of ``input`` raised to ``src`` at the indices (``numpy.maximum.at``)."""
    return _scatter("dim_scatter_max", np.maximum, attrs, inputs, outs)


@register_kernel("tdflow.dim_scatter_min", "cpu", dtypes=NUMERIC, match=input_dtype_in(1, INDEX_DTYPES))
def dim_scatter_min(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """A copy of ``input`` lowered to ``src`` at the indices (``numpy.minimum.at``)."""
    return _scatter("dim_scatter_min", np.minimum, attrs, inputs, outs)


# -- gather_nd, scatter_nd_like, tensor_scatter_nd_update/add -------------------------------------
def nd_coords(op: str, data_shape: tuple[int, ...], idx: np.ndarray) -> tuple:
    """The index tuples of ``idx`` (last dim ``k``) as ``k`` coordinate arrays into the data's
    first ``k`` dims, each checked to lie in its dim.

    >>> [c.tolist() for c in nd_coords("op", (4, 3), np.array([[3, 0], [1, 2]]))]
    [[3, 1], [0, 2]]
    """
    if idx.ndim == 0 or idx.shape[-1] > len(data_shape):
        raise ValueError(f"{op}: 'indices' {idx.shape} does not hold tuples into the data's "
                         f"{len(data_shape)} dims")
    return tuple(check_indices(op, f"indices[..., {j}]", idx[..., j], data_shape[j])
                 for j in range(idx.shape[-1]))


@register_kernel("tdflow.gather_nd", "cpu", dtypes=ALL_DTYPES, match=input_dtype_in(1, INDEX_DTYPES))
def gather_nd(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """``params[indices[..., 0], ..., indices[..., k-1]]``."""
    x, idx = inputs[0], inputs[1]
    return [store(outs, x[nd_coords("gather_nd", x.shape, idx)], x.dtype)]


def _scatter_nd(op: str, how: Any, outs: Sequence[Any], data: np.ndarray,
                idx: np.ndarray, upd: np.ndarray, like: bool = False) -> list[np.ndarray]:
    at = nd_coords(op, data.shape, idx)
    want = idx.shape[:-1] + data.shape[idx.shape[-1]:]
    if upd.shape != want:
        raise ValueError(f"{op}: 'updates' {upd.shape}, expected {want}")
    out = out_buffer(outs, 0, tuple(data.shape), upd.dtype)
    if like:
        out.fill(0)
    else:
        np.copyto(out, data, casting="unsafe")
    if how is None:
        for m in np.ndindex(idx.shape[:-1]):  # one at a time, in order: the last write wins
            out[tuple(int(c[m]) for c in at)] = upd[m]
    else:
        how.at(out, at, upd)
    return [out]


@register_kernel("tdflow.scatter_nd_like", "cpu", dtypes=NUMERIC,
                 match=input_dtype_in(1, INDEX_DTYPES))
def scatter_nd_like(attrs: Mapping[str, Any], inputs: Sequence[Any],
                    outs: Sequence[Any]) -> list[np.ndarray]:
    """Zeros shaped like ``like`` with ``updates`` added at the tuples."""
    shaped, idx, upd = inputs[0], inputs[1], inputs[2]
    return _scatter_nd("scatter_nd_like", np.add, outs, shaped, idx, upd, like=True)


@register_kernel("tdflow.tensor_scatter_nd_update", "cpu", dtypes=ALL_DTYPES,
                 match=input_dtype_in(2, INDEX_DTYPES))
def tensor_scatter_nd_update(attrs: Mapping[str, Any], inputs: Sequence[Any],
                             outs: Sequence[Any]) -> list[np.ndarray]:
    """A copy of ``params`` with ``updates`` written at the tuples (the last write wins)."""
    params, upd, idx = inputs[0], inputs[1], inputs[2]
    return _scatter_nd("tensor_scatter_nd_update", None, outs, params, idx, upd)


@register_kernel("tdflow.tensor_scatter_nd_add", "cpu", dtypes=NUMERIC,
                 match=input_dtype_in(2, INDEX_DTYPES))
def tensor_scatter_nd_add(attrs: Mapping[str, Any], inputs: Sequence[Any],
                          outs: Sequence[Any]) -> list[np.ndarray]:
    """A copy of ``params`` with ``updates`` added at the tuples (``numpy.add.at``)."""
    params, upd, idx = inputs[0], inputs[1], inputs[2]
    return _scatter_nd("tensor_scatter_nd_add", np.add, outs, params, idx, upd)
