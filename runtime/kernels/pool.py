"""Pooling: ``max_pool_2d`` (values and argmax indices), ``avg_pool_2d``,
``adaptive_avg_pool2d`` and their gradients.

``padding`` pads both sides with the lowest value; ``kernel_size``, ``stride``, ``dilation``
per spatial dim; ``ceil_mode`` rounds the output size up, dropping a last window that would
start inside the right padding (PyTorch's rule). ``indice`` (``i64``) is, as in OneFlow and
PyTorch, the flat index ``h * W + w`` of the maximum inside its ``(n, c)`` plane of the
unpadded input; it is produced whether or not ``return_indices`` is set. NaN wins a window.
A window that lies wholly in the padding (dilated kernels can do that) gets ``-inf``/lowest
and index ``-1``; ``max_pool_2d_grad`` skips such windows.
``data_format`` is ``"channels_first"`` (NCHW) or ``"channels_last"`` (NHWC).

``avg_pool_2d`` (and grad): PyTorch's and OneFlow's average pooling. Zero padding; the divisor
is ``divisor_override`` when non-zero, else the window clipped to the padded input
(``count_include_pad``) or to the input (otherwise). ``adaptive_avg_pool2d`` (and grad): cell
``i`` of ``out`` covers input ``[floor(i * in / out), ceil((i + 1) * in / out))``.

>>> import numpy as np
>>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
>>> from tdflow.runtime.kernels.registry import complete_kernel_attrs as complete  # defaults
>>> y, i = max_pool_2d(complete("tdflow.max_pool_2d", {"kernel_size": [2, 2], "stride": [2, 2],
...                     "padding": [0, 0], "dilation": [1, 1], "data_format": "channels_first"}),
...                     [x], [None, None])
>>> y.tolist(), i.tolist()
([[[[5.0, 7.0], [13.0, 15.0]]]], [[[[5, 7], [13, 15]]]])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.runtime.kernels._util import (
    FLOATS,
    INTS,
    channels_last,
    out_buffer,
    store,
    wide_float,
)
from tdflow.runtime.kernels.registry import input_dtype_in, register_kernel, same_dtype


def pair(attrs: Mapping[str, Any], name: str) -> tuple[int, int]:
    """A window attribute of a 2-D pool: two entries (TDF_PairAttr expanded and checked it)."""
    h, w = attrs[name]
    return (int(h), int(w))


def pool_out_size(size: int, k: int, p: int, s: int, d: int, ceil_mode: bool) -> int:
    """Output length of one spatial dim (PyTorch/OneFlow formula)."""
    eff = d * (k - 1) + 1
    span = size + 2 * p - eff
    if span < 0:
        raise ValueError(f"max_pool_2d: input size {size} with padding {p} is smaller than the "
                         f"dilated kernel {eff}")
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _lowest(dt: np.dtype) -> Any:
    return -np.inf if dt.kind == "f" else np.iinfo(dt).min


class _Pool:
    def __init__(self, attrs: Mapping[str, Any]) -> None:
        self.k = pair(attrs, "kernel_size")
        self.s = pair(attrs, "stride")
        self.p = pair(attrs, "padding")
        self.d = pair(attrs, "dilation")
        self.ceil = bool(attrs["ceil_mode"])
        self.last = channels_last(str(attrs.get("data_format", "channels_first")))
        for kk, pp in zip(self.k, self.p):
            if pp > kk // 2:
                raise ValueError(f"max_pool_2d: padding {list(self.p)} must be at most half the "
                                 f"kernel size {list(self.k)}")

    def plane(self, x: np.ndarray) -> np.ndarray:
        """NCHW view."""
        if x.ndim != 4:
            raise ValueError(f"max_pool_2d: expected a 4-D input, got shape {x.shape}")
        return np.moveaxis(x, -1, 1) if self.last else x

    def out_hw(self, h: int, w: int) -> tuple[int, int]:
        return (pool_out_size(h, self.k[0], self.p[0], self.s[0], self.d[0], self.ceil),
                pool_out_size(w, self.k[1], self.p[1], self.s[1], self.d[1], self.ceil))

    def argmax(self, x_cf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Max values and flat indices, both ``(N, C, OH, OW)``."""
        val, views, pads = self.maxima(x_cf)
        return val, self.indices(x_cf, val, views, pads)

    def maxima(self, x_cf: np.ndarray) -> tuple[np.ndarray, list[np.ndarray], list]:
        """Max values ``(N, C, OH, OW)``, the strided view of the padded input per kernel
        offset, and the padding."""
        h, w = x_cf.shape[2:]
        oh, ow = self.out_hw(h, w)
        eff = [dd * (kk - 1) + 1 for kk, dd in zip(self.k, self.d)]
        # Pad enough for the last window (ceil_mode can reach past the symmetric padding).
        need_h = (oh - 1) * self.s[0] + eff[0]
        need_w = (ow - 1) * self.s[1] + eff[1]
        pads = [(0, 0), (0, 0), (self.p[0], max(0, need_h - h - self.p[0])),
                (self.p[1], max(0, need_w - w - self.p[1]))]
        xp = np.pad(x_cf, pads, constant_values=_lowest(x_cf.dtype)) if any(
            a or b for a, b in pads) else x_cf
        # One strided view per kernel offset (a loop over kh*kw offsets, not over pixels):
        # the running max and the offset that first reached it.
        sh, sw = self.s
        views = [xp[:, :, a * self.d[0]:a * self.d[0] + sh * (oh - 1) + 1:sh,
                    b * self.d[1]:b * self.d[1] + sw * (ow - 1) + 1:sw]
                 for a in range(self.k[0]) for b in range(self.k[1])]
        val = views[0].copy()
        for v in views[1:]:
            np.maximum(val, v, out=val)  # NaN propagates, as PyTorch's max pool
        return val, views, pads

    def indices(self, x_cf: np.ndarray, val: np.ndarray, views: list[np.ndarray],
                pads: list) -> np.ndarray:
        """Flat input index of each window's first maximum (:meth:`maxima`'s results)."""
        h, w = x_cf.shape[2:]
        oh, ow = val.shape[2:]
        # Index of offset (a, b) relative to the window origin, as a flat input index.
        deltas = [np.int64(a * self.d[0] * w + b * self.d[1])
                  for a in range(self.k[0]) for b in range(self.k[1])]
        # A window lying wholly in the padding (possible with dilation) has no input element:
        # its index stays -1 and the gradient skips it, rather than pointing out of the plane.
        idx = np.full(val.shape, -1, np.int64)
        floats = val.dtype.kind == "f"
        padded = any(a or b for a, b in pads)
        for kidx in range(len(views) - 1, -1, -1):  # the first offset holding the max wins
            hit = views[kidx] == val
            if floats:
                hit |= np.isnan(views[kidx])
            if padded:  # padding ties with a real lowest value; never point into the padding
                a, b = divmod(kidx, self.k[1])
                r = np.arange(oh) * self.s[0] - self.p[0] + a * self.d[0]
                c = np.arange(ow) * self.s[1] - self.p[1] + b * self.d[1]
                hit &= ((r >= 0) & (r < h))[:, None] & ((c >= 0) & (c < w))[None, :]
            np.copyto(idx, deltas[kidx], where=hit)
        row = np.arange(oh, dtype=np.int64)[:, None] * self.s[0] - self.p[0]
        col = np.arange(ow, dtype=np.int64)[None, :] * self.s[1] - self.p[1]
        np.add(idx, row * w + col, out=idx, where=idx >= 0)
        return idx


