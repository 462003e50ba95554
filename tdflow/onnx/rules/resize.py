"""ONNX's resampling: Resize and Upsample.

Resize applies one 1-D resampling per resized axis: a ``gather`` for ``nearest``, a matmul with
the interpolation matrix (built at import from the mode, the coordinate transformation and the
cubic coefficients) otherwise.

>>> interp_matrix(2, 4, 2.0, "nearest", "asymmetric", nearest_mode="floor")[0].tolist()
[[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .api import Lowerer, Node, rule
from .common import reshape, transpose


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
