"""Unpadded 1x1 convolutions (any stride) as plain GEMMs, and their gradients.

A 1x1 kernel reads one input pixel per output, so the "columns" are the input itself (at
stride s, every s-th pixel): ``out = w @ x`` over the ``(C, N * OS)`` pixels, the data gradient
``w^T @ dy`` written to the pixels the convolution read (the others stay 0), and the filter
gradient ``dy @ x^T``; no im2col copy and no padded array. The terms summed per element are the
ones im2col sums, so results agree to rounding.

>>> import numpy as np
>>> x = np.arange(8.0).reshape(2, 1, 2, 2)          # (C, N, *S)
>>> forward(x, np.ones((1, 2, 1, 1)), (2, 2), 1).tolist()
[[4.0]]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _sub(stride: Sequence[int], nd: int) -> tuple[slice, ...]:
    return (slice(None), slice(None), *(slice(None, None, s) for s in stride[:nd]))


def _pixels(x_cn: np.ndarray, stride: Sequence[int]) -> np.ndarray:
    """The pixels a 1x1 convolution reads, as ``(C, N * prod(OS))`` (a view when it can)."""
    xs = x_cn[_sub(stride, x_cn.ndim - 2)]
    return xs.reshape(xs.shape[0], -1)


def forward(x_cn: np.ndarray, w: np.ndarray, stride: Sequence[int], groups: int,
            out: np.ndarray | None = None) -> np.ndarray:
    """``(O, N * prod(OS))`` of the input ``(C, N, *S)`` and filters ``(O, C/groups, 1...)``,
    written into ``out`` when given (C-contiguous, that shape).

    >>> import numpy as np
    >>> forward(np.ones((2, 1, 3)), np.ones((1, 2, 1)), (1,), 1).tolist()
    [[2.0, 2.0, 2.0]]
    """
    cols = _pixels(x_cn, stride)
    o, cg = w.shape[:2]
    og = o // groups
    res = np.empty((o, cols.shape[1]), x_cn.dtype) if out is None else out
    wm = w.reshape(o, cg)
    for gi in range(groups):
        np.matmul(wm[gi * og:(gi + 1) * og], cols[gi * cg:(gi + 1) * cg],
                  out=res[gi * og:(gi + 1) * og])
    return res


def data_grad(dy_onos: np.ndarray, w: np.ndarray, x_shape_cn: Sequence[int],
              stride: Sequence[int], groups: int) -> np.ndarray:
    """``dx (C, N, *S)`` from ``dy (O, N, *OS)``: ``w^T @ dy`` on the pixels read.

    >>> import numpy as np
    >>> data_grad(np.ones((1, 1, 2)), np.ones((1, 1, 1)), (1, 1, 3), (2,), 1).tolist()
    [[[1.0, 0.0, 1.0]]]
    """
    o, cg = w.shape[:2]
    og = o // groups
    nd = len(x_shape_cn) - 2
    dense = all(s == 1 for s in stride[:nd])
    dx = np.empty(tuple(x_shape_cn), dy_onos.dtype) if dense else \
        np.zeros(tuple(x_shape_cn), dy_onos.dtype)
    dy2 = dy_onos.reshape(o, -1)
    wm = w.reshape(o, cg)
    for gi in range(groups):
        part = wm[gi * og:(gi + 1) * og].T @ dy2[gi * og:(gi + 1) * og]
        target = dx[gi * cg:(gi + 1) * cg]
        target[_sub(stride, nd)] = part.reshape(cg, *dy_onos.shape[1:])
    return dx


def filter_grad(dy_onos: np.ndarray, x_cn: np.ndarray, stride: Sequence[int],
                groups: int) -> np.ndarray:
    """``dw (O, C/groups, 1...)``: ``dy @ x^T`` over the pixels read, per group.

    >>> import numpy as np
    >>> filter_grad(np.ones((1, 1, 2)), np.ones((2, 1, 3)), (2,), 1).tolist()
    [[[2.0], [2.0]]]
    """
    cols = _pixels(x_cn, stride)
    c = x_cn.shape[0]
    o = dy_onos.shape[0]
    cg, og = c // groups, o // groups
    dy2 = dy_onos.reshape(o, -1)
    dw = np.empty((o, cg), x_cn.dtype)
    for gi in range(groups):
        np.matmul(dy2[gi * og:(gi + 1) * og], cols[gi * cg:(gi + 1) * cg].T,
                  out=dw[gi * og:(gi + 1) * og])
    return dw.reshape(o, cg, *(1,) * (x_cn.ndim - 2))
