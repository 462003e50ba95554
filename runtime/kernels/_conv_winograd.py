"""Winograd F(2x2, 3x3): 2-D 3x3 stride-1 convolutions and their filter gradients.

Each 2x2 block of outputs (a *tile*) is computed from the 4x4 input patch ``d`` under it as
``Y = A^T [(G g G^T) * (B^T d B)] A`` (Lavin & Gray, 2015): the 9 multiplications per output
of a direct 3x3 correlation become 4 (16 products per 4 outputs), and the products of all
tiles and channels are 16 independent GEMMs, one per position of the 4x4 transformed tile:
``M[p] = V[p] (tiles x C) @ U[p] (C x O)``. The transforms are a few whole-array adds and
subtracts on strided views (no per-tile Python loop); the filter transform ``U`` is computed
once per call (the weights change every training step, and it is ``16 * O * C`` numbers).

The filter gradient is the transpose of the same linear map: ``dM = A dY A^T`` per tile,
``dU[p] = dM[p]^T (O x tiles) @ V[p] (tiles x C)`` (16 GEMMs) and ``dg = G^T dU G``. The data
gradient is the forward on ``dy`` with the flipped, transposed filters
(``_conv_flat.flipped_transposed``).

Exact in exact arithmetic; in floating point it rounds differently from a direct sum (the
transforms add and halve before multiplying): tested within ``1e-5`` (f32) / ``1e-12`` (f64)
of the largest entry of the same convolution of absolute values against im2col and a float64
reference (``tests/runtime/test_conv_algos.py``; measured 3e-7 / 6e-16). The transforms mix the 4x4 patch, so one inf
would meet ``-inf`` (NaN where a direct sum gives inf): the caller takes this path only for
finite operands whose magnitude cannot overflow in the transforms (:func:`safe`).

Layouts: activations ``(N, C, H, W)`` (any strides: a channels-last array's view too),
filters ``(O, C, 3, 3)``; one group. Inside, pixels are outermost (``(H, W, N * C)``), so the
transforms' numpy loops run along rows of ``N * C`` numbers.

>>> import numpy as np
>>> x = np.arange(16.0).reshape(1, 1, 4, 4)
>>> correlate(x, np.ones((1, 1, 3, 3)), (0, 0))[0, 0].tolist()
[[45.0, 54.0], [81.0, 90.0]]
"""

from __future__ import annotations

import math
import weakref

import numpy as np
from tdflow.lowering import winograd_native
from tdflow.runtime.kernels import elementwise as _installs_the_builder  # noqa: F401 - set_builder at import
from tdflow.runtime.kernels._conv_scratch import scratch, zero_outside
from tdflow.runtime.kernels._util import is_constant

#: G of F(2x2, 3x3): the filter transform ``U = G g G^T``
G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
#: ``U = G g G^T`` on the 9 flattened taps: ``U[a * 4 + b] = GG[a * 4 + b] @ g.ravel()``
GG = np.kron(G, G)


def safe(*arrays: np.ndarray) -> bool:
    """Whether every operand is finite and at most ``max / 64`` in magnitude, so the transforms
    (which grow inputs up to 4x, filters 2.25x, products 4x) do not overflow where a direct
    sum would not (a NaN fails too).

    >>> import numpy as np
    >>> safe(np.ones(3)), safe(np.array([1.0, np.inf])), safe(np.array([1e38], np.float32))
    (True, False, False)
    """
    for a in arrays:
        limit = float(np.finfo(a.dtype).max) / 64
        # max and min propagate NaN; two passes without a temporary (no abs copy)
        if not (-limit < float(a.min()) and float(a.max()) < limit):
            return False
    return True


def _tiles(out: int) -> int:
    return (out + 1) // 2


#: extra elements per pixel row of the result: a row of ``N * O`` floats is often a multiple
#: of 4 KiB (64 * 16 * 4 bytes), and the final copy into ``(N, O, H, W)`` then reads with a
#: 4 KiB stride, which maps every read to one cache set (measured 5.7x slower)
PITCH = 16


