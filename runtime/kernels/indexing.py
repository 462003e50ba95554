"""CPU kernels of the ops in tdflow/ops/indexing.td: argmax, top_k, cumsum, cumprod,
cumprod_grad, dim_gather, the dim_scatter family, gather_nd, scatter_nd_like,
tensor_scatter_nd_update/add, triu and pad (numpy's ``argmax``, a stable ``argsort``,
``cumsum``/``cumprod``, advanced indexing, ``ufunc.at``, ``triu`` and ``pad``).

As in :mod:`.index`, an index out of range is a ``ValueError`` naming the op and operand.

>>> import numpy as np
>>> top_k({"k": 2}, [np.array([[3, 1, 3, 2]])], [None])[0].tolist()
[[0, 2]]
>>> dim_scatter_add({"dim": 1}, [np.zeros((1, 4)), np.array([[1, 1, 3]]),
...                              np.array([[1.0, 2.0, 5.0]])], [None])[0].tolist()
[[0.0, 3.0, 0.0, 5.0]]
>>> pad({"padding_before": [1], "padding_after": [2], "integral_constant_value": 7},
...     [np.array([1, 2])], [None])[0].tolist()
[7, 1, 2, 7, 7]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.runtime.kernels._util import ALL_DTYPES, FLOATS, NUMERIC, acc_dtype, out_buffer, store
from tdflow.runtime.kernels.index import INDEX_DTYPES, check_indices, norm_dim
from tdflow.runtime.kernels.registry import input_dtype_in, register_kernel

Kernel = list[np.ndarray]


# -- argmax and top_k -----------------------------------------------------------------------------
def _rows(op: str, x: np.ndarray) -> None:
    if x.ndim == 0:
        raise ValueError(f"{op}: 'in' is a scalar; the op works along its last dim")


@register_kernel("tdflow.argmax", "cpu", dtypes=ALL_DTYPES)
def argmax(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> Kernel:
    """``numpy.argmax(in, axis=-1)`` (the first maximum; a NaN wins)."""
    x = inputs[0]
    _rows("argmax", x)
    if x.shape[-1] == 0:
        raise ValueError(f"argmax: the last dim of 'in' {x.shape} is empty")
    return [store(outs, np.argmax(x, axis=-1), np.int64)]


def descending_order(x: np.ndarray) -> np.ndarray:
    """Positions sorting each last-dim row largest first, ties in position order: a stable
    ascending sort of an order-reversing key (``-x``; ``~x`` for integers, which cannot
    overflow as ``-x`` does at the minimum).

    >>> descending_order(np.array([1, -128, 3, 3], np.int8)).tolist()
    [2, 3, 0, 1]
    """
    key = ~x if np.issubdtype(x.dtype, np.integer) else -x
    return np.argsort(key, axis=-1, kind="stable")


@register_kernel("tdflow.top_k", "cpu", dtypes=NUMERIC)
def top_k(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> Kernel:
    """The positions of the ``min(k, n)`` largest of each row, largest first."""
    x = inputs[0]
    _rows("top_k", x)
    k = int(attrs.get("k", 0))
    if k < 0:
        raise ValueError(f"top_k: k must be >= 0, got {k}")
    return [store(outs, descending_order(x)[..., :k], np.int64)]


# -- cumsum, cumprod, cumprod_grad ----------------------------------------------------------------
def _scan(op: str, fn: Any, attrs: Mapping[str, Any], inputs: Sequence[Any],
          outs: Sequence[Any]) -> Kernel:
    x = inputs[0]
    if x.ndim == 0:
        return [store(outs, x, x.dtype)]
    d = norm_dim(op, attrs["dim"], x.ndim, "dim")
    # in x's own type (numpy would widen small integers to int64), halves in f32
    return [store(outs, fn(x, axis=d, dtype=acc_dtype(x.dtype)), x.dtype)]


@register_kernel("tdflow.cumsum", "cpu", dtypes=NUMERIC)
def cumsum(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> Kernel:
    """``numpy.cumsum(x, axis=dim)`` in ``x``'s element type."""
    return _scan("cumsum", np.cumsum, attrs, inputs, outs)


