"""Hooks and gradient rules of the ops in tdflow/ops/norm.td (issue 13): ``layer_norm``,
``normalization`` (batch norm) and ``group_norm``.

The gradients are rules written with standard ops (``reduce_sum``, ``reshape``,
``transpose``, ``fused_elementwise``): with ``xh = (x - mean) * inv_variance`` normalized over
``n`` elements and ``g = dy * gamma``, ``dx = inv_variance * (g - mean(g) - xh * mean(g * xh))``,
plus what flows in through the ``mean`` and ``inv_variance`` results
(``dmean / n - dinv_variance * inv_variance**2 * xh / n``).
"""

from __future__ import annotations

from math import prod
from typing import Any

from ..grad.core import Emitter, Forward, grad_rule
from ._sbp import signature
from ._shape import compatible, fmt, require_float
from .context import HookError, InferContext, InputArgModifier
from .registry import (
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_physical_tensor_desc,
    modify_input_arg,
)

NORM_OPS = ("tdflow.layer_norm", "tdflow.normalization", "tdflow.group_norm")


def _param(ctx: InferContext, name: str, want: tuple, flag: str | None) -> None:
    """Operand ``name`` (gamma, beta...) has shape ``want`` and ``x``'s element type; with
    ``flag`` its presence must agree with that attribute."""
    present = ctx.has_input(name)
    if flag is not None and present != bool(ctx.attr(flag)):
        if present:
            raise HookError(f"'{name}' is given but {flag} = false; set {flag} = true to use it",
                            operand=name)
        raise HookError(f"{flag} = true needs the '{name}' operand", attr=flag)
    if present:
        shape = ctx.input_shape(name)
        if not compatible(shape, want):
            raise HookError(f"'{name}' has shape {fmt(shape)}, expected {fmt(want)}",
                            operand=name)
        if ctx.input_dtype(name) != ctx.input_dtype("x"):
            raise HookError(f"'{name}' has element type {ctx.input_dtype(name)} but 'x' has "
                            f"{ctx.input_dtype('x')}", operand=name)


def _stat_dtype(ctx: InferContext) -> str:
    dtype = require_float(ctx, "x")
    return "f32" if dtype in ("f16", "bf16") else dtype


def _x_shape(ctx: InferContext) -> tuple | None:
    shape = ctx.input_shape("x")
    if shape is not None and len(shape) == 0:
        raise HookError(f"'{ctx.op.mnemonic}' needs 'x' of rank >= 1, got a scalar", operand="x")
    return shape


# -- layer_norm ------------------------------------------------------------------------------
@infer_logical_tensor_desc("tdflow.layer_norm")
@infer_physical_tensor_desc("tdflow.layer_norm")
def layer_norm_tensor_desc(ctx: InferContext) -> None:
    shape = _x_shape(ctx)
    ctx.set_output_shape("y", shape)
    if shape is None:
        ctx.set_output_shape("mean", None)
        ctx.set_output_shape("inv_variance", None)
        return
    # TDF_AxisAttr of x: non-negative and in range
    a, p = ctx.attr("begin_norm_axis"), ctx.attr("begin_params_axis")
    _param(ctx, "beta", shape[p:], "center")
    _param(ctx, "gamma", shape[p:], "scale")
    ctx.set_output_shape("mean", shape[:a])
    ctx.set_output_shape("inv_variance", shape[:a])


@infer_data_type("tdflow.layer_norm")
@infer_data_type("tdflow.group_norm")
def norm_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("y", require_float(ctx, "x"))
    ctx.set_output_dtype("mean", _stat_dtype(ctx))
    ctx.set_output_dtype("inv_variance", _stat_dtype(ctx))


@get_sbp("tdflow.layer_norm")
def layer_norm_sbp(ctx: InferContext):
    """Split any dim before ``begin_norm_axis`` (and ``begin_params_axis``): rows are
    independent; the parameters are broadcast."""
    shape = ctx.input_shape("x")
    if not shape:
        return []
    a, p = ctx.attr("begin_norm_axis"), ctx.attr("begin_params_axis")
    return [signature(ctx, {"x": f"S({i})"},
                      {"y": f"S({i})", "mean": f"S({i})", "inv_variance": f"S({i})"})
            for i in range(min(a, p))]


# -- group_norm ------------------------------------------------------------------------------
_FORMATS = ("channels_first", "channels_last")


_ACTIVATIONS = ("none", "silu")


