"""Stride-1 convolution on the flattened padded grid ("flat-shift" im2col).

At stride 1, the window of output ``p`` starts at the same position ``p`` of the padded input
grid ``(N, *SP)``; flattened, kernel tap ``t`` reads the input at ``p + off(t)``, one constant
offset per tap. So the columns of all outputs *on the whole padded grid* for tap ``t`` are the
contiguous slice ``x_flat[:, off(t) : off(t) + M]`` of the ``(C, N * prod(SP))`` input: the
columns are built with one contiguous copy per tap (or none for a 1x1 kernel), then one BLAS
matmul per group computes every grid position, and the valid outputs are cropped out. The
classic im2col copies rows of ``OW`` elements per tap and channel instead, which on small images
(8x8, 4x4) costs more than the matmul. The price is the matmul's work on grid positions that
are not outputs (``prod(SP) / prod(OS)``: 1.56x at 8x8 padded by 1); :func:`grid_waste` lets the
caller refuse shapes where that costs more than it saves.

Every output element is the sum of exactly the terms im2col sums (in another order), so the
results agree to rounding; the filter gradient also multiplies grid positions that are not
outputs by a zero ``dy``, which is why the caller checks that the input is finite first
(``0 * inf`` would be NaN).

>>> import numpy as np
>>> xp = np.arange(16.0).reshape(1, 1, 4, 4)  # (C, N, *SP), already padded
>>> w = np.ones((1, 1, 2, 2))
>>> correlate(xp, w, (1, 1), 1)[0, 0, 0].tolist()
[10.0, 14.0, 18.0]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def grid_waste(padded: Sequence[int], out_sp: Sequence[int]) -> float:
    """How many grid positions the flat matmul computes per output (``>= 1``).

    >>> grid_waste((10, 10), (8, 8))
    1.5625
    """
    return math.prod(padded) / max(1, math.prod(out_sp))


def _offsets(sp: Sequence[int], k: Sequence[int], dil: Sequence[int]) -> list[int]:
    """Flat offset of each kernel tap (C order over the taps) in a grid of shape ``sp``."""
    strides = [math.prod(sp[i + 1:]) for i in range(len(sp))]
    offs = [0]
    for kk, d, st in zip(k, dil, strides):
        offs = [o + j * d * st for o in offs for j in range(kk)]
    return offs


def _flat_cols(xf: np.ndarray, offs: Sequence[int], m: int) -> np.ndarray:
    """Columns ``(T * C, m)`` of the flat input ``(C, P)``: one contiguous copy per tap."""
    if len(offs) == 1:
        return xf[:, offs[0]:offs[0] + m]
    c = xf.shape[0]
    cols = np.empty((len(offs), c, m), xf.dtype)
    for t, off in enumerate(offs):
        cols[t] = xf[:, off:off + m]
    return cols.reshape(len(offs) * c, m)


def _taps_last(w: np.ndarray) -> np.ndarray:
    """``(O, Cg, *K)`` filters as ``(O, T * Cg)`` in the columns' (tap, channel) order."""
    o, cg = w.shape[:2]
    return np.moveaxis(w.reshape(o, cg, -1), 1, 2).reshape(o, -1)


def correlate(xp_cn: np.ndarray, w: np.ndarray, dil: Sequence[int], groups: int) -> np.ndarray:
    """Stride-1 correlation of the padded input ``(C, N, *SP)`` with ``w (O, C/groups, *K)``,
    as an ``(O, N, *OS)`` view with ``OS = SP - dil * (K - 1)``.

    >>> import numpy as np
    >>> correlate(np.ones((2, 1, 3)), np.ones((1, 2, 2)), (1,), 1).tolist()
    [[[4.0, 4.0]]]
    """
    c, n, *sp = xp_cn.shape
    k = w.shape[2:]
    o, cg = w.shape[0], w.shape[1]
    og = o // groups
    out_sp = [s - d * (kk - 1) for s, d, kk in zip(sp, dil, k)]
    offs = _offsets(sp, k, dil)
    p = n * math.prod(sp)
    m = p - offs[-1]  # grid positions whose whole window lies inside the grid
    xf = np.ascontiguousarray(xp_cn).reshape(c, p)
    wm = _taps_last(w)
    grid = np.empty((o, p), xp_cn.dtype)  # the tail past m is never an output: left unset
    for gi in range(groups):
        cols = _flat_cols(xf[gi * cg:(gi + 1) * cg], offs, m)
        np.matmul(wm[gi * og:(gi + 1) * og], cols, out=grid[gi * og:(gi + 1) * og, :m])
    # a view: the caller's one copy into the op's layout also drops the grid's extra positions
    return grid.reshape(o, n, *sp)[(slice(None), slice(None), *(slice(0, s) for s in out_sp))]


def filter_grad(xp_cn: np.ndarray, dy_onos: np.ndarray, k: Sequence[int], dil: Sequence[int],
                groups: int) -> np.ndarray:
    """Filter gradient ``(O, C/groups, *K)`` of a stride-1 correlation of the padded input
    ``(C, N, *SP)`` whose output gradient is ``dy (O, N, *OS)``: ``dy`` is laid on the grid
    (zeros elsewhere), then one GEMM per tap and group, ``dw[:, :, t] = dy_grid @ x_t^T``, on
    the shifted view ``x_t`` of the input (no columns copied). ``xp_cn`` must be finite.

    >>> import numpy as np
    >>> filter_grad(np.ones((1, 1, 3)), np.ones((1, 1, 2)), (2,), (1,), 1).tolist()
    [[[2.0, 2.0]]]
    """
    c, n, *sp = xp_cn.shape
    o = dy_onos.shape[0]
    cg, og = c // groups, o // groups
    offs = _offsets(sp, k, dil)
    p = n * math.prod(sp)
    m = p - offs[-1]
    xf = np.ascontiguousarray(xp_cn).reshape(c, p)
    dyg = np.zeros((o, n, *sp), dy_onos.dtype)
    dyg[(slice(None), slice(None), *(slice(0, s) for s in dy_onos.shape[2:]))] = dy_onos
    dyf = dyg.reshape(o, p)[:, :m]
    dw = np.empty((len(offs), o, cg), xp_cn.dtype)
    for gi in range(groups):
        rows, chans = slice(gi * og, (gi + 1) * og), slice(gi * cg, (gi + 1) * cg)
        for t, off in enumerate(offs):
            np.matmul(dyf[rows], xf[chans, off:off + m].T, out=dw[t, rows])
    return np.moveaxis(dw, 0, -1).reshape(o, cg, *k)


def flipped_transposed(w: np.ndarray, groups: int) -> np.ndarray:
    """The filters of the data gradient as a correlation: ``(C, O/groups, *K)``, each group's
    input and output channels swapped and every spatial axis reversed.

    >>> import numpy as np
    >>> flipped_transposed(np.arange(4.0).reshape(2, 1, 2), 1).tolist()
    [[[1.0, 0.0], [3.0, 2.0]]]
    """
    o, cg, *k = w.shape
    og = o // groups
    wg = w.reshape(groups, og, cg, *k)
    flip = (slice(None),) * 3 + (slice(None, None, -1),) * len(k)
    return np.ascontiguousarray(np.swapaxes(wg[flip], 1, 2)).reshape(groups * cg, og, *k)
