"""ONNX's pools: MaxPool, AveragePool, LpPool, GlobalAveragePool, GlobalMaxPool, GlobalLpPool.

2-D pools map onto ``max_pool_2d`` / ``avg_pool_2d``; 1-D ones are reshaped to 2-D. Pools the
tdflow ops cannot express (3-D, dilated average pools, padding over half the kernel) are composed
from strided slices of the padded input, one per kernel offset, combined with ``add_n`` or
``broadcast_maximum``; the divisor of an average pool is computed at import. Padding and output
sizes: :mod:`.windows`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .api import Lowerer, Node, rule
from .common import reshape
from .windows import int_list, node_pads, pad_value, pool_out_size


def _pool_geometry(cx: Lowerer, n: Node, xs: Sequence[int]):
    nd = len(xs) - 2
    k = int_list(n.attrs.get("kernel_shape"), nd, 1)
    s = int_list(n.attrs.get("strides"), nd, 1)
    d = int_list(n.attrs.get("dilations"), nd, 1)
    before, after = node_pads(cx, n, xs[2:], k, s, d)
    ceil = bool(n.attrs.get("ceil_mode") or 0)
    out = [pool_out_size(i, kk, b, a, st, dd, ceil)
           for i, kk, b, a, st, dd in zip(xs[2:], k, before, after, s, d)]
    return nd, k, s, d, before, after, ceil, out


def _window_slices(cx: Lowerer, xp: Any, k, s, d, out) -> list:
    shape = list(cx.shape_of(xp))
    parts = []
    for offs in itertools.product(*(range(kk) for kk in k)):
        start = [0, 0] + [o * dd for o, dd in zip(offs, d)]
        stop = shape[:2] + [o * dd + st * (m - 1) + 1 for o, dd, st, m in zip(offs, d, s, out)]
        parts.append(cx.op("tdflow.slice", [xp], {"start": start, "stop": stop,
                                                  "step": [1, 1] + list(s)}))
    return parts


def _explicit_pad(cx: Lowerer, x: Any, xs, k, s, d, before, out, value: float) -> Any:
    """Pad so that the windows of ``out`` outputs fit exactly (crops a never-read tail)."""
    need = [(m - 1) * st + dd * (kk - 1) + 1 - (i + b)
            for m, st, dd, kk, i, b in zip(out, s, d, k, xs[2:], before)]
    return pad_value(cx, x, before, need, value)


def _native_ok(k, before, after) -> bool:
    return before == after and all(2 * p <= kk for p, kk in zip(before, k))


def _to_2d(cx: Lowerer, x: Any, xs) -> Any:
    return reshape(cx, x, [xs[0], xs[1], 1, xs[2]])


@rule("MaxPool")
def max_pool(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    xs = cx.shape_of(x)
    nd, k, s, d, before, after, ceil, out = _pool_geometry(cx, n, xs)
    want_idx = n.num_outputs > 1
    if nd in (1, 2) and _native_ok(k, before, after):
        x2 = _to_2d(cx, x, xs) if nd == 1 else x
        one = [1] if nd == 1 else []
        y, idx = cx.ops("tdflow.max_pool_2d", [x2], {
            "padding": [0] * len(one) + before, "data_format": "channels_first",
            "kernel_size": one + k, "stride": one + s, "dilation": one + d,
            "return_indices": want_idx, "ceil_mode": ceil})
        if nd == 1:
            y = reshape(cx, y, [xs[0], xs[1], out[0]])
            idx = reshape(cx, idx, [xs[0], xs[1], out[0]])
        if not want_idx:
            return [y]
        plane = math.prod(xs[2:])
        if int(n.attrs.get("storage_order") or 0):  # column-major: h*W + w -> w*H + h
            hw = np.arange(plane, dtype=np.int64).reshape(xs[2:])
            col = np.moveaxis(hw, -1, 0).reshape(-1).argsort().astype(np.int64)
            idx = cx.op("tdflow.gather", [cx.constant(col), idx], {"axis": 0})
        off = (np.arange(xs[0] * xs[1], dtype=np.int64) * plane).reshape(
            [xs[0], xs[1]] + [1] * nd)
        return [y, cx.op("tdflow.broadcast_add", [idx, cx.constant(off)])]
    if want_idx:
        cx.unsupported("Indices of a pool tdflow's max_pool_2d cannot express (3-D, or "
                       "asymmetric or large pads)")
    xp = _explicit_pad(cx, x, xs, k, s, d, before, out, _lowest(cx.type_of(x).dtype))
    parts = _window_slices(cx, xp, k, s, d, out)
    y = parts[0]
    for p in parts[1:]:
        y = cx.op("tdflow.broadcast_maximum", [y, p])
    return [y]


def _count(xs, k, s, d, before, after, out, include_pad: bool) -> np.ndarray:
    """How many elements each average-pool window divides by, ``(1, 1, *out)``."""
    inner = np.ones(xs[2:], np.float64)
    if include_pad:
        inner = np.pad(inner, list(zip(before, after)), constant_values=1.0)
        b0 = [0] * len(before)
    else:
        b0 = before
    need = [(m - 1) * st + dd * (kk - 1) + 1 - (i + b)
            for m, st, dd, kk, i, b in zip(out, s, d, k, inner.shape, b0)]
    mask = np.pad(inner, [(b, max(a, 0)) for b, a in zip(b0, need)])
    mask = mask[tuple(slice(0, sz + a) if a < 0 else slice(None)
                      for sz, a in zip(mask.shape, need))]
    cnt = np.zeros(out)
    for offs in itertools.product(*(range(kk) for kk in k)):
        cnt += mask[tuple(slice(o * dd, o * dd + st * (m - 1) + 1, st)
                          for o, dd, st, m in zip(offs, d, s, out))]
    return cnt.reshape([1, 1, *out])


def _sum_windows(cx: Lowerer, x: Any, xs, k, s, d, before, out) -> Any:
    xp = _explicit_pad(cx, x, xs, k, s, d, before, out, 0.0)
    parts = _window_slices(cx, xp, k, s, d, out)
    return parts[0] if len(parts) == 1 else cx.op("tdflow.add_n", [parts])


@rule("AveragePool")
def average_pool(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    xs = cx.shape_of(x)
    nd, k, s, d, before, after, ceil, out = _pool_geometry(cx, n, xs)
    include = bool(n.attrs.get("count_include_pad") or 0)
    if nd in (1, 2) and all(dd == 1 for dd in d) and _native_ok(k, before, after):
        x2 = _to_2d(cx, x, xs) if nd == 1 else x
        one = [1] if nd == 1 else []
        y = cx.op("tdflow.avg_pool_2d", [x2], {
            "padding": [0] * len(one) + before, "data_format": "channels_first",
            "kernel_size": one + k, "stride": one + s, "ceil_mode": ceil,
            "count_include_pad": include, "divisor_override": 0})
        return [reshape(cx, y, [xs[0], xs[1], out[0]]) if nd == 1 else y]
    total = _sum_windows(cx, x, xs, k, s, d, before, out)
    cnt = _count(xs, k, s, d, before, after, out, include)
    dt = cx.type_of(x).dtype
    from tdflow.dialect.types import DTYPES

    return [cx.op("tdflow.broadcast_div", [total, cx.constant(
        np.maximum(cnt, 1).astype(DTYPES[dt]), dtype=dt if dt == "bf16" else None)])]


@rule("LpPool")
def lp_pool(cx: Lowerer, n: Node) -> list:
    """``(sum |x|^p over the window)^(1/p)``, padding counting as zeros."""
    x = n.input(0)
    xs = cx.shape_of(x)
    nd, k, s, d, before, after, ceil, out = _pool_geometry(cx, n, xs)
    p = float(n.attrs.get("p") or 2)
    a = cx.op("tdflow.abs", [x])
    a = cx.op("tdflow.broadcast_pow", [a, cx.scalar(p, x)]) if p != 1 else a
    total = _sum_windows(cx, a, xs, k, s, d, before, out)
    return [cx.op("tdflow.broadcast_pow", [total, cx.scalar(1.0 / p, x)]) if p != 1 else total]


def _global(cx: Lowerer, n: Node, kind: str) -> list:
    x = n.input(0)
    xs = cx.shape_of(x)
    axes = list(range(2, len(xs)))
    if kind == "max":
        return [cx.op("tdflow.reduce_max", [x], {"axis": axes, "keepdims": True})]
    if kind == "lp":
        p = float(n.attrs.get("p") or 2)
        a = cx.op("tdflow.broadcast_pow", [cx.op("tdflow.abs", [x]), cx.scalar(p, x)])
        t = cx.op("tdflow.reduce_sum", [a], {"axis": axes, "keepdims": True})
        return [cx.op("tdflow.broadcast_pow", [t, cx.scalar(1.0 / p, x)])]
    t = cx.op("tdflow.reduce_sum", [x], {"axis": axes, "keepdims": True})
    return [cx.op("tdflow.broadcast_div", [t, cx.scalar(math.prod(xs[2:]), x)])]


@rule("GlobalAveragePool")
def global_average_pool(cx: Lowerer, n: Node) -> list:
    return _global(cx, n, "avg")


@rule("GlobalMaxPool")
def global_max_pool(cx: Lowerer, n: Node) -> list:
    return _global(cx, n, "max")


@rule("GlobalLpPool")
def global_lp_pool(cx: Lowerer, n: Node) -> list:
    return _global(cx, n, "lp")


def _lowest(dt: str) -> float:
    from tdflow.dialect.types import DTYPES

    t = np.dtype(DTYPES[dt])
    return float("-inf") if t.kind == "f" else (int(np.iinfo(t).min))
