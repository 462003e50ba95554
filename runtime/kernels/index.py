"""CPU kernels of the ops in tdflow/ops/index.td (issue 13): numpy's ``take``, ``add.at``,
``broadcast_to``, ``tril`` and ``arange``.

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
>>> tril({"diagonal": 0, "is_floating_fill_value": True, "floating_fill_value": -1.0,
...       "integer_fill_value": 0}, [np.ones((2, 2))], [None])[0].tolist()
[[1.0, -1.0], [1.0, 1.0]]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.dialect.element_types import INT_DTYPES
from tdflow.dialect.types import DTYPES
from tdflow.runtime.kernels._util import ALL_DTYPES, FLOATS, NUMERIC, acc_dtype, out_buffer, store
from tdflow.runtime.kernels.registry import input_dtype_in, register_kernel

INDEX_DTYPES = INT_DTYPES  # index operands: every integer type (hooks/index.py's)


def check_indices(op: str, name: str, idx: np.ndarray, size: int) -> np.ndarray:
    """``idx`` as int64; ``ValueError`` naming ``op`` and ``name`` unless every value lies in
    ``[0, size)``."""
    if not np.issubdtype(idx.dtype, np.integer):
        raise ValueError(f"{op}: '{name}' must be an integer tensor, got {idx.dtype}")
    idx = idx.astype(np.int64, copy=False)
    if idx.size:
        bad = (idx < 0) | (idx >= size)
        if bad.any():
            first = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(f"{op}: '{name}' holds {int(idx[first])} at {list(first)}, out of "
                             f"range [0, {size})")
    return idx


def norm_dim(op: str, axis: int, ndim: int, what: str = "axis") -> int:
    """``axis`` made non-negative for rank ``ndim``; ``ValueError`` naming ``op`` and ``what``
    otherwise: ``norm_dim("gather", -1, 3) == 2``."""
    a = int(axis)
    if not -ndim <= a < ndim:
        raise ValueError(f"{op}: {what} {axis} is out of range for a tensor of rank {ndim}")
    return a + ndim if a < 0 else a


# -- gather and unsorted_segment_sum_like ---------------------------------------------------------
@register_kernel("tdflow.gather", "cpu", dtypes=ALL_DTYPES, match=input_dtype_in(1, INDEX_DTYPES))
def gather(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """``numpy.take(in, indices, axis)`` with every index in ``[0, in.shape[axis])``."""
    x, idx = inputs[0], inputs[1]
    axis = norm_dim("gather", attrs.get("axis", 0), x.ndim)
    idx = check_indices("gather", "indices", idx, x.shape[axis])
    return [store(outs, np.take(x, idx, axis=axis), x.dtype)]


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
    keep = (ids >= 0) & (ids < n)
    if skip is not None:
        keep &= ids != skip
    acc = np.zeros((lead, n) + rest, flat.dtype)
    np.add.at(acc, (slice(None), ids[keep]), flat[:, keep])
    out = out_buffer(outs, 0, like_shape, data.dtype)
    np.copyto(out, acc.reshape(like_shape), casting="unsafe")
    return out


@register_kernel("tdflow.unsorted_segment_sum_like", "cpu", dtypes=NUMERIC,
                 match=input_dtype_in(1, INDEX_DTYPES))
def unsorted_segment_sum_like(attrs: Mapping[str, Any], inputs: Sequence[Any],
                              outs: Sequence[Any]) -> list[np.ndarray]:
    """``out = zeros(like.shape); numpy.add.at(out, ids, data)`` along ``axis``."""
    data, ids, like = inputs[0], inputs[1], inputs[2]
    axis = norm_dim("unsorted_segment_sum_like", attrs.get("axis", 0), like.ndim)
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
    pad = int(attrs.get("padding_idx", -1))
    skip = pad if 0 <= pad < n else None
    if attrs.get("scale_grad_by_freq", False):
        counts = np.bincount(idx.reshape(-1), minlength=n)
        dy = dy / np.maximum(counts[idx], 1)[..., None].astype(acc_dtype(dy.dtype))
        dy = dy.astype(inputs[0].dtype, copy=False)
    try:
        return [segment_sum(dy, idx, tuple(w.shape), 0, outs, skip=skip)]
    except ValueError as e:
        raise ValueError(f"embedding_grad: {e}") from None


# -- narrow and narrow_grad -----------------------------------------------------------------------
def _narrow_index(op: str, attrs: Mapping[str, Any], shape: tuple[int, ...]) -> tuple:
    d = norm_dim(op, attrs.get("dim", 0), len(shape), "dim")
    start, length = int(attrs.get("start", 0)), int(attrs.get("length", 0))
    s = start + shape[d] if start < 0 else start
    if length < 0 or not 0 <= s <= shape[d] or s + length > shape[d]:
        raise ValueError(f"{op}: start {start}, length {length} leave dim {d} of size {shape[d]}")
    return (slice(None),) * d + (slice(s, s + length),)


@register_kernel("tdflow.narrow", "cpu", dtypes=ALL_DTYPES)
def narrow(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """``in[..., start:start + length, ...]`` along ``dim`` (a copy)."""
    x = inputs[0]
    return [store(outs, x[_narrow_index("narrow", attrs, x.shape)], x.dtype)]


@register_kernel("tdflow.narrow_grad", "cpu", dtypes=ALL_DTYPES)
def narrow_grad(attrs: Mapping[str, Any], inputs: Sequence[Any],
                outs: Sequence[Any]) -> list[np.ndarray]:
    """Zeros shaped like ``like`` with ``dy`` written where ``narrow`` reads."""
    dy, like = inputs[0], inputs[1]
    idx = _narrow_index("narrow_grad", attrs, like.shape)
    dx = out_buffer(outs, 0, tuple(like.shape), dy.dtype)
    dx.fill(0)
    if dx[idx].shape != dy.shape:
        raise ValueError(f"narrow_grad: dy has shape {dy.shape}, expected {dx[idx].shape}")
    dx[idx] = dy
    return [dx]


# -- expand, expand_dims, squeeze -----------------------------------------------------------------
@register_kernel("tdflow.expand", "cpu", dtypes=ALL_DTYPES)
def expand(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """``numpy.broadcast_to(in, expand_shape)`` (``-1`` keeps the dim), materialised."""
    x = inputs[0]
    target = [int(d) for d in attrs["expand_shape"]]
    lead = len(target) - x.ndim
    if lead < 0:
        raise ValueError(f"expand: expand_shape {target} has fewer dims than 'in' {x.shape}")
    shape = [x.shape[i - lead] if t == -1 and i >= lead else t for i, t in enumerate(target)]
    try:
        view = np.broadcast_to(x, shape)
    except ValueError:
        raise ValueError(f"expand: cannot expand 'in' {x.shape} to expand_shape {target}") from None
    return [store(outs, view, x.dtype)]


@register_kernel("tdflow.expand_dims", "cpu", dtypes=ALL_DTYPES)
def expand_dims(attrs: Mapping[str, Any], inputs: Sequence[Any],
                outs: Sequence[Any]) -> list[np.ndarray]:
    """``numpy.expand_dims(in, axis)``."""
    x = inputs[0]
    axis = norm_dim("expand_dims", attrs.get("axis", 0), x.ndim + 1)
    return [store(outs, np.expand_dims(x, axis), x.dtype)]


@register_kernel("tdflow.squeeze", "cpu", dtypes=ALL_DTYPES)
def squeeze(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """``numpy.squeeze(in, axis=axes)``."""
    x = inputs[0]
    axes = tuple(norm_dim("squeeze", a, x.ndim, "axes entry") for a in attrs["axes"])
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: dim {a} of 'in' {x.shape} has size {x.shape[a]}, not 1")
    return [store(outs, np.squeeze(x, axis=axes) if axes else x, x.dtype)]


# -- tril and fused_scale_tril --------------------------------------------------------------------
def _value(attrs: Mapping[str, Any], what: str, default: int | float) -> int | float:
    """``floating_<what>_value`` or ``integer_<what>_value``, as the ``is_floating_`` flag says."""
    if attrs.get(f"is_floating_{what}_value", False):
        return float(attrs.get(f"floating_{what}_value", default))
    return int(attrs.get(f"integer_{what}_value", default))


def _tril(op: str, x: np.ndarray, attrs: Mapping[str, Any], scale: int | float | None,
          outs: Sequence[Any]) -> np.ndarray:
    if x.ndim < 2:
        raise ValueError(f"{op}: 'in' must have at least 2 dims, got shape {x.shape}")
    rows, cols = x.shape[-2:]
    keep = np.tri(rows, cols, int(attrs.get("diagonal", 0)), dtype=bool)
    fill = np.array(_value(attrs, "fill", 0)).astype(x.dtype)
    if scale is not None:
        x = x * np.array(scale).astype(x.dtype)
    return store(outs, np.where(keep, x, fill), x.dtype)


@register_kernel("tdflow.tril", "cpu", dtypes=ALL_DTYPES)
def tril(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """``in`` where ``j - i <= diagonal``, the fill value elsewhere."""
    return [_tril("tril", inputs[0], attrs, None, outs)]


@register_kernel("tdflow.fused_scale_tril", "cpu", dtypes=NUMERIC)
def fused_scale_tril(attrs: Mapping[str, Any], inputs: Sequence[Any],
                     outs: Sequence[Any]) -> list[np.ndarray]:
    """``in * scale`` where ``j - i <= diagonal``, the fill value elsewhere."""
    return [_tril("fused_scale_tril", inputs[0], attrs, _value(attrs, "scale", 1), outs)]


# -- arange and one_hot ---------------------------------------------------------------------------
@register_kernel("tdflow.arange", "cpu")
def arange(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """``numpy.arange(start, limit, delta)`` of the attribute family ``dtype`` reads."""
    dtype = str(attrs["dtype"])
    kind = "float" if dtype in FLOATS else "integer"
    conv = float if kind == "float" else int
    start, delta, limit = (conv(attrs.get(f"{kind}_{k}", 0)) for k in ("start", "delta", "limit"))
    if delta == 0:
        raise ValueError(f"arange: {kind}_delta is 0")
    n = max(0, int(np.ceil((limit - start) / delta)))
    # start + k * delta in f64 (integers exactly in i64), as numpy.arange computes it
    k = np.arange(n, dtype=np.float64 if kind == "float" else np.int64)
    return [store(outs, start + k * delta, DTYPES[dtype])]


@register_kernel("tdflow.one_hot", "cpu", dtypes=INDEX_DTYPES)
def one_hot(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """``on`` where ``indices[...] == k``, ``off`` elsewhere, for ``k`` in ``[0, depth)``."""
    depth = int(attrs["depth"])
    dtype = str(attrs["dtype"])
    idx = check_indices("one_hot", "indices", inputs[0], depth)
    kind = "floating" if dtype in FLOATS else "integer"
    conv = float if kind == "floating" else int
    on, off = (np.array(conv(attrs.get(f"{kind}_{w}_value", 0))).astype(DTYPES[dtype])
               for w in ("on", "off"))
    hot = idx[..., None] == np.arange(depth)
    return [store(outs, np.where(hot, on, off), DTYPES[dtype])]
