"""The softmax family and its losses (all over the last axis, as OneFlow).

* ``softmax(in) -> out``, ``log_softmax(in) -> prob`` (max-subtracted, so large logits are safe);
  ``softmax_grad(y, dy) -> dx = y * (dy - sum(dy * y))``.
* ``sparse_softmax_cross_entropy(prediction, label; depth) -> (prob, out)``: ``prob`` is the
  softmax over the last axis (``depth`` classes), ``out = -log_softmax[label]`` per row. As in
  OneFlow's kernel, a label outside ``[0, depth)`` contributes a loss of 0 and no one-hot term
  in the gradient. ``..._grad(label, dy, prob) -> (prob - onehot(label)) * dy``.
* ``sparse_softmax_cross_entropy_with_grad(prediction, label, dy; depth) -> (out,
  prediction_diff)``: the two above in one launch (made by ``fuse-elementwise``), the same bits.
* ``softmax_cross_entropy`` (and grad) with soft targets (``label`` a distribution).

>>> import numpy as np
>>> softmax({}, [np.zeros((1, 4), np.float32)], [None])[0].tolist()
[[0.25, 0.25, 0.25, 0.25]]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.runtime.kernels._rows import native_rows_for
from tdflow.runtime.kernels._util import (
    FLOATS,
    INTS,
    acc_dtype,
    store,
    wide_float,
)
from tdflow.runtime.kernels.registry import input_dtype_in, register_kernel, same_dtype

# The reductions the bound kernels call: ``ndarray.max``/``sum`` call these very ufunc
# reductions through a Python wrapper (numpy/_core/_methods.py), ~0.3 us a call on 64x10.
_MAX = np.maximum.reduce
_SUM = np.add.reduce
_U64 = np.dtype(np.uint64)


def _shifted(x: np.ndarray) -> np.ndarray:
    """``x - max(x)`` along the last axis, in the accumulation type (a new array)."""
    w = x.astype(acc_dtype(x.dtype), copy=True)
    if w.shape[-1:] != (0,) and w.size:
        w -= w.max(axis=-1, keepdims=True)
    return w


def _store(value: np.ndarray, outs: Sequence[Any], i: int, dt: np.dtype) -> np.ndarray:
    out = outs[i] if i < len(outs) else None
    if out is None:
        return value if value.dtype == dt else value.astype(dt)
    np.copyto(out, value, casting="unsafe")
    return out


def _work_buffer(x: np.ndarray, outs: Sequence[Any]) -> tuple[np.ndarray, np.ndarray | None]:
    """Where to compute: the output itself when it has the accumulation type."""
    out = outs[0] if outs else None
    wide = acc_dtype(x.dtype)
    if out is not None and out.dtype == wide:
        return out, out
    return np.empty(x.shape, wide), out


def _subtract_max(x: np.ndarray, buf: np.ndarray) -> None:
    """buf = x - max(x, last axis) (buf may be x itself: the max is taken first)."""
    if x.size and x.shape[-1]:
        np.subtract(x, x.max(axis=-1, keepdims=True), out=buf, casting="unsafe")


@register_kernel("tdflow.softmax", "cpu", dtypes=FLOATS, inplace={0: 0})
def softmax(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """exp(x - max) / sum(exp(x - max)) over the last axis."""
    x = inputs[0]
    buf, out = _work_buffer(x, outs)
    _subtract_max(x, buf)
    np.exp(buf, out=buf)
    buf /= buf.sum(axis=-1, keepdims=True)
    return [buf if buf is out else _store(buf, outs, 0, x.dtype)]


def _bind_softmax(attrs: Mapping[str, Any], ins: Sequence[Any], outs: Sequence[Any],
                  dead: frozenset[int] = frozenset()) -> Any:
    """``softmax`` for one launch of a compiled plan (the executor's ``bind``): an output of
    the input's f32/f64 type, at least one element per row: the general path's three steps
    in the output, the checks made once."""
    (shape, dt), (out_shape, out_dt) = ins[0], outs[0]
    if (not shape or not shape[-1] or 0 in shape or dt != out_dt or acc_dtype(dt) != dt
            or tuple(out_shape) != tuple(shape)):
        return None

    n = shape[-1]
    rows = math.prod(shape) // n
    # small launches keep numpy (a few us either way): no C module to build or load for them
    native = native_rows_for(rows * n) if dt == np.float32 else None

    def run(_attrs: Any, inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
        x, buf = inputs[0], outs[0]
        # the max and the sum as C row loops (numpy's reductions pay their iterator per
        # 64-number row): the same values, see tdflow.lowering.rows_native; exp is numpy's
        if (native is not None and x.flags.c_contiguous and buf.flags.c_contiguous
                and native(1, x, buf, rows, n)):
            np.exp(buf, out=buf)
            if native(2, buf, rows, n):
                return outs
            np.divide(buf, _SUM(buf, -1, None, None, True), out=buf)
            return outs
        np.subtract(x, _MAX(x, -1, None, None, True), out=buf)  # one type: no casting rule
        np.exp(buf, out=buf)
        np.divide(buf, _SUM(buf, -1, None, None, True), out=buf)
        return outs

    return run


softmax.bind = _bind_softmax  # type: ignore[attr-defined]


@register_kernel("tdflow.log_softmax", "cpu", dtypes=FLOATS, inplace={0: 0})
def log_softmax(attrs: Mapping[str, Any], inputs: Sequence[Any],
                outs: Sequence[Any]) -> list[np.ndarray]:
    """x - max - log(sum(exp(x - max))) over the last axis."""
    x = inputs[0]
    buf, out = _work_buffer(x, outs)
    _subtract_max(x, buf)
    buf -= np.log(np.exp(buf).sum(axis=-1, keepdims=True))
    return [buf if buf is out else _store(buf, outs, 0, x.dtype)]


@register_kernel("tdflow.softmax_grad", "cpu", dtypes=FLOATS, match=same_dtype(1),
                 inplace={0: 1})
def softmax_grad(attrs: Mapping[str, Any], inputs: Sequence[Any],
                 outs: Sequence[Any]) -> list[np.ndarray]:
    """dx = y * (dy - sum(dy * y, last axis))."""
    y, dy = inputs[0], inputs[1]
    wide = acc_dtype(y.dtype)
    yw, dyw = y.astype(wide, copy=False), dy.astype(wide, copy=False)
    dot = np.einsum("...i,...i->...", yw, dyw)[..., None] if y.ndim else yw * dyw
    out = outs[0] if outs else None
    if (isinstance(out, np.ndarray) and out.dtype == wide and out.shape == y.shape and y.ndim
            and not np.shares_memory(out, y)):
        # in the output (which may be dy itself: each element is read before it is written):
        # the same two operations, no temporaries and no final copy
        np.subtract(dyw, dot, out=out)
        np.multiply(yw, out, out=out)
        return [out]
    dx = yw * (dyw - dot)
    return [_store(dx, outs, 0, y.dtype)]


_LABELS = INTS | {"i1"}


@register_kernel("tdflow.sparse_softmax_cross_entropy", "cpu", dtypes=FLOATS,
                 match=input_dtype_in(1, _LABELS), num_outputs=2)
def sparse_softmax_cross_entropy(attrs: Mapping[str, Any], inputs: Sequence[Any],
                                 outs: Sequence[Any]) -> list[np.ndarray]:
    """prob = softmax(prediction); out = -log(prob[label]) per row."""
    x, label = inputs[0], inputs[1]
    depth = int(attrs["depth"]) or x.shape[-1]
    if x.shape[-1] != depth:
        raise ValueError(f"sparse_softmax_cross_entropy: prediction has {x.shape[-1]} classes "
                         f"in its last dim, depth is {depth}")
    if label.shape != x.shape[:-1]:
        raise ValueError(f"sparse_softmax_cross_entropy: label shape {label.shape} must be "
                         f"prediction's without the last dim {x.shape[:-1]}")
    logp = _shifted(x)
    logp -= np.log(np.exp(logp).sum(axis=-1, keepdims=True))
    lab = label.astype(np.int64, copy=False)
    if x.ndim == 2 and (lab.size == 0 or (lab.min() >= 0 and lab.max() < depth)):
        # every label in range (the training loop's case): one fancy index, no masks
        loss = np.negative(logp[np.arange(x.shape[0]), lab])
        prob = np.exp(logp, out=logp)
        return [_store(prob, outs, 0, x.dtype), _store(loss, outs, 1, x.dtype)]
    valid = (lab >= 0) & (lab < depth)
    picked = np.take_along_axis(logp, np.where(valid, lab, 0)[..., None], axis=-1)[..., 0]
    loss = np.where(valid, -picked, 0).astype(logp.dtype)
    prob = np.exp(logp, out=logp)
    return [_store(prob, outs, 0, x.dtype), _store(loss, outs, 1, x.dtype)]


@register_kernel("tdflow.sparse_softmax_cross_entropy_grad", "cpu", dtypes=_LABELS,
                 match=input_dtype_in(1, FLOATS) & input_dtype_in(2, FLOATS))
def sparse_softmax_cross_entropy_grad(attrs: Mapping[str, Any], inputs: Sequence[Any],
                                      outs: Sequence[Any]) -> list[np.ndarray]:
    """prediction_diff = (prob - onehot(label, depth)) * dy[..., None]."""
    label, dy, prob = inputs[0], inputs[1], inputs[2]
    depth = int(attrs["depth"]) or prob.shape[-1]
    wide = acc_dtype(prob.dtype)
    g = prob.astype(wide, copy=True)
    lab = label.astype(np.int64, copy=False)
    if g.ndim == 2 and (lab.size == 0 or (lab.min() >= 0 and lab.max() < depth)):
        g[np.arange(g.shape[0]), lab] -= 1  # every label in range: one fancy index
        g *= dy.astype(wide, copy=False)[:, None]
        return [_store(g, outs, 0, prob.dtype)]
    valid = (lab >= 0) & (lab < depth)
    idx = np.where(valid, lab, 0)[..., None]
    hit = np.take_along_axis(g, idx, axis=-1)
    np.put_along_axis(g, idx, hit - valid[..., None], axis=-1)
    g *= dy.astype(wide, copy=False)[..., None]
    return [_store(g, outs, 0, prob.dtype)]


def _labels_in_range(lab: np.ndarray, depth: int) -> bool:
    """Every label in ``[0, depth)``: one pass for int64 labels (a negative one is a huge
    unsigned one), ``min`` and ``max`` otherwise."""
    if lab.dtype == np.int64:
        return lab.size == 0 or int(lab.view(np.uint64).max()) < depth
    return lab.size == 0 or (lab.min() >= 0 and lab.max() < depth)


def _checked_labels(dt: np.dtype, n: int, depth: int) -> Any:
    """``labels -> int64 labels, or None`` when one is outside ``[0, depth)``: what the bound
    launches index with, for ``n`` labels of type ``dt``. Non-empty int64 labels are
    checked with one unsigned max (no conversion, no method wrapper)."""
    if dt == np.int64 and n:
        return lambda lab: lab if _MAX(lab.view(_U64)) < depth else None

    def other(lab: np.ndarray) -> np.ndarray | None:
        lab = lab.astype(np.int64, copy=False)
        return lab if _labels_in_range(lab, depth) else None

    return other


def _bind_sce(attrs: Mapping[str, Any], ins: Sequence[Any], outs: Sequence[Any],
              dead: frozenset[int] = frozenset()) -> Any:
    """``sparse_softmax_cross_entropy`` for one launch of a compiled plan (the executor's
    ``bind``): 2-D f32/f64 predictions, every label in range (checked per call, else the
    general path runs): the general path's arithmetic computed in the ``prob`` output
    itself, no copies in and out.

    >>> f4, i8 = np.dtype("f4"), np.dtype("i8")
    >>> run = _bind_sce({"depth": 2}, [((1, 2), f4), ((1,), i8)], [((1, 2), f4), ((1,), f4)])
    >>> prob, loss = run({}, [np.zeros((1, 2), np.float32), np.array([1])],
    ...                  [np.empty((1, 2), np.float32), np.empty(1, np.float32)])
    >>> prob.tolist(), round(float(loss[0]), 4)
    ([[0.5, 0.5]], 0.6931)
    """
    (xs, dt), (ls, _) = ins[0], ins[1]
    depth = int(attrs["depth"]) or (xs[-1] if xs else 0)
    if (len(xs) != 2 or dt.kind != "f" or acc_dtype(dt) != dt or xs[1] != depth or not xs[0]
            or not depth or tuple(ls) != (xs[0],) or len(outs) != 2
            or any(o != (tuple(s), dt) for o, s in zip(outs, (xs, ls)))):
        return None
    rows = np.arange(xs[0])
    general = sparse_softmax_cross_entropy
    labels = _checked_labels(ins[1][1], xs[0], depth)

    def run(attrs: Any, inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
        x, lab = inputs[0], labels(inputs[1])
        if lab is None:
            return general(attrs, inputs, outs)
        logp = outs[0]
        np.subtract(x, _MAX(x, -1, None, None, True), out=logp)
        np.subtract(logp, np.log(_SUM(np.exp(logp), -1, None, None, True)), out=logp)
        np.negative(logp[rows, lab], out=outs[1])
        np.exp(logp, out=logp)
        return outs  # filled in place (the executor skips its check of the results)

    return run


sparse_softmax_cross_entropy.bind = _bind_sce  # type: ignore[attr-defined]


def _bind_sce_grad(attrs: Mapping[str, Any], ins: Sequence[Any], outs: Sequence[Any],
                   dead: frozenset[int] = frozenset()) -> Any:
    """``sparse_softmax_cross_entropy_grad`` for one launch of a compiled plan (the
    executor's ``bind``): 2-D f32/f64 ``prob``, labels in range (checked per call): the
    general path's arithmetic in the output buffer."""
    (ls, _), (ds, ddt), (ps, dt) = ins[0], ins[1], ins[2]
    depth = int(attrs["depth"]) or (ps[-1] if ps else 0)
    if (len(ps) != 2 or dt.kind != "f" or acc_dtype(dt) != dt or ddt != dt
            or tuple(ls) != (ps[0],) or tuple(ds) != (ps[0],) or len(outs) != 1
            or outs[0] != (tuple(ps), dt)):
        return None
    rows = np.arange(ps[0])
    general = sparse_softmax_cross_entropy_grad
    labels = _checked_labels(ins[0][1], ps[0], depth)

    def run(attrs: Any, inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
        dy, prob, g = inputs[1], inputs[2], outs[0]
        lab = labels(inputs[0])
        if g is prob or g is dy or lab is None:
            return general(attrs, inputs, outs)
        np.copyto(g, prob)
        g[rows, lab] -= 1
        g *= dy[:, None]
        return outs

    return run


sparse_softmax_cross_entropy_grad.bind = _bind_sce_grad  # type: ignore[attr-defined]


# -- sparse_softmax_cross_entropy_with_grad ------------------------------------------------------
@register_kernel("tdflow.sparse_softmax_cross_entropy_with_grad", "cpu", dtypes=FLOATS,
                 match=input_dtype_in(1, _LABELS) & input_dtype_in(2, FLOATS), num_outputs=2)
def sparse_softmax_cross_entropy_with_grad(attrs: Mapping[str, Any], inputs: Sequence[Any],
                                           outs: Sequence[Any]) -> list[np.ndarray]:
    """``(out, prediction_diff)``: the loss of ``sparse_softmax_cross_entropy`` and
    ``sparse_softmax_cross_entropy_grad(label, dy, prob)`` of its softmax, by those very
    kernels (prob in the prediction's type between them, as the two launches stored it).

    >>> out, dp = sparse_softmax_cross_entropy_with_grad(
    ...     {"depth": 2}, [np.zeros((1, 2), np.float32), np.array([1]),
    ...                    np.ones(1, np.float32)], [None, None])
    >>> round(float(out[0]), 4), dp.tolist()
    (0.6931, [[0.5, -0.5]])
    """
    x, label, dy = inputs[0], inputs[1], inputs[2]
    loss_out = outs[0] if outs else None
    prob, loss = sparse_softmax_cross_entropy(attrs, [x, label], [None, loss_out])
    diff_out = outs[1] if len(outs) > 1 else None
    return [loss, sparse_softmax_cross_entropy_grad(attrs, [label, dy, prob], [diff_out])[0]]


def _bind_sce_with_grad(attrs: Mapping[str, Any], ins: Sequence[Any], outs: Sequence[Any],
                        dead: frozenset[int] = frozenset()) -> Any:
    """``sparse_softmax_cross_entropy_with_grad`` for one launch of a compiled plan: 2-D
    f32/f64 predictions, every label in range (checked once per call, else the general path
    runs): the bound loss's arithmetic with ``prediction_diff`` as its ``prob`` buffer, then
    the bound gradient's in that buffer, without its copy of ``prob``.

    >>> f4, i8 = np.dtype("f4"), np.dtype("i8")
    >>> run = _bind_sce_with_grad({"depth": 2}, [((1, 2), f4), ((1,), i8), ((1,), f4)],
    ...                           [((1,), f4), ((1, 2), f4)])
    >>> out, dp = run({}, [np.zeros((1, 2), np.float32), np.array([0]), np.full(1, 2, np.float32)],
    ...               [np.empty(1, np.float32), np.empty((1, 2), np.float32)])
    >>> dp.tolist()
    [[-1.0, 1.0]]
    """
    (xs, dt), (ls, _), (ds, ddt) = ins[0], ins[1], ins[2]
    depth = int(attrs["depth"]) or (xs[-1] if xs else 0)
    if (len(xs) != 2 or dt.kind != "f" or acc_dtype(dt) != dt or xs[1] != depth or not xs[0]
            or not depth or tuple(ls) != (xs[0],) or tuple(ds) != (xs[0],) or ddt != dt
            or len(outs) != 2 or outs[0] != ((xs[0],), dt) or outs[1] != (tuple(xs), dt)):
        return None
    # each row's label as a flat index: a 1-D fancy index costs ~1 us less than (rows, lab)
    # twice (the same elements); the scratch is this launch's, and a plan runs one call at a time
    starts = np.arange(xs[0], dtype=np.int64) * depth
    flat = np.empty(xs[0], np.int64)
    general = sparse_softmax_cross_entropy_with_grad
    labels = _checked_labels(ins[1][1], xs[0], depth)

    def run(attrs: Any, inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
        x, dy, g = inputs[0], inputs[2], outs[1]
        lab = labels(inputs[1])
        if lab is None or g is x or g is dy or not g.flags.c_contiguous:
            return general(attrs, inputs, outs)
        np.subtract(x, _MAX(x, -1, None, None, True), out=g)
        np.subtract(g, np.log(_SUM(np.exp(g), -1, None, None, True)), out=g)
        np.add(starts, lab, out=flat)
        gf = g.reshape(-1)  # a view: g is contiguous
        np.negative(gf[flat], out=outs[0])
        np.exp(g, out=g)  # prob, as the loss's launch left it
        gf[flat] -= 1
        g *= dy[:, None]
        return outs

    return run


sparse_softmax_cross_entropy_with_grad.bind = _bind_sce_with_grad  # type: ignore[attr-defined]


# -- softmax_cross_entropy ------------------------------------------------------------------------
@register_kernel("tdflow.softmax_cross_entropy", "cpu", dtypes=FLOATS, match=same_dtype(1),
                 num_outputs=2)
def softmax_cross_entropy(attrs: Mapping[str, Any], inputs: Sequence[Any],
                          outs: Sequence[Any]) -> list[np.ndarray]:
    """prob = softmax(prediction); out = -sum(label * log_softmax(prediction), -1)."""
    pred, label = inputs[0], inputs[1]
    wide = wide_float(pred.dtype)
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
    wide = wide_float(prob.dtype)
    diff = (prob.astype(wide) - label.astype(wide)) * dy.astype(wide)[..., None]
    return [store(outs, diff, prob.dtype)]
