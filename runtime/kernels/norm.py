"""CPU kernels of the ops in tdflow/ops/norm.td (issue 13), in numpy.

* ``layer_norm(x, beta?, gamma?) -> (y, mean, inv_variance)``: statistics over the dims from
  ``begin_norm_axis`` on, ``mean``/``inv_variance`` of shape ``x.shape[:begin_norm_axis]``.
* ``normalization(x, moving_mean?, moving_variance?, gamma, beta, _add_to_output?)``: batch
  norm over every dim but ``axis``; in training the moving statistics are updated in place
  (``moving = moving * momentum + batch * (1 - momentum)``, the variance unbiased), as
  OneFlow's ``ComputeMeanAndVar`` does.
* ``group_norm(x, beta?, gamma?) -> (y, mean, inv_variance)``: statistics per sample and group
  of channels, ``[N, num_groups]``; optional ``silu`` activation.

Half-precision inputs compute (and return their statistics) in float32.

>>> import numpy as np
>>> x = np.array([[1.0, 3.0]])
>>> [a.tolist() for a in layer_norm({"begin_norm_axis": 1, "begin_params_axis": 1,
...     "epsilon": 0.0, "center": False, "scale": False}, [x], [None, None, None])]
[[[-1.0, 1.0]], [2.0], [1.0]]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.runtime.kernels._rows import native_rows_for
from tdflow.runtime.kernels._util import acc_dtype, operands
from tdflow.runtime.kernels.registry import register_kernel

DTYPES = ("f16", "f32", "f64")


def _put(outs: Sequence[Any], i: int, value: np.ndarray, dtype: Any) -> np.ndarray:
    out = outs[i] if i < len(outs) else None
    if out is None:
        return np.ascontiguousarray(value, dtype=dtype)
    np.copyto(out, value, casting="unsafe")
    return out


def _stats(xw: np.ndarray, axes: tuple[int, ...], eps: float) -> tuple[np.ndarray, ...]:
    """Mean, biased variance and ``1 / sqrt(var + eps)`` over ``axes`` (kept)."""
    mean = xw.mean(axis=axes, keepdims=True)
    xc = xw - mean
    var = np.mean(xc * xc, axis=axes, keepdims=True)
    inv = 1.0 / np.sqrt(var + xw.dtype.type(eps))
    return mean, xc, var, inv


@register_kernel("tdflow.layer_norm", "cpu", dtypes=DTYPES, num_outputs=3)
def layer_norm(attrs: Mapping[str, Any], inputs: Sequence[Any],
               outs: Sequence[Any]) -> list[np.ndarray]:
    """(x - mean) * inv_variance (* gamma) (+ beta) over the trailing dims."""
    x, beta, gamma = operands(inputs, attrs, 3)
    a = attrs["begin_norm_axis"]  # TDF_AxisAttr: non-negative, checked
    wide = acc_dtype(x.dtype)
    axes = tuple(range(a, x.ndim))
    out = outs[0] if outs else None
    done = _native_layer_norm(attrs, x, beta, gamma, a, outs)
    if done is not None:
        return done
    if (isinstance(out, np.ndarray) and out.dtype == wide and out.shape == x.shape
            and not any(np.shares_memory(out, v) for v in (x, beta, gamma) if v is not None)):
        # the same operations on the same values, in the output: no x - mean or y temporaries
        # and no final copy (two passes and two allocations of x's size fewer)
        xw = x.astype(wide, copy=False)
        mean = xw.mean(axis=axes, keepdims=True)
        y = np.subtract(xw, mean, out=out)
        var = np.mean(y * y, axis=axes, keepdims=True)
        inv = 1.0 / np.sqrt(var + xw.dtype.type(attrs["epsilon"]))
        y *= inv
    else:
        mean, xc, _, inv = _stats(x.astype(wide, copy=False), axes, attrs["epsilon"])
        y = xc * inv
    if attrs["scale"] and gamma is not None:
        y *= gamma.astype(wide, copy=False)
    if attrs["center"] and beta is not None:
        y += beta.astype(wide, copy=False)
    stat = x.shape[:a]
    return [y if y is out else _put(outs, 0, y, x.dtype), _put(outs, 1, mean.reshape(stat), wide),
            _put(outs, 2, inv.reshape(stat), wide)]


def _train_batch_norm(xw: np.ndarray, ax: int, eps: float, gamma: np.ndarray,
                      beta: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
    """Training batch norm of ``xw`` around channel axis ``ax`` into ``y`` (contiguous, of
    ``xw``'s shape and dtype): ``(mean, biased var, inv)`` per channel.

    The same two-pass statistics as :func:`_stats`, on the ``(outer, C, inner)`` view: the
    channel sums are einsums (no ``keepdims`` reduction over non-adjacent axes, 4-5x slower
    on ``(64, 32, 4, 4)``) and the centred values live in ``y`` itself, so no temporary of
    ``x``'s size is allocated (each one page-faults in fresh memory).

    >>> import numpy as np
    >>> y = np.empty((2, 1, 2))
    >>> [a.tolist() for a in _train_batch_norm(np.array([[[1.0, 3.0]], [[5.0, 7.0]]]), 1, 0.0,
    ...     np.ones(1), np.zeros(1), y)][:2], y.ravel().tolist()[0]
    ([[4.0], [5.0]], -1.3416407864998738)
    """
    c = xw.shape[ax]
    x3 = xw.reshape(int(np.prod(xw.shape[:ax])), c, int(np.prod(xw.shape[ax + 1:])))
    y3 = y.reshape(x3.shape)
    count = x3.shape[0] * x3.shape[2]
    mean = np.einsum("oci->c", x3) / xw.dtype.type(count)
    if not _center(y3.dtype)(x3, mean[:, None], y3):
        np.subtract(x3, mean[:, None], out=y3)
    var = np.einsum("oci,oci->c", y3, y3) / xw.dtype.type(count)
    inv = 1.0 / np.sqrt(var + xw.dtype.type(eps))
    _scale_shift(y3.dtype)([y3, (inv * gamma)[:, None], beta[:, None]], y3)
    return mean, var, inv


_scale_shifts: dict[np.dtype, Any] = {}


def _native_layer_norm(attrs: Mapping[str, Any], x: np.ndarray, beta: Any, gamma: Any, a: int,
                       outs: Sequence[Any]) -> list[np.ndarray] | None:
    """:func:`layer_norm` of a C-contiguous float32 ``x`` as one C pass per row
    (:mod:`tdflow.lowering.rows_native`: numpy's operations and summation order, so its
    values), into float32 outputs; ``None`` (numpy runs) for anything else or when the loop
    is not built. numpy's reductions over 128-number rows pay their iterator per row: a
    1024x128 launch took ~290 us.

    >>> x = np.array([[1.0, 3.0]], np.float32)
    >>> r = _native_layer_norm({"epsilon": 0.0, "scale": False, "center": False}, x, None,
    ...                        None, 1, [None, None, None])
    >>> r is None or [v.tolist() for v in r] == [[[-1.0, 1.0]], [2.0], [1.0]]
    True
    """
    if x.dtype != np.float32 or not x.flags.c_contiguous or not 0 < a < x.ndim or not x.size:
        return None
    run = native_rows_for(x.size)
    if run is None:
        return None
    stat, params = x.shape[:a], x.shape[a:]
    g = gamma if attrs["scale"] and gamma is not None else None
    b = beta if attrs["center"] and beta is not None else None
    for p in (g, b):
        if p is not None and (p.dtype != np.float32 or p.shape != params
                              or not p.flags.c_contiguous):
            return None
    got = []
    for i, shape in ((0, x.shape), (1, stat), (2, stat)):
        o = outs[i] if i < len(outs) else None
        if o is None:
            o = np.empty(shape, np.float32)
        elif (not isinstance(o, np.ndarray) or o.dtype != np.float32 or o.shape != shape
              or not o.flags.c_contiguous):
            return None
        got.append(o)
    n = x.size // got[1].size
    if not run(0, x, got[0], got[1], got[2], g, b, got[1].size, n, attrs["epsilon"]):
        return None
    return got


def _scale_shift(dt: np.dtype) -> Any:
    """``run([y, s, b], out)``: ``y * s + b`` with ``s``, ``b`` one value per channel, as the
    fused elementwise programs run it: one native pass over ``y`` (the channel loop) where
    there is one, else numpy's ``y *= s; y += b``; the same roundings either way.

    >>> y, s = np.ones((1, 2, 3), np.float32), np.full((2, 1), 2, np.float32)
    >>> _scale_shift(y.dtype)([y, s, np.ones((2, 1), np.float32)], y)[0, :, 0].tolist()
    [3.0, 3.0]
    """
    run = _scale_shifts.get(dt)
    if run is None:
        # imported on first use: a plan without batch norm does not load the renderer
        from tdflow.dialect.formula.text import parse_expr
        from tdflow.lowering.elementwise_numpy import render_numpy
        from tdflow.runtime.kernels import elementwise  # noqa: F401 - installs the native builder

        mlir = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}[np.dtype(dt)]
        run = _scale_shifts[dt] = render_numpy(parse_expr("add(mul(in0, in1), in2)"),
                                               [mlir] * 3).run
    return run


_centers: dict[np.dtype, Any] = {}


def _center(dt: np.dtype) -> Any:
    """``run(x3, mean, y3) -> bool``: ``y3 = x3 - mean`` over an ``(outer, C, inner)`` view,
    ``mean`` of shape ``(C, 1)``, on the native channel loop (numpy's broadcast subtract runs
    its inner loop once per ``inner`` numbers: 2-3x slower on the ResNet's activations), or
    ``False`` having done nothing (no native build, native off, a layout the loop refuses):
    the caller subtracts with numpy then, the same values.

    >>> x, y = np.ones((1, 2, 3), np.float32), np.empty((1, 2, 3), np.float32)
    >>> _center(x.dtype)(x, np.ones((2, 1), np.float32), y) in (True, False)
    True
    """
    run = _centers.get(dt)
    if run is None:
        from tdflow.dialect.formula.expr import Input
        from tdflow.lowering import elementwise_native
        from tdflow.runtime.kernels import elementwise  # noqa: F401 - installs the native builder

        mlir = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}[np.dtype(dt)]
        fn = elementwise_native.native_kernel(Input(0) - Input(1), [mlir] * 2, mlir,
                                              cols=frozenset({1}))

        def run(x3: np.ndarray, mean: np.ndarray, y3: np.ndarray) -> bool:
            return (fn is not None and elementwise_native.USE_NATIVE
                    and bool(fn(x3, mean, y3, x3.shape[2] or 1)))

        if fn is not None or elementwise_native.builder_installed():
            _centers[dt] = run  # a None before the builder is installed is not final
    return run


@register_kernel("tdflow.normalization", "cpu", dtypes=DTYPES, num_outputs=3)
def normalization(attrs: Mapping[str, Any], inputs: Sequence[Any],
                  outs: Sequence[Any]) -> list[np.ndarray]:
    """Batch norm; training updates moving_mean/moving_variance (operands 1, 2) in place."""
    x, mm, mv, gamma, beta, add = operands(inputs, attrs, 6)
    ax = attrs["axis"]  # TDF_AxisAttr: non-negative, checked
    others = tuple(i for i in range(x.ndim) if i != ax)
    bshape = tuple(x.shape[ax] if i == ax else 1 for i in range(x.ndim))
    wide = acc_dtype(x.dtype)
    xw = x.astype(wide, copy=False)
    eps = float(attrs["epsilon"])
    gw, bw = gamma.astype(wide, copy=False), beta.astype(wide, copy=False)
    out0 = outs[0] if outs else None
    if attrs["training"] and x.size:
        # straight into the output buffer when it is one of the compute type
        y = out0 if (out0 is not None and out0.dtype == wide and out0.flags.c_contiguous) \
            else np.empty(x.shape, wide)
        mean, var, inv = _train_batch_norm(xw, ax, eps, gw.reshape(-1), bw.reshape(-1), y)
        mean, var, inv = mean.reshape(bshape), var.reshape(bshape), inv.reshape(bshape)
    elif attrs["training"]:
        mean, xc, var, inv = _stats(xw, others, eps)
        y = xc * (inv * gw.reshape(bshape)) + bw.reshape(bshape)
    else:
        mean = mm.astype(wide, copy=False).reshape(bshape)
        inv = 1.0 / np.sqrt(mv.astype(wide, copy=False).reshape(bshape) + wide.type(eps))
        y = (xw - mean) * (inv * gw.reshape(bshape))
        y += bw.reshape(bshape)
    if attrs["training"] and mm is not None and mv is not None:
        count = x.size // max(x.shape[ax], 1)
        unbiased = var * (count / (count - 1)) if count > 1 else var
        m = wide.type(attrs["momentum"])
        mm[...] = mm * m + mean.reshape(-1) * (1 - m)
        mv[...] = mv * m + unbiased.reshape(-1) * (1 - m)
    if add is not None:
        y += add
    res = [y if y is out0 else _put(outs, 0, y, x.dtype)]
    if len(outs) != 1:  # an IR op without the optional results has one output buffer
        res += [_put(outs, 1, mean.reshape(-1), x.dtype), _put(outs, 2, inv.reshape(-1), x.dtype)]
    return res


@register_kernel("tdflow.group_norm", "cpu", dtypes=DTYPES, num_outputs=3)
def group_norm(attrs: Mapping[str, Any], inputs: Sequence[Any],
               outs: Sequence[Any]) -> list[np.ndarray]:
    """Normalize each sample's channel group, then gamma/beta per channel and the activation."""
    x, beta, gamma = operands(inputs, attrs, 3)
    last = attrs["data_format"] == "channels_last"
    xf = np.moveaxis(x, -1, 1) if last else x  # [N, C, ...]
    n, c = xf.shape[0], xf.shape[1]
    groups = int(attrs["num_groups"])
    wide = acc_dtype(x.dtype)
    # the group size spelt out: -1 is ambiguous for an empty batch (a rank's empty split)
    xg = xf.astype(wide, copy=False).reshape(n, groups, (c // groups) * int(np.prod(xf.shape[2:])))
    mean, xc, _, inv = _stats(xg, (2,), attrs["epsilon"])
    y = (xc * inv).reshape(xf.shape)
    if attrs["affine"]:
        pshape = (1, c) + (1,) * (xf.ndim - 2)
        y = y * gamma.astype(wide, copy=False).reshape(pshape) + beta.astype(
            wide, copy=False).reshape(pshape)
    if attrs["activation"] == "silu":
        y = y / (1.0 + np.exp(-y))
    if last:
        y = np.moveaxis(y, 1, -1)
    return [_put(outs, 0, y, x.dtype), _put(outs, 1, mean.reshape(n, groups), wide),
            _put(outs, 2, inv.reshape(n, groups), wide)]