def _hw_nc(x_nc: np.ndarray, pad: tuple[int, int], th: int, tw: int) -> np.ndarray:
    """``x (N, C, H, W)`` zero-padded to the ``(2 * th + 2, 2 * tw + 2, N * C)`` grid the tiles
    cover (beyond ``pad`` at the bottom/right when an output size is odd): pixels outermost,
    so every transform below runs along rows of ``N * C`` contiguous numbers (on 8x8 images
    an ``(N, C, H, W)`` layout gives numpy inner loops of 2-10 elements: 3-4x slower)."""
    n, c, h, w = x_nc.shape
    ph, pw = pad
    xp = scratch("xp", (2 * th + 2, 2 * tw + 2, n, c), x_nc.dtype)
    # rows/cols past the grid (a pad larger than the tiles need) are never read
    hh, ww = min(h, 2 * th + 2 - ph), min(w, 2 * tw + 2 - pw)
    zero_outside(xp, ph, pw, hh, ww)
    xp[ph:ph + hh, pw:pw + ww] = x_nc[:, :, :hh, :ww].transpose(2, 3, 0, 1)
    return xp.reshape(2 * th + 2, 2 * tw + 2, n * c)


def input_transform(x_nc: np.ndarray, pad: tuple[int, int], out_hw: tuple[int, int]
                    ) -> np.ndarray:
    """``V = B^T d B`` of every tile of ``x (N, C, H, W)``, as ``(16, th * tw * N, C)``: one
    ``(tiles, C)`` matrix per position in the transformed tile.

    >>> import numpy as np
    >>> input_transform(np.ones((1, 1, 4, 4)), (0, 0), (2, 2))[:, 0, 0].tolist()[:6]
    [0.0, 0.0, 0.0, 0.0, 0.0, 4.0]
    """
    n, c = x_nc.shape[:2]
    th, tw = _tiles(out_hw[0]), _tiles(out_hw[1])
    xp = _hw_nc(x_nc, pad, th, tw)
    if xp.dtype == np.float32:
        v = scratch("v", (4, 4, th, tw, n * c), xp.dtype)
        run = winograd_native.native_transforms()
        # the same adds in one C pass (bit for bit); False or no compiler: numpy below
        if run is not None and run(0, xp, v, th, tw, n * c, 0):
            return v.reshape(16, th * tw * n, c)
    # rows: B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]] on rows 2i..2i+3
    r = [xp[k:k + 2 * th:2] for k in range(4)]
    rows = scratch("rows", (4, th, xp.shape[1], n * c), xp.dtype)
    np.subtract(r[0], r[2], out=rows[0])
    np.add(r[1], r[2], out=rows[1])
    np.subtract(r[2], r[1], out=rows[2])
    np.subtract(r[1], r[3], out=rows[3])
    # columns, the 4 row transforms at once
    v = scratch("v", (4, 4, th, tw, n * c), xp.dtype)
    col = [rows[:, :, k:k + 2 * tw:2] for k in range(4)]
    np.subtract(col[0], col[2], out=v[:, 0])
    np.add(col[1], col[2], out=v[:, 1])
    np.subtract(col[2], col[1], out=v[:, 2])
    np.subtract(col[1], col[3], out=v[:, 3])
    return v.reshape(16, th * tw * n, c)


#: transformed filters of a plan's constant weights (``_util.is_constant``), by the weight's
#: id: ``(weak reference to the weight, U)``; an entry leaves with its weight
_PACKED: dict[int, tuple[weakref.ref, np.ndarray]] = {}


def packed_filter(w: np.ndarray) -> np.ndarray:
    """:func:`filter_transform` of ``w``, kept across calls when ``w`` is a constant operand
    of a loaded plan (inference weights): the transform is ``16 * C * O`` numbers, 1 ms per
    call on ResNet-50's 256-channel layers, whatever the image size. The same numbers as a
    fresh transform.

    >>> import numpy as np
    >>> w = np.ones((1, 1, 3, 3)); packed_filter(w).tolist() == filter_transform(w).tolist()
    True
    """
    if not is_constant(w):
        return filter_transform(w)
    key = id(w)
    hit = _PACKED.get(key)
    if hit is not None and hit[0]() is w:
        return hit[1]
    u = filter_transform(w)
    u.flags.writeable = False
    _PACKED[key] = (weakref.ref(w, lambda _, key=key: _PACKED.pop(key, None)), u)
    return u


