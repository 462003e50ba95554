"""Convolution: ``conv2d`` and its gradients ``conv_data_grad`` / ``conv_filter_grad``.

Layouts (``data_format``): ``"channels_first"`` (OneFlow's name; ``"NCHW"`` accepted) with
``x (N, C, *S)`` and ``weight (O, C/groups, *K)``; ``"channels_last"`` (``"NHWC"``) with
``x (N, *S, C)`` and ``weight (O, *K, C/groups)``. ``padding_before`` pads both sides of each
spatial dim (OneFlow's symmetric convolution padding); ``strides`` and ``dilation_rate`` per
spatial dim. The gradients work for any ``num_spatial_dims``.

Method: im2col + one BLAS matmul per group. The columns ``(C/g * prod(K), N * prod(OS))`` are
filled with one strided slab copy per kernel offset (a loop over the ``prod(K)`` offsets,
never over pixels), which copies along whole input rows. The filter gradient is
``dy @ cols^T``; the data gradient computes ``w^T @ dy`` into columns and adds them back with
one strided add per kernel offset.

>>> import numpy as np
>>> x = np.ones((1, 1, 3, 3), np.float32); w = np.ones((1, 1, 2, 2), np.float32)
>>> from tdflow.runtime.kernels.registry import complete_kernel_attrs as complete  # defaults
>>> conv2d(complete("tdflow.conv2d", {"data_format": "channels_first", "kernel_size": [2, 2],
...        "strides": [1, 1], "dilation_rate": [1, 1], "padding_before": [0, 0]}), [x, w],
...        [None])[0].tolist()
[[[[4.0, 4.0], [4.0, 4.0]]]]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.runtime.kernels import _conv_algos as conv_algos
from tdflow.runtime.kernels._util import (
    FLOATS,
    INTS,
    acc_dtype,
    channels_last,
    operands,
    store,
)
from tdflow.runtime.kernels.registry import register_kernel, same_dtype


def _ints(attrs: Mapping[str, Any], name: str, nd: int) -> tuple[int, ...]:
    # the dialect's records declare 2-D windows (TDF_PairAttr: expanded and checked); a
    # direct call of the kernel may give 1-D or 3-D ones, which must fit the input
    v = attrs[name]
    if len(v) != nd:
        raise ValueError(f"{name} has {len(v)} entries, expected {nd} (one per spatial dim)")
    return tuple(int(t) for t in v)


class ConvGeometry:
    """Sizes shared by the three kernels (all spatial tuples have ``nd`` entries).

    ``x`` is the op's input (or a tensor shaped like it): its rank gives ``nd`` unless
    ``num_spatial_dims`` says, and must agree with it.
    """

    def __init__(self, attrs: Mapping[str, Any], x: np.ndarray, op: str) -> None:
        # conv2d declares no num_spatial_dims (its input's rank says it); 0 means the same
        nd = int(attrs["num_spatial_dims"] if "num_spatial_dims" in attrs else 0) or x.ndim - 2
        if x.ndim != nd + 2 or nd < 1:
            raise ValueError(f"{op}: input of rank {x.ndim} for {nd} spatial dims")
        self.op = op
        self.nd = nd
        self.last = channels_last(str(attrs.get("data_format", "channels_first")))
        self.pad = _ints(attrs, "padding_before", nd)
        self.stride = _ints(attrs, "strides", nd)
        self.dil = _ints(attrs, "dilation_rate", nd)
        self.groups = int(attrs["groups"]) or 1
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

    def offsets(self, k: Sequence[int]) -> Iterator[tuple[int, ...]]:
        return itertools.product(*(range(kk) for kk in k))

    def slab(self, offs: Sequence[int], out_sp: Sequence[int]) -> tuple[slice, ...]:
        """Spatial slices of the padded input seen by kernel offset ``offs`` at every output."""
        return tuple(slice(o * d, o * d + st * (n - 1) + 1, st)
                     for o, d, st, n in zip(offs, self.dil, self.stride, out_sp))

    def padded_cn(self, x_cf: np.ndarray) -> np.ndarray:
        """The padded input as ``(C, N, *S)``, contiguous: each kernel offset's slab is then
        a plain strided copy into (or add from) the ``(Cg, K, N, OS)`` columns, with no axis
        moved per offset."""
        xp = np.zeros((x_cf.shape[1], x_cf.shape[0],
                       *(s + 2 * p for s, p in zip(x_cf.shape[2:], self.pad))), x_cf.dtype)
        inner = tuple(slice(p, p + s) for p, s in zip(self.pad, x_cf.shape[2:]))
        xp[(slice(None), slice(None), *inner)] = np.moveaxis(x_cf, 1, 0)
        return xp

    def im2col(self, xp_cn: np.ndarray, channels: slice, k: Sequence[int],
               out_sp: Sequence[int]) -> np.ndarray:
        """Columns ``(Cg * prod(K), N * prod(OS))`` of the padded input ``(C, N, *S)``
        (:meth:`padded_cn`).

        Built with one strided slab copy per kernel offset, so the copies run along whole
        rows of the input instead of gathering single elements.
        """
        xg = xp_cn[channels]
        cg, n = xg.shape[:2]
        cols = np.empty((cg, *k, n, *out_sp), xp_cn.dtype)
        for offs in self.offsets(k):
            cols[(slice(None), *offs)] = xg[(slice(None), slice(None),
                                             *self.slab(offs, out_sp))]
        return cols.reshape(cg * math.prod(k), n * math.prod(out_sp))


def _finish(res_onos: np.ndarray, geo: ConvGeometry, outs: Sequence[Any], dt: np.dtype,
            add: np.ndarray | None) -> np.ndarray:
    """Write a ``(C, N, *S)`` result into the op's layout (+ ``_add_to_output``)."""
    res = np.moveaxis(res_onos, 0, -1 if geo.last else 1)
    if add is not None:
        res = res + add
    return store(outs, res, dt)


