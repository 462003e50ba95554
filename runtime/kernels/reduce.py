"""Reductions and scans: ``reduce_sum``, ``reduce_max``, ``reduce_min``, ``reduce_prod`` and
``reduce_sum_like`` over ``axis`` (negative axes allowed), ``argmax``, ``top_k``, ``cumsum``,
``cumprod`` and ``cumprod_grad`` along the last dim (or ``dim``).

An empty ``axis`` list reduces every axis (as OneFlow's functional ``sum(x)``). ``reduce_sum`` of
a half tensor accumulates in f32; integer sums wrap in their own type, as C does.
``reduce_max`` over an empty extent gives the type's lowest value (``-inf`` for floats),
``reduce_min`` the type's largest; ``reduce_prod`` of an empty extent is 1 (half types multiply
in f32). ``top_k`` orders with a stable ``argsort`` (ties: the lower index first).

>>> import numpy as np
>>> x = np.arange(6, dtype=np.float32).reshape(2, 3)
>>> reduce_sum({"axis": [-1], "keepdims": True}, [x], [None])[0].tolist()
[[3.0], [12.0]]
>>> top_k({"k": 2}, [np.array([[3, 1, 3, 2]])], [None])[0].tolist()
[[0, 2]]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.runtime.kernels._rows import native_rows_for
from tdflow.runtime.kernels._util import (
    ALL_DTYPES,
    FLOATS,
    NUMERIC,
    acc_dtype,
    store,
)
from tdflow.runtime.kernels.registry import register_kernel, same_dtype


def _axes(attrs: Mapping[str, Any], ndim: int) -> tuple[int, ...]:
    """The reduced axes: ``axis`` (TDF_AxesAttr: non-negative, distinct), sorted; an empty
    list reduces every axis."""
    axis = attrs["axis"]
    return tuple(sorted(axis)) if len(axis) else tuple(range(ndim))


def _store(result: np.ndarray, outs: Sequence[Any], dt: np.dtype) -> list[np.ndarray]:
    out = outs[0] if outs else None
    if out is None:
        return [np.asarray(result, dtype=dt)]
    np.copyto(out, result.reshape(out.shape) if result.size == out.size else result,
              casting="unsafe")
    return [out]


def _reduce(fn: Any, attrs: Mapping[str, Any], x: np.ndarray, outs: Sequence[Any],
            **kwargs: Any) -> list[np.ndarray]:
    """``fn`` (``np.sum``, ``np.max``, ...) over the op's ``axis`` with its ``keepdims``, the
    result in ``x``'s type."""
    r = fn(x, axis=_axes(attrs, x.ndim), keepdims=bool(attrs["keepdims"]), **kwargs)
    return _store(np.asarray(r), outs, x.dtype)


def _extreme(dt: np.dtype, highest: bool) -> Any:
    """The type's highest (or lowest) value: a max or min over an empty extent."""
    if dt.kind == "f":
        return np.inf if highest else -np.inf
    if dt.kind == "b":
        return highest
    info = np.iinfo(dt)
    return info.max if highest else info.min


def _sum_but_one(x: np.ndarray, axes: tuple[int, ...], keepdims: bool,
                 out: np.ndarray | None = None) -> np.ndarray | None:
    """The sum of a contiguous float array over every axis but one that is not the last (a
    batch norm's gradient sums over ``(0, 2, 3)``) as an einsum on its ``(outer, C, inner)`` view, or ``None``:
    numpy's reduction over axes that are not adjacent ran 3-5x slower on the ResNet's
    activations (measured ``(64, 32, 4, 4)``: 56 us against 11 us). The same sums in another
    order: rounding may differ.

    >>> _sum_but_one(np.ones((2, 3, 4), np.float32), (0, 2), True).ravel().tolist()
    [8.0, 8.0, 8.0]
    """
    kept = [i for i in range(x.ndim) if i not in axes]
    # a kept last axis (a bias gradient's) is numpy's fast case: adding whole rows
    if (x.dtype.kind != "f" or len(kept) != 1 or len(axes) < 2 or kept[0] == x.ndim - 1
            or not x.flags.c_contiguous):
        return None
    k = kept[0]
    x3 = x.reshape(math.prod(x.shape[:k]), x.shape[k], math.prod(x.shape[k + 1:]))
    wide = acc_dtype(x.dtype)
    if out is not None and out.dtype == wide and out.flags.c_contiguous:
        # straight into the output buffer (its shape has the kept extent alone, or 1s too)
        np.einsum("oci->c", x3, dtype=wide, out=out.reshape(-1))
        return out
    r = np.einsum("oci->c", x3, dtype=wide)
    return r.reshape([x.shape[k] if i == k else 1 for i in range(x.ndim)]) if keepdims else r