def filter_transform(w: np.ndarray) -> np.ndarray:
    """``U = G g G^T`` of ``w (O, C, 3, 3)`` as ``(16, C, O)``: one small GEMM (an einsum's
    path search cost more than the transform).

    >>> import numpy as np
    >>> filter_transform(np.ones((1, 1, 3, 3)))[:, 0, 0].reshape(4, 4)[1].tolist()
    [1.5, 2.25, 0.75, 1.5]
    """
    o, c = w.shape[:2]
    taps = w.transpose(1, 0, 2, 3).reshape(c * o, 9)
    return (GG.astype(w.dtype) @ taps.T).reshape(16, c, o)


def output_transform(m: np.ndarray, n: int, out_hw: tuple[int, int]) -> np.ndarray:
    """``Y = A^T M A`` of the products ``(16, th * tw * N, O)``, as an ``(N, O, OH, OW)`` view
    (of a pixels-outermost array).

    >>> import numpy as np
    >>> output_transform(np.ones((16, 1, 1)), 1, (2, 2))[0, 0].tolist()
    [[9.0, -3.0], [-3.0, 1.0]]
    """
    th, tw = _tiles(out_hw[0]), _tiles(out_hw[1])
    no = n * m.shape[2]
    mm = m.reshape(4, 4, th, tw, no)
    y = scratch("y", (th, 2, tw, 2, no + PITCH), m.dtype)
    run = winograd_native.native_transforms() if m.dtype == np.float32 else None
    # the same adds in one C pass (bit for bit); False or no compiler: numpy below
    if run is None or not run(1, np.ascontiguousarray(mm), y, th, tw, no, PITCH):
        _output_numpy(mm, y, th, tw, no)
    y4 = y.reshape(2 * th, 2 * tw, no + PITCH)[:out_hw[0], :out_hw[1], :no]
    return y4.reshape(*out_hw, n, -1).transpose(2, 3, 0, 1)


def _output_numpy(mm: np.ndarray, y: np.ndarray, th: int, tw: int, no: int) -> None:
    """``A^T M A`` of ``mm (4, 4, th, tw, no)`` into ``y (th, 2, tw, 2, no + PITCH)``."""
    # rows: A^T = [[1, 1, 1, 0], [0, 1, -1, -1]]
    p = scratch("p", (2, 4, th, tw, no), mm.dtype)
    np.add(mm[0], mm[1], out=p[0])
    p[0] += mm[2]
    np.subtract(mm[1], mm[2], out=p[1])
    p[1] -= mm[3]
    yv = y[..., :no].transpose(1, 3, 0, 2, 4)  # (r, s, th, tw, N * O): each tile's outputs
    np.add(p[:, 0], p[:, 1], out=yv[:, 0])
    yv[:, 0] += p[:, 2]
    np.subtract(p[:, 1], p[:, 2], out=yv[:, 1])
    yv[:, 1] -= p[:, 3]


def out_size(hw: tuple[int, ...], pad: tuple[int, int]) -> tuple[int, int]:
    """Output size of a 3x3 stride-1 correlation.

    >>> out_size((8, 8), (1, 1))
    (8, 8)
    """
    return hw[0] + 2 * pad[0] - 2, hw[1] + 2 * pad[1] - 2


