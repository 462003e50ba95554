"""Which convolution algorithm runs: the choice the three conv kernels make before im2col.

``runtime/kernels/conv.py``'s kernels call :func:`forward`, :func:`data_grad` and
:func:`filter_grad` first; ``None`` means "no faster path for this shape: use im2col". The
paths, measured against im2col on the ResNet example's layers by ``bench/conv_bench.py``:

- unpadded 1x1 kernels (any stride): plain GEMMs on the pixels (``_conv_pointwise``);
- 2-D 3x3 kernels at stride 1, dilation 1, one group: Winograd F(2x2, 3x3)
  (``_conv_winograd``; all three kernels, the data gradient as the forward on ``dy`` with the
  flipped, transposed filters) when the operands are finite and not near overflow
  (:func:`_conv_winograd.safe`), the tiles waste at most :data:`MAX_TILE_WASTE` outputs and
  the channels reach :data:`MIN_WINOGRAD_CHANNELS` (``C`` for the forward, ``O`` for the data
  gradient, both for the filter gradient), and the forward has at least :data:`MIN_WINOGRAD_PIXELS`
  output pixels (batch-1 inference on small images keeps im2col's one GEMM);
- other 2-D layers with a stride above 1, one group: one GEMM per kernel tap on pixels-outermost
  layouts (``_conv_taps``, the same products as im2col, so no finiteness condition), the forward
  from :data:`MIN_TAPS_PIXELS` output pixels and :data:`MIN_TAPS_CHANNELS` input channels;
- stride 1 (any kernel, dilation, groups, dimensions): the flat-shift columns on the padded grid
  (``_conv_flat``), when the grid holds at most :data:`MAX_GRID_WASTE` positions per output
  (:data:`MAX_GRID_WASTE_FORWARD` for the forward);
  the data gradient is the same correlation of ``dy`` (padded by ``dil * (K - 1) - pad``) with
  the flipped, transposed filters (im2col's scatter-add of 9 strided slabs was more than a
  quarter of the ResNet step's CPU time). The filter gradient keeps im2col (:data:`FLAT_FILTER_GRAD`).

Floating types only (f16 computes in f32 like im2col); integer convolutions and empty tensors
keep im2col. Results agree with im2col to rounding: each element sums the same products in
another order (Winograd: after its transforms' few adds), so
``|new - old| <= tol * max|conv(|x|, |w|)|`` with ``tol`` 1e-5 for f32 (f16 the same before its
final rounding) and 1e-12 for f64 (``tests/runtime/test_conv_algos.py``).
NaN and inf propagate as in im2col: the paths that would multiply an operand by a structural
zero that im2col never forms (the filters in the data gradient, the input in the filter
gradient) are taken only when that operand is finite.

Set :data:`ENABLED` to ``False`` to run im2col everywhere (the benchmarks' "before" column).

>>> import numpy as np
>>> class Geo:
...     pad, stride, dil, groups = (0, 0), (1, 1), (1, 1), 1
>>> x = np.ones((1, 2, 3, 3)); w = np.ones((4, 2, 1, 1))
>>> forward(Geo(), x, w, (1, 1), (3, 3)).shape
(4, 1, 3, 3)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import numpy as np
from tdflow.runtime.kernels import _conv_flat as flat
from tdflow.runtime.kernels import _conv_pointwise as pointwise
from tdflow.runtime.kernels import _conv_taps as taps
from tdflow.runtime.kernels import _conv_winograd as winograd

#: the new paths on (True) or im2col everywhere (False)
ENABLED = True
#: the flat path computes every position of the padded grid: past this many per output
#: (3x3 on 2x2 images pads to 4x4 = 4), im2col's copies cost less than the wasted matmul work
MAX_GRID_WASTE = 3.0
#: the forward's stricter limit: against im2col's plain copies (not its data gradient's
#: scatter-add) the 4x4 layers' 2.25 measured 4-7% slower, the 8x8 layers' 1.56 15% faster
MAX_GRID_WASTE_FORWARD = 2.0
#: the flat forward (data gradient: input and output) needs this many channels per group to
#: beat im2col (measured: the ResNet stem's 1 channel is slower, 16 faster)
MIN_FLAT_CHANNELS = 8
#: the flat filter gradient (one GEMM per tap on shifted views; an earlier version copied
#: columns): measured 0.97-1.04x of im2col's time on the ResNet layers, its GEMMs running
#: over the whole padded grid, so off; kept selectable for the benchmark and tests
FLAT_FILTER_GRAD = False
#: Winograd F(2x2, 3x3) for the 3x3 stride-1 layers (False: flat/im2col as before)
WINOGRAD = True
#: odd output sizes compute a tile row/column past the outputs (3x3 outputs need 4x4: 1.78
#: outputs computed per output, 7.1 products each against a direct 9, plus the transforms);
#: not measured beyond the ResNet's even sizes, so the limit is kept below that
MAX_TILE_WASTE = 1.5
#: the per-tap GEMMs on pixels-outermost layouts (``_conv_taps``) for strided 2-D layers
TAPS = True
#: channels the Winograd path needs (the forward's input channels, the smaller of the two
#: counts for the gradients): the ResNet stem's 1 channel measured 2-4x slower (a GEMM with
#: K = 1 and transforms for nothing), 2 channels 0.8x, 4 mixed (0.86-1.22x), 8 0.8-0.95x
MIN_WINOGRAD_CHANNELS = {"forward": 8, "data_grad": 8, "filter_grad": 8}
#: output pixels (``N * OH * OW``) the Winograd forward needs: its filter transform is
#: ``16 * C * O`` numbers whatever the image (kept across calls for a plan's constant weights,
#: ``_conv_winograd.packed_filter``), so on few pixels im2col's one GEMM wins. ONNX ResNet-50
#: at batch 1, thread CPU, Winograd (with the transform kept) against im2col: 512->512 on 7x7,
#: 49 pixels, 10.7 (4.2-4.6) vs 3.2-4.6 ms; 256->256 on 14x14, 196 pixels, 2.9-4.4 (2.2-2.8)
#: vs 2.6-3.6 ms; 128->128 on 28x28, 1.9-2.6 (1.9-2.0) vs 2.6-3.3 ms. The limit does not ask
#: whether the weights are constant, so eager and compiled calls take the same path (the same
#: bits); an eager batch-1 call on 196 pixels pays the transform (~10% over im2col there).
#: The gradients keep no limit (not measured below the training ResNet's 1024-4096 pixels,
#: which all take Winograd).
MIN_WINOGRAD_PIXELS = 192
#: output pixels the flat forward needs (stride 1, taken where Winograd is not): ResNet-50 at
#: batch 1, 512->512 3x3 on 7x7 (49 pixels) 5.5 vs im2col's 3.6 ms, 256->256 on 14x14 (196)
#: 3.1 vs 2.8 ms
MIN_FLAT_PIXELS = 512
#: output pixels the per-tap forward needs: with few of them its 9+ GEMMs of ``pixels``
#: rows run far below one im2col GEMM (ResNet-50 at batch 1: 512->512 14x14 stride 2, 49
#: pixels, 8.5 vs 3.7 ms; 128->128 56x56 stride 2, 784 pixels, 3.3 vs 2.9 ms); the training
#: ResNet's 16->32 stride-2 layer (1024 pixels) measured 0.73x of im2col on taps
MIN_TAPS_PIXELS = 1024
#: input channels per group the per-tap forward needs: each tap's GEMM has ``K = C``, and the
#: ResNet-50 stem's 3 channels (7x7 stride 2, 12544 pixels) took 17.4 ms there against
#: im2col's 4.5 ms (one GEMM with ``K = 3 * 49``)
MIN_TAPS_CHANNELS = 8


class Geometry(Protocol):
    """What the choice reads of ``conv.ConvGeometry``."""

    pad: tuple[int, ...]
    stride: tuple[int, ...]
    dil: tuple[int, ...]
    groups: int

    def padded_cn(self, x_cf: np.ndarray) -> np.ndarray: ...


def _eligible(*arrays: np.ndarray) -> bool:
    return ENABLED and all(a.dtype.kind == "f" and a.size for a in arrays)


def _is_pointwise(geo: Geometry, k: Sequence[int]) -> bool:
    return all(kk == 1 for kk in k) and not any(geo.pad)


def _stride1(geo: Geometry) -> bool:
    return all(s == 1 for s in geo.stride)


def _finite(a: np.ndarray) -> bool:
    # one pass without a boolean temporary; an overflowing finite sum only costs the fast path
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.isfinite(a.sum()))


def _winograd(geo: Geometry, k: Sequence[int], out_sp: Sequence[int], kind: str,
              channels: int, *operands: np.ndarray) -> bool:
    """Whether the Winograd path computes this convolution (the operands checked last: a
    pass over each)."""
    return (WINOGRAD and len(k) == 2 and tuple(k) == (3, 3) and _stride1(geo)
            and all(d == 1 for d in geo.dil) and geo.groups == 1
            and channels >= MIN_WINOGRAD_CHANNELS[kind]
            and winograd.tile_waste(tuple(out_sp)) <= MAX_TILE_WASTE
            and winograd.safe(*operands))


def _taps(geo: Geometry, k: Sequence[int]) -> bool:
    """Whether the per-tap path computes this (strided, 2-D, one group) convolution."""
    return TAPS and len(k) == 2 and geo.groups == 1 and not _stride1(geo)


def _pixels(x_cf: np.ndarray, out_sp: Sequence[int]) -> int:
    return x_cf.shape[0] * math.prod(out_sp)


def _own(res: np.ndarray, out_sp: Sequence[int]) -> np.ndarray:
    """A Winograd result is a view of per-thread scratch, which the caller's layout move
    and store copy out; with a single output pixel that view can be contiguous in the op's
    layout (``store`` would keep it): copy it then."""
    return res.copy() if math.prod(out_sp) == 1 else res


def forward(geo: Geometry, x_cf: np.ndarray, w_cf: np.ndarray, k: Sequence[int],
            out_sp: Sequence[int]) -> np.ndarray | None:
    """``(O, N, *OS)`` of ``x (N, C, *S)`` and ``w (O, C/groups, *K)`` (maybe a strided
    view of a private array), or ``None``.

    >>> import numpy as np
    >>> class Geo:
    ...     pad, stride, dil, groups = (1,), (2,), (1,), 1
    >>> forward(Geo(), np.ones((1, 1, 4)), np.ones((1, 1, 3)), (3,), (2,)) is None
    True
    """
    if not _eligible(x_cf, w_cf):
        return None
    if _is_pointwise(geo, k):
        res = pointwise.forward(np.moveaxis(x_cf, 1, 0), w_cf, geo.stride, geo.groups)
        return res.reshape(w_cf.shape[0], x_cf.shape[0], *out_sp)
    pixels = _pixels(x_cf, out_sp)
    if pixels >= MIN_WINOGRAD_PIXELS and _winograd(geo, k, out_sp, "forward", x_cf.shape[1],
                                                   x_cf, w_cf):
        res = winograd.correlate(x_cf, w_cf, (geo.pad[0], geo.pad[1]))
        return _own(np.moveaxis(res, 1, 0), out_sp)
    if pixels >= MIN_TAPS_PIXELS and w_cf.shape[1] >= MIN_TAPS_CHANNELS and _taps(geo, k):
        res = taps.correlate(x_cf, w_cf, geo.pad, geo.stride, geo.dil)
        return _own(np.moveaxis(res, 1, 0), out_sp)
    padded = [s + 2 * p for s, p in zip(x_cf.shape[2:], geo.pad)]
    if (_stride1(geo) and w_cf.shape[1] >= MIN_FLAT_CHANNELS and pixels >= MIN_FLAT_PIXELS
            and flat.grid_waste(padded, out_sp) <= MAX_GRID_WASTE_FORWARD):
        return flat.correlate(geo.padded_cn(x_cf), w_cf, geo.dil, geo.groups)
    return None


def pointwise_into(geo: Geometry, x_cf: np.ndarray, w_cf: np.ndarray, k: Sequence[int],
                   out: np.ndarray) -> bool:
    """Write an unpadded stride-1 1x1 convolution of one group into ``out (O, N * S)`` (the
    caller's output buffer, where :func:`forward` would return a new array); whether it did.

    >>> import numpy as np
    >>> class Geo:
    ...     pad, stride, dil, groups = (0, 0), (1, 1), (1, 1), 1
    >>> out = np.empty((4, 9))
    >>> pointwise_into(Geo(), np.ones((1, 2, 3, 3)), np.ones((4, 2, 1, 1)), (1, 1), out), out.tolist()[0][0]
    (True, 2.0)
    """
    if (not _eligible(x_cf, w_cf) or not _is_pointwise(geo, k) or not _stride1(geo)
            or geo.groups != 1):
        return False
    pointwise.forward(np.moveaxis(x_cf, 1, 0), w_cf, geo.stride, 1, out=out)
    return True


def data_grad(geo: Geometry, dy_onos: np.ndarray, w_cf: np.ndarray,
              x_shape_cf: Sequence[int], k: Sequence[int]) -> np.ndarray | None:
    """``dx`` as ``(C, N, *S)`` (maybe a strided view) from ``dy (O, N, *OS)``, or ``None``.

    >>> import numpy as np
    >>> class Geo:
    ...     pad, stride, dil, groups = (1,), (1,), (1,), 1
    >>> data_grad(Geo(), np.ones((8, 1, 3)), np.ones((8, 8, 3)), (1, 8, 3), (3,))[0].tolist()
    [[16.0, 24.0, 16.0]]
    """
    if not _eligible(dy_onos, w_cf):
        return None
    n, c, *spatial = x_shape_cf
    if _is_pointwise(geo, k):
        return pointwise.data_grad(dy_onos, w_cf, (c, n, *spatial), geo.stride, geo.groups)
    back = [d * (kk - 1) - p for d, kk, p in zip(geo.dil, k, geo.pad)]
    if min(back) >= 0 and _winograd(geo, k, spatial, "data_grad", min(dy_onos.shape[0], c),
                                    dy_onos, w_cf):
        res = winograd.correlate(np.moveaxis(dy_onos, 0, 1), flat.flipped_transposed(w_cf, 1),
                                 (back[0], back[1]))
        return _own(np.moveaxis(res, 1, 0), spatial)
    if _taps(geo, k):
        res = taps.data_grad(np.moveaxis(dy_onos, 0, 1), w_cf, spatial, geo.pad, geo.stride,
                             geo.dil)
        return _own(np.moveaxis(res, 1, 0), spatial)
    # both channel counts: the columns copy O/groups channels, im2col's scatter C/groups
    if (not _stride1(geo) or min(back) < 0 or not _finite(w_cf)
            or min(dy_onos.shape[0], c) // geo.groups < MIN_FLAT_CHANNELS):
        return None
    grid = [s + 2 * b for s, b in zip(dy_onos.shape[2:], back)]
    if flat.grid_waste(grid, spatial) > MAX_GRID_WASTE:
        return None
    dyp = np.zeros((*dy_onos.shape[:2], *grid), dy_onos.dtype)
    dyp[(slice(None), slice(None), *(slice(b, b + s) for b, s in
                                     zip(back, dy_onos.shape[2:])))] = dy_onos
    return flat.correlate(dyp, flat.flipped_transposed(w_cf, geo.groups), geo.dil, geo.groups)


def filter_grad(geo: Geometry, dy_onos: np.ndarray, x_cf: np.ndarray,
                k: Sequence[int]) -> np.ndarray | None:
    """``dw (O, C/groups, *K)`` from ``dy (O, N, *OS)`` and ``x (N, C, *S)``, or ``None``.

    >>> import numpy as np
    >>> class Geo:
    ...     pad, stride, dil, groups = (0,), (1,), (1,), 1
    >>> filter_grad(Geo(), np.ones((1, 1, 3)), np.ones((1, 1, 3)), (1,)).tolist()
    [[[3.0]]]
    """
    if not _eligible(dy_onos, x_cf):
        return None
    if _is_pointwise(geo, k):
        return pointwise.filter_grad(dy_onos, np.moveaxis(x_cf, 1, 0), geo.stride, geo.groups)
    if _winograd(geo, k, dy_onos.shape[2:], "filter_grad",
                 min(dy_onos.shape[0], x_cf.shape[1]), x_cf, dy_onos):
        return winograd.filter_grad(x_cf, np.moveaxis(dy_onos, 0, 1), (geo.pad[0], geo.pad[1]))
    if _taps(geo, k):
        return taps.filter_grad(x_cf, np.moveaxis(dy_onos, 0, 1), k, geo.pad, geo.stride,
                                geo.dil)
    padded = [s + 2 * p for s, p in zip(x_cf.shape[2:], geo.pad)]
    if (not FLAT_FILTER_GRAD or not _stride1(geo)
            or min(dy_onos.shape[0], x_cf.shape[1]) // geo.groups < MIN_FLAT_CHANNELS
            or flat.grid_waste(padded, dy_onos.shape[2:]) > MAX_GRID_WASTE):
        return None
    xp = geo.padded_cn(x_cf)
    if not _finite(xp):
        return None
    return flat.filter_grad(xp, dy_onos, k, geo.dil, geo.groups)