@register_kernel("tdflow.reduce_sum", "cpu", dtypes=NUMERIC)
def reduce_sum(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """Sum over ``axis`` (all axes when empty), ``keepdims`` optional."""
    x = inputs[0]
    out = outs[0] if outs else None
    r = _sum_but_one(x, _axes(attrs, x.ndim), bool(attrs["keepdims"]), out)
    if r is out and r is not None:
        return [out]
    if r is not None:
        return _store(r, outs, x.dtype)
    return _reduce(np.sum, attrs, x, outs, dtype=acc_dtype(x.dtype))


def _bind_sum(axes: tuple[int, ...], keepdims: bool, ins: Sequence[Any],
              outs: Sequence[Any]) -> Any:
    """``run(attrs, inputs, outs)`` doing a plan launch's sum as ``np.add.reduce`` straight
    into its output (what ``np.sum`` calls; the same loop, so the same values), when the
    output has the accumulation type and exactly the reduced shape; else ``None``."""
    (shape, dt), (out_shape, out_dt) = ins[0], outs[0]
    wide = acc_dtype(dt)
    if out_dt != wide or any(not 0 <= a < len(shape) for a in axes):
        return None
    reduced = tuple(1 if i in axes else n for i, n in enumerate(shape)) if keepdims else \
        tuple(n for i, n in enumerate(shape) if i not in axes)
    if reduced != tuple(out_shape):
        return None
    add = np.add.reduce
    # float32 over the last axis (rows) or the first (columns): C loops in numpy's order
    # (numpy's reduction pays its iterator per row: ~40 us for 1024 rows of 128, a layer
    # norm gradient's sums; ~30 us for a bias gradient's columns)
    kind = 3 if axes == (len(shape) - 1,) else 4 if axes == (0,) and len(shape) > 1 else 0
    if dt == np.float32 and kind:
        native = native_rows_for(math.prod(shape))
        if native is not None:
            n = shape[-1] if kind == 3 else math.prod(shape[1:])
            rows = math.prod(shape) // n

            def rows_run(_attrs: Any, inputs: Sequence[Any], outs: Sequence[Any]) -> Any:
                x, out = inputs[0], outs[0]
                if not (x.flags.c_contiguous and out.flags.c_contiguous
                        and native(kind, x, out, rows, n)):
                    add(x, axis=axes, dtype=wide, out=out, keepdims=keepdims)
                return outs

            return rows_run

    def run(_attrs: Any, inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
        add(inputs[0], axis=axes, dtype=wide, out=outs[0], keepdims=keepdims)
        return outs

    return run


def _bind_reduce_sum(attrs: Mapping[str, Any], ins: Sequence[Any], outs: Sequence[Any],
                     dead: frozenset[int] = frozenset()) -> Any:
    """``reduce_sum`` for one launch of a compiled plan (the executor's ``bind``); the sums
    :func:`_sum_but_one` takes keep its einsum (:func:`_bind_sum_but_one`).

    >>> f4 = np.dtype("f4")
    >>> run = _bind_reduce_sum({"axis": [0], "keepdims": False}, [((3,), f4)], [((), f4)])
    >>> float(run({}, [np.array([1, 2, 3], np.float32)], [np.empty((), np.float32)])[0])
    6.0
    """
    shape = ins[0][0]
    axes = _axes(attrs, len(shape))
    kept = [i for i in range(len(shape)) if i not in axes]
    if len(kept) == 1 and len(axes) >= 2 and kept[0] != len(shape) - 1:
        return _bind_sum_but_one(kept[0], ins, outs)
    return _bind_sum(axes, bool(attrs["keepdims"]), ins, outs)


def _bind_sum_but_one(k: int, ins: Sequence[Any], outs: Sequence[Any]) -> Any:
    """The einsum of :func:`_sum_but_one` (a batch norm gradient's per-channel sums) for one
    launch: its ``(outer, C, inner)`` view worked out once, the same einsum straight into the
    output (the general call spends ~2.5 us a launch finding it); ``None`` (the general path)
    unless the input is float and the output has the accumulation type and ``C`` numbers."""
    (shape, dt), (out_shape, out_dt) = ins[0], outs[0]
    wide = acc_dtype(dt)
    if dt.kind != "f" or out_dt != wide or math.prod(out_shape) != shape[k]:
        return None
    dims = (math.prod(shape[:k]), shape[k], math.prod(shape[k + 1:]))
    einsum = np.einsum

    def run(attrs: Any, inputs: Sequence[Any], outs: Sequence[Any]) -> Any:
        x, out = inputs[0], outs[0]
        if not (x.flags.c_contiguous and out.flags.c_contiguous):
            return reduce_sum(attrs, inputs, outs)  # the general path decides (numpy's sum)
        einsum("oci->c", x.reshape(dims), dtype=wide, out=out.reshape(-1))
        return outs

    return run


reduce_sum.bind = _bind_reduce_sum  # type: ignore[attr-defined]


@register_kernel("tdflow.reduce_max", "cpu", dtypes=ALL_DTYPES)
def reduce_max(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """Maximum over ``axis`` (all axes when empty); NaN propagates as in numpy."""
    return _reduce(np.max, attrs, inputs[0], outs, initial=_extreme(inputs[0].dtype, False))


@register_kernel("tdflow.reduce_min", "cpu", dtypes=ALL_DTYPES)
def reduce_min(attrs: Mapping[str, Any], inputs: Sequence[Any],
               outs: Sequence[Any]) -> list[np.ndarray]:
    """Minimum over ``axis`` (all axes when empty); NaN propagates as in numpy."""
    return _reduce(np.min, attrs, inputs[0], outs, initial=_extreme(inputs[0].dtype, True))


@register_kernel("tdflow.reduce_prod", "cpu", dtypes=NUMERIC)
def reduce_prod(attrs: Mapping[str, Any], inputs: Sequence[Any],
                outs: Sequence[Any]) -> list[np.ndarray]:
    """Product over ``axis`` (all axes when empty); integers wrap in their own type."""
    return _reduce(np.prod, attrs, inputs[0], outs, dtype=acc_dtype(inputs[0].dtype))


@register_kernel("tdflow.reduce_sum_like", "cpu", dtypes=NUMERIC, match=same_dtype(1))
def reduce_sum_like(attrs: Mapping[str, Any], inputs: Sequence[Any],
                    outs: Sequence[Any]) -> list[np.ndarray]:
    """Sum ``x`` over ``axis`` and give it ``like``'s shape (an empty axis copies ``x``)."""
    x, like = inputs[0], inputs[1]
    axes = tuple(sorted(attrs.get("axis", ())))  # TDF_AxesAttr of x: non-negative, distinct
    r = np.sum(x, axis=axes, dtype=acc_dtype(x.dtype)) if axes else x
    r = np.asarray(r).reshape(like.shape)
    out = outs[0] if outs else None
    if out is None:
        return [r.astype(x.dtype, copy=r is x or r.dtype != x.dtype)]
    np.copyto(out, r, casting="unsafe")
    return [out]


def _bind_sum_like(attrs: Mapping[str, Any], ins: Sequence[Any], outs: Sequence[Any],
                   dead: frozenset[int] = frozenset()) -> Any:
    """``reduce_sum_like`` for one launch of a compiled plan (the executor's ``bind``): the
    sum written straight into the output when ``like``'s shape is the reduced one."""
    axes = tuple(sorted(attrs.get("axis", ())))
    if not axes or tuple(ins[1][0]) != tuple(outs[0][0]):
        return None
    return _bind_sum(axes, False, ins[:1], outs)


reduce_sum_like.bind = _bind_sum_like  # type: ignore[attr-defined]


# -- argmax and top_k -----------------------------------------------------------------------------
def _rows(op: str, x: np.ndarray) -> None:
    if x.ndim == 0:
        raise ValueError(f"{op}: 'in' is a scalar; the op works along its last dim")


@register_kernel("tdflow.argmax", "cpu", dtypes=ALL_DTYPES)
def argmax(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
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
def top_k(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """The positions of the ``min(k, n)`` largest of each row, largest first."""
    x = inputs[0]
    _rows("top_k", x)
    k = int(attrs["k"])
    if k < 0:
        raise ValueError(f"top_k: k must be >= 0, got {k}")
    return [store(outs, descending_order(x)[..., :k], np.int64)]


# -- cumsum, cumprod, cumprod_grad ----------------------------------------------------------------
def _scan(op: str, fn: Any, attrs: Mapping[str, Any], inputs: Sequence[Any],
          outs: Sequence[Any]) -> list[np.ndarray]:
    x = inputs[0]
    if x.ndim == 0:
        return [store(outs, x, x.dtype)]
    d = attrs["dim"]  # TDF_ScanAxisAttr: non-negative, checked
    # in x's own type (numpy would widen small integers to int64), halves in f32
    return [store(outs, fn(x, axis=d, dtype=acc_dtype(x.dtype)), x.dtype)]


@register_kernel("tdflow.cumsum", "cpu", dtypes=NUMERIC)
def cumsum(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """``numpy.cumsum(x, axis=dim)`` in ``x``'s element type."""
    return _scan("cumsum", np.cumsum, attrs, inputs, outs)


@register_kernel("tdflow.cumprod", "cpu", dtypes=NUMERIC)
def cumprod(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
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
def cumprod_grad(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """The gradient of ``cumprod`` (see :func:`cumprod_grad_lines`)."""
    dy, x = inputs[0], inputs[2]
    if dy.shape != x.shape:
        raise ValueError(f"cumprod_grad: 'dy' {dy.shape} and 'input' {x.shape} differ")
    if x.ndim == 0:
        return [store(outs, dy, dy.dtype)]
    d = attrs["dim"]
    acc = acc_dtype(dy.dtype)
    g = cumprod_grad_lines(np.moveaxis(dy, d, -1).astype(acc), np.moveaxis(x, d, -1).astype(acc))
    return [store(outs, np.moveaxis(g, -1, d), dy.dtype)]