@register_kernel("tdflow.max_pool_2d", "cpu", dtypes=FLOATS | INTS, num_outputs=2)
def max_pool_2d(attrs: Mapping[str, Any], inputs: Sequence[Any],
                outs: Sequence[Any]) -> list[np.ndarray]:
    """y = max over each window; indice = flat argmax in the input plane."""
    pool = _Pool(attrs)
    x_cf = pool.plane(inputs[0])
    val, idx = pool.argmax(x_cf)
    if pool.last:
        val, idx = np.moveaxis(val, 1, -1), np.moveaxis(idx, 1, -1)
    y = out_buffer(outs, 0, val.shape, inputs[0].dtype)
    np.copyto(y, val, casting="unsafe")
    ind = out_buffer(outs, 1, idx.shape, np.int64)
    np.copyto(ind, idx, casting="unsafe")
    return [y, ind]


def _bind_values_only(attrs: Mapping[str, Any], ins: Sequence[Any], outs: Sequence[Any],
                      unused: frozenset[int]) -> Any:
    """``max_pool_2d`` for a plan that never reads its indices (an ONNX ``MaxPool`` with one
    output): the maxima alone, as :func:`max_pool_2d` computes them (the same bits); the
    indices' buffer is left unwritten. Their comparisons were 5/6 of the kernel's time on
    ResNet-50's 64x112x112 pool (6.9 ms against 1.1 ms for the maxima)."""
    if unused != {1} or ins[0] is None:
        return None
    pool = _Pool(attrs)

    def values_only(attrs: Mapping[str, Any], inputs: Sequence[Any],
                    outs: Sequence[Any]) -> list[np.ndarray]:
        val = pool.maxima(pool.plane(inputs[0]))[0]
        if pool.last:
            val = np.moveaxis(val, 1, -1)
        y = out_buffer(outs, 0, val.shape, inputs[0].dtype)
        np.copyto(y, val, casting="unsafe")
        return [y, outs[1]]

    return values_only


max_pool_2d.bind_unused = _bind_values_only  # type: ignore[attr-defined]


