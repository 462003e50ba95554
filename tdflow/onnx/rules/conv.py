"""ONNX's convolutions: Conv and ConvTranspose.

2-D convolutions map onto ``tdflow.conv2d``; 1-D ones are reshaped to 2-D (a unit height), 3-D
ones are composed. ONNX's asymmetric ``pads`` keep the op's symmetric ``padding_before`` for the
common part and add the rest as explicit padding (a ``tdflow.cat`` with a constant block).
ConvTranspose is ``conv_data_grad`` (the transposed convolution is the data gradient of the
convolution). Padding and sizes: :mod:`.windows`.
"""

from __future__ import annotations

from typing import Any

from .api import Lowerer, Node, rule
from .common import reshape, transpose
from .windows import int_list, node_pads, pad_value


@rule("Conv")
def conv(cx: Lowerer, n: Node) -> list:
    x, w = n.input(0), n.input(1)
    xs, ws = cx.shape_of(x), cx.shape_of(w)
    nd = len(xs) - 2
    k = int_list(n.attrs.get("kernel_shape"), nd, 0) if n.attrs.get("kernel_shape") else \
        list(ws[2:])
    s = int_list(n.attrs.get("strides"), nd, 1)
    d = int_list(n.attrs.get("dilations"), nd, 1)
    g = int(n.attrs.get("group") or 1)
    before, after = node_pads(cx, n, xs[2:], k, s, d)
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
    k = int_list(n.attrs.get("kernel_shape"), nd, 0) if n.attrs.get("kernel_shape") else \
        list(ws[2:])
    s = int_list(n.attrs.get("strides"), nd, 1)
    d = int_list(n.attrs.get("dilations"), nd, 1)
    op_ = int_list(n.attrs.get("output_padding"), nd, 0)
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
        pads = int_list(n.attrs.get("pads"), 2 * nd, 0)
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
