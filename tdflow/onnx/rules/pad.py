"""ONNX's Pad and CenterCropPad.

Constant padding is ``tdflow.pad`` (OneFlow's op, constant-only); reflect, edge and wrap are
gathers along each padded dim with index vectors ``numpy.pad`` computes when importing;
negative pads (crops) are a slice first. CenterCropPad is a centred slice and a zero pad.

>>> pad_indices(4, 2, 1, "reflect").tolist(), pad_indices(3, 1, 2, "wrap").tolist()
([2, 1, 0, 1, 2, 3, 2], [2, 0, 1, 2, 0, 1])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .api import Lowerer, Node, rule
from .common import FLOATS, norm_axis, static_ints


# -- Pad ------------------------------------------------------------------------------------------
def pad_indices(size: int, before: int, after: int, mode: str) -> np.ndarray:
    """The positions of a dim of ``size`` that ``numpy.pad``'s ``mode`` (reflect, edge, wrap)
    reads for each position of the padded dim."""
    return np.pad(np.arange(size, dtype=np.int64), (before, after), mode=mode)


def pad_attrs(cx: Lowerer, x: Any, before: list[int], after: list[int], value: Any) -> dict:
    """The attributes of ``tdflow.pad`` filling ``x`` with ``value`` (the floating or the
    integral one, as ``x``'s element type says; ``padding``, OneFlow's legacy one, empty)."""
    floating = cx.type_of(x).dtype in FLOATS
    return {"padding_before": before, "padding_after": after, "padding": [],
            "floating_constant_value": float(value) if floating else 0.0,
            "integral_constant_value": 0 if floating else int(value)}


@rule("Pad")
def pad(cx: Lowerer, n: Node) -> list:
    """Constant padding is ``tdflow.pad``; reflect, edge and wrap are gathers along each padded
    dim; negative pads crop (a slice) first."""
    x = n.input(0)
    shape = list(cx.shape_of(x))
    rank = len(shape)
    mode = n.attrs.get("mode") or "constant"
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if n.version < 11:
        pads, value, axes = list(n.attrs["pads"]), n.attrs.get("value") or 0.0, None
    else:
        pads = static_ints(cx, n.input(1), "pads")
        value = 0
        if n.has_input(2):
            v = cx.need_const(n.inputs[2], "constant_value").reshape(-1)
            value = v[0].item() if v.size else 0
        axes = static_ints(cx, n.inputs[3], "axes") if n.has_input(3) else None
    axes = list(range(rank)) if axes is None else [norm_axis(a, rank, cx) for a in axes]
    if len(pads) != 2 * len(axes):
        cx.unsupported(f"pads has {len(pads)} entries, expected {2 * len(axes)}")
    before, after = [0] * rank, [0] * rank
    for j, a in enumerate(axes):
        before[a], after[a] = int(pads[j]), int(pads[j + len(axes)])
    if min(before + after, default=0) < 0:
        start = [max(0, -b) for b in before]
        stop = [d - max(0, -a) for d, a in zip(shape, after)]
        x = cx.op("tdflow.slice", [x], {"start": start, "stop": stop, "step": [1] * rank})
        shape = [e - s for s, e in zip(start, stop)]
        before, after = [max(0, b) for b in before], [max(0, a) for a in after]
    if not any(before) and not any(after):
        return [x]
    if mode == "constant":
        return [cx.op("tdflow.pad", [x], pad_attrs(cx, x, before, after, value))]
    if mode not in ("reflect", "edge", "wrap"):
        cx.unsupported(f"pad mode '{mode}'")
    for a in range(rank):
        if before[a] or after[a]:
            if shape[a] == 0 or (mode == "reflect" and shape[a] < 2):
                cx.unsupported(f"{mode} padding of dim {a}, of size {shape[a]}")
            idx = pad_indices(shape[a], before[a], after[a], mode)
            x = cx.op("tdflow.gather", [x, cx.constant(idx)], {"axis": a})
    return [x]


@rule("CenterCropPad")
def center_crop_pad(cx: Lowerer, n: Node) -> list:
    """Each of ``axes`` cropped (a slice) or zero-padded (``tdflow.pad``) to its entry of
    ``shape``, centred: the odd element goes to the end."""
    x = n.input(0)
    shape = list(cx.shape_of(x))
    rank = len(shape)
    target = static_ints(cx, n.input(1), "shape")
    axes = n.attrs.get("axes")
    axes = list(range(rank)) if axes is None else [norm_axis(int(a), rank, cx) for a in axes]
    if len(target) != len(axes):
        cx.unsupported(f"shape {target} has {len(target)} entries for {len(axes)} axes")
    start, stop = [0] * rank, list(shape)
    before, after = [0] * rank, [0] * rank
    for a, want in zip(axes, target):
        if want < shape[a]:
            start[a] = (shape[a] - want) // 2
            stop[a] = start[a] + want
        elif want > shape[a]:
            before[a] = (want - shape[a]) // 2
            after[a] = want - shape[a] - before[a]
    if start != [0] * rank or stop != shape:
        x = cx.op("tdflow.slice", [x], {"start": start, "stop": stop, "step": [1] * rank})
    if any(before) or any(after):
        x = cx.op("tdflow.pad", [x], pad_attrs(cx, x, before, after, 0))
    return [x]
