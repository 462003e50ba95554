"""CPU kernels of the ops in tdflow/ops/train.td (issue 13).

* ``reduce_min`` / ``reduce_prod`` over ``axis`` (empty: every axis), as ``reduce_max`` /
  ``reduce_sum``; ``reduce_min`` of an empty extent is the type's largest value, ``reduce_prod``
  of one is 1 (half types multiply in f32).
* ``avg_pool_2d`` (and grad): PyTorch's and OneFlow's average pooling. Zero padding;
  the divisor is ``divisor_override`` when non-zero, else the window clipped to the padded
  input (``count_include_pad``) or to the input (otherwise).
* ``adaptive_avg_pool2d`` (and grad): cell ``i`` of ``out`` covers input
  ``[floor(i * in / out), ceil((i + 1) * in / out))``.
* ``softmax_cross_entropy`` (and grad) with soft targets.
* ``adam_update``: OneFlow's AdamUpdateFunctor, in place (see the op's description).

>>> import numpy as np
>>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
>>> avg_pool_2d({"kernel_size": [2, 2], "stride": [2, 2], "padding": [0, 0],
...              "data_format": "channels_first"}, [x], [None])[0].tolist()
[[[[2.5, 4.5], [10.5, 12.5]]]]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.runtime.kernels._util import (
    ALL_DTYPES,
    FLOATS,
    NUMERIC,
    acc_dtype,
    norm_axes,
    operands,
    store,
)
from tdflow.runtime.kernels.conv import channels_last
from tdflow.runtime.kernels.pool import pair, pool_out_size
from tdflow.runtime.kernels.registry import register_kernel, same_dtype


# -- reductions -----------------------------------------------------------------------------------
def _axes(attrs: Mapping[str, Any], ndim: int) -> tuple[int, ...]:
    axis = attrs.get("axis", ())
    if isinstance(axis, int):
        axis = [axis]
    return norm_axes(axis, ndim) if len(axis) else tuple(range(ndim))


def _highest(dt: np.dtype) -> Any:
    if dt.kind == "f":
        return np.inf
    if dt.kind == "b":
        return True
    return np.iinfo(dt).max


@register_kernel("tdflow.reduce_min", "cpu", dtypes=ALL_DTYPES)
def reduce_min(attrs: Mapping[str, Any], inputs: Sequence[Any],
               outs: Sequence[Any]) -> list[np.ndarray]:
    """Minimum over ``axis`` (all axes when empty); NaN propagates as in numpy."""
    x = inputs[0]
    r = np.min(x, axis=_axes(attrs, x.ndim), keepdims=bool(attrs.get("keepdims", False)),
               initial=_highest(x.dtype))
    return [store(outs, np.asarray(r), x.dtype)]


@register_kernel("tdflow.reduce_prod", "cpu", dtypes=NUMERIC)
def reduce_prod(attrs: Mapping[str, Any], inputs: Sequence[Any],
                outs: Sequence[Any]) -> list[np.ndarray]:
    """Product over ``axis`` (all axes when empty); integers wrap in their own type."""
    x = inputs[0]
    r = np.prod(x, axis=_axes(attrs, x.ndim), keepdims=bool(attrs.get("keepdims", False)),
                dtype=acc_dtype(x.dtype))
    return [store(outs, np.asarray(r), x.dtype)]


# -- pooling --------------------------------------------------------------------------------------
def _wide(dt: np.dtype) -> np.dtype:
    """Half types (f16, bf16) pool in f32."""
    return np.dtype(np.float32) if dt.itemsize < 4 else dt


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
        self.k = pair(attrs, "kernel_size", 1, "avg_pool_2d")
        self.s = pair(attrs, "stride", 0, "avg_pool_2d")
        if self.s == (0, 0):
            self.s = self.k
        self.p = pair(attrs, "padding", 0, "avg_pool_2d")
        for kk, pp in zip(self.k, self.p):
            if pp > kk // 2:
                raise ValueError(f"avg_pool_2d: padding {list(self.p)} must be at most half the "
                                 f"kernel size {list(self.k)}")
        ceil = bool(attrs.get("ceil_mode", False))
        self.hw = (h, w)
        self.out = tuple(pool_out_size(n, k, p, s, 1, ceil)
                         for n, k, p, s in zip(self.hw, self.k, self.p, self.s))
        override = int(attrs.get("divisor_override", 0) or 0)
        include = bool(attrs.get("count_include_pad", False))
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
    wide = _wide(x.dtype)
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
    wide = _wide(x.dtype)
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
    wide = _wide(x.dtype)
    xw = x_cf.astype(wide, copy=False)
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
    wide = _wide(x.dtype)
    dx = np.zeros(x_cf.shape, wide)
    oh, ow = dy_cf.shape[2:]
    cols = _cells(x_cf.shape[3], ow)
    for i, (r0, r1) in enumerate(_cells(x_cf.shape[2], oh)):
        for j, (c0, c1) in enumerate(cols):
            share = dy_cf[:, :, i, j].astype(wide) / wide.type((r1 - r0) * (c1 - c0))
            dx[:, :, r0:r1, c0:c1] += share[:, :, None, None]
    return [_store_cf(outs, dx, last, x.dtype)]


# -- softmax_cross_entropy ------------------------------------------------------------------------
@register_kernel("tdflow.softmax_cross_entropy", "cpu", dtypes=FLOATS, match=same_dtype(1),
                 num_outputs=2)
def softmax_cross_entropy(attrs: Mapping[str, Any], inputs: Sequence[Any],
                          outs: Sequence[Any]) -> list[np.ndarray]:
    """prob = softmax(prediction); out = -sum(label * log_softmax(prediction), -1)."""
    pred, label = inputs[0], inputs[1]
    wide = _wide(pred.dtype)
    z = pred.astype(wide) - np.max(pred, axis=-1, keepdims=True).astype(wide)
    e = np.exp(z)
    s = np.sum(e, axis=-1, keepdims=True)
    logp = z - np.log(s)
    loss = -np.sum(label.astype(wide) * logp, axis=-1)
    prob_out = outs[0] if outs else None
    loss_out = outs[1] if len(outs) > 1 else None
    return [store([prob_out], e / s, pred.dtype), store([loss_out], loss, pred.dtype)]


@register_kernel("tdflow.softmax_cross_entropy_grad", "cpu", dtypes=FLOATS, match=same_dtype(1, 2))
def softmax_cross_entropy_grad(attrs: Mapping[str, Any], inputs: Sequence[Any],
                               outs: Sequence[Any]) -> list[np.ndarray]:
    """prediction_diff = (prob - label) * dy[..., None]."""
    dy, label, prob = inputs[0], inputs[1], inputs[2]
    wide = _wide(prob.dtype)
    diff = (prob.astype(wide) - label.astype(wide)) * dy.astype(wide)[..., None]
    return [store(outs, diff, prob.dtype)]


# -- adam_update ----------------------------------------------------------------------------------
def _scalar(t: Any) -> float | None:
    return None if t is None else float(np.asarray(t).reshape(-1)[0])


def _f32(attrs: Mapping[str, Any], name: str, default: float) -> float:
    """An f32 attribute (eager calls and compiled programs both pass it rounded to float32,
    as the IR holds it: attr_kinds.as_stored); ``default`` only for a direct kernel call."""
    return float(attrs.get(name, default))


@register_kernel("tdflow.adam_update", "cpu", dtypes=FLOATS, match=same_dtype(1), num_outputs=0)
def adam_update(attrs: Mapping[str, Any], inputs: Sequence[Any],
                outs: Sequence[Any]) -> list[np.ndarray]:
    """OneFlow's AdamUpdateFunctor, in place on model, m, v (and max_v, model_copy).

    >>> w, m, v = np.ones(2), np.zeros(2), np.zeros(2)
    >>> adam_update({"learning_rate_val": 0.1, "bias_correction1_val": 0.1,
    ...              "bias_correction2_val": 0.001},
    ...             [w, np.array([1.0, -1.0]), None, None, None, None, None, None, m, v], [])
    []
    >>> w.round(5).tolist(), m.round(5).tolist()   # the first step moves by lr (f32 attrs)
    ([0.9, 1.1], [0.1, -0.1])
    """
    (model, diff, model_copy, lr_t, scale_t, skip_t, bc1_t, bc2_t, m, v,
     max_v) = operands(inputs, attrs, 11)
    if skip_t is not None and _scalar(skip_t) != 0:
        return []
    lr = _scalar(lr_t)
    lr = _f32(attrs, "learning_rate_val", 0.0) if lr is None else lr
    lr *= _f32(attrs, "learning_rate_scale", 1.0)
    scale = float(attrs.get("scale", 1.0))
    if scale_t is not None:
        scale *= _scalar(scale_t)  # type: ignore[operator]
    if attrs.get("do_bias_correction", True):
        bc1 = _scalar(bc1_t)
        bc1 = _f32(attrs, "bias_correction1_val", 1.0) if bc1 is None else bc1
        bc2 = _scalar(bc2_t)
        bc2 = _f32(attrs, "bias_correction2_val", 1.0) if bc2 is None else bc2
    else:
        bc1 = bc2 = 1.0
    amsgrad = bool(attrs.get("amsgrad", False))
    if amsgrad and max_v is None:
        raise ValueError("adam_update: amsgrad = true needs the 'max_v' operand")
    l1, l2 = _f32(attrs, "l1", 0.0), _f32(attrs, "l2", 0.0)
    beta1, beta2 = _f32(attrs, "beta1", 0.9), _f32(attrs, "beta2", 0.999)
    eps, wd = _f32(attrs, "epsilon", 0.0), _f32(attrs, "weight_decay", 0.0)
    wide = _wide(model.dtype)
    c = wide.type
    w = model.astype(wide)
    g = diff.astype(wide) * c(scale)
    if l1:
        g += c(l1) * np.sign(w)
    if l2:
        g += c(l2) * w
    new_m = c(beta1) * m.astype(wide) + c(1.0 - beta1) * g
    new_v = c(beta2) * v.astype(wide) + c(1.0 - beta2) * g * g
    np.copyto(m, new_m, casting="unsafe")
    np.copyto(v, new_v, casting="unsafe")
    if amsgrad:
        new_v = np.maximum(max_v.astype(wide), new_v)
        np.copyto(max_v, new_v, casting="unsafe")
    denom = np.sqrt(new_v) / c(np.sqrt(bc2)) + c(eps)
    step = c(lr / bc1) * (new_m / denom)
    if wd:
        step += c(lr * wd) * w
    np.copyto(model, w - step, casting="unsafe")
    if model_copy is not None:
        np.copyto(model_copy, model, casting="unsafe")
    return []