@register_kernel("tdflow.cumprod", "cpu", dtypes=NUMERIC)
def cumprod(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> Kernel:
    """``numpy.cumprod(x, axis=dim)`` in ``x``'s element type."""
    return _scan("cumprod", np.cumprod, attrs, inputs, outs)


def cumprod_grad_lines(dy: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``dx[i] = sum_{j >= i} dy[j] * prod_{k <= j, k != i} x[k]`` along the last dim, without
    dividing by ``x`` (so zeros give the exact gradient): O(n^2) per line.

    >>> cumprod_grad_lines(np.ones(3), np.array([2.0, 0.0, 5.0])).tolist()
    [1.0, 12.0, 0.0]
    """
    n = x.shape[-1]
    dx = np.zeros_like(dy)
    for i in range(n):
        run = np.prod(x[..., :i], axis=-1)  # the product before i, i itself left out
        acc = dy[..., i] * run
        for j in range(i + 1, n):
            run = run * x[..., j]
            acc = acc + dy[..., j] * run
        dx[..., i] = acc
    return dx


@register_kernel("tdflow.cumprod_grad", "cpu", dtypes=FLOATS)
def cumprod_grad(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> Kernel:
    """The gradient of ``cumprod`` (see :func:`cumprod_grad_lines`)."""
    dy, x = inputs[0], inputs[2]
    if dy.shape != x.shape:
        raise ValueError(f"cumprod_grad: 'dy' {dy.shape} and 'input' {x.shape} differ")
    if x.ndim == 0:
        return [store(outs, dy, dy.dtype)]
    d = norm_dim("cumprod_grad", attrs["dim"], x.ndim, "dim")
    acc = acc_dtype(dy.dtype)
    g = cumprod_grad_lines(np.moveaxis(dy, d, -1).astype(acc), np.moveaxis(x, d, -1).astype(acc))
    return [store(outs, np.moveaxis(g, -1, d), dy.dtype)]


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
def dim_gather(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> Kernel:
    """``output[p] = input[p with coordinate dim replaced by index[p]]``."""
    x, idx = inputs[0], inputs[1]
    d = norm_dim("dim_gather", attrs.get("dim", 0), x.ndim, "dim")
    return [store(outs, x[_coords("dim_gather", x.shape, idx, d)], x.dtype)]


def _scatter(op: str, how: Any, attrs: Mapping[str, Any], inputs: Sequence[Any],
             outs: Sequence[Any], like: bool = False) -> Kernel:
    data, idx, src = inputs[0], inputs[1], inputs[2]
    if idx.shape != src.shape:
        raise ValueError(f"{op}: 'src' {src.shape} and 'index' {idx.shape} differ")
    d = norm_dim(op, attrs.get("dim", 0), data.ndim, "dim")
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
                         outs: Sequence[Any]) -> Kernel:
    """Zeros shaped like ``like`` with ``src`` added at the indices (``numpy.add.at``)."""
    return _scatter("dim_scatter_add_like", np.add, attrs, inputs, outs, like=True)


@register_kernel("tdflow.dim_scatter_update", "cpu", dtypes=ALL_DTYPES,
                 match=input_dtype_in(1, INDEX_DTYPES))
def dim_scatter_update(attrs: Mapping[str, Any], inputs: Sequence[Any],
                       outs: Sequence[Any]) -> Kernel:
    """A copy of ``input`` with ``src`` written at the indices (the last write wins)."""
    return _scatter("dim_scatter_update", None, attrs, inputs, outs)


@register_kernel("tdflow.dim_scatter_add", "cpu", dtypes=NUMERIC, match=input_dtype_in(1, INDEX_DTYPES))
def dim_scatter_add(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> Kernel:
    """A copy of ``input`` with ``src`` added at the indices (``numpy.add.at``)."""
    return _scatter("dim_scatter_add", np.add, attrs, inputs, outs)


@register_kernel("tdflow.dim_scatter_mul", "cpu", dtypes=NUMERIC, match=input_dtype_in(1, INDEX_DTYPES))
def dim_scatter_mul(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> Kernel:
    """A copy of ``input`` multiplied by ``src`` at the indices (``numpy.multiply.at``)."""
    return _scatter("dim_scatter_mul", np.multiply, attrs, inputs, outs)


@register_kernel("tdflow.dim_scatter_max", "cpu", dtypes=NUMERIC, match=input_dtype_in(1, INDEX_DTYPES))
def dim_scatter_max(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> Kernel:
    """A copy of ``input`` raised to ``src`` at the indices (``numpy.maximum.at``)."""
    return _scatter("dim_scatter_max", np.maximum, attrs, inputs, outs)


@register_kernel("tdflow.dim_scatter_min", "cpu", dtypes=NUMERIC, match=input_dtype_in(1, INDEX_DTYPES))
def dim_scatter_min(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> Kernel:
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
def gather_nd(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> Kernel:
    """``params[indices[..., 0], ..., indices[..., k-1]]``."""
    x, idx = inputs[0], inputs[1]
    return [store(outs, x[nd_coords("gather_nd", x.shape, idx)], x.dtype)]


def _scatter_nd(op: str, how: Any, outs: Sequence[Any], data: np.ndarray,
                idx: np.ndarray, upd: np.ndarray, like: bool = False) -> Kernel:
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
                    outs: Sequence[Any]) -> Kernel:
    """Zeros shaped like ``like`` with ``updates`` added at the tuples."""
    shaped, idx, upd = inputs[0], inputs[1], inputs[2]
    return _scatter_nd("scatter_nd_like", np.add, outs, shaped, idx, upd, like=True)


@register_kernel("tdflow.tensor_scatter_nd_update", "cpu", dtypes=ALL_DTYPES,
                 match=input_dtype_in(2, INDEX_DTYPES))
def tensor_scatter_nd_update(attrs: Mapping[str, Any], inputs: Sequence[Any],
                             outs: Sequence[Any]) -> Kernel:
    """A copy of ``params`` with ``updates`` written at the tuples (the last write wins)."""
    params, upd, idx = inputs[0], inputs[1], inputs[2]
    return _scatter_nd("tensor_scatter_nd_update", None, outs, params, idx, upd)


@register_kernel("tdflow.tensor_scatter_nd_add", "cpu", dtypes=NUMERIC,
                 match=input_dtype_in(2, INDEX_DTYPES))
def tensor_scatter_nd_add(attrs: Mapping[str, Any], inputs: Sequence[Any],
                          outs: Sequence[Any]) -> Kernel:
    """A copy of ``params`` with ``updates`` added at the tuples (``numpy.add.at``)."""
    params, upd, idx = inputs[0], inputs[1], inputs[2]
    return _scatter_nd("tensor_scatter_nd_add", np.add, outs, params, idx, upd)


# -- triu and pad ---------------------------------------------------------------------------------
@register_kernel("tdflow.triu", "cpu", dtypes=ALL_DTYPES)
def triu(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> Kernel:
    """``in`` where ``j - i >= diagonal``, zero elsewhere."""
    x = inputs[0]
    if x.ndim < 2:
        raise ValueError(f"triu: 'in' must have at least 2 dims, got shape {x.shape}")
    rows, cols = x.shape[-2:]
    keep = ~np.tri(rows, cols, int(attrs.get("diagonal", 0)) - 1, dtype=bool)
    return [store(outs, np.where(keep, x, np.zeros((), x.dtype)), x.dtype)]


def pad_value(attrs: Mapping[str, Any], dtype: np.dtype) -> np.generic:
    """The fill of ``pad``, converted to ``dtype`` as numpy converts.

    >>> pad_value({"integral_constant_value": 300}, np.dtype(np.int8))
    np.int8(44)
    """
    if np.issubdtype(dtype, np.floating):
        return np.array(float(attrs.get("floating_constant_value", 0.0))).astype(dtype)[()]
    return np.array(int(attrs.get("integral_constant_value", 0))).astype(dtype)[()]


@register_kernel("tdflow.pad", "cpu", dtypes=ALL_DTYPES)
def pad(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> Kernel:
    """``numpy.pad`` with a constant: ``padding_before[d]`` and ``padding_after[d]`` per dim."""
    x = inputs[0]
    before = [int(p) for p in attrs["padding_before"]]
    after = [int(p) for p in attrs["padding_after"]]
    if len(before) != x.ndim or len(after) != x.ndim or min(before + after, default=0) < 0:
        raise ValueError(f"pad: padding_before {before} and padding_after {after} need one "
                         f"non-negative entry per dim of 'x' {x.shape}")
    shape = tuple(d + b + a for d, b, a in zip(x.shape, before, after))
    out = out_buffer(outs, 0, shape, x.dtype)
    out.fill(pad_value(attrs, x.dtype))
    out[tuple(slice(b, b + d) for b, d in zip(before, x.shape))] = x
    return [out]
