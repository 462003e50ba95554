"""ONNX's convolution, pooling, LRN and resampling ops: Conv, ConvTranspose, MaxPool,
AveragePool, LpPool, GlobalAveragePool, GlobalMaxPool, GlobalLpPool, LRN, Resize, Upsample.

2-D convolutions and pools map onto ``tdflow.conv2d`` / ``max_pool_2d`` / ``avg_pool_2d``;
1-D ones are reshaped to 2-D (a unit height). ONNX's asymmetric ``pads`` keep the op's
symmetric ``padding_before`` for the common part and add the rest as explicit padding (a
``tdflow.cat`` with a constant block). Pools the tdflow ops cannot express (3-D, dilated
average pools, padding over half the kernel) are composed from strided slices of the padded
input, one per kernel offset, combined with ``add_n`` or ``broadcast_maximum``; the divisor of
an average pool is computed at import. ConvTranspose is ``conv_data_grad`` (the transposed
convolution is the data gradient of the convolution). Resize applies one 1-D resampling per
resized axis: a ``gather`` for ``nearest``, a matmul with the interpolation matrix (built at
import from the mode, the coordinate transformation and the cubic coefficients) otherwise.

>>> same_pads([5], [3], [2], [1], "SAME_UPPER")
([1], [1])
>>> pool_out_size(5, 2, 0, 0, 2, 1, True)
3
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .api import Lowerer, Node, rule
from .common import reshape, transpose


# -- padding and sizes -------------------------------------------------------------------------
def same_pads(spatial: Sequence[int], k: Sequence[int], s: Sequence[int], d: Sequence[int],
              auto_pad: str) -> tuple[list[int], list[int]]:
    """``(before, after)`` pads of ``auto_pad`` ``SAME_UPPER``/``SAME_LOWER`` (output
    ``ceil(in / stride)``)."""
    before, after = [], []
    for n, kk, st, dd in zip(spatial, k, s, d):
        out = -(-n // st)
        total = max((out - 1) * st + (kk - 1) * dd + 1 - n, 0)
        small, big = total // 2, total - total // 2
        before.append(small if auto_pad == "SAME_UPPER" else big)
        after.append(big if auto_pad == "SAME_UPPER" else small)
    return before, after


def _pads(cx: Lowerer, n: Node, spatial: Sequence[int], k: Sequence[int], s: Sequence[int],
          d: Sequence[int]) -> tuple[list[int], list[int]]:
    nd = len(spatial)
    auto = n.attrs.get("auto_pad") or "NOTSET"
    if isinstance(auto, bytes):
        auto = auto.decode()
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        return same_pads(spatial, k, s, d, auto)
    if auto == "VALID":
        return [0] * nd, [0] * nd
    if auto != "NOTSET":
        cx.unsupported(f"auto_pad {auto!r}")
    pads = n.attrs.get("pads")
    if not pads:
        return [0] * nd, [0] * nd
    pads = [int(p) for p in pads]
    if len(pads) != 2 * nd:
        cx.unsupported(f"pads {pads} needs {2 * nd} entries")
    return pads[:nd], pads[nd:]


def _ints(v: Any, nd: int, default: int) -> list[int]:
    return [int(t) for t in v] if v else [default] * nd


def pool_out_size(size: int, k: int, pb: int, pa: int, s: int, d: int, ceil: bool) -> int:
    """One output length: ``floor``/``ceil((in + pads - dilated k) / stride) + 1``, a last
    window starting in the right padding dropped (ONNX's and PyTorch's rule)."""
    eff = d * (k - 1) + 1
    span = size + pb + pa - eff
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= size + pb:
        out -= 1
    return out


def pad_value(cx: Lowerer, x: Any, before: Sequence[int], after: Sequence[int],
              value: float, first: int = 2) -> Any:
    """``x`` padded with ``value`` on the axes from ``first`` on (a negative count crops)."""
    dt = cx.type_of(x).dtype
    from tdflow.dialect.types import DTYPES

    npdt = DTYPES[dt]
    for i, (b, a) in enumerate(zip(before, after)):
        ax = first + i
        shape = list(cx.shape_of(x))
        if a < 0 or b < 0:
            start = [0] * len(shape)
            stop = shape.copy()
            start[ax] = max(-b, 0)
            stop[ax] += min(a, 0)
            x = cx.op("tdflow.slice", [x], {"start": start, "stop": stop,
                                            "step": [1] * len(shape)})
            shape = [e - st for st, e in zip(start, stop)]
            a, b = max(a, 0), max(b, 0)
        parts = []
        for cnt in (b, a):
            if cnt > 0:
                blk = shape.copy()
                blk[ax] = cnt
                parts.append(cx.constant(np.full(blk, value, npdt), dtype=dt if dt == "bf16"
                                         else None))
            else:
                parts.append(None)
        if parts[0] is None and parts[1] is None:
            continue
        vals = [v for v in (parts[0], x, parts[1]) if v is not None]
        x = cx.op("tdflow.cat", [vals], {"axis": ax})
    return x


def _lowest(dt: str) -> float:
    from tdflow.dialect.types import DTYPES

    t = np.dtype(DTYPES[dt])
    return float("-inf") if t.kind == "f" else (int(np.iinfo(t).min))


# -- convolution ------------------------------------------------------------------------------
@rule("Conv")
def conv(cx: Lowerer, n: Node) -> list:
    x, w = n.input(0), n.input(1)
    xs, ws = cx.shape_of(x), cx.shape_of(w)
    nd = len(xs) - 2
    k = _ints(n.attrs.get("kernel_shape"), nd, 0) if n.attrs.get("kernel_shape") else \
        list(ws[2:])
    s = _ints(n.attrs.get("strides"), nd, 1)
    d = _ints(n.attrs.get("dilations"), nd, 1)
    g = int(n.attrs.get("group") or 1)
    before, after = _pads(cx, n, xs[2:], k, s, d)
    if nd == 3:
        return [_conv3d(cx, n, x, w, k, s, d, g, before, after)]
    if nd != 2 and nd != 1:
        cx.unsupported(f"{nd}-D convolution (tdflow has conv2d; 1-D is reshaped to 2-D, "
                       f"3-D composed from 2-D ones)")
    if nd == 1:
        x = reshape(cx, x, [xs[0], xs[1], 1, xs[2]])
        w = reshape(cx, w, [ws[0], ws[1], 1, ws[2]])
        k, s, d, before, after = [1] + k, [1] + s, [1] + d, [0] + before, [0] + after
    sym = [min(b, a) for b, a in zip(before, after)]
    x = pad_value(cx, x, [b - p for b, p in zip(before, sym)],
                  [a - p for a, p in zip(after, sym)], 0.0)
    bias = n.inputs[2] if n.has_input(2) else None
    y = cx.op("tdflow.conv2d", [x, w, bias, None], {
        "filters": int(ws[0]), "padding_before": sym, "data_format": "channels_first",
        "kernel_size": k, "strides": s, "dilation_rate": d, "groups": g})
    if nd == 1:
        ys = cx.shape_of(y)
        y = reshape(cx, y, [ys[0], ys[1], ys[3]])
    return [y]


def _conv3d(cx: Lowerer, n: Node, x: Any, w: Any, k, s, d, g, before, after) -> Any:
    """A 3-D convolution as the sum over the depth taps ``j`` of 2-D convolutions of the
    depth slices ``j * dilation + stride * t`` (moved into the batch) with ``w[:, :, j]``."""
    sym = [0] + [min(b, a) for b, a in zip(before[1:], after[1:])]
    x = pad_value(cx, x, [b - p for b, p in zip(before, sym)],
                  [a - p for a, p in zip(after, sym)], 0.0)
    xs, ws = cx.shape_of(x), cx.shape_of(w)
    nb, c, dp, h, wd = xs
    o = ws[0]
    dout = (dp - d[0] * (k[0] - 1) - 1) // s[0] + 1
    bias = n.inputs[2] if n.has_input(2) else None
    parts = []
    for j in range(k[0]):
        sl = cx.op("tdflow.slice", [x], {
            "start": [0, 0, j * d[0], 0, 0],
            "stop": [nb, c, j * d[0] + s[0] * (dout - 1) + 1, h, wd], "step": [1, 1, s[0], 1, 1]})
        sl = reshape(cx, transpose(cx, sl, [0, 2, 1, 3, 4]), [nb * dout, c, h, wd])
        wj = cx.op("tdflow.slice", [w], {"start": [0, 0, j, 0, 0],
                                         "stop": [o, ws[1], j + 1, ws[3], ws[4]],
                                         "step": [1] * 5})
        wj = reshape(cx, wj, [o, ws[1], ws[3], ws[4]])
        parts.append(cx.op("tdflow.conv2d", [sl, wj, bias if j == 0 else None, None], {
            "filters": int(o), "padding_before": sym[1:], "data_format": "channels_first",
            "kernel_size": k[1:], "strides": s[1:], "dilation_rate": d[1:], "groups": g}))
    y = parts[0] if len(parts) == 1 else cx.op("tdflow.add_n", [parts])
    ys = cx.shape_of(y)
    y = reshape(cx, y, [nb, dout, o, ys[2], ys[3]])
    return transpose(cx, y, [0, 2, 1, 3, 4])


@rule("ConvTranspose")
def conv_transpose(cx: Lowerer, n: Node) -> list:
    """The data gradient of the convolution whose filter is ``W`` (``(C, M/g, *k)``)."""
    x, w = n.input(0), n.input(1)
    xs, ws = cx.shape_of(x), cx.shape_of(w)
    nd = len(xs) - 2
    if nd not in (1, 2, 3):
        cx.unsupported(f"{nd}-D ConvTranspose (conv_data_grad is used in 1-D to 3-D)")
    g = int(n.attrs.get("group") or 1)
    k = _ints(n.attrs.get("kernel_shape"), nd, 0) if n.attrs.get("kernel_shape") else \
        list(ws[2:])
    s = _ints(n.attrs.get("strides"), nd, 1)
    d = _ints(n.attrs.get("dilations"), nd, 1)
    op_ = _ints(n.attrs.get("output_padding"), nd, 0)
    m = ws[1] * g
    full = [st * (i - 1) + op + (kk - 1) * dd + 1
            for i, st, op, kk, dd in zip(xs[2:], s, op_, k, d)]
    auto = n.attrs.get("auto_pad") or "NOTSET"
    if isinstance(auto, bytes):
        auto = auto.decode()
    out_shape = n.attrs.get("output_shape")
    if out_shape:
        out_shape = [int(t) for t in out_shape][-nd:]
        total = [f - o for f, o in zip(full, out_shape)]
        if auto == "SAME_UPPER":
            before = [t // 2 for t in total]
        else:
            before = [t - t // 2 for t in total]
        after = [t - b for t, b in zip(total, before)]
    elif auto in ("SAME_UPPER", "SAME_LOWER"):
        total = [f - i * st for f, i, st in zip(full, xs[2:], s)]
        if auto == "SAME_UPPER":
            before = [t // 2 for t in total]
        else:
            before = [t - t // 2 for t in total]
        after = [t - b for t, b in zip(total, before)]
    elif auto == "VALID":
        before = after = [0] * nd
    else:
        pads = _ints(n.attrs.get("pads"), 2 * nd, 0)
        before, after = pads[:nd], pads[nd:]
    if nd == 1:
        x = reshape(cx, x, [xs[0], xs[1], 1, xs[2]])
        w = reshape(cx, w, [ws[0], ws[1], 1, ws[2]])
        k, s, d, full = [1] + k, [1] + s, [1] + d, [1] + full
        before, after = [0] + before, [0] + after
    y = _deconv3d(cx, x, w, m, k, s, d, g, full) if nd == 3 else \
        _deconv2d(cx, x, w, m, k[-2:], s[-2:], d[-2:], g, full[-2:])
    y = pad_value(cx, y, [-b for b in before], [-a for a in after], 0.0) \
        if any(before) or any(after) else y
    if n.has_input(2):
        b = reshape(cx, n.input(2), [1, m] + [1] * nd)
        if nd == 1:
            b = reshape(cx, n.input(2), [1, m, 1, 1])
        y = cx.op("tdflow.broadcast_add", [y, b])
    if nd == 1:
        ys = cx.shape_of(y)
        y = reshape(cx, y, [ys[0], ys[1], ys[3]])
    return [y]


def _deconv2d(cx: Lowerer, x: Any, w: Any, m: int, k, s, d, g, full) -> Any:
    like = cx.op("tdflow.constant", [], {
        "floating_value": 0.0, "is_floating_value": True, "dtype": cx.type_of(x).dtype,
        "shape": [cx.shape_of(x)[0], m, *full]})
    return cx.op("tdflow.conv_data_grad", [x, w, like, None], {
        "num_spatial_dims": 2, "padding_before": [0, 0], "data_format": "channels_first",
        "kernel_size": list(k), "strides": list(s), "dilation_rate": list(d), "groups": g})


def _deconv3d(cx: Lowerer, x: Any, w: Any, m: int, k, s, d, g, full) -> Any:
    """A 3-D transposed convolution (no pads) as the sum over the depth taps ``j`` of 2-D
    ones of every depth slice (moved into the batch) with ``w[:, :, j]``, each placed at
    depths ``stride * i + dilation * j`` (zeros interleaved, then shifted)."""
    nb, c, din, h, wd = cx.shape_of(x)
    ws = cx.shape_of(w)
    xb = reshape(cx, transpose(cx, x, [0, 2, 1, 3, 4]), [nb * din, c, h, wd])
    parts = []
    for j in range(k[0]):
        wj = reshape(cx, cx.op("tdflow.slice", [w], {
            "start": [0, 0, j, 0, 0], "stop": [ws[0], ws[1], j + 1, ws[3], ws[4]],
            "step": [1] * 5}), [ws[0], ws[1], ws[3], ws[4]])
        z = _deconv2d(cx, xb, wj, m, k[1:], s[1:], d[1:], g, full[1:])
        z = reshape(cx, z, [nb, din, 1, m, full[1], full[2]])
        if s[0] > 1:
            z = pad_value(cx, z, [0], [s[0] - 1], 0.0, first=2)
        z = reshape(cx, z, [nb, din * s[0], m, full[1], full[2]])
        z = pad_value(cx, z, [j * d[0]], [full[0] - j * d[0] - din * s[0]], 0.0, first=1)
        parts.append(z)
    y = parts[0] if len(parts) == 1 else cx.op("tdflow.add_n", [parts])
    return transpose(cx, y, [0, 2, 1, 3, 4])


# -- pooling ----------------------------------------------------------------------------------
def _pool_geometry(cx: Lowerer, n: Node, xs: Sequence[int]):
    nd = len(xs) - 2
    k = _ints(n.attrs.get("kernel_shape"), nd, 1)
    s = _ints(n.attrs.get("strides"), nd, 1)
    d = _ints(n.attrs.get("dilations"), nd, 1)
    before, after = _pads(cx, n, xs[2:], k, s, d)
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


# -- LRN --------------------------------------------------------------------------------------
@rule("LRN")
def lrn(cx: Lowerer, n: Node) -> list:
    """``x / (bias + alpha / size * sum of x^2 over the channel window)^beta``."""
    x = n.input(0)
    xs = cx.shape_of(x)
    size = int(n.attrs["size"])
    alpha, beta = float(n.attrs.get("alpha", 1e-4)), float(n.attrs.get("beta", 0.75))
    bias = float(n.attrs.get("bias", 1.0))
    sq = cx.op("tdflow.square", [x])
    rest = math.prod(xs[2:])
    sq = reshape(cx, sq, [xs[0], 1, xs[1], rest])
    lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
    sq = pad_value(cx, sq, [lo, 0], [hi, 0], 0.0)
    parts = [cx.op("tdflow.slice", [sq], {"start": [0, 0, j, 0],
                                          "stop": [xs[0], 1, j + xs[1], rest],
                                          "step": [1, 1, 1, 1]}) for j in range(size)]
    total = parts[0] if size == 1 else cx.op("tdflow.add_n", [parts])
    total = reshape(cx, total, xs)
    den = cx.op("tdflow.broadcast_add", [cx.op("tdflow.broadcast_mul", [
        total, cx.scalar(alpha / size, x)]), cx.scalar(bias, x)])
    den = cx.op("tdflow.broadcast_pow", [den, cx.scalar(beta, x)])
    return [cx.op("tdflow.broadcast_div", [x, den])]


# -- Resize -----------------------------------------------------------------------------------
def _coord(mode: str, o: np.ndarray, scale: float, length: int, out_int: int,
           roi: tuple[float, float]) -> np.ndarray:
    """Input coordinates of outputs ``o`` (onnx's formulas; ``out`` is ``scale * length``,
    not rounded)."""
    out = scale * length
    if mode == "half_pixel":
        return (o + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        adj = out_int / out
        center = length / 2
        return center * (1 - adj) + (o + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (o + 0.5) / scale - 0.5 if out > 1 else np.full_like(o, -0.5)
    if mode == "align_corners":
        return np.zeros_like(o) if out == 1 else o * (length - 1) / (out - 1)
    if mode == "asymmetric":
        return o / scale
    if mode == "tf_crop_and_resize":
        a, b = roi
        if out > 1:
            return a * (length - 1) + o * (b - a) * (length - 1) / (out - 1)
        return np.full_like(o, (b - a) * (length - 1) / 2 + a * (length - 1))
    raise ValueError(mode)


def _nearest(x: np.ndarray, mode: str) -> np.ndarray:
    if mode == "floor":
        return np.floor(x)
    if mode == "ceil":
        return np.ceil(x)
    half = np.isclose(x - np.floor(x), 0.5)
    r = np.round(x)
    return np.where(half, np.floor(x) if mode == "round_prefer_floor" else np.ceil(x), r)


def _cubic(r: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic kernel at distances ``r``."""
    r = np.abs(r)
    return np.where(r <= 1, ((a + 2) * r - (a + 3)) * r * r + 1,
                    np.where(r < 2, ((a * r - 5 * a) * r + 8 * a) * r - 4 * a, 0.0))