def _dy_onos(dy: np.ndarray, geo: ConvGeometry, wide: np.dtype) -> np.ndarray:
    """``dy`` as a ``(O, N, *OS)`` array in the accumulation type (a view when it is one
    already: each path makes the one copy of the layout it needs)."""
    return np.moveaxis(dy, -1 if geo.last else 1, 0).astype(wide, copy=False)


_CONV_DTYPES = FLOATS | INTS


@register_kernel("tdflow.conv2d", "cpu", dtypes=_CONV_DTYPES, match=same_dtype(1, 2, 3),
                 uses_blas=True)
def conv2d(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """out = conv(in, weight) + bias + _add_to_output."""
    x, w, bias, add = operands(inputs, attrs, 4)
    op = "tdflow.conv2d"
    geo = ConvGeometry(attrs, x, op)
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
    cg, og = c // g, o // g
    target = _gemm_target(outs, geo, n, dt, wide, (x, w, bias, add))
    if target is not None and conv_algos.pointwise_into(geo, x_cf, w_cf, k, target):
        return [_biased(target, bias, outs[0])]
    fast = conv_algos.forward(geo, x_cf, w_cf, k, out_sp)  # (O, N, *OS); None: im2col below
    if fast is not None:
        if bias is not None:
            fast += bias.astype(wide, copy=False).reshape(o, *(1,) * (fast.ndim - 1))
        return [_finish(fast, geo, outs, dt, add)]
    # A 1x1 kernel at stride 1 without padding reads the input as it is: its columns are the
    # (C, N * S) view (no copy at all for one image), most of a ResNet's convolutions.
    pointwise = not any(geo.pad) and all(kk == 1 for kk in k) and all(
        st == 1 for st in geo.stride)
    xp = np.moveaxis(x_cf, 1, 0) if pointwise else geo.padded_cn(x_cf)
    res = np.empty((o, n * math.prod(out_sp)), wide) if target is None else target
    for gi in range(g):
        channels = slice(gi * cg, (gi + 1) * cg)
        cols = xp[channels].reshape(cg, -1) if pointwise else geo.im2col(xp, channels, k, out_sp)
        # the row length spelt out: -1 is ambiguous with no filters (a rank's empty split)
        np.matmul(w_cf[gi * og:(gi + 1) * og].reshape(og, cg * math.prod(k)), cols,
                  out=res[gi * og:(gi + 1) * og])
    if target is not None:
        return [_biased(target, bias, outs[0])]
    if bias is not None:
        res += bias.astype(wide, copy=False)[:, None]
    return [_finish(res.reshape(o, n, *out_sp), geo, outs, dt, add)]


def _gemm_target(outs: Sequence[Any], geo: ConvGeometry, n: int, dt: np.dtype,
                 wide: np.dtype, operands: Sequence[Any]) -> np.ndarray | None:
    """The preallocated output as the GEMM's ``(O, OH * OW)`` result, when one image in
    channels-first order lays it out exactly so (batch-1 inference): the product is written
    there, saving the copy of a temporary (the same numbers: only where they are stored
    changes). ``None`` otherwise, when the output overlaps an operand, and when it is empty
    (an SBP shard may hold no channel: ``reshape(0, -1)`` has no answer)."""
    out = outs[0] if outs else None
    if (out is None or n != 1 or geo.last or operands[3] is not None or dt != wide
            or out.dtype != dt or not out.flags.c_contiguous or out.ndim < 2 or out.size == 0):
        return None
    if any(a is not None and np.may_share_memory(out, a) for a in operands):
        return None
    return out.reshape(out.shape[1], -1)


def _biased(target: np.ndarray, bias: np.ndarray | None, out: np.ndarray) -> np.ndarray:
    """``out`` after the bias is added in place to its ``(O, pixels)`` view ``target``."""
    if bias is not None:
        target += bias.astype(target.dtype, copy=False)[:, None]
    return out


@register_kernel("tdflow.conv_data_grad", "cpu", dtypes=_CONV_DTYPES, match=same_dtype(1),
                 uses_blas=True)
def conv_data_grad(attrs: Mapping[str, Any], inputs: Sequence[Any],
                   outs: Sequence[Any]) -> list[np.ndarray]:
    """dx of a convolution, shaped like ``x_like`` (+ _add_to_output)."""
    dy, w, x_like, add = operands(inputs, attrs, 4)
    op = "tdflow.conv_data_grad"
    geo = ConvGeometry(attrs, x_like, op)
    dt = dy.dtype
    wide = acc_dtype(dt)
    w_cf = geo.to_cf(w).astype(wide, copy=False)
    k = geo.kernel(w_cf)
    x_shape_cf = geo.to_cf(x_like).shape
    n, c = x_shape_cf[:2]
    spatial = x_shape_cf[2:]
    out_sp = geo.out_size(spatial, k)
    dy_o = _dy_onos(dy, geo, wide)
    if dy_o.shape[2:] != out_sp:
        raise ValueError(f"{op}: dy has spatial shape {dy_o.shape[2:]}, expected {out_sp}")
    o, g = w_cf.shape[0], geo.groups
    cg, og = c // g, o // g
    fast = conv_algos.data_grad(geo, dy_o, w_cf, x_shape_cf, k)  # None: im2col below
    if fast is not None:
        return [_finish(fast, geo, outs, dt, add)]
    padded = tuple(s + 2 * p for s, p in zip(spatial, geo.pad))
    dxp = np.zeros((c, n, *padded), wide)  # (C, N, *S): the columns add in without moving axes
    dy2 = dy_o.reshape(o, -1)
    for gi in range(g):
        # cols (Cg * K, N * OS) = w^T (Cg * K, Og) @ dy (Og, N * OS), scattered back per offset
        cols = (w_cf[gi * og:(gi + 1) * og].reshape(og, -1).T @ dy2[gi * og:(gi + 1) * og])
        cols = cols.reshape(cg, *k, n, *out_sp)
        for offs in geo.offsets(k):
            dxp[(slice(gi * cg, (gi + 1) * cg), slice(None), *geo.slab(offs, out_sp))] += \
                cols[(slice(None), *offs)]
    crop = (slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(geo.pad, spatial))
    return [_finish(dxp[crop], geo, outs, dt, add)]


@register_kernel("tdflow.conv_filter_grad", "cpu", dtypes=_CONV_DTYPES, match=same_dtype(1),
                 uses_blas=True)
def conv_filter_grad(attrs: Mapping[str, Any], inputs: Sequence[Any],
                     outs: Sequence[Any]) -> list[np.ndarray]:
    """dw of a convolution: correlate the input windows with dy."""
    dy, x = inputs[0], inputs[1]
    op = "tdflow.conv_filter_grad"
    geo = ConvGeometry(attrs, x, op)
    nd = geo.nd
    dt = dy.dtype
    wide = acc_dtype(dt)
    x_cf = geo.to_cf(x).astype(wide, copy=False)
    k = tuple(int(t) for t in attrs.get("kernel_size") or ())
    if len(k) != nd:
        raise ValueError(f"{op}: kernel_size {list(k)} needs {nd} entries")
    n, c = x_cf.shape[:2]
    out_sp = geo.out_size(x_cf.shape[2:], k)
    dy_o = _dy_onos(dy, geo, wide)
    o, g = dy_o.shape[0], geo.groups
    cg, og = c // g, o // g
    fast = conv_algos.filter_grad(geo, dy_o, x_cf, k)  # None: im2col below
    if fast is not None:
        return [store(outs, np.moveaxis(fast, 1, -1) if geo.last else fast, dt)]
    xp = geo.padded_cn(x_cf)
    dy2 = dy_o.reshape(o, -1)
    dw = np.empty((o, cg * math.prod(k)), wide)
    for gi in range(g):
        cols = geo.im2col(xp, slice(gi * cg, (gi + 1) * cg), k, out_sp)
        np.matmul(dy2[gi * og:(gi + 1) * og], cols.T, out=dw[gi * og:(gi + 1) * og])
    dw = dw.reshape(o, cg, *k)
    return [store(outs, np.moveaxis(dw, 1, -1) if geo.last else dw, dt)]
