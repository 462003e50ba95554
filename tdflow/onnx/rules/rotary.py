"""ONNX's RotaryEmbedding (opset 23): rotate pairs of each head's first
``rotary_embedding_dim`` features by the cached angles, halves or interleaved pairs."""

from __future__ import annotations

from .api import Lowerer, Node, rule
from .common import reshape, transpose


def _slice_last(cx: Lowerer, x, start: int, stop: int, step: int = 1):
    shape = list(cx.shape_of(x))
    if start == 0 and stop == shape[-1] and step == 1:
        return x
    r = len(shape)
    return cx.op("tdflow.slice", [x], {"start": [0] * (r - 1) + [start],
                                       "stop": shape[:-1] + [stop], "step": [1] * (r - 1) + [step]})


@rule("RotaryEmbedding", since=23)
def rotary_embedding(cx: Lowerer, n: Node) -> list:
    x, cos, sin = n.input(0), n.input(1), n.input(2)
    shape = list(cx.shape_of(x))
    if len(shape) == 4:  # [B, H, S, D] -> [B, S, H, D]
        x = transpose(cx, x, [0, 2, 1, 3])
    else:
        heads = int(n.attrs.get("num_heads") or 0)
        if not heads:
            cx.unsupported("a 3-D input needs num_heads")
        b, s, hidden = shape
        x = reshape(cx, x, [b, s, heads, hidden // heads])
    b, s, h, d = cx.shape_of(x)
    rot = int(n.attrs.get("rotary_embedding_dim") or 0) or d
    half = rot // 2
    if n.has_input(3):
        pos = n.input(3)
        cos = cx.op("tdflow.gather", [cos, pos], {"axis": 0})
        sin = cx.op("tdflow.gather", [sin, pos], {"axis": 0})
    cos = reshape(cx, cos, [b, s, 1, half])
    sin = reshape(cx, sin, [b, s, 1, half])
    xr = _slice_last(cx, x, 0, rot)
    if n.attrs.get("interleaved"):
        x1, x2 = _slice_last(cx, xr, 0, rot, 2), _slice_last(cx, xr, 1, rot, 2)
    else:
        x1, x2 = _slice_last(cx, xr, 0, half), _slice_last(cx, xr, half, rot)
    mul = lambda a, c: cx.op("tdflow.broadcast_mul", [a, c])  # noqa: E731
    real = cx.op("tdflow.broadcast_sub", [mul(x1, cos), mul(x2, sin)])
    imag = cx.op("tdflow.broadcast_add", [mul(x1, sin), mul(x2, cos)])
    if n.attrs.get("interleaved"):
        pair = cx.op("tdflow.cat", [[reshape(cx, real, [b, s, h, half, 1]),
                                     reshape(cx, imag, [b, s, h, half, 1])]], {"axis": 4})
        rotated = reshape(cx, pair, [b, s, h, rot])
    else:
        rotated = cx.op("tdflow.cat", [[real, imag]], {"axis": 3})
    out = rotated if rot == d else cx.op("tdflow.cat", [[rotated, _slice_last(cx, x, rot, d)]],
                                         {"axis": 3})
    if len(shape) == 4:
        return [transpose(cx, out, [0, 2, 1, 3])]
    return [reshape(cx, out, shape)]