def interp_matrix(length: int, out: int, scale: float, mode: str, ctm: str,
                  roi: tuple[float, float] = (0.0, 1.0), nearest_mode: str = "round_prefer_floor",
                  cubic_a: float = -0.75, exclude_outside: bool = False,
                  antialias: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The ``(out, length)`` matrix of a 1-D resampling and a mask of the outputs whose
    coordinate lies inside the input (only ``tf_crop_and_resize`` has others).

    >>> interp_matrix(2, 4, 2.0, "linear", "asymmetric")[0].tolist()
    [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0], [0.0, 1.0]]
    """
    o = np.arange(out, dtype=np.float64)
    xo = _coord(ctm, o, scale, length, out, roi)
    inside = np.ones(out, bool)
    if ctm == "tf_crop_and_resize":
        inside = (xo >= 0) & (xo <= length - 1)
    m = np.zeros((out, length))
    rows = np.arange(out)
    if mode == "nearest":
        idx = np.clip(_nearest(xo, nearest_mode).astype(np.int64), 0, length - 1)
        m[rows, idx] = 1.0
    else:  # onnx's reference: base = ceil(x) - 1, taps base + i, edge-clamped
        ss = min(scale, 1.0) if antialias else 1.0
        base = np.ceil(xo).astype(np.int64) - 1
        r = xo - base
        if mode == "linear":
            start = int(np.floor(-1 / ss) + 1)
            taps = range(start, 2 - start)
        else:
            start = int(np.floor(-2 / ss) + 1)
            taps = range(start, 2 - start)
        wts = []
        for i in taps:
            dist = ss * (i - r)
            wts.append(np.clip(1 - np.abs(dist), 0, 1) if mode == "linear"
                       else _cubic(dist, cubic_a))
        tot = np.sum(wts, axis=0)
        for i, wgt in zip(taps, wts):
            src = base + i
            wgt = wgt / tot
            if exclude_outside:
                wgt = np.where((src >= 0) & (src < length), wgt, 0.0)
            np.add.at(m, (rows, np.clip(src, 0, length - 1)), wgt)
        if exclude_outside:
            t2 = m.sum(axis=1, keepdims=True)
            m = m / np.where(t2 == 0, 1, t2)
    m[~inside] = 0.0
    return m, inside


def _resize_axes(cx: Lowerer, x: Any, specs: list) -> Any:
    """Apply ``(axis, matrix, mode, inside)`` resamplings one after another."""
    from tdflow.dialect.types import DTYPES

    dt = cx.type_of(x).dtype
    npdt = DTYPES[dt]
    for ax, m, mode, _ in specs:
        shape = list(cx.shape_of(x))
        if m.shape[0] == m.shape[1] and np.array_equal(m, np.eye(m.shape[0])):
            continue
        if mode == "nearest" and np.all(m.sum(axis=1) == 1) and np.all((m == 0) | (m == 1)):
            idx = np.argmax(m, axis=1).astype(np.int64)
            x = cx.op("tdflow.gather", [x, cx.constant(idx)], {"axis": ax})
            continue
        rank = len(shape)
        perm = [a for a in range(rank) if a != ax] + [ax]
        y = transpose(cx, x, perm)
        moved = [shape[a] for a in perm]
        y = reshape(cx, y, [math.prod(moved[:-1]), moved[-1]])
        y = cx.op("tdflow.matmul", [y, cx.constant(
            m.T.astype(npdt), dtype=dt if dt == "bf16" else None)], {})
        y = reshape(cx, y, moved[:-1] + [m.shape[0]])
        inv = [perm.index(a) for a in range(rank)]
        x = transpose(cx, y, inv)
    return x


def _resize(cx: Lowerer, n: Node, x: Any, scales: Any, sizes: Any, roi: Any) -> list:
    xs = cx.shape_of(x)
    rank = len(xs)
    attrs = n.attrs

    def s_attr(name: str, default: str) -> str:
        v = attrs.get(name) or default
        return v.decode() if isinstance(v, bytes) else v

    mode = s_attr("mode", "nearest")
    ctm = s_attr("coordinate_transformation_mode", "half_pixel")
    nearest_mode = s_attr("nearest_mode", "round_prefer_floor")
    policy = s_attr("keep_aspect_ratio_policy", "stretch")
    axes = attrs.get("axes")
    axes = [int(a) % rank for a in axes] if axes else list(range(rank))
    if mode not in ("nearest", "linear", "cubic"):
        cx.unsupported(f"mode {mode!r}")
    if sizes is not None:
        sizes = [int(v) for v in sizes]
        if policy != "stretch":
            r = [sz / xs[a] for sz, a in zip(sizes, axes)]
            f = min(r) if policy == "not_larger" else max(r)
            sizes = [int(math.floor(f * xs[a] + 0.5)) for a in axes]
            sc = [f] * len(axes)
        else:
            sc = [sz / xs[a] for sz, a in zip(sizes, axes)]
        outs = sizes
    else:
        sc = [float(v) for v in scales]
        outs = [int(math.floor(xs[a] * v)) for a, v in zip(axes, sc)]
    roi_pairs = [(0.0, 1.0)] * len(axes)
    if ctm == "tf_crop_and_resize":
        if roi is None:
            cx.unsupported("tf_crop_and_resize needs roi")
        rv = [float(v) for v in roi]
        half = len(rv) // 2
        roi_pairs = [(rv[i], rv[half + i]) for i in range(half)]
        if half == rank and len(axes) != rank:
            roi_pairs = [roi_pairs[a] for a in axes]
    specs = []
    mask = None
    for i, a in enumerate(axes):
        m, inside = interp_matrix(
            xs[a], outs[i], sc[i], mode, ctm, roi_pairs[i], nearest_mode,
            float(attrs.get("cubic_coeff_a", -0.75)), bool(attrs.get("exclude_outside") or 0),
            bool(attrs.get("antialias") or 0) and sc[i] < 1)
        specs.append((a, m, mode, inside))
        if not inside.all():
            shp = [1] * rank
            shp[a] = outs[i]
            ins = inside.reshape(shp)
            mask = ins if mask is None else (mask & ins)
    if mask is not None and mode == "nearest":
        specs = [(a, m, "matrix", ins) for a, m, _, ins in specs]
    y = _resize_axes(cx, x, specs)
    if mask is not None:
        from tdflow.dialect.types import DTYPES

        dt = cx.type_of(x).dtype
        ext = float(attrs.get("extrapolation_value", 0.0))
        fill = np.where(mask, 0.0, ext).astype(DTYPES[dt])
        y = cx.op("tdflow.broadcast_add", [y, cx.constant(fill)])
    return [y]


def _opt_const(cx: Lowerer, n: Node, i: int, what: str) -> Any:
    if not n.has_input(i):
        return None
    v = cx.need_const(n.input(i), what)
    return None if v.size == 0 else v


@rule("Resize")
def resize(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    if n.version < 11:  # Resize-10: Upsample's asymmetric coordinates
        n.attrs = {**n.attrs, "coordinate_transformation_mode": "asymmetric",
                   "nearest_mode": "floor"}
        return _resize(cx, n, x, _opt_const(cx, n, 1, "Resize scales"), None, None)
    roi = _opt_const(cx, n, 1, "Resize roi")
    scales = _opt_const(cx, n, 2, "Resize scales")
    sizes = _opt_const(cx, n, 3, "Resize sizes")
    return _resize(cx, n, x, scales, sizes, roi)


@rule("Upsample")
def upsample(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    if n.has_input(1):
        scales = cx.need_const(n.input(1), "Upsample scales")
    else:
        scales = np.asarray(n.attrs["scales"], np.float64)
    n.attrs = dict(n.attrs)
    n.attrs["coordinate_transformation_mode"] = "asymmetric"
    n.attrs["nearest_mode"] = "floor"
    return _resize(cx, n, x, [float(v) for v in scales], None, None)
