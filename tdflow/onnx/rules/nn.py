"""ONNX's convolutions and pooling onto tdflow's 2-D ops: Conv, ConvTranspose, MaxPool,
AveragePool, LpPool, the global pools and LRN.

tdflow's ``conv2d``, ``max_pool_2d`` and ``avg_pool_2d`` (OneFlow's definitions) pad both sides
of a dim alike; ONNX's pads may differ per side (and ``auto_pad`` computes them), so the part
that differs is made explicit by concatenating constant borders. 1-D ops run as 2-D ops on a
height-1 image; 3-D convolutions sum one 2-D convolution per kernel depth (the depth folded
into the batch); 3-D pooling is separable (height and width, then depth). ConvTranspose is
tdflow's ``conv_data_grad``, the transpose of a convolution, cropped by the pads.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tdflow.dialect.types import DTYPES

from .api import Lowerer, Node, rule
from .common import reshape, transpose

CF = "channels_first"


# -- padding -----------------------------------------------------------------------------------
def _auto_pads(n: Node, sizes: list[int], k: list[int], s: list[int], d: list[int]
               ) -> tuple[list[int], list[int]]:
    """``(begin, end)`` pads per spatial dim from ``auto_pad``/``pads``."""
    auto = n.attrs.get("auto_pad") or "NOTSET"
    auto = auto.decode() if isinstance(auto, bytes) else auto
    r = len(sizes)
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        b, e = [], []
        for i in range(r):
            out = -(-sizes[i] // s[i])
            total = max((out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - sizes[i], 0)
            small = total // 2
            b.append(small if auto == "SAME_UPPER" else total - small)
            e.append(total - b[-1])
        return b, e
    if auto == "VALID":
        return [0] * r, [0] * r
    pads = list(n.attrs.get("pads") or [0] * (2 * r))
    return [int(p) for p in pads[:r]], [int(p) for p in pads[r:]]


def _border(cx: Lowerer, x: Any, axis: int, before: int, after: int, value: float) -> Any:
    """``x`` with ``before``/``after`` slices of ``value`` added along ``axis``."""
    if before <= 0 and after <= 0:
        return x
    shape = list(cx.shape_of(x))
    np_dt = DTYPES[cx.type_of(x).dtype]
    def block(count: int) -> list:
        if count <= 0:
            return []
        dims = shape.copy()
        dims[axis] = count
        return [cx.constant(np.full(dims, value, np_dt))]

    parts = block(before) + [x] + block(after)
    return cx.op("tdflow.cat", [parts], {"axis": axis})


def _pad_spatial(cx: Lowerer, x: Any, begin: list[int], end: list[int], value: float) -> Any:
    for i, (b, e) in enumerate(zip(begin, end)):
        x = _border(cx, x, 2 + i, b, e, value)
    return x


def _crop(cx: Lowerer, x: Any, axis: int, start: int, stop: int) -> Any:
    shape = list(cx.shape_of(x))
    if start == 0 and stop == shape[axis]:
        return x
    lo = [0] * len(shape)
    hi = shape.copy()
    lo[axis], hi[axis] = start, stop
    return cx.op("tdflow.slice", [x], {"start": lo, "stop": hi, "step": [1] * len(shape)})


def _ints(v: Any, r: int, default: int) -> list[int]:
    return [int(a) for a in v] if v else [default] * r


# -- convolution -------------------------------------------------------------------------------
def _conv2d(cx: Lowerer, x: Any, w: Any, b: Any, pad: list[int], s: list[int], d: list[int],
            groups: int) -> Any:
    k = list(cx.shape_of(w))
    operands = [x, w, b, None]
    return cx.op("tdflow.conv2d", [v for v in operands], {
        "filters": k[0], "padding_before": pad, "data_format": CF, "kernel_size": k[2:],
        "strides": s, "dilation_rate": d, "groups": groups})


@rule("Conv")
def conv(cx: Lowerer, n: Node) -> list:
    x, w = n.input(0), n.input(1)
    b = n.inputs[2] if n.has_input(2) else None
    xs, ws = list(cx.shape_of(x)), list(cx.shape_of(w))
    r = len(xs) - 2
    k = [int(v) for v in (n.attrs.get("kernel_shape") or ws[2:])]
    s = _ints(n.attrs.get("strides"), r, 1)
    d = _ints(n.attrs.get("dilations"), r, 1)
    g = int(n.attrs.get("group") or 1)
    pb, pe = _auto_pads(n, xs[2:], k, s, d)
    sym = [min(p, q) for p, q in zip(pb, pe)]
    x = _pad_spatial(cx, x, [p - m for p, m in zip(pb, sym)], [q - m for q, m in zip(pe, sym)],
                     0.0)
    if r == 2:
        return [_conv2d(cx, x, w, b, sym, s, d, g)]
    if r == 1:
        x2 = reshape(cx, x, [xs[0], xs[1], 1, cx.shape_of(x)[2]])
        w2 = reshape(cx, w, [ws[0], ws[1], 1, ws[2]])
        y = _conv2d(cx, x2, w2, b, [0, sym[0]], [1, s[0]], [1, d[0]], g)
        ys = cx.shape_of(y)
        return [reshape(cx, y, [ys[0], ys[1], ys[3]])]
    if r == 3:
        return [_conv3d(cx, x, w, b, sym, s, d, g)]
    cx.unsupported(f"a {r}-D convolution (tdflow has 1-, 2- and 3-D)")


def _conv3d(cx: Lowerer, x: Any, w: Any, b: Any, pad: list[int], s: list[int], d: list[int],
            g: int) -> Any:
    """Sum over the kernel depth of 2-D convolutions of depth slices (depth in the batch)."""
    x = _border(cx, x, 2, pad[0], pad[0], 0.0)
    N, C, D, H, W = cx.shape_of(x)
    M, Cg, KD, KH, KW = cx.shape_of(w)
    od = (D - (KD - 1) * d[0] - 1) // s[0] + 1
    acc = None
    for kd in range(KD):
        start = kd * d[0]
        xs = cx.op("tdflow.slice", [x], {"start": [0, 0, start, 0, 0],
                                         "stop": [N, C, start + (od - 1) * s[0] + 1, H, W],
                                         "step": [1, 1, s[0], 1, 1]})
        xs = reshape(cx, transpose(cx, xs, [0, 2, 1, 3, 4]), [N * od, C, H, W])
        wk = cx.op("tdflow.slice", [w], {"start": [0, 0, kd, 0, 0], "stop": [M, Cg, kd + 1, KH, KW],
                                         "step": [1] * 5})
        wk = reshape(cx, wk, [M, Cg, KH, KW])
        y = _conv2d(cx, xs, wk, b if kd == 0 else None, pad[1:], s[1:], d[1:], g)
        acc = y if acc is None else cx.op("tdflow.broadcast_add", [acc, y])
    _, _, OH, OW = cx.shape_of(acc)
    return transpose(cx, reshape(cx, acc, [N, od, M, OH, OW]), [0, 2, 1, 3, 4])


@rule("ConvTranspose")
def conv_transpose(cx: Lowerer, n: Node) -> list:
    x, w = n.input(0), n.input(1)
    xs, ws = list(cx.shape_of(x)), list(cx.shape_of(w))
    r = len(xs) - 2
    if r not in (1, 2):
        cx.unsupported(f"a {r}-D transposed convolution (tdflow has 1- and 2-D)")
    g = int(n.attrs.get("group") or 1)
    k = [int(v) for v in (n.attrs.get("kernel_shape") or ws[2:])]
    s = _ints(n.attrs.get("strides"), r, 1)
    d = _ints(n.attrs.get("dilations"), r, 1)
    op_ = _ints(n.attrs.get("output_padding"), r, 0)
    full = [(xs[2 + i] - 1) * s[i] + (k[i] - 1) * d[i] + 1 for i in range(r)]
    out_shape = n.attrs.get("output_shape")
    auto = n.attrs.get("auto_pad") or "NOTSET"
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if out_shape:
        out = [int(v) for v in out_shape][-r:]
    elif auto in ("SAME_UPPER", "SAME_LOWER"):
        out = [xs[2 + i] * s[i] for i in range(r)]
    else:
        out = None
    if out is not None:  # the pads follow from the wanted size (ONNX's rule)
        total = [full[i] + op_[i] - out[i] for i in range(r)]
        pb = [t // 2 if auto == "SAME_UPPER" else t - t // 2 for t in total]
        pe = [t - p for t, p in zip(total, pb)]
    else:
        pads = list(n.attrs.get("pads") or [0] * (2 * r))
        pb, pe = [int(p) for p in pads[:r]], [int(p) for p in pads[r:]]
    if r == 1:
        x = reshape(cx, x, [xs[0], xs[1], 1, xs[2]])
        w = reshape(cx, w, [ws[0], ws[1], 1, ws[2]])
        k, s, d, full = [1, *k], [1, *s], [1, *d], [1, *full]
        pb, pe, op_ = [0, *pb], [0, *pe], [0, *op_]
    c_out = ws[1] * g
    np_dt = DTYPES[cx.type_of(x).dtype]
    like = cx.constant(np.zeros([xs[0], c_out, *full], np_dt))
    y = cx.op("tdflow.conv_data_grad", [x, w, like, None], {
        "num_spatial_dims": 2, "padding_before": [0, 0], "data_format": CF, "kernel_size": k,
        "strides": s, "dilation_rate": d, "groups": g})
    for i in range(2):
        y = _crop(cx, y, 2 + i, max(pb[i], 0), full[i] - max(pe[i] - op_[i], 0))
        extra = op_[i] - pe[i]
        y = _border(cx, y, 2 + i, max(-pb[i], 0), max(extra, 0), 0.0)
    if n.has_input(2):
        y = cx.op("tdflow.broadcast_add", [y, reshape(cx, n.input(2), [1, c_out, 1, 1])])
    if r == 1:
        ys = cx.shape_of(y)
        y = reshape(cx, y, [ys[0], ys[1], ys[3]])
    return [y]


# -- pooling -----------------------------------------------------------------------------------
def _onnx_pool_size(size: int, k: int, s: int, d: int, pb: int, pe: int, ceil: bool) -> int:
    span = size + pb + pe - ((k - 1) * d + 1)
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= size + pb:  # a last window starting in the right padding
        out -= 1
    return out


def _pool2d(cx: Lowerer, kind: str, x: Any, k: list[int], s: list[int], d: list[int],
            pad: list[int], ceil: bool, count_pad: bool) -> Any:
    if kind == "max":
        return cx.ops("tdflow.max_pool_2d", [x], {
            "padding": pad, "data_format": CF, "kernel_size": k, "stride": s, "dilation": d,
            "ceil_mode": ceil})[0]
    if any(v != 1 for v in d):
        cx.unsupported("dilated average pooling")
    return cx.op("tdflow.avg_pool_2d", [x], {
        "padding": pad, "data_format": CF, "kernel_size": k, "stride": s, "ceil_mode": ceil,
        "count_include_pad": count_pad})


def _pool_nd(cx: Lowerer, kind: str, x: Any, k: list[int], s: list[int], d: list[int],
             pad: list[int], ceil: bool, count_pad: bool) -> Any:
    """A 1-, 2- or 3-D pool (symmetric padding) through 2-D pools."""
    shape = list(cx.shape_of(x))
    r = len(shape) - 2
    if r == 2:
        return _pool2d(cx, kind, x, k, s, d, pad, ceil, count_pad)
    if r == 1:
        y = _pool2d(cx, kind, reshape(cx, x, [shape[0], shape[1], 1, shape[2]]), [1, k[0]],
                    [1, s[0]], [1, d[0]], [0, pad[0]], ceil, count_pad)
        ys = cx.shape_of(y)
        return reshape(cx, y, [ys[0], ys[1], ys[3]])
    if r == 3:  # height and width first, then depth: max and mean are both separable
        N, C, D, H, W = shape
        y = _pool2d(cx, kind, reshape(cx, x, [N, C * D, H, W]), k[1:], s[1:], d[1:], pad[1:],
                    ceil, count_pad)
        _, _, OH, OW = cx.shape_of(y)
        y = _pool2d(cx, kind, reshape(cx, y, [N, C, D, OH * OW]), [k[0], 1], [s[0], 1],
                    [d[0], 1], [pad[0], 0], ceil, count_pad)
        return reshape(cx, y, [N, C, cx.shape_of(y)[2], OH, OW])
    cx.unsupported(f"{r}-D pooling (tdflow has 1-, 2- and 3-D)")


def _pool(cx: Lowerer, n: Node, kind: str, x: Any) -> Any:
    xs = list(cx.shape_of(x))
    r = len(xs) - 2
    k = [int(v) for v in n.attrs["kernel_shape"]]
    s = _ints(n.attrs.get("strides"), r, 1)
    d = _ints(n.attrs.get("dilations"), r, 1)
    ceil = bool(n.attrs.get("ceil_mode") or 0)
    count_pad = bool(n.attrs.get("count_include_pad") or 0)
    pb, pe = _auto_pads(n, xs[2:], k, s, d)
    want = [_onnx_pool_size(xs[2 + i], k[i], s[i], d[i], pb[i], pe[i], ceil) for i in range(r)]
    fits = all(p == q and 2 * p <= k_ for p, q, k_ in zip(pb, pe, k))
    if fits:
        y = _pool_nd(cx, kind, x, k, s, d, pb, ceil, count_pad)
    else:
        # explicit borders; ceil_mode becomes more padding on the right, cropped afterwards
        extra = [max((want[i] - 1) * s[i] + (k[i] - 1) * d[i] + 1 - (xs[2 + i] + pb[i] + pe[i]),
                     0) for i in range(r)]
        ends = [pe[i] + extra[i] for i in range(r)]
        np_dt = DTYPES[cx.type_of(x).dtype]
        low = -np.inf if np.dtype(np_dt).kind == "f" else np.iinfo(np_dt).min
        if kind == "max":
            y = _pool_nd(cx, kind, _pad_spatial(cx, x, pb, ends, low), k, s, d, [0] * r, False,
                         True)
        else:
            xp = _pad_spatial(cx, x, pb, ends, 0.0)
            y = _pool_nd(cx, kind, xp, k, s, d, [0] * r, False, True)
            # the divisor: the window's cells inside the input (and its pads with
            # count_include_pad), as the mean of a 0/1 mask pooled the same way
            mask = np.zeros([1, 1, *[xs[2 + i] + pb[i] + ends[i] for i in range(r)]], np_dt)
            inside = tuple(slice(None) for _ in range(2)) + tuple(
                slice(0 if count_pad else pb[i],
                      xs[2 + i] + pb[i] + (pe[i] if count_pad else 0)) for i in range(r))
            mask[inside] = 1
            m = _pool_nd(cx, kind, cx.constant(mask), k, s, d, [0] * r, False, True)
            y = cx.op("tdflow.broadcast_div", [y, m])
        for i in range(r):
            y = _crop(cx, y, 2 + i, 0, want[i])
    return y


@rule("MaxPool")
def max_pool(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    if n.num_outputs > 1 and n.output_types[1:] and any(n.output_types[1:]):
        return _max_pool_with_indices(cx, n, x)
    return [_pool(cx, n, "max", x)]


def _max_pool_with_indices(cx: Lowerer, n: Node, x: Any) -> list:
    """Values and ONNX's flat indices (over the whole input, row-major or, with
    ``storage_order``, column-major planes)."""
    xs = list(cx.shape_of(x))
    if len(xs) != 4:
        cx.unsupported("MaxPool's Indices output for a non-2-D pool")
    k = [int(v) for v in n.attrs["kernel_shape"]]
    s = _ints(n.attrs.get("strides"), 2, 1)
    d = _ints(n.attrs.get("dilations"), 2, 1)
    pb, pe = _auto_pads(n, xs[2:], k, s, d)
    if not all(p == q and 2 * p <= k_ for p, q, k_ in zip(pb, pe, k)):
        cx.unsupported("MaxPool's Indices output with asymmetric or large pads")
    y, idx = cx.ops("tdflow.max_pool_2d", [x], {
        "padding": pb, "data_format": CF, "kernel_size": k, "stride": s, "dilation": d,
        "ceil_mode": bool(n.attrs.get("ceil_mode") or 0), "return_indices": True})
    N, C, H, W = xs
    if n.attrs.get("storage_order"):  # column-major: h * W + w -> w * H + h
        h = cx.op("tdflow.broadcast_div", [idx, cx.scalar(W, idx)])
        w_ = cx.op("tdflow.broadcast_sub", [idx, cx.op("tdflow.broadcast_mul",
                                                       [h, cx.scalar(W, idx)])])
        idx = cx.op("tdflow.broadcast_add", [cx.op("tdflow.broadcast_mul",
                                                   [w_, cx.scalar(H, idx)]), h])
    base = (np.arange(N * C, dtype=np.int64) * H * W).reshape(N, C, 1, 1)
    return [y, cx.op("tdflow.broadcast_add", [idx, cx.constant(base)])]


@rule("AveragePool")
def average_pool(cx: Lowerer, n: Node) -> list:
    return [_pool(cx, n, "avg", n.input(0))]


@rule("LpPool")
def lp_pool(cx: Lowerer, n: Node) -> list:
    """``(sum |x|^p)^(1/p)`` over each window: the mean of ``|x|^p`` with the pads counted,
    times the window size."""
    x = n.input(0)
    p = float(n.attrs.get("p") or 2)
    ax = cx.op("tdflow.abs", [x])
    xp = cx.op("tdflow.broadcast_pow", [ax, cx.scalar(p, ax)])
    attrs = dict(n.attrs, count_include_pad=1)
    y = _pool(cx, Node(n.op_type, n.version, n.name, n.inputs, attrs, 1), "avg", xp)
    size = math.prod(int(v) for v in n.attrs["kernel_shape"])
    y = cx.op("tdflow.broadcast_mul", [y, cx.scalar(size, y)])
    return [cx.op("tdflow.broadcast_pow", [y, cx.scalar(1.0 / p, y)])]


def _spatial(cx: Lowerer, x: Any) -> list[int]:
    return list(range(2, len(cx.shape_of(x))))


@rule("GlobalAveragePool")
def global_average_pool(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    axes = _spatial(cx, x)
    count = math.prod(cx.shape_of(x)[a] for a in axes)
    total = cx.op("tdflow.reduce_sum", [x], {"axis": axes, "keepdims": True})
    return [cx.op("tdflow.broadcast_div", [total, cx.scalar(count, total)])]


@rule("GlobalMaxPool")
def global_max_pool(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    return [cx.op("tdflow.reduce_max", [x], {"axis": _spatial(cx, x), "keepdims": True})]


@rule("GlobalLpPool")
def global_lp_pool(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    p = float(n.attrs.get("p") or 2)
    ax = cx.op("tdflow.abs", [x])
    total = cx.op("tdflow.reduce_sum", [cx.op("tdflow.broadcast_pow", [ax, cx.scalar(p, ax)])],
                  {"axis": _spatial(cx, x), "keepdims": True})
    return [cx.op("tdflow.broadcast_pow", [total, cx.scalar(1.0 / p, total)])]


@rule("LRN")
def lrn(cx: Lowerer, n: Node) -> list:
    """``x / (bias + alpha / size * sum of x^2 over a window of channels) ^ beta``."""
    x = n.input(0)
    size = int(n.attrs["size"])
    alpha, beta, bias = (float(n.attrs[a]) for a in ("alpha", "beta", "bias"))
    shape = list(cx.shape_of(x))
    C = shape[1]
    sq = cx.op("tdflow.broadcast_mul", [x, x])
    before = (size - 1) // 2
    padded = _border(cx, sq, 1, before, size - 1 - before, 0.0)
    acc = None
    for j in range(size):
        part = _crop(cx, padded, 1, j, j + C)
        acc = part if acc is None else cx.op("tdflow.broadcast_add", [acc, part])
    den = cx.op("tdflow.broadcast_add", [cx.op("tdflow.broadcast_mul",
                                               [acc, cx.scalar(alpha / size, acc)]),
                                         cx.scalar(bias, acc)])
    den = cx.op("tdflow.broadcast_pow", [den, cx.scalar(beta, den)])
    return [cx.op("tdflow.broadcast_div", [x, den])]
