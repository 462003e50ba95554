"""Hooks of the optim family: sgd_update and adam_update; neither has results, both update
``model`` (and their state) in place.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._sbp import signature
from ._shape import compatible, fmt, numel, require_float
from .context import HookError, InferContext, InputArgModifier
from .registry import (
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_physical_tensor_desc,
    modify_input_arg,
)


@infer_logical_tensor_desc("tdflow.sgd_update")
@infer_physical_tensor_desc("tdflow.sgd_update")
def sgd_tensor_desc(ctx: InferContext) -> None:
    check_like_model(ctx, ("model_diff", "model_copy"))
    check_scalars(ctx, ("learning_rate", "scale_by_tensor", "skip_if"))


def check_like_model(ctx: InferContext, names: Sequence[str]) -> None:
    """:class:`HookError` naming the first of ``names`` (those present) whose shape is not
    ``model``'s; for sgd_update and adam_update (train.py)."""
    model = ctx.input_shape("model")
    for name in names:
        if ctx.has_input(name) and not compatible(ctx.input_shape(name), model):
            raise HookError(f"'{name}' has shape {fmt(ctx.input_shape(name))} but 'model' has "
                            f"{fmt(model)}", operand=name)


def check_scalars(ctx: InferContext, names: Sequence[str]) -> None:
    """:class:`HookError` naming the first of ``names`` (those present) that does not hold
    exactly one element; for sgd_update and adam_update (train.py)."""
    for name in names:
        if ctx.has_input(name):
            n = numel(ctx.input_shape(name))
            if n is not None and n != 1:
                raise HookError(f"'{name}' must hold exactly one element, got shape "
                                f"{fmt(ctx.input_shape(name))}", operand=name)


@infer_data_type("tdflow.sgd_update")
def sgd_data_type(ctx: InferContext) -> None:
    dtype = require_float(ctx, "model")
    if ctx.input_dtype("model_diff") != dtype:
        raise HookError(f"'model_diff' has element type {ctx.input_dtype('model_diff')} but "
                        f"'model' has {dtype}", operand="model_diff")


@get_sbp("tdflow.sgd_update")
def sgd_sbp(ctx: InferContext):
    model = ctx.input_shape("model")
    scalars = {"learning_rate": "B", "scale_by_tensor": "B", "skip_if": "B"}
    return [signature(ctx, {"model": f"S({i})", "model_diff": f"S({i})", "model_copy": f"S({i})",
                            **scalars}, {}) for i in range(len(model or ()))]


@modify_input_arg("tdflow.sgd_update")
def sgd_input_args(ctx: InferContext):
    """``model`` (and its low-precision ``model_copy``) are written in place; nothing here needs
    a gradient."""
    return {
        "model": InputArgModifier(is_mutable=True, requires_grad=False),
        "model_copy": InputArgModifier(is_mutable=True, requires_grad=False),
        "model_diff": InputArgModifier(requires_grad=False),
    }


# -- adam_update ----------------------------------------------------------------------------------
_STATE = ("m", "v", "max_v", "model_copy")


_SCALARS = ("learning_rate", "scale_by_tensor", "skip_if", "bias_correction1", "bias_correction2")


@infer_logical_tensor_desc("tdflow.adam_update")
@infer_physical_tensor_desc("tdflow.adam_update")
def adam_tensor_desc(ctx: InferContext) -> None:
    check_like_model(ctx, ("model_diff", *_STATE))
    if ctx.attr("amsgrad") and not ctx.has_input("max_v"):
        raise HookError("amsgrad = true needs the 'max_v' operand (the running maximum of v)",
                        attr="amsgrad")
    check_scalars(ctx, _SCALARS)


@infer_data_type("tdflow.adam_update")
def adam_data_type(ctx: InferContext) -> None:
    dtype = require_float(ctx, "model")
    for name in ("model_diff", "m", "v", "max_v"):
        if ctx.has_input(name) and ctx.input_dtype(name) != dtype:
            raise HookError(f"'{name}' has element type {ctx.input_dtype(name)} but 'model' "
                            f"has {dtype}", operand=name)


@get_sbp("tdflow.adam_update")
def adam_sbp(ctx: InferContext):
    model = ctx.input_shape("model")
    scalars = dict.fromkeys(_SCALARS, "B")
    return [signature(ctx, {"model": f"S({i})", "model_diff": f"S({i})",
                            **{n: f"S({i})" for n in _STATE}, **scalars}, {})
            for i in range(len(model or ()))]


@modify_input_arg("tdflow.adam_update")
def adam_input_args(ctx: InferContext):
    """``model``, its ``model_copy`` and the moments ``m``, ``v``, ``max_v`` are written in
    place; nothing here needs a gradient."""
    mutable = InputArgModifier(is_mutable=True, requires_grad=False)
    return {"model": mutable, **dict.fromkeys(_STATE, mutable),
            "model_diff": InputArgModifier(requires_grad=False)}