@infer_logical_tensor_desc("tdflow.group_norm")
@infer_physical_tensor_desc("tdflow.group_norm")
def group_norm_tensor_desc(ctx: InferContext) -> None:
    fmt_ = ctx.attr("data_format")
    if fmt_ not in _FORMATS:
        raise HookError(f"data_format must be \"channels_first\" or \"channels_last\", got "
                        f"{fmt_!r}", attr="data_format")
    if ctx.attr("activation") not in _ACTIVATIONS:
        raise HookError(f"activation must be \"none\" or \"silu\", got "
                        f"{ctx.attr('activation')!r}", attr="activation")
    groups = ctx.attr("num_groups")
    if groups < 1:
        raise HookError(f"num_groups must be >= 1, got {groups}", attr="num_groups")
    shape = _x_shape(ctx)
    ctx.set_output_shape("y", shape)
    if shape is not None and len(shape) < 2:
        raise HookError(f"'group_norm' needs 'x' of rank >= 2 ([N, C, ...]), got "
                        f"{fmt(shape)}", operand="x")
    c = None if shape is None else shape[1 if fmt_ == "channels_first" else -1]
    if c is not None and c % groups:
        raise HookError(f"the {c} channels of 'x' do not split into num_groups = {groups} "
                        f"groups", attr="num_groups")
    _param(ctx, "beta", (c,), "affine")
    _param(ctx, "gamma", (c,), "affine")
    stats = None if shape is None else (shape[0], groups)
    ctx.set_output_shape("mean", stats)
    ctx.set_output_shape("inv_variance", stats)


@get_sbp("tdflow.group_norm")
def group_norm_sbp(ctx: InferContext):
    """Samples are independent: split the batch dim."""
    if not ctx.input_shape("x"):
        return []
    return [signature(ctx, {"x": "S(0)"}, {"y": "S(0)", "mean": "S(0)", "inv_variance": "S(0)"})]


# -- normalization ---------------------------------------------------------------------------
@infer_logical_tensor_desc("tdflow.normalization")
@infer_physical_tensor_desc("tdflow.normalization")
def normalization_tensor_desc(ctx: InferContext) -> None:
    shape = _x_shape(ctx)
    ctx.set_output_shape("y", shape)
    c = None
    if shape is not None:
        c = shape[ctx.attr("axis")]  # TDF_AxisAttr of x
    if ctx.has_input("moving_mean") != ctx.has_input("moving_variance"):
        missing = "moving_variance" if ctx.has_input("moving_mean") else "moving_mean"
        raise HookError(f"'moving_mean' and 'moving_variance' go together; '{missing}' is "
                        f"missing", operand=missing)
    if not ctx.attr("training") and not ctx.has_input("moving_mean"):
        raise HookError("inference (training = false) needs 'moving_mean' and "
                        "'moving_variance'", operand="moving_mean")
    for name in ("moving_mean", "moving_variance", "gamma", "beta"):
        _param(ctx, name, (c,), None)
    if ctx.has_input("_add_to_output"):
        add = ctx.input_shape("_add_to_output")
        if not compatible(add, shape):
            raise HookError(f"'_add_to_output' has shape {fmt(add)} but 'x' has {fmt(shape)}",
                            operand="_add_to_output")
    for name, _ in ctx.output_names():
        if name != "y":
            ctx.set_output_shape(name, None if shape is None else (c,))


@infer_data_type("tdflow.normalization")
def normalization_data_type(ctx: InferContext) -> None:
    dtype = require_float(ctx, "x")
    for name, _ in ctx.output_names():
        ctx.set_output_dtype(name, dtype)


@get_sbp("tdflow.normalization")
def normalization_sbp(ctx: InferContext):
    """Inference is per element given the statistics: split any dim but the channel one (or
    the channel dim with the parameters split alike). Training reduces over the batch."""
    shape = ctx.input_shape("x")
    if not shape or ctx.attr("training"):
        return []
    c = ctx.attr("axis")
    params = {n: f"S({0})" for n in ("moving_mean", "moving_variance", "gamma", "beta")}
    out = [signature(ctx, {"x": f"S({c})", "_add_to_output": f"S({c})", **params},
                     {"y": f"S({c})", "mean": "S(0)", "inv_variance": "S(0)"})]
    return out + [signature(ctx, {"x": f"S({i})", "_add_to_output": f"S({i})"},
                            {"y": f"S({i})"}) for i in range(len(shape)) if i != c]


@modify_input_arg("tdflow.normalization")
def normalization_input_args(ctx: InferContext):
    """The moving statistics are updated in place (training) and never take a gradient, as
    OneFlow's ``FwInputArgModifyFn`` marks them."""
    return {"moving_mean": InputArgModifier(is_mutable=True, requires_grad=False),
            "moving_variance": InputArgModifier(is_mutable=True, requires_grad=False)}


# -- gradients -------------------------------------------------------------------------------
def _ew(g: Emitter, expr: str, *vals: Any) -> Any:
    return g.op("tdflow.fused_elementwise", [list(vals)], {"expr": expr})[0]


