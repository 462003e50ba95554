"""Strided 2-D convolutions as one small GEMM per kernel tap, pixels outermost.

With the activations laid out ``(H, W, N * C)`` (pixels outermost), the input seen by kernel
tap ``(ky, kx)`` at every output is the strided view ``xp[ky::s, kx::s]`` of whole
``N * C`` rows, and the data gradient's scatter back to it is an add into that same view:
every numpy loop runs along ``N * C`` contiguous numbers. im2col's ``(C, N, H, W)`` layout
copies (and its data gradient adds) rows of 4 elements on the 4x4 output of a stride-2 layer,
4096 loops per tap, which cost more than its GEMM. Per tap ``t``:

- forward: ``cols_t (P * N, C)`` (a copy of the view) ``@ w_t (C, O)``, the 9 products summed;
- data gradient: ``dy (P * N, O) @ w_t^T (O, C)`` added into the view of the padded ``dx``;
- filter gradient: ``dw_t = dy^T (O, P * N) @ cols_t (P * N, C)``.

Each result element sums exactly the products im2col sums (the padding's zeros included), in
another order: results agree to rounding, and NaN/inf propagate as in im2col.

>>> import numpy as np
>>> x = np.arange(16.0).reshape(1, 1, 4, 4)
>>> correlate(x, np.ones((1, 1, 2, 2)), (0, 0), (2, 2), (1, 1))[0, 0].tolist()
[[10.0, 18.0], [42.0, 50.0]]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from tdflow.runtime.kernels._conv_scratch import scratch, zero_outside

#: extra elements per pixel row of an array the caller transposes out of: see
#: ``_conv_winograd.PITCH`` (rows of ``N * C`` floats are often a multiple of 4 KiB)
PITCH = 16


def _out_size(hw: Sequence[int], k: Sequence[int], pad: Sequence[int], stride: Sequence[int],
              dil: Sequence[int]) -> tuple[int, int]:
    oh, ow = ((s + 2 * p - d * (kk - 1) - 1) // st + 1
              for s, kk, p, st, d in zip(hw, k, pad, stride, dil))
    return oh, ow


def _padded(x_nc: np.ndarray, pad: Sequence[int], name: str) -> np.ndarray:
    """``x (N, C, H, W)`` zero-padded as ``(H + 2 ph, W + 2 pw, N * C)`` scratch."""
    n, c, h, w = x_nc.shape
    ph, pw = pad
    xp = scratch(name, (h + 2 * ph, w + 2 * pw, n, c), x_nc.dtype)
    zero_outside(xp, ph, pw, h, w)
    xp[ph:ph + h, pw:pw + w] = x_nc.transpose(2, 3, 0, 1)
    return xp.reshape(h + 2 * ph, w + 2 * pw, n * c)


def _view(a: np.ndarray, ky: int, kx: int, out_hw: Sequence[int], stride: Sequence[int],
          dil: Sequence[int]) -> np.ndarray:
    """The ``(OH, OW, ...)`` pixels of ``a`` that tap ``(ky, kx)`` reads at every output."""
    return a[ky * dil[0]:ky * dil[0] + stride[0] * (out_hw[0] - 1) + 1:stride[0],
             kx * dil[1]:kx * dil[1] + stride[1] * (out_hw[1] - 1) + 1:stride[1]]


def _pixels_outermost(a_nc: np.ndarray, name: str) -> np.ndarray:
    """``a (N, C, H, W)`` as ``(H * W * N, C)`` scratch."""
    n, c, h, w = a_nc.shape
    out = scratch(name, (h, w, n, c), a_nc.dtype)
    out[...] = a_nc.transpose(2, 3, 0, 1)
    return out.reshape(h * w * n, c)


def _tap_cols(xp: np.ndarray, ky: int, kx: int, out_hw: Sequence[int], stride: Sequence[int],
              dil: Sequence[int], c: int) -> np.ndarray:
    """Tap ``(ky, kx)``'s input at every output, ``(OH * OW * N, C)`` scratch."""
    v = _view(xp, ky, kx, out_hw, stride, dil)
    cols = scratch("taps.cols", v.shape, xp.dtype)
    np.copyto(cols, v)
    return cols.reshape(-1, c)


