"""Convolution: ``conv2d`` and its gradients ``conv_data_grad`` / ``conv_filter_grad``.

Layouts (``data_format``): ``"channels_first"`` (OneFlow's name; ``"NCHW"`` accepted) with
``x (N, C, *S)`` and ``weight (O, C/groups, *K)``; ``"channels_last"`` (``"NHWC"``) with
``x (N, *S, C)`` and ``weight (O, *K, C/groups)``. ``padding_before`` pads both sides of each
spatial dim (OneFlow's symmetric convolution padding); ``strides`` and ``dilation_rate`` per
spatial dim. The gradients work for any ``num_spatial_dims``.

Method: im2col without copies until the product — ``sliding_window_view`` gives the
``(N, C, *OS, *K)`` windows of the padded input, sliced by stride and dilation, and one
``tensordot`` per group does the multiply-accumulate in BLAS. The data gradient multiplies
``dy`` by the filter into columns and scatters them back with one strided add per kernel
offset (a loop over the ``prod(K)`` offsets, never over pixels).

>>> import numpy as np
>>> x = np.ones((1, 1, 3, 3), np.float32); w = np.ones((1, 1, 2, 2), np.float32)
>>> conv2d({"data_format": "channels_first", "kernel_size": [2, 2], "strides": [1, 1],
...         "dilation_rate": [1, 1], "padding_before": [0, 0]}, [x, w], [None])[0].tolist()
[[[[4.0, 4.0], [4.0, 4.0]]]]
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from tdflow.runtime.kernels._util import FLOATS, INTS, acc_dtype, operands
from tdflow.runtime.kernels.registry import register_kernel, same_dtype

_FIRST = ("channels_first", "NCHW", "NCW", "NCDHW")
_LAST = ("channels_last", "NHWC", "NWC", "NDHWC")


def channels_last(fmt: str) -> bool:
    """``True`` for channels-last formats; ``ValueError`` for unknown spellings."""
    if fmt in _FIRST:
        return False
    if fmt in _LAST:
        return True
    raise ValueError(f"unknown data_format {fmt!r}; expected 'channels_first' (NCHW) or "
                     f"'channels_last' (NHWC)")


def _ints(attrs: Mapping[str, Any], name: str, nd: int, default: int) -> tuple[int, ...]:
    v = attrs.get(name)
    if v is None or len(v) == 0:
        return (default,) * nd
    if len(v) != nd:
        raise ValueError(f"{name} has {len(v)} entries, expected {nd} (one per spatial dim)")
    return tuple(int(t) for t in v)


class ConvGeometry:
    """Sizes shared by the three kernels (all spatial tuples have ``nd`` entries)."""

    def __init__(self, attrs: Mapping[str, Any], nd: int, op: str) -> None:
        self.op = op
        self.nd = nd
        self.last = channels_last(str(attrs.get("data_format", "channels_first")))
        self.pad = _ints(attrs, "padding_before", nd, 0)
        self.stride = _ints(attrs, "strides", nd, 1)
        self.dil = _ints(attrs, "dilation_rate", nd, 1)
        self.groups = int(attrs.get("groups", 1)) or 1
        self.kernel_attr = attrs.get("kernel_size")

    def kernel(self, w_cf: np.ndarray) -> tuple[int, ...]:
        k = tuple(w_cf.shape[2:])
        if self.kernel_attr and tuple(int(t) for t in self.kernel_attr) != k:
            raise ValueError(f"{self.op}: kernel_size {list(self.kernel_attr)} does not match "
                             f"the filter's spatial shape {list(k)}")
        return k

    def out_size(self, spatial: Sequence[int], k: Sequence[int]) -> tuple[int, ...]:
        out = []
        for s, kk, p, st, d in zip(spatial, k, self.pad, self.stride, self.dil):
            eff = d * (kk - 1) + 1
            o = (s + 2 * p - eff) // st + 1
            if o <= 0:
                raise ValueError(f"{self.op}: input size {s} with padding {p} is smaller than "
                                 f"the dilated kernel {eff}")
            out.append(o)
        return tuple(out)

    def to_cf(self, a: np.ndarray) -> np.ndarray:
        """Activation or filter in channels-first order (a view)."""
        return np.moveaxis(a, -1, 1) if self.last else a

    def from_nl(self, a_nl: np.ndarray) -> np.ndarray:
        """``(N, *S, C)`` result in the op's layout (a view)."""
        return a_nl if self.last else np.moveaxis(a_nl, -1, 1)

    def windows(self, x_cf: np.ndarray, k: Sequence[int], out_sp: Sequence[int]) -> np.ndarray:
        """``(N, C, *OS, *K)`` strided view of the zero-padded input."""
        nd = self.nd
        if any(self.pad):
            x_cf = np.pad(x_cf, [(0, 0), (0, 0)] + [(p, p) for p in self.pad])
        eff = tuple(d * (kk - 1) + 1 for kk, d in zip(k, self.dil))
        win = sliding_window_view(x_cf, eff, axis=tuple(range(2, 2 + nd)))
        index = (slice(None), slice(None))
        index += tuple(slice(0, st * (o - 1) + 1, st) for st, o in zip(self.stride, out_sp))
        index += tuple(slice(None, None, d) for d in self.dil)
        return win[index]