@register_kernel("tdflow.max_pool_2d_grad", "cpu", dtypes=FLOATS | INTS,
                 match=input_dtype_in(1, INTS))
def max_pool_2d_grad(attrs: Mapping[str, Any], inputs: Sequence[Any],
                     outs: Sequence[Any]) -> list[np.ndarray]:
    """dx[plane, indice] += dy (windows may overlap, so contributions add)."""
    pool = _Pool(attrs)
    x, indice, dy = inputs[0], inputs[1], inputs[2]
    x_cf = pool.plane(x)
    ind_cf, dy_cf = pool.plane(indice), pool.plane(dy)
    n, c, h, w = x_cf.shape
    planes = n * c
    offsets = (np.arange(planes, dtype=np.int64) * (h * w)).reshape(n, c, 1, 1)
    ind64 = ind_cf.astype(np.int64)
    valid = (ind64 >= 0).ravel()  # -1 marks a window with no input element (all padding)
    flat = (ind64 + offsets).ravel()[valid]
    wide = np.float64 if dy.dtype.kind == "f" else np.int64
    acc = np.bincount(flat, weights=dy_cf.astype(wide).ravel()[valid], minlength=planes * h * w)
    dx_cf = acc.reshape(n, c, h, w)
    return [store(outs, np.moveaxis(dx_cf, 1, -1) if pool.last else dx_cf, x.dtype)]


def _to_cf(attrs: Mapping[str, Any], op: str, *arrays: np.ndarray) -> tuple[bool, list]:
    """Whether ``data_format`` is channels last, and the 4-D ``arrays`` (checked) as NCHW."""
    last = channels_last(str(attrs.get("data_format", "channels_first")))
    for x in arrays:
        if x.ndim != 4:
            raise ValueError(f"{op}: expected a 4-D input, got shape {x.shape}")
    return last, [np.moveaxis(x, -1, 1) if last else x for x in arrays]


def _store_cf(outs: Sequence[Any], y_cf: np.ndarray, last: bool, dtype: Any) -> np.ndarray:
    """Store the NCHW result ``y_cf`` in the op's layout (NHWC when ``last``)."""
    return store(outs, np.moveaxis(y_cf, 1, -1) if last else y_cf, dtype)


class _AvgPool:
    """The windows of one avg_pool_2d: output size, divisors, padded extent."""

    def __init__(self, attrs: Mapping[str, Any], h: int, w: int) -> None:
        self.k = pair(attrs, "kernel_size")
        self.s = pair(attrs, "stride")
        self.p = pair(attrs, "padding")
        for kk, pp in zip(self.k, self.p):
            if pp > kk // 2:
                raise ValueError(f"avg_pool_2d: padding {list(self.p)} must be at most half the "
                                 f"kernel size {list(self.k)}")
        ceil = bool(attrs["ceil_mode"])
        self.hw = (h, w)
        self.out = tuple(pool_out_size(n, k, p, s, 1, ceil)
                         for n, k, p, s in zip(self.hw, self.k, self.p, self.s))
        override = int(attrs["divisor_override"] or 0)
        include = bool(attrs["count_include_pad"])
        per_dim = []
        for n, o, k, p, s in zip(self.hw, self.out, self.k, self.p, self.s):
            start = np.arange(o) * s - p
            end = np.minimum(start + k, n + p)
            full = end - start  # the window clipped to the padded input
            inside = np.minimum(end, n) - np.maximum(start, 0)
            per_dim.append(full if include else inside)
        self.divisor = (np.full(self.out, float(override)) if override
                        else np.outer(per_dim[0], per_dim[1]).astype(np.float64))
        # padded extent: enough for the last window (ceil_mode can reach past the padding)
        self.pads = [(p, max(0, (o - 1) * s + k - n - p))
                     for n, o, k, p, s in zip(self.hw, self.out, self.k, self.p, self.s)]

    def views(self, xp: np.ndarray):
        """One strided view of the padded plane per kernel offset."""
        (sh, sw), (oh, ow) = self.s, self.out
        for a in range(self.k[0]):
            for b in range(self.k[1]):
                yield xp[:, :, a:a + sh * (oh - 1) + 1:sh, b:b + sw * (ow - 1) + 1:sw]


@register_kernel("tdflow.avg_pool_2d", "cpu", dtypes=FLOATS)
def avg_pool_2d(attrs: Mapping[str, Any], inputs: Sequence[Any],
                outs: Sequence[Any]) -> list[np.ndarray]:
    """y = sum of each window / its divisor."""
    x = inputs[0]
    last, (x_cf,) = _to_cf(attrs, "avg_pool_2d", x)
    pool = _AvgPool(attrs, *x_cf.shape[2:])
    wide = wide_float(x.dtype)
    xp = np.pad(x_cf.astype(wide, copy=False), [(0, 0), (0, 0), *pool.pads])
    acc = np.zeros((*x_cf.shape[:2], *pool.out), wide)
    for v in pool.views(xp):
        acc += v
    acc /= pool.divisor.astype(wide)
    return [_store_cf(outs, acc, last, x.dtype)]


