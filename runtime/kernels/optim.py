"""``sgd_update``: the model is updated in place (no results), as OneFlow's SGDUpdateKernel.

``if skip_if: return``; ``lr = (learning_rate tensor or learning_rate_val) * learning_rate_scale``;
``scale *= scale_by_tensor`` when given;
``g = scale * model_diff + l1 * sign(model) + l2 * model``;
``model -= lr * (g + weight_decay * model)``; ``model_copy`` (a lower-precision copy, e.g. f16)
receives the new model.

>>> import numpy as np
>>> m = np.ones(2, np.float32)
>>> from tdflow.runtime.kernels.registry import complete_kernel_attrs as complete  # defaults
>>> sgd_update(complete("tdflow.sgd_update", {"learning_rate_val": 0.5}),
...            [m, np.full(2, 2.0, np.float32)], [])
[]
>>> m.tolist()
[0.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.runtime.kernels._util import (
    FLOATS,
    acc_dtype,
    operands,
    wide_float,
)
from tdflow.runtime.kernels.registry import register_kernel, same_dtype


def _scalar(t: np.ndarray | None) -> float | None:
    return None if t is None else float(np.asarray(t).reshape(-1)[0])


@register_kernel("tdflow.sgd_update", "cpu", dtypes=FLOATS, match=same_dtype(1), num_outputs=0)
def sgd_update(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """In-place SGD step with l1/l2 regularisation and weight decay."""
    if len(inputs) == 2:  # model and model_diff only: the training loop's step, checked cheaply
        model, diff = inputs
        get = attrs.get
        if (model.dtype == diff.dtype and model.dtype.kind == "f" and model.dtype.itemsize >= 4
                and get("scale", 1.0) == 1.0 and not get("l1") and not get("l2")
                and not get("weight_decay")):
            lr = model.dtype.type(float(get("learning_rate_val", 0.0))
                                  * float(get("learning_rate_scale", 1.0)))
            np.subtract(model, np.multiply(diff, lr), out=model)
            return []
    model, diff, model_copy, lr_t, scale_t, skip_t = operands(inputs, attrs, 6)
    if skip_t is not None and _scalar(skip_t) != 0:
        return []
    lr = _scalar(lr_t)
    lr = float(attrs["learning_rate_val"]) if lr is None else lr
    lr *= float(attrs["learning_rate_scale"])
    scale = float(attrs["scale"])
    if scale_t is not None:
        scale *= _scalar(scale_t)  # type: ignore[operator]
    l1, l2 = float(attrs["l1"]), float(attrs["l2"])
    wd = float(attrs["weight_decay"])
    wide = acc_dtype(model.dtype)
    if (scale == 1.0 and not l1 and not (l2 or wd) and wide == model.dtype
            and diff.dtype == model.dtype):
        # the plain step, one temporary instead of a copy scaled twice: model -= lr * diff
        # (the same float arithmetic as the general path below)
        np.subtract(model, np.multiply(diff, wide.type(lr)), out=model)
        if model_copy is not None:
            np.copyto(model_copy, model, casting="unsafe")
        return []
    m = model.astype(wide, copy=False)
    g = diff.astype(wide, copy=True)
    if scale != 1.0:
        g *= wide.type(scale)
    if l1:
        g += wide.type(l1) * np.sign(m)
    if l2 or wd:
        g += wide.type(l2 + wd) * m
    g *= wide.type(lr)
    np.subtract(model, g, out=model, casting="unsafe")
    if model_copy is not None:
        np.copyto(model_copy, model, casting="unsafe")
    return []


def _bind_sgd(attrs: Mapping[str, Any], ins: Sequence[Any], outs: Sequence[Any],
              dead: frozenset[int] = frozenset()) -> Any:
    """``sgd_update`` for one launch of a compiled plan (the executor's ``bind``): the plain
    step (model and model_diff of one f32/f64 type, no scale, l1, l2 or weight decay) with
    its learning rate computed once; the same ``model -= lr * diff``, the product made in
    place in ``diff`` when the plan no longer needs it (``1 in dead``: no temporary the
    size of the model), as a hand-written step's ``g *= lr; w -= g``."""
    get = attrs.get
    # absent optional operands (eager passes all six, ``None`` where not given) change nothing
    if (len(ins) < 2 or any(s is not None for s in ins[2:]) or ins[0] is None or ins[1] is None
            or ins[0][1] != ins[1][1]
            or ins[0][1].kind != "f" or ins[0][1].itemsize < 4 or get("scale", 1.0) != 1.0
            or get("l1") or get("l2") or get("weight_decay")):
        return None
    lr = ins[0][1].type(float(get("learning_rate_val", 0.0))
                        * float(get("learning_rate_scale", 1.0)))

    def run(_attrs: Any, inputs: Sequence[Any], _outs: Sequence[Any]) -> list[np.ndarray]:
        model = inputs[0]
        np.subtract(model, np.multiply(inputs[1], lr), out=model)
        return []

    def in_place(_attrs: Any, inputs: Sequence[Any], _outs: Sequence[Any]) -> list[np.ndarray]:
        model, diff = inputs[0], inputs[1]  # distinct buffers (dead_inputs)
        np.subtract(model, np.multiply(diff, lr, out=diff), out=model)
        return []

    in_place.overwrites = (1,)  # type: ignore[attr-defined]  # read by the executor
    return in_place if 1 in dead else run


sgd_update.bind = _bind_sgd  # type: ignore[attr-defined]


def _f32(attrs: Mapping[str, Any], name: str) -> float:
    """An f32 attribute (eager calls, compiled programs and direct kernel calls all pass it
    rounded to float32, as the IR holds it: attr_kinds.as_stored)."""
    return float(attrs[name])


@register_kernel("tdflow.adam_update", "cpu", dtypes=FLOATS, match=same_dtype(1), num_outputs=0)
def adam_update(attrs: Mapping[str, Any], inputs: Sequence[Any],
                outs: Sequence[Any]) -> list[np.ndarray]:
    """OneFlow's AdamUpdateFunctor, in place on model, m, v (and max_v, model_copy).

    >>> w, m, v = np.ones(2), np.zeros(2), np.zeros(2)
    >>> from tdflow.runtime.kernels.registry import complete_kernel_attrs as complete
    >>> adam_update(complete("tdflow.adam_update", {"learning_rate_val": 0.1,
    ...             "bias_correction1_val": 0.1, "bias_correction2_val": 0.001}),
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
    lr = _f32(attrs, "learning_rate_val") if lr is None else lr
    lr *= _f32(attrs, "learning_rate_scale")
    scale = float(attrs["scale"])
    if scale_t is not None:
        scale *= _scalar(scale_t)  # type: ignore[operator]
    if attrs["do_bias_correction"]:
        bc1 = _scalar(bc1_t)
        bc1 = _f32(attrs, "bias_correction1_val") if bc1 is None else bc1
        bc2 = _scalar(bc2_t)
        bc2 = _f32(attrs, "bias_correction2_val") if bc2 is None else bc2
    else:
        bc1 = bc2 = 1.0
    amsgrad = bool(attrs["amsgrad"])
    if amsgrad and max_v is None:
        raise ValueError("adam_update: amsgrad = true needs the 'max_v' operand")
    l1, l2 = _f32(attrs, "l1"), _f32(attrs, "l2")
    beta1, beta2 = _f32(attrs, "beta1"), _f32(attrs, "beta2")
    eps, wd = _f32(attrs, "epsilon"), _f32(attrs, "weight_decay")
    wide = wide_float(model.dtype)
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
