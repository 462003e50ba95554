"""``max_pool_2d`` (values and argmax indices) and ``max_pool_2d_grad``.

``padding`` pads both sides with the lowest value; ``kernel_size``, ``stride``, ``dilation``
per spatial dim; ``ceil_mode`` rounds the output size up, dropping a last window that would
start inside the right padding (PyTorch's rule). ``indice`` (``i64``) is, as in OneFlow and
PyTorch, the flat index ``h * W + w`` of the maximum inside its ``(n, c)`` plane of the
unpadded input; it is produced whether or not ``return_indices`` is set. NaN wins a window.
A window that lies wholly in the padding (dilated kernels can do that) gets ``-inf``/lowest
and index ``-1``; ``max_pool_2d_grad`` skips such windows.
``data_format`` is ``"channels_first"`` (NCHW) or ``"channels_last"`` (NHWC).

>>> import numpy as np
>>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
>>> y, i = max_pool_2d({"kernel_size": [2, 2], "stride": [2, 2], "padding": [0, 0],
...                     "data_format": "channels_first"}, [x], [None, None])
>>> y.tolist(), i.tolist()
([[[[5.0, 7.0], [13.0, 15.0]]]], [[[[5, 7], [13, 15]]]])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.runtime.kernels._util import FLOATS, INTS, out_buffer, store
from tdflow.runtime.kernels.conv import channels_last
from tdflow.runtime.kernels.registry import input_dtype_in, register_kernel


def pair(attrs: Mapping[str, Any], name: str, default: int,
         op: str = "max_pool_2d") -> tuple[int, int]:
    """A per-spatial-dim attribute of the 2-D pool ``op``: absent or empty is ``default``
    twice, one entry is used twice; more than two is an error."""
    v = attrs.get(name)
    if v is None or len(v) == 0:
        return (default, default)
    if len(v) == 1:
        return (int(v[0]), int(v[0]))
    if len(v) != 2:
        raise ValueError(f"{op}: {name} needs 2 entries, got {list(v)}")
    return (int(v[0]), int(v[1]))


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
        self.k = pair(attrs, "kernel_size", 1)
        self.s = pair(attrs, "stride", 0)
        if self.s == (0, 0):
            self.s = self.k
        self.p = pair(attrs, "padding", 0)
        self.d = pair(attrs, "dilation", 1)
        self.ceil = bool(attrs.get("ceil_mode", False))
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
        return val, idx


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
