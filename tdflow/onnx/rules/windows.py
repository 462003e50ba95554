"""Padding and output sizes of sliding windows, shared by the convolution (:mod:`.conv`), pooling
(:mod:`.pool`) and LRN (:mod:`.norm`) rules.

>>> same_pads([5], [3], [2], [1], "SAME_UPPER")
([1], [1])
>>> pool_out_size(5, 2, 0, 0, 2, 1, True)
3
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .api import Lowerer, Node


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


def node_pads(cx: Lowerer, n: Node, spatial: Sequence[int], k: Sequence[int], s: Sequence[int],
              d: Sequence[int]) -> tuple[list[int], list[int]]:
    """``(before, after)`` pads of node ``n`` over the spatial axes: from its ``auto_pad`` (see
    :func:`same_pads`) or its ``pads`` attribute (ONNX's ``[x1_begin, x2_begin, ..., x1_end,
    ...]``), zero without either."""
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


def int_list(v: Any, nd: int, default: int) -> list[int]:
    """An ONNX int-list attribute ``v`` as ints, or ``nd`` copies of ``default`` when absent.

    >>> int_list((2, 3), 2, 1), int_list(None, 2, 1)
    ([2, 3], [1, 1])
    """
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