def correlate(x_nc: np.ndarray, w: np.ndarray, pad: Sequence[int], stride: Sequence[int],
              dil: Sequence[int]) -> np.ndarray:
    """``(N, O, OH, OW)`` correlation of ``x (N, C, H, W)`` (any strides) with
    ``w (O, C, KH, KW)``: a view of per-thread scratch (copy it before the next call).

    >>> import numpy as np
    >>> correlate(np.ones((1, 2, 3, 3)), np.ones((1, 2, 3, 3)), (1, 1), (2, 2),
    ...           (1, 1))[0, 0].tolist()
    [[8.0, 8.0], [8.0, 8.0]]
    """
    n, c = x_nc.shape[:2]
    o, _, kh, kw = w.shape
    out_hw = _out_size(x_nc.shape[2:], (kh, kw), pad, stride, dil)
    xp = _padded(x_nc, pad, "taps.xp")
    wt = np.ascontiguousarray(w.transpose(2, 3, 1, 0))  # (KH, KW, C, O)
    m = out_hw[0] * out_hw[1] * n
    acc = scratch("taps.acc", (m, o), x_nc.dtype)
    prod = scratch("taps.prod", (m, o), x_nc.dtype)
    for ky in range(kh):
        for kx in range(kw):
            cols = _tap_cols(xp, ky, kx, out_hw, stride, dil, c)
            if ky == kx == 0:
                np.matmul(cols, wt[0, 0], out=acc)
            else:
                np.matmul(cols, wt[ky, kx], out=prod)
                acc += prod
    # into rows with a pitch: the caller's copy to its layout reads down the pixels
    res = scratch("taps.res", (*out_hw, n * o + PITCH), x_nc.dtype)
    res[..., :n * o] = acc.reshape(*out_hw, n * o)
    return res[..., :n * o].reshape(*out_hw, n, o).transpose(2, 3, 0, 1)


def data_grad(dy_nc: np.ndarray, w: np.ndarray, hw: Sequence[int], pad: Sequence[int],
              stride: Sequence[int], dil: Sequence[int]) -> np.ndarray:
    """``dx (N, C, H, W)`` of :func:`correlate` from ``dy (N, O, OH, OW)`` (any strides): a
    view of per-thread scratch.

    >>> import numpy as np
    >>> data_grad(np.ones((1, 1, 2, 2)), np.ones((1, 1, 3, 3)), (3, 3), (1, 1), (2, 2),
    ...           (1, 1))[0, 0].tolist()
    [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
    """
    n, o, oh, ow = dy_nc.shape
    c, kh, kw = w.shape[1:]
    h, wd = hw
    ph, pw = pad
    dy2 = _pixels_outermost(dy_nc, "taps.dy")
    wt = np.ascontiguousarray(w.transpose(2, 3, 0, 1))  # (KH, KW, O, C)
    # rows past the last tap's reach (a stride that skips the end) are cropped below
    dxp = scratch("taps.dxp", (h + 2 * ph, wd + 2 * pw, n * c + PITCH), dy_nc.dtype)
    dxp.fill(0)
    prod = scratch("taps.prod", (oh * ow * n, c), dy_nc.dtype)
    for ky in range(kh):
        for kx in range(kw):
            np.matmul(dy2, wt[ky, kx], out=prod)
            _view(dxp, ky, kx, (oh, ow), stride, dil)[..., :n * c] += prod.reshape(oh, ow, -1)
    dx = dxp[ph:ph + h, pw:pw + wd, :n * c]
    return dx.reshape(h, wd, n, c).transpose(2, 3, 0, 1)


def filter_grad(x_nc: np.ndarray, dy_nc: np.ndarray, k: Sequence[int], pad: Sequence[int],
                stride: Sequence[int], dil: Sequence[int]) -> np.ndarray:
    """``dw (O, C, KH, KW)`` of :func:`correlate` from ``x (N, C, H, W)`` and
    ``dy (N, O, OH, OW)`` (any strides).

    >>> import numpy as np
    >>> filter_grad(np.ones((1, 1, 3, 3)), np.ones((1, 1, 2, 2)), (3, 3), (1, 1), (2, 2),
    ...             (1, 1))[0, 0].tolist()
    [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
    """
    n, c = x_nc.shape[:2]
    o, oh, ow = dy_nc.shape[1:]
    xp = _padded(x_nc, pad, "taps.xp")
    dy2 = _pixels_outermost(dy_nc, "taps.dy")
    dw = np.empty((k[0], k[1], o, c), x_nc.dtype)
    for ky in range(k[0]):
        for kx in range(k[1]):
            cols = _tap_cols(xp, ky, kx, (oh, ow), stride, dil, c)
            np.matmul(dy2.T, cols, out=dw[ky, kx])
    return np.ascontiguousarray(dw.transpose(2, 3, 0, 1))
