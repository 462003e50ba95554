"""Hooks of the ops in tdflow/ops/math.td (issue 13): the elementwise unary and scalar ops,
``where`` and ``add_n``, each with OneFlow's four hooks (logical and physical tensor desc, data
type, SBP) plus the ones its record declares (``where``'s ``modify_input_arg``, ``add_n``'s
``check_attr``). The elementwise ops follow :mod:`.elementwise`'s rules; their math, kernels and
gradients come from their formulas.
"""

from __future__ import annotations

from typing import Any

from tdflow.dialect.element_types import NUMERIC_DTYPES

from ..grad.core import Emitter, Forward, grad_rule
from .context import HookError, InferContext, InputArgModifier
from .registry import (
    check_attr,
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_physical_tensor_desc,
    modify_input_arg,
)
from .sbp import first_rank, signature, split_all
from .shape_util import (
    INT_DTYPES,
    broadcast_shapes,
    compatible,
    fmt,
    merge,
    require_float,
    require_same_dtype,
)

UNARY = {  # op -> (input, output, needs float)
    "abs": ("x", "y", False), "rsqrt": ("x", "y", True), "erf": ("x", "y", True),
    "silu": ("in", "out", True), "fast_gelu": ("in", "out", True),
    "softplus": ("x", "y", True), "scalar_div": ("in", "out", False),
}
# Ops linear in their input: a partial sum passes through (OneFlow's P -> P signature).
LINEAR = frozenset({"scalar_div"})


def _q(*names: str) -> list[str]:
    return [f"tdflow.{n}" for n in names]


# -- unary and scalar -------------------------------------------------------------------------
@infer_logical_tensor_desc(*_q(*UNARY))
@infer_physical_tensor_desc(*_q(*UNARY))
def unary_tensor_desc(ctx: InferContext) -> None:
    src, dst, _ = UNARY[ctx.op.mnemonic]
    ctx.set_output_shape(dst, ctx.input_shape(src))


@infer_data_type(*_q(*UNARY))
def unary_data_type(ctx: InferContext) -> None:
    src, dst, needs_float = UNARY[ctx.op.mnemonic]
    dtype = require_float(ctx, src) if needs_float else ctx.input_dtype(src)
    if dtype == "i1" and not needs_float:
        raise HookError(f"'{src}' must be a number tensor ({', '.join(NUMERIC_DTYPES)}), got i1", operand=src)
    if ctx.op.mnemonic == "scalar_div":
        has_int, has_float = ctx.attr("has_int_operand"), ctx.attr("has_float_operand")
        if has_int == has_float:
            raise HookError("exactly one of has_int_operand and has_float_operand must be true "
                            f"(got has_int_operand = {str(has_int).lower()}, has_float_operand = "
                            f"{str(has_float).lower()})", attr="has_float_operand")
        if has_float and dtype in INT_DTYPES:
            raise HookError(f"an integer tensor ({dtype}) cannot be divided by a float scalar; "
                            f"cast it to a float type first", attr="float_operand")
    ctx.set_output_dtype(dst, dtype)


@get_sbp(*_q(*UNARY))
def unary_sbp(ctx: InferContext):
    sigs = split_all(ctx, range(first_rank(ctx)))
    if ctx.op.mnemonic in LINEAR:
        sigs.append(signature(ctx, "P", "P"))
    return sigs


# -- where ---------------------------------------------------------------------------------------
_WHERE = ("condition", "x", "y")


@infer_logical_tensor_desc("tdflow.where")
@infer_physical_tensor_desc("tdflow.where")
def where_tensor_desc(ctx: InferContext) -> None:
    c, x, y = (ctx.input_shape(n) for n in _WHERE)
    xy = broadcast_shapes(x, y)
    ctx.set_output_shape("out", broadcast_shapes(xy, c, names=("x and y", "condition")))


@infer_data_type("tdflow.where")
def where_data_type(ctx: InferContext) -> None:
    cond = ctx.input_dtype("condition")
    if cond != "i1" and cond not in INT_DTYPES:
        raise HookError(f"'condition' must be a bool (i1) or integer tensor, got {cond}",
                        operand="condition")
    ctx.set_output_dtype("out", require_same_dtype(ctx, "x", "y"))


@get_sbp("tdflow.where")
def where_sbp(ctx: InferContext):
    shapes = {n: ctx.input_shape(n) for n in _WHERE}
    if any(s is None for s in shapes.values()):
        return []
    rank = max(len(s) for s in shapes.values())
    sigs = []
    for axis in range(rank):
        ins = {}
        for name, shape in shapes.items():
            own = axis - (rank - len(shape))
            ins[name] = f"S({own})" if own >= 0 and shape[own] != 1 else "B"
        sigs.append(signature(ctx, ins, f"S({axis})"))
    return sigs


@modify_input_arg("tdflow.where")
def where_input_args(ctx: InferContext):
    """The condition only selects: no gradient flows into it (OneFlow's InputArgModifyFn)."""
    return {"condition": InputArgModifier(requires_grad=False)}


# -- add_n ---------------------------------------------------------------------------------------
@check_attr("tdflow.add_n")
def add_n_check(ctx: InferContext) -> None:
    n = ctx.input_size("in")
    if n < 2:  # OneFlow's CheckAttr: CHECK_GE(input_size("in"), 2)
        raise HookError(f"add_n needs at least 2 inputs, got {n}", operand="in")


@infer_logical_tensor_desc("tdflow.add_n")
@infer_physical_tensor_desc("tdflow.add_n")
def add_n_tensor_desc(ctx: InferContext) -> None:
    out = None
    first = None
    for i in range(ctx.input_size("in")):
        s = ctx.input_shape("in", i)
        if s is None:
            continue
        if first is not None and not compatible(out, s):
            raise HookError(f"input {i} of add_n has shape {fmt(s)} but input {first} has "
                            f"{fmt(out)}; they must match", operand="in")
        first = i if first is None else first
        out = merge(out, s) if out is not None else s
    ctx.set_output_shape("out", out)


@infer_data_type("tdflow.add_n")
def add_n_data_type(ctx: InferContext) -> None:
    dtypes = [t.dtype for t in ctx.inputs("in")]
    for i, dt in enumerate(dtypes):
        if dt != dtypes[0]:
            raise HookError(f"input {i} of add_n has element type {dt} but input 0 has "
                            f"{dtypes[0]}; they must match", operand="in")
    if dtypes and dtypes[0] == "i1":
        raise HookError("add_n adds numbers; got i1 (bool) inputs", operand="in")
    ctx.set_output_dtype("out", dtypes[0] if dtypes else "f32")


@get_sbp("tdflow.add_n")
def add_n_sbp(ctx: InferContext):
    sigs = split_all(ctx, range(first_rank(ctx)))
    sigs.append(signature(ctx, "P", "P"))  # a sum of partial sums is a partial sum
    return sigs


@grad_rule("tdflow.add_n", saves=())
def _add_n(g: Emitter, fwd: Forward) -> dict[str, Any]:
    """Every input's gradient is the result's: nothing of the forward is kept."""
    dout = fwd.douts["out"]
    return {"in": tuple(dout for _ in fwd.inputs["in"])}