def _sum(g: Emitter, v: Any, axes: list[int], keepdims: bool = True) -> Any:
    """``reduce_sum`` over ``axes`` (none: ``v`` itself; reduce_sum's ``[]`` means all)."""
    if not axes:
        return v
    return g.op("tdflow.reduce_sum", [v], {"axis": axes, "keepdims": keepdims})[0]


def _reshape(g: Emitter, v: Any, shape: tuple) -> Any:
    if tuple(g.type_of(v).shape) == tuple(shape):
        return v
    return g.op("tdflow.reshape", [v], {"shape": list(shape)})[0]


def _add(g: Emitter, a: Any, b: Any) -> Any:
    if a is None:
        return b
    return a if b is None else _ew(g, "add(in0, in1)", a, b)


def _normalized_grad(g: Emitter, x: Any, mean: Any, inv: Any, dy: Any, dmean: Any,
                     dinv: Any, axes: list[int], n: int) -> Any:
    """``dx`` of ``xh = (x - mean) * inv`` normalized over ``axes`` (``n`` elements), given
    ``dy`` (the gradient of ``xh``, gamma applied), ``dmean`` and ``dinv`` (``mean`` and
    ``inv`` broadcastable against ``x``, ``dmean``/``dinv`` too); ``None`` is zero."""
    c = repr(1.0 / n)
    xh = _ew(g, "mul(sub(in0, in1), in2)", x, mean, inv)
    dx = None
    if dy is not None:
        s1 = _sum(g, dy, axes)
        s2 = _sum(g, _ew(g, "mul(in0, in1)", dy, xh), axes)
        dx = _ew(g, f"mul(in0, sub(sub(in1, mul(in2, {c})), mul(in3, mul(in4, {c}))))",
                 inv, dy, s1, xh, s2)
    if dmean is not None:
        dx = _add(g, dx, _ew(g, f"mul(in0, {c})", dmean))
    if dinv is not None:
        dx = _add(g, dx, _ew(g, f"neg(mul(mul(in0, mul(in1, in1)), mul(in2, {c})))",
                             dinv, inv, xh))
    return dx


@grad_rule("tdflow.layer_norm", inputs=("x", "beta", "gamma"))
def _layer_norm(g: Emitter, fwd: Forward) -> dict[str, Any]:
    x, gamma = fwd.inputs["x"], fwd.inputs["gamma"]
    shape = tuple(g.type_of(x).shape)
    rank = len(shape)
    a = fwd.attrs["begin_norm_axis"] % rank
    p = fwd.attrs["begin_params_axis"] % rank
    keep = shape[:a] + (1,) * (rank - a)
    mean = _reshape(g, fwd.outputs["mean"], keep)
    inv = _reshape(g, fwd.outputs["inv_variance"], keep)
    dy = fwd.douts["y"]
    dmean, dinv = fwd.douts["mean"], fwd.douts["inv_variance"]
    out: dict[str, Any] = {}
    lead = list(range(p))
    if dy is not None and "beta" in fwd.wants and fwd.inputs["beta"] is not None:
        out["beta"] = _sum(g, dy, lead, keepdims=False)
    if dy is not None and "gamma" in fwd.wants and gamma is not None:
        xh = _ew(g, "mul(sub(in0, in1), in2)", x, mean, inv)
        out["gamma"] = _sum(g, _ew(g, "mul(in0, in1)", dy, xh), lead, keepdims=False)
    if "x" in fwd.wants:
        gy = dy if dy is None or gamma is None else _ew(g, "mul(in0, in1)", dy, gamma)
        out["x"] = _normalized_grad(
            g, x, mean, inv, gy, None if dmean is None else _reshape(g, dmean, keep),
            None if dinv is None else _reshape(g, dinv, keep), list(range(a, rank)),
            prod(shape[a:]))
    return out