def correlate(x_nc: np.ndarray, w: np.ndarray, pad: tuple[int, int]) -> np.ndarray:
    """3x3 stride-1 correlation of ``x (N, C, H, W)`` (any strides; padded by ``pad`` on each
    side) with ``w (O, C, 3, 3)``: ``(N, O, OH, OW)``, a view of a private array.

    >>> import numpy as np
    >>> correlate(np.ones((1, 2, 3, 3)), np.ones((1, 2, 3, 3)), (1, 1))[0, 0].tolist()
    [[8.0, 12.0, 8.0], [12.0, 18.0, 12.0], [8.0, 12.0, 8.0]]
    """
    out_hw = out_size(x_nc.shape[2:], pad)
    v = input_transform(x_nc, pad, out_hw)
    u = packed_filter(w)
    m = scratch("m", (16, v.shape[1], u.shape[2]), v.dtype)
    if u.shape[1] == 1:  # one channel: an outer product (BLAS with K = 1 was 10x slower)
        np.multiply(v, u, out=m)
    else:
        np.matmul(v, u, out=m)  # 16 GEMMs (tiles x C) @ (C x O)
    return output_transform(m, x_nc.shape[0], out_hw)


def filter_grad(x_nc: np.ndarray, dy_nc: np.ndarray, pad: tuple[int, int]) -> np.ndarray:
    """``dw (O, C, 3, 3)`` of the correlation above, from ``x (N, C, H, W)`` and
    ``dy (N, O, OH, OW)`` (any strides).

    >>> import numpy as np
    >>> filter_grad(np.ones((1, 1, 3, 3)), np.ones((1, 1, 3, 3)), (1, 1))[0, 0].tolist()
    [[4.0, 6.0, 4.0], [6.0, 9.0, 6.0], [4.0, 6.0, 4.0]]
    """
    n, o, oh, ow = dy_nc.shape
    th, tw = _tiles(oh), _tiles(ow)
    v = input_transform(x_nc, pad, (oh, ow))
    # dy pixels outermost, zero on the tiles' outputs past the real ones (odd sizes)
    d = scratch("d", (th, 2, tw, 2, n, o), v.dtype)
    if oh % 2 or ow % 2:
        d.fill(0)
    d.reshape(2 * th, 2 * tw, n, o)[:oh, :ow] = dy_nc.transpose(2, 3, 0, 1)
    d = d.reshape(th, 2, tw, 2, n * o)
    dm = scratch("dm", (4, 4, th, tw, n * o), v.dtype)
    run = winograd_native.native_transforms() if v.dtype == np.float32 else None
    # the same adds in one C pass (bit for bit); False or no compiler: numpy
    if run is None or not run(2, d, dm, th, tw, n * o, 0):
        _dm_numpy(d, dm)
    du = np.matmul(dm.reshape(16, -1, o).transpose(0, 2, 1), v)  # 16 GEMMs: (16, O, C)
    # dg = G^T dU G on the flattened taps
    dg = GG.T.astype(v.dtype) @ du.reshape(16, -1)
    return np.ascontiguousarray(dg.reshape(3, 3, o, -1).transpose(2, 3, 0, 1))


def _dm_numpy(d: np.ndarray, dm: np.ndarray) -> None:
    """``dM = A dY A^T`` of ``d (th, 2, tw, 2, N * O)`` into ``dm (4, 4, th, tw, N * O)``."""
    th, _, tw, _, no = d.shape
    # dM = A dY A^T, A = [[1, 0], [1, 1], [1, -1], [0, -1]]: first over the rows r ...
    q = scratch("q", (4, th, tw, 2, no), d.dtype)  # (a, th, tw, s, N * O)
    q[0] = d[:, 0]
    np.add(d[:, 0], d[:, 1], out=q[1])
    np.subtract(d[:, 0], d[:, 1], out=q[2])
    np.negative(d[:, 1], out=q[3])
    # ... then over the columns s, the 4 rows at once
    dm[:, 0] = q[:, :, :, 0]
    np.add(q[:, :, :, 0], q[:, :, :, 1], out=dm[:, 1])
    np.subtract(q[:, :, :, 0], q[:, :, :, 1], out=dm[:, 2])
    np.negative(q[:, :, :, 1], out=dm[:, 3])


def tile_waste(out_hw: tuple[int, int]) -> float:
    """Outputs the tiles compute per real output (``>= 1``; odd sizes waste a row/column).

    >>> tile_waste((3, 4))
    1.3333333333333333
    """
    return 4 * _tiles(out_hw[0]) * _tiles(out_hw[1]) / max(1, math.prod(out_hw))