@register_kernel("tdflow.avg_pool_2d_grad", "cpu", dtypes=FLOATS, match=same_dtype(1))
def avg_pool_2d_grad(attrs: Mapping[str, Any], inputs: Sequence[Any],
                     outs: Sequence[Any]) -> list[np.ndarray]:
    """dx[window] += dy / divisor, over every window (they may overlap)."""
    x, dy = inputs[0], inputs[1]
    last, (x_cf, dy_cf) = _to_cf(attrs, "avg_pool_2d_grad", x, dy)
    pool = _AvgPool(attrs, *x_cf.shape[2:])
    wide = wide_float(x.dtype)
    share = dy_cf.astype(wide) / pool.divisor.astype(wide)
    (t0, b0), (t1, b1) = pool.pads
    h, w = pool.hw
    dxp = np.zeros((*x_cf.shape[:2], h + t0 + b0, w + t1 + b1), wide)
    for v in pool.views(dxp):
        v += share
    dx = dxp[:, :, t0:t0 + h, t1:t1 + w]
    return [_store_cf(outs, dx, last, x.dtype)]


def _cells(n: int, out: int) -> list[tuple[int, int]]:
    """Input range ``[start, end)`` of each adaptive pooling cell along one dim."""
    return [((i * n) // out, -(-((i + 1) * n) // out)) for i in range(out)]


def _output_size(attrs: Mapping[str, Any]) -> tuple[int, int]:
    size = [int(e) for e in attrs.get("output_size", ())]
    if len(size) == 1:
        size *= 2
    if len(size) != 2 or min(size) < 1:
        raise ValueError(f"adaptive_avg_pool2d: output_size must be 1 or 2 entries >= 1, got "
                         f"{size}")
    return size[0], size[1]


@register_kernel("tdflow.adaptive_avg_pool2d", "cpu", dtypes=FLOATS)
def adaptive_avg_pool2d(attrs: Mapping[str, Any], inputs: Sequence[Any],
                        outs: Sequence[Any]) -> list[np.ndarray]:
    """y[i, j] = mean of x over cell (i, j)."""
    x = inputs[0]
    last, (x_cf,) = _to_cf(attrs, "adaptive_avg_pool2d", x)
    oh, ow = _output_size(attrs)
    wide = wide_float(x.dtype)
    xw = x_cf.astype(wide, copy=False)
    if (oh, ow) == (1, 1) and x_cf.shape[2] * x_cf.shape[3]:
        # global pooling (a ResNet's head): one reduction over each contiguous plane; the
        # cell loop's two reductions over a middle axis took 295 us on (64, 32, 4, 4)
        n, c, h, w = x_cf.shape
        y = (xw.reshape(n, c, h * w).sum(axis=2) / wide.type(h * w)).reshape(n, c, 1, 1)
        return [_store_cf(outs, y, last, x.dtype)]
    y = np.empty((*x_cf.shape[:2], oh, ow), wide)
    cols = _cells(x_cf.shape[3], ow)
    for i, (r0, r1) in enumerate(_cells(x_cf.shape[2], oh)):
        rows = xw[:, :, r0:r1].sum(axis=2)
        for j, (c0, c1) in enumerate(cols):
            y[:, :, i, j] = rows[:, :, c0:c1].sum(axis=2) / wide.type((r1 - r0) * (c1 - c0))
    return [_store_cf(outs, y, last, x.dtype)]


@register_kernel("tdflow.adaptive_avg_pool2d_grad", "cpu", dtypes=FLOATS, match=same_dtype(1))
def adaptive_avg_pool2d_grad(attrs: Mapping[str, Any], inputs: Sequence[Any],
                             outs: Sequence[Any]) -> list[np.ndarray]:
    """dx[cell (i, j)] += dy[i, j] / cell size (cells may overlap)."""
    x, dy = inputs[0], inputs[1]
    last, (x_cf, dy_cf) = _to_cf(attrs, "adaptive_avg_pool2d_grad", x, dy)
    wide = wide_float(x.dtype)
    dx = np.zeros(x_cf.shape, wide)
    oh, ow = dy_cf.shape[2:]
    cols = _cells(x_cf.shape[3], ow)
    for i, (r0, r1) in enumerate(_cells(x_cf.shape[2], oh)):
        for j, (c0, c1) in enumerate(cols):
            share = dy_cf[:, :, i, j].astype(wide) / wide.type((r1 - r0) * (c1 - c0))
            dx[:, :, r0:r1, c0:c1] += share[:, :, None, None]
    return [_store_cf(outs, dx, last, x.dtype)]