@grad_rule("tdflow.group_norm", inputs=("x", "beta", "gamma"))
def _group_norm(g: Emitter, fwd: Forward) -> dict[str, Any]:
    x, beta, gamma = fwd.inputs["x"], fwd.inputs["beta"], fwd.inputs["gamma"]
    dy, dmean, dinv = fwd.douts["y"], fwd.douts["mean"], fwd.douts["inv_variance"]
    shape = tuple(g.type_of(x).shape)
    rank = len(shape)
    last = fwd.attrs["data_format"] == "channels_last"
    if last:  # work in channels_first: [N, C, ...]
        perm = [0, rank - 1, *range(1, rank - 1)]
        x = g.op("tdflow.transpose", [x], {"perm": perm})[0]
        if dy is not None:
            dy = g.op("tdflow.transpose", [dy], {"perm": perm})[0]
        shape = tuple(shape[i] for i in perm)
    n, c = shape[0], shape[1]
    groups = fwd.attrs["num_groups"]
    grouped = (n, groups, c // groups, prod(shape[2:]))
    xg = _reshape(g, x, grouped)
    mean = _reshape(g, fwd.outputs["mean"], (n, groups, 1, 1))
    inv = _reshape(g, fwd.outputs["inv_variance"], (n, groups, 1, 1))
    gam = None if gamma is None else _reshape(g, gamma, (groups, c // groups, 1))
    bet = None if beta is None else _reshape(g, beta, (groups, c // groups, 1))
    if dy is not None:
        dy = _reshape(g, dy, grouped)
    if dy is not None and fwd.attrs["activation"] == "silu":
        z = _ew(g, "mul(sub(in0, in1), in2)", xg, mean, inv)
        if gam is not None:
            z = _ew(g, "add(mul(in0, in1), in2)", z, gam, bet)
        sig = "div(1.0, add(1.0, exp(neg(in1))))"
        dy = _ew(g, f"mul(in0, mul({sig}, add(1.0, mul(in1, sub(1.0, {sig})))))", dy, z)
    out: dict[str, Any] = {}
    if dy is not None and gam is not None:
        xh = _ew(g, "mul(sub(in0, in1), in2)", xg, mean, inv)
        if "gamma" in fwd.wants:
            out["gamma"] = _reshape(g, _sum(g, _ew(g, "mul(in0, in1)", dy, xh), [0, 3], False),
                                    (c,))
        if "beta" in fwd.wants:
            out["beta"] = _reshape(g, _sum(g, dy, [0, 3], False), (c,))
    if "x" in fwd.wants:
        gy = dy if dy is None or gam is None else _ew(g, "mul(in0, in1)", dy, gam)
        dx = _normalized_grad(
            g, xg, mean, inv, gy,
            None if dmean is None else _reshape(g, dmean, (n, groups, 1, 1)),
            None if dinv is None else _reshape(g, dinv, (n, groups, 1, 1)), [2, 3],
            prod(grouped[2:]))
        if dx is not None:
            dx = _reshape(g, dx, shape)
            if last:
                inverse = [0, *range(2, rank), 1]
                dx = g.op("tdflow.transpose", [dx], {"perm": inverse})[0]
        out["x"] = dx
    return out


@grad_rule("tdflow.normalization", inputs=("x", "gamma", "beta", "_add_to_output"))
def _normalization(g: Emitter, fwd: Forward) -> dict[str, Any]:
    x, gamma = fwd.inputs["x"], fwd.inputs["gamma"]
    dy = fwd.douts["y"]
    shape = tuple(g.type_of(x).shape)
    rank = len(shape)
    ax = fwd.attrs["axis"] % rank
    others = [i for i in range(rank) if i != ax]
    bshape = tuple(shape[ax] if i == ax else 1 for i in range(rank))
    gam = _reshape(g, gamma, bshape)
    eps = repr(float(fwd.attrs["epsilon"]))
    if fwd.attrs["training"] and fwd.outputs.get("mean") is not None:
        mean = _reshape(g, fwd.outputs["mean"], bshape)
        inv = _reshape(g, fwd.outputs["inv_variance"], bshape)
        dmean, dinv = fwd.douts.get("mean"), fwd.douts.get("inv_variance")
    elif fwd.attrs["training"]:  # a program that did not keep the batch statistics
        c = repr(1.0 / prod(shape[i] for i in others))
        mean = _ew(g, f"mul(in0, {c})", _sum(g, x, others))
        sq = _ew(g, "mul(sub(in0, in1), sub(in0, in1))", x, mean)
        inv = _ew(g, f"rsqrt(add(mul(in0, {c}), {eps}))", _sum(g, sq, others))
        dmean = dinv = None
    else:  # the moving statistics are constants
        mean = _reshape(g, fwd.inputs["moving_mean"], bshape)
        inv = _ew(g, f"rsqrt(add(in0, {eps}))", _reshape(g, fwd.inputs["moving_variance"],
                                                         bshape))
        dmean = dinv = None
    out: dict[str, Any] = {}
    if dy is not None:
        if fwd.inputs["_add_to_output"] is not None:
            out["_add_to_output"] = dy
        if "beta" in fwd.wants:
            out["beta"] = _sum(g, dy, others, keepdims=False)
        if "gamma" in fwd.wants:
            xh = _ew(g, "mul(sub(in0, in1), in2)", x, mean, inv)
            out["gamma"] = _sum(g, _ew(g, "mul(in0, in1)", dy, xh), others, keepdims=False)
    if "x" in fwd.wants:
        if not fwd.attrs["training"]:
            out["x"] = None if dy is None else _ew(g, "mul(mul(in0, in1), in2)", dy, gam, inv)
        else:
            gy = None if dy is None else _ew(g, "mul(in0, in1)", dy, gam)
            out["x"] = _normalized_grad(
                g, x, mean, inv, gy,
                None if dmean is None else _reshape(g, dmean, bshape),
                None if dinv is None else _reshape(g, dinv, bshape), others,
                prod(shape[i] for i in others))
    return out
