"""Reductions: ``reduce_sum`` and ``reduce_max`` over ``axis`` (negative axes allowed).

An empty ``axis`` list reduces every axis (as OneFlow's functional ``sum(x)``). ``reduce_sum`` of
a half tensor accumulates in f32; integer sums wrap in their own type, as C does.
``reduce_max`` over an empty extent gives the type's lowest value (``-inf`` for floats).

>>> import numpy as np
>>> x = np.arange(6, dtype=np.float32).reshape(2, 3)
>>> reduce_sum({"axis": [-1], "keepdims": True}, [x], [None])[0].tolist()
[[3.0], [12.0]]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.runtime.kernels._util import ALL_DTYPES, NUMERIC, acc_dtype, norm_axes
from tdflow.runtime.kernels.registry import register_kernel


def _axes(attrs: Mapping[str, Any], ndim: int) -> tuple[int, ...]:
    axis = attrs.get("axis", ())
    if isinstance(axis, int):
        axis = [axis]
    return norm_axes(axis, ndim) if len(axis) else tuple(range(ndim))


def _store(result: np.ndarray, outs: Sequence[Any], dt: np.dtype) -> list[np.ndarray]:
    out = outs[0] if outs else None
    if out is None:
        return [np.asarray(result, dtype=dt)]
    np.copyto(out, result.reshape(out.shape) if result.size == out.size else result,
              casting="unsafe")
    return [out]


@register_kernel("tdflow.reduce_sum", "cpu", dtypes=NUMERIC)
def reduce_sum(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """Sum over ``axis`` (all axes when empty), ``keepdims`` optional."""
    (x,) = inputs[:1]
    axes = _axes(attrs, x.ndim)
    keep = bool(attrs.get("keepdims", False))
    r = np.sum(x, axis=axes, keepdims=keep, dtype=acc_dtype(x.dtype))
    return _store(np.asarray(r), outs, x.dtype)


@register_kernel("tdflow.reduce_max", "cpu", dtypes=ALL_DTYPES)
def reduce_max(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """Maximum over ``axis`` (all axes when empty); NaN propagates as in numpy."""
    (x,) = inputs[:1]
    axes = _axes(attrs, x.ndim)
    keep = bool(attrs.get("keepdims", False))
    if x.dtype.kind == "f":
        lowest: Any = -np.inf
    elif x.dtype.kind == "b":
        lowest = False
    else:
        lowest = np.iinfo(x.dtype).min
    r = np.max(x, axis=axes, keepdims=keep, initial=lowest)
    return _store(np.asarray(r), outs, x.dtype)
