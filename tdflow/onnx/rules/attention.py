"""ONNX's Attention (opset 23+): scaled dot-product attention with masks, causal and sliding
windows, a KV cache, grouped-query heads and soft-capping, as tdflow matmuls and a softmax.

The parts that depend only on shapes (the causal and window patterns, the padding of a cache
given as ``nonpad_kv_seqlen``) are constants; a mask given as a graph input is added at run
time. Rows whose keys are all masked give zeros, as ONNX specifies.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tdflow.dialect.types import DTYPES

from .api import Lowerer, Node, rule
from .common import cast, reshape, transpose
from .elementwise import onnx_dtype
from .linalg import matmul


def _heads(cx: Lowerer, x: Any, heads: int) -> Any:
    """(batch, seq, heads * size) -> (batch, heads, seq, size)."""
    b, s, h = cx.shape_of(x)
    return transpose(cx, reshape(cx, x, [b, s, heads, h // heads]), [0, 2, 1, 3])


def _static_bias(q: int, kv: int, offset: Any, causal: bool, left: int, right: int,
                 dtype: Any) -> np.ndarray | None:
    """The additive bias of the causal and sliding-window patterns (0 or -inf), or ``None``;
    ``offset`` is a scalar or one per batch (then the bias is (batch, 1, q, kv))."""
    if not causal and left < 0 and right < 0:
        return None
    i = np.arange(q).reshape(q, 1)
    j = np.arange(kv).reshape(1, kv)
    off = np.asarray(offset).reshape(-1, 1, 1) if np.ndim(offset) else int(offset)
    diff = i + off - j
    allowed = np.ones(np.shape(diff), bool)
    if causal:
        allowed &= diff >= 0
    if left >= 0:
        allowed &= diff <= left
    if right >= 0:
        allowed &= -diff <= right
    bias = np.where(allowed, 0, -np.inf).astype(dtype)
    return bias.reshape(bias.shape[0], 1, q, kv) if np.ndim(offset) else bias


@rule("Attention", since=23)
def attention(cx: Lowerer, n: Node) -> list:
    a = n.attrs
    q_in, k, v = n.input(0), n.input(1), n.input(2)
    dt = cx.type_of(q_in).dtype
    np_dt = DTYPES[dt]
    rank = len(cx.shape_of(q_in))
    if rank == 3:
        if a.get("q_num_heads") is None or a.get("kv_num_heads") is None:
            cx.unsupported("3-D inputs need q_num_heads and kv_num_heads")
        q = _heads(cx, q_in, a["q_num_heads"])
        k = _heads(cx, k, a["kv_num_heads"])
        v = _heads(cx, v, a["kv_num_heads"])
    else:
        q = q_in
    mask = n.inputs[3] if n.has_input(3) else None
    past_k = n.inputs[4] if n.has_input(4) else None
    past_v = n.inputs[5] if n.has_input(5) else None
    nonpad = n.inputs[6] if n.has_input(6) else None
    if past_k is not None:
        k = cx.op("tdflow.cat", [[past_k, k]], {"axis": 2})
    if past_v is not None:
        v = cx.op("tdflow.cat", [[past_v, v]], {"axis": 2})
    present_k, present_v = k, v
    batch, hq, ql, dq = cx.shape_of(q)
    hk, kvl = cx.shape_of(k)[1], cx.shape_of(k)[2]

    scale = a.get("scale")
    scale = 1 / np.sqrt(dq) if scale is None else scale
    s = np_dt.type(np.sqrt(scale))

    # the additive bias: the mask (bool -> 0 / -inf), padded to the keys, plus the patterns
    bias = None
    if mask is not None:
        mshape = list(cx.shape_of(mask))
        is_bool = cx.type_of(mask).dtype == "i1"
        if mshape[-1] < kvl:
            fill = np.zeros if is_bool else (lambda sh, d: np.full(sh, -np.inf, d))
            pad = cx.constant(fill([*mshape[:-1], kvl - mshape[-1]],
                                   np.bool_ if is_bool else np_dt),
                              dtype=None if is_bool else cx.type_of(mask).dtype)
            mask = cx.op("tdflow.cat", [[mask, pad]], {"axis": len(mshape) - 1})
        if is_bool:
            mask = cx.op("tdflow.where", [mask, cx.scalar(0, q, dt), cx.scalar(-np.inf, q, dt)])
        bias = mask
    past_len = cx.shape_of(past_k)[2] if past_k is not None else 0
    offset: Any = past_len
    lens = None
    if nonpad is not None:
        lens = cx.need_const(nonpad, "nonpad_kv_seqlen").reshape(-1).astype(np.int64)
        if past_k is None:
            offset = lens - ql
    left = a.get("left_window_size")
    right = a.get("right_window_size")
    pattern = _static_bias(ql, kvl, offset, bool(a.get("is_causal")),
                           -1 if left is None else int(left),
                           -1 if right is None else int(right), np_dt)
    if lens is not None:
        pad = np.where(np.arange(kvl) < lens[:, None], 0, -np.inf).astype(np_dt)
        pad = pad.reshape(batch, 1, 1, kvl)
        pattern = pad if pattern is None else pattern + pad
    if pattern is not None:
        pat = cx.constant(pattern, dtype=dt)
        bias = pat if bias is None else cx.op("tdflow.broadcast_add", [bias, pat])

    # grouped-query attention: each KV head serves q_heads / kv_heads query heads
    if hq != hk and hq % hk == 0:
        idx = cx.constant(np.repeat(np.arange(hk, dtype=np.int64), hq // hk))
        k = cx.op("tdflow.gather", [k, idx], {"axis": 1})
        v = cx.op("tdflow.gather", [v, idx], {"axis": 1})

    qs = cx.op("tdflow.broadcast_mul", [q, cx.scalar(s, q)])
    ks = cx.op("tdflow.broadcast_mul", [transpose(cx, k, [0, 1, 3, 2]), cx.scalar(s, q)])
    qk = matmul(cx, qs, ks)
    softcap = a.get("softcap") or 0.0
    if softcap > 0:
        t = cx.op("tdflow.tanh", [cx.op("tdflow.broadcast_div", [qk, cx.scalar(softcap, qk)])])
        qk = cx.op("tdflow.broadcast_mul", [t, cx.scalar(softcap, qk)])
    with_bias = qk if bias is None else cx.op("tdflow.broadcast_add", [qk, bias])
    mode = a.get("qk_matmul_output_mode") or 0
    qk_out = with_bias if mode == 2 else qk

    logits = with_bias
    precision = a.get("softmax_precision")
    if precision is not None:
        logits = cast(cx, logits, onnx_dtype(cx, precision))
    probs = cx.op("tdflow.softmax", [logits])
    if bias is not None:  # rows with every key masked attend to nothing
        top = cx.op("tdflow.reduce_max", [bias], {"axis": [len(cx.shape_of(bias)) - 1],
                                                  "keepdims": True})
        dead = cx.op("tdflow.broadcast_equal", [top, cx.scalar(-np.inf, top)])
        probs = cx.op("tdflow.where", [dead, cx.scalar(0, probs), probs])
    probs = cast(cx, probs, dt)
    if mode == 3:
        qk_out = probs
    y = matmul(cx, probs, v)
    if rank == 3:
        y = transpose(cx, y, [0, 2, 1, 3])
        b, sq, h, d = cx.shape_of(y)
        y = reshape(cx, y, [b, sq, h * d])
    return [y, present_k, present_v, cast(cx, qk_out, dt)][:n.num_outputs]
