"""Shape and type ops: reshape, transpose, cat, cast, constant, dense_constant, ones_like,
broadcast_like, expand, expand_dims, squeeze and arange.

Without a preallocated output, ``reshape`` returns a view of its input when numpy can (as
``numpy.reshape`` does); every other kernel returns fresh memory.

>>> import numpy as np
>>> reshape({"shape": [-1, 2]}, [np.arange(4)], [None])[0].shape
(2, 2)
>>> constant({"shape": [2], "dtype": "f32", "is_floating_value": True,
...           "floating_value": 0.5}, [], [None])[0].tolist()
[0.5, 0.5]
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.dialect.ir.elements import to_numpy
from tdflow.dialect.types import DTYPES
from tdflow.runtime.kernels._util import (
    ALL_DTYPES,
    FLOATS,
    out_buffer,
    store,
)
from tdflow.runtime.kernels.registry import all_same_dtype, register_kernel


def _store(value: np.ndarray, outs: Sequence[Any]) -> list[np.ndarray]:
    out = outs[0] if outs else None
    if out is None:
        return [value]
    np.copyto(out, value, casting="unsafe")
    return [out]


def resolve_shape(shape: Sequence[int], numel: int) -> tuple[int, ...]:
    """``shape`` with one ``-1`` resolved against ``numel``; ``ValueError`` when impossible."""
    dims = [int(d) for d in shape]
    if dims.count(-1) > 1:
        raise ValueError(f"reshape: at most one -1 in shape {dims}")
    known = 1
    for d in dims:
        if d != -1:
            if d < 0:
                raise ValueError(f"reshape: negative dimension {d} in shape {dims}")
            known *= d
    if -1 in dims:
        if known == 0 or numel % known:
            raise ValueError(f"reshape: cannot infer -1 in {dims} for {numel} elements")
        dims[dims.index(-1)] = numel // known
    elif known != numel:
        raise ValueError(f"reshape: shape {dims} has {known} elements, input has {numel}")
    return tuple(dims)


@register_kernel("tdflow.reshape", "cpu", dtypes=ALL_DTYPES, inplace={0: 0})
def reshape(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """Same elements, new shape (one dim may be -1)."""
    x = inputs[0]
    shape = resolve_shape(attrs["shape"], x.size)
    out = outs[0] if outs else None
    if out is None:
        return [x.reshape(shape)]
    if out.size != x.size:
        raise ValueError(f"reshape: output buffer has {out.size} elements, input {x.size}")
    if np.may_share_memory(out, x) and out.ctypes.data == x.ctypes.data:
        return [out]  # in place: the buffer already holds the elements
    if out.flags.c_contiguous:
        np.copyto(out.reshape(x.shape), x)
    else:
        np.copyto(out, x.reshape(out.shape))
    return [out]


@register_kernel("tdflow.transpose", "cpu", dtypes=ALL_DTYPES)
def transpose(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """Permute dims by ``perm`` (TDF_PermAttr: a permutation, non-negative)."""
    t = inputs[0].transpose(attrs["perm"])
    out = outs[0] if outs else None
    if out is None:
        return [np.ascontiguousarray(t)]
    np.copyto(out, t)
    return [out]


@register_kernel("tdflow.cat", "cpu", dtypes=ALL_DTYPES,
                 match=all_same_dtype())
def cat(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """Concatenate the (variadic) inputs along ``axis``."""
    arrays = [a for a in inputs if a is not None]
    if not arrays:
        raise ValueError("cat: needs at least one input")
    axis = attrs["axis"]  # TDF_AxisAttr
    out = outs[0] if outs else None
    return [np.concatenate(arrays, axis=axis, out=out)]


@register_kernel("tdflow.cast", "cpu", dtypes=ALL_DTYPES)
def cast(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """Convert to ``dtype``; floats to integers truncate, nonzero to ``i1`` is true."""
    x = inputs[0]
    dt = DTYPES[attrs["dtype"]]
    out = outs[0] if outs else None
    if out is None:
        return [x.astype(dt)]
    np.copyto(out, x, casting="unsafe")
    return [out]


@register_kernel("tdflow.constant", "cpu", dtypes=None)
def constant(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """A tensor of ``shape`` filled with the floating or integer value."""
    dt = DTYPES[attrs["dtype"]]
    shape = tuple(int(d) for d in attrs.get("shape", ()))
    if attrs["is_floating_value"]:
        value: Any = float(attrs["floating_value"])
    else:
        value = int(attrs["integer_value"])
        if dt.kind in "iu" and not np.iinfo(dt).min <= value <= np.iinfo(dt).max:
            # numpy's own error here is an OverflowError naming no attribute
            raise ValueError(f"integer_value {value} does not fit {attrs['dtype']} "
                             f"[{np.iinfo(dt).min}, {np.iinfo(dt).max}]")
    out = out_buffer(outs, 0, shape, dt)
    out.fill(value)
    return [out]


@register_kernel("tdflow.dense_constant", "cpu", dtypes=None)
def dense_constant(attrs: Mapping[str, Any], inputs: Sequence[Any],
                   outs: Sequence[Any]) -> list[np.ndarray]:
    """The tensor of ``value`` (decoded once per attribute: a model's weights are not copied
    again on every call)."""
    arr = _decoded(attrs["value"])
    out = outs[0] if outs else None
    if out is None:
        return [arr]
    np.copyto(out, arr)
    return [out]


def _decoded(attr: Any) -> np.ndarray:
    """The constant's array, decoded once. A blob's array is kept with its module's blob
    table (dropped when the module goes); an inline ``dense<...>`` one in a small bounded
    memo (a process that runs many models must not keep every model's weights)."""
    table = getattr(attr, "resources", None)
    if table is not None and hasattr(table, "__weakref__"):
        memo = _BY_TABLE.get(id(table))
        if memo is None:
            memo = _BY_TABLE[id(table)] = {}
            weakref.finalize(table, _BY_TABLE.pop, id(table), None)
        key = (attr.name, attr.type)
    else:
        memo, key = _INLINE, attr
    arr = memo.get(key)
    if arr is None:
        arr = to_numpy(attr)
        arr.flags.writeable = False  # shared by every call: a kernel must not write it
        if memo is _INLINE and len(_INLINE) >= _INLINE_MAX:
            _INLINE.pop(next(iter(_INLINE)))  # the oldest
        memo[key] = arr
    return arr


#: id(module blob table) -> {(blob name, type): array}; an entry goes with its table
_BY_TABLE: dict[int, dict[tuple, np.ndarray]] = {}


#: inline constant attribute -> array, the last ``_INLINE_MAX`` of them
_INLINE: dict[Any, np.ndarray] = {}


_INLINE_MAX = 256


@register_kernel("tdflow.ones_like", "cpu", dtypes=ALL_DTYPES)
def ones_like(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """Ones with the shape and dtype of ``like``."""
    like = inputs[0]
    out = out_buffer(outs, 0, like.shape, like.dtype)
    out.fill(1)
    return [out]


@register_kernel("tdflow.broadcast_like", "cpu", dtypes=ALL_DTYPES)
def broadcast_like(attrs: Mapping[str, Any], inputs: Sequence[Any],
                   outs: Sequence[Any]) -> list[np.ndarray]:
    """Broadcast ``x`` to ``like``'s shape; ``broadcast_axes`` are the dims of ``like`` that
    ``x`` lacks (default: the leading ones) or has as size 1."""
    x, like = inputs[0], inputs[1]
    axes = tuple(sorted(attrs.get("broadcast_axes", ())))  # TDF_AxesAttr of like
    if x.ndim < like.ndim:
        missing = like.ndim - x.ndim
        if axes and len(axes) == missing:
            shape = list(x.shape)
            for a in axes:
                shape.insert(a, 1)
        else:
            shape = [1] * missing + list(x.shape)
        x = x.reshape(shape)
    try:
        b = np.broadcast_to(x, like.shape)
    except ValueError:
        raise ValueError(f"broadcast_like: cannot broadcast {inputs[0].shape} to {like.shape} "
                         f"with broadcast_axes {list(axes)}") from None
    out = outs[0] if outs else None
    if out is None:
        return [np.array(b)]
    np.copyto(out, b, casting="unsafe")
    return [out]


def _bind_broadcast_like(attrs: Mapping[str, Any], ins: Sequence[Any],
                         outs: Sequence[Any],
                         dead: frozenset[int] = frozenset()) -> Any:
    """``broadcast_like`` for one launch of a compiled plan (the executor's ``bind``): the
    source's broadcastable shape found once; one ``np.copyto`` (which broadcasts) per call.

    >>> f4 = np.dtype("f4")
    >>> run = _bind_broadcast_like({"broadcast_axes": [0]}, [((), f4), ((3,), f4)],
    ...                            [((3,), f4)])
    >>> run({}, [np.float32(2.0).reshape(()), None], [np.empty(3, np.float32)])[0].tolist()
    [2.0, 2.0, 2.0]
    """
    (xs, _), (ls, _) = ins[0], ins[1]
    axes = tuple(sorted(attrs.get("broadcast_axes", ())))
    shape = list(xs)
    if len(xs) < len(ls):
        missing = len(ls) - len(xs)
        if axes and len(axes) == missing:
            for a in axes:
                shape.insert(a, 1)
        else:
            shape = [1] * missing + shape
    shape = tuple(shape)
    try:
        if np.broadcast_shapes(shape, tuple(ls)) != tuple(ls) or tuple(outs[0][0]) != tuple(ls):
            return None
    except ValueError:
        return None  # the general path raises the error

    def run(_attrs: Any, inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
        np.copyto(outs[0], inputs[0].reshape(shape), casting="unsafe")
        return outs

    return run


broadcast_like.bind = _bind_broadcast_like  # type: ignore[attr-defined]


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
    axis = attrs["axis"]  # TDF_AxisAttr, in [0, rank]
    return [store(outs, np.expand_dims(x, axis), x.dtype)]


@register_kernel("tdflow.squeeze", "cpu", dtypes=ALL_DTYPES)
def squeeze(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """``numpy.squeeze(in, axis=axes)``."""
    x = inputs[0]
    axes = tuple(attrs["axes"])  # TDF_AxesAttr
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: dim {a} of 'in' {x.shape} has size {x.shape[a]}, not 1")
    return [store(outs, np.squeeze(x, axis=axes) if axes else x, x.dtype)]


# -- arange and one_hot ---------------------------------------------------------------------------
@register_kernel("tdflow.arange", "cpu")
def arange(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """``numpy.arange(start, limit, delta)`` of the attribute family ``dtype`` reads."""
    dtype = str(attrs["dtype"])
    kind = "float" if dtype in FLOATS else "integer"
    conv = float if kind == "float" else int
    start, delta, limit = (conv(attrs[f"{kind}_{k}"]) for k in ("start", "delta", "limit"))
    if delta == 0:
        raise ValueError(f"arange: {kind}_delta is 0")
    n = max(0, int(np.ceil((limit - start) / delta)))
    # start + k * delta in f64 (integers exactly in i64), as numpy.arange computes it
    k = np.arange(n, dtype=np.float64 if kind == "float" else np.int64)
    return [store(outs, start + k * delta, DTYPES[dtype])]