def _finish(result_nl: np.ndarray, geo: ConvGeometry, out: np.ndarray | None, dt: np.dtype,
            add: np.ndarray | None) -> np.ndarray:
    res = geo.from_nl(result_nl)
    if add is not None:
        res = res + add
    if out is None:
        return np.ascontiguousarray(res, dtype=dt)
    np.copyto(out, res, casting="unsafe")
    return out


def _nd(x: np.ndarray, attrs: Mapping[str, Any], op: str) -> int:
    nd = int(attrs.get("num_spatial_dims", 0)) or x.ndim - 2
    if x.ndim != nd + 2 or nd < 1:
        raise ValueError(f"{op}: input of rank {x.ndim} for {nd} spatial dims")
    return nd


_CONV_DTYPES = FLOATS | INTS


@register_kernel("tdflow.conv2d", "cpu", dtypes=_CONV_DTYPES, match=same_dtype(1, 2, 3),
                 uses_blas=True)
def conv2d(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """out = conv(in, weight) + bias + _add_to_output."""
    x, w, bias, add = operands(inputs, attrs, 4)
    op = "tdflow.conv2d"
    nd = _nd(x, attrs, op)
    geo = ConvGeometry(attrs, nd, op)
    dt = x.dtype
    wide = acc_dtype(dt)
    x_cf = geo.to_cf(x).astype(wide, copy=False)
    w_cf = geo.to_cf(w).astype(wide, copy=False)
    k = geo.kernel(w_cf)
    n, c = x_cf.shape[:2]
    o, g = w_cf.shape[0], geo.groups
    if c % g or o % g or w_cf.shape[1] != c // g:
        raise ValueError(f"{op}: {c} input channels, {o} filters of {w_cf.shape[1]} channels "
                         f"and groups={g} do not fit (need C = groups * filter channels)")
    out_sp = geo.out_size(x_cf.shape[2:], k)
    win = geo.windows(x_cf, k, out_sp)
    cg, og = c // g, o // g
    sum_win = [1] + list(range(2 + nd, 2 + 2 * nd))
    sum_w = list(range(1, 2 + nd))
    if g == 1:
        res = np.tensordot(win, w_cf, axes=(sum_win, sum_w))  # (N, *OS, O)
    else:
        res = np.empty((n, *out_sp, o), wide)
        for gi in range(g):
            res[..., gi * og:(gi + 1) * og] = np.tensordot(
                win[:, gi * cg:(gi + 1) * cg], w_cf[gi * og:(gi + 1) * og], axes=(sum_win, sum_w))
    if bias is not None:
        res += bias.astype(wide, copy=False)
    out = outs[0] if outs else None
    return [_finish(res, geo, out, dt, add)]


@register_kernel("tdflow.conv_data_grad", "cpu", dtypes=_CONV_DTYPES, match=same_dtype(1),
                 uses_blas=True)
def conv_data_grad(attrs: Mapping[str, Any], inputs: Sequence[Any],
                   outs: Sequence[Any]) -> list[np.ndarray]:
    """dx of a convolution, shaped like ``x_like`` (+ _add_to_output)."""
    dy, w, x_like, add = operands(inputs, attrs, 4)
    op = "tdflow.conv_data_grad"
    nd = _nd(x_like, attrs, op)
    geo = ConvGeometry(attrs, nd, op)
    dt = dy.dtype
    wide = acc_dtype(dt)
    w_cf = geo.to_cf(w).astype(wide, copy=False)
    k = geo.kernel(w_cf)
    x_shape_cf = geo.to_cf(x_like).shape
    n, c = x_shape_cf[:2]
    spatial = x_shape_cf[2:]
    out_sp = geo.out_size(spatial, k)
    dy_nl = (dy if geo.last else np.moveaxis(dy, 1, -1)).astype(wide, copy=False)
    if dy_nl.shape[1:-1] != out_sp:
        raise ValueError(f"{op}: dy has spatial shape {dy_nl.shape[1:-1]}, expected {out_sp}")
    o, g = w_cf.shape[0], geo.groups
    cg, og = c // g, o // g
    padded = tuple(s + 2 * p for s, p in zip(spatial, geo.pad))
    dxp = np.zeros((n, c, *padded), wide)
    for gi in range(g):
        # cols: (N, *OS, Cg, *K) = dy (N, *OS, Og) . w (Og, Cg, *K)
        cols = np.tensordot(dy_nl[..., gi * og:(gi + 1) * og], w_cf[gi * og:(gi + 1) * og],
                            axes=([nd + 1], [0]))
        cols = np.moveaxis(cols, nd + 1, 1)  # (N, Cg, *OS, *K)
        for offs in itertools.product(*(range(kk) for kk in k)):
            index: tuple[Any, ...] = (slice(None), slice(gi * cg, (gi + 1) * cg))
            index += tuple(slice(off * d, off * d + st * (os_ - 1) + 1, st)
                           for off, d, st, os_ in zip(offs, geo.dil, geo.stride, out_sp))
            dxp[index] += cols[(Ellipsis, *offs)]
    crop = (slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(geo.pad, spatial))
    dx_cf = dxp[crop]
    out = outs[0] if outs else None
    return [_finish(np.moveaxis(dx_cf, 1, -1), geo, out, dt, add)]


@register_kernel("tdflow.conv_filter_grad", "cpu", dtypes=_CONV_DTYPES, match=same_dtype(1),
                 uses_blas=True)
def conv_filter_grad(attrs: Mapping[str, Any], inputs: Sequence[Any],
                     outs: Sequence[Any]) -> list[np.ndarray]:
    """dw of a convolution: correlate the input windows with dy."""
    dy, x = inputs[0], inputs[1]
    op = "tdflow.conv_filter_grad"
    nd = _nd(x, attrs, op)
    geo = ConvGeometry(attrs, nd, op)
    dt = dy.dtype
    wide = acc_dtype(dt)
    x_cf = geo.to_cf(x).astype(wide, copy=False)
    k = tuple(int(t) for t in attrs.get("kernel_size") or ())
    if len(k) != nd:
        raise ValueError(f"{op}: kernel_size {list(k)} needs {nd} entries")
    n, c = x_cf.shape[:2]
    out_sp = geo.out_size(x_cf.shape[2:], k)
    dy_nl = (dy if geo.last else np.moveaxis(dy, 1, -1)).astype(wide, copy=False)
    o, g = dy_nl.shape[-1], geo.groups
    cg, og = c // g, o // g
    win = geo.windows(x_cf, k, out_sp)  # (N, C, *OS, *K)
    sum_dy = list(range(0, nd + 1))
    sum_win = [0] + list(range(2, 2 + nd))
    dw = np.empty((o, cg, *k), wide)
    for gi in range(g):
        dw[gi * og:(gi + 1) * og] = np.tensordot(
            dy_nl[..., gi * og:(gi + 1) * og], win[:, gi * cg:(gi + 1) * cg], axes=(sum_dy, sum_win))
    res = np.moveaxis(dw, 1, -1) if geo.last else dw
    out = outs[0] if outs else None
    if out is None:
        return [np.ascontiguousarray(res, dtype=dt)]
    np.copyto(out, res, casting="unsafe")
    return [out]
