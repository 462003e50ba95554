"""Hooks of the elementwise family where a formula does not say it all: the scalar ops'
attribute check, ``where``'s operand check, ``bias_add`` (and its gradient rule), ``add_n`` and
``fused_elementwise``, the op ``fuse-elementwise`` creates. The other elementwise ops are formula
ops: their shapes, dtypes and SBP signatures come from the formula
(:mod:`tdflow.dialect.infer`, :mod:`tdflow.dialect.formula_sbp`).

The fused op has no formula of its own: its math is the composed expression it carries as text
in its ``expr`` attribute (``gt(exp(in0), in1)``), read back by
:func:`tdflow.dialect.formula.text.parse_expr`. Its hooks check that text and derive the result
from it, so a fused op verifies and infers like any other:

* ``check_attr``: ``expr`` parses and reads no input beyond the operands;
* shape: numpy's broadcast of the operands (an elementwise op's rule);
* data type: the type the expression computes (``default_out_dtype``, the rule the numpy and
  CUDA renderers follow), not operand 0's: ``gt(in0, in1)`` of two ``f32`` gives ``i1``;
* SBP: a split of any output axis, with each operand split where it has that dim and
  broadcast where it is stretched.

>>> from tdflow.dialect import standard_dialect
>>> from tdflow.dialect.types import TensorType as T
>>> d = standard_dialect()
>>> d.infer_result_types("tdflow.fused_elementwise", [T((4, 1), "f32"), T((3,), "f32")],
...                      {"expr": "gt(exp(in0), in1)"})
[TensorType(shape=(4, 3), dtype='i1')]
"""

from __future__ import annotations

import functools
from typing import Any

from ..formula.expr import Expr, arity
from ..formula.text import parse_expr
from ..formula.types import default_out_dtype
from ..grad.core import Emitter, Forward, grad_rule
from ..infer import broadcast_shapes as broadcast_all
from ._sbp import blob, first_rank, signature, split_all
from ._shape import (
    INT_DTYPES,
    compatible,
    fmt,
    merge,
    normalize_axis,
    require_rank,
    require_same_dtype,
)
from .context import HookError, InferContext, InputArgModifier, SbpSignature
from .registry import (
    check_attr,
    float_values_unread,
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_physical_tensor_desc,
    modify_input_arg,
)


# -- the scalar ops ------------------------------------------------------------------------------
# Their formula gives shapes, dtypes and SBP; it cannot say that exactly one of the two flags
# picks the scalar (nor that scalar_div divides no integer tensor by a float), so they declare
# has_check_fn for this check. It reads the flags, never the float's value.
@check_attr("tdflow.scalar_add", "tdflow.scalar_mul", "tdflow.scalar_div", "tdflow.scalar_pow")
@float_values_unread
def scalar_check(ctx: InferContext) -> None:
    has_int, has_float = ctx.attr("has_int_operand"), ctx.attr("has_float_operand")
    if has_int == has_float:
        raise HookError("exactly one of has_int_operand and has_float_operand must be true "
                        f"(got has_int_operand = {str(has_int).lower()}, has_float_operand = "
                        f"{str(has_float).lower()})", attr="has_float_operand")
    dtype = ctx.input_dtype("in")
    if ctx.op.mnemonic == "scalar_div" and has_float and dtype in INT_DTYPES:
        raise HookError(f"an integer tensor ({dtype}) cannot be divided by a float scalar; "
                        f"cast it to a float type first", attr="float_operand")


# -- bias_add -------------------------------------------------------------------------------------
@infer_logical_tensor_desc("tdflow.bias_add")
@infer_physical_tensor_desc("tdflow.bias_add")
def bias_add_tensor_desc(ctx: InferContext) -> None:
    a = ctx.input_shape("a")
    b = require_rank(ctx, "b", 1)
    if a is not None:
        axis = normalize_axis(ctx.attr("axis"), len(a))
        if b is not None and a[axis] is not None and b[0] is not None and a[axis] != b[0]:
            raise HookError(f"bias 'b' has {b[0]} elements but 'a' has {a[axis]} along axis "
                            f"{ctx.attr('axis')} (shape {fmt(a)})", operand="b")
    ctx.set_output_shape("out", a)


@infer_data_type("tdflow.bias_add")
def bias_add_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("out", require_same_dtype(ctx, "a", "b"))


@get_sbp("tdflow.bias_add")
def bias_add_sbp(ctx: InferContext):
    a = ctx.input_shape("a")
    if a is None:
        return []
    axis = normalize_axis(ctx.attr("axis"), len(a))
    sigs = [signature(ctx, {"a": f"S({i})", "b": "B"}, f"S({i})") for i in range(len(a)) if i != axis]
    sigs.append(signature(ctx, {"a": f"S({axis})", "b": "S(0)"}, f"S({axis})"))
    return sigs


# -- where: its formula gives shapes, the data type and SBP; the check says what it cannot: the
# condition is bool or integer, and x and y have one type
@check_attr("tdflow.where")
def where_check(ctx: InferContext) -> None:
    cond = ctx.input_dtype("condition")
    if cond != "i1" and cond not in INT_DTYPES:
        raise HookError(f"'condition' must be a bool (i1) or integer tensor, got {cond}",
                        operand="condition")
    require_same_dtype(ctx, "x", "y")


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


FUSED_OP = "tdflow.fused_elementwise"


@functools.lru_cache(maxsize=1024)
def _parsed(text: str) -> Expr:
    return parse_expr(text)


def fused_expression(ctx: InferContext) -> Expr:
    """The expression of the fused op in ``ctx``; ``HookError`` at ``expr`` when it does not
    parse or reads an input that is not there."""
    text = ctx.attr("expr")
    try:
        expr = _parsed(text)
    except ValueError as exc:
        raise HookError(f"malformed 'expr': {exc}", attr="expr") from None
    n, given = arity(expr), ctx.input_size("in")
    if n > given:
        raise HookError(f"'expr' reads input {n - 1} but only {given} operand(s) are given",
                        attr="expr")
    return expr


@check_attr(FUSED_OP)
def fused_check(ctx: InferContext) -> None:
    """What ``LoweringDialect`` once checked by hand: a well-formed ``expr`` over the operands."""
    fused_expression(ctx)


@infer_logical_tensor_desc(FUSED_OP)
@infer_physical_tensor_desc(FUSED_OP)
def fused_tensor_desc(ctx: InferContext) -> None:
    shapes = [t.shape for t in ctx.inputs("in")]
    try:
        shape = broadcast_all(shapes)
    except HookError as exc:
        raise HookError(exc.message, operand="in") from None
    ctx.set_output_shape("out", shape)


@infer_data_type(FUSED_OP)
def fused_data_type(ctx: InferContext) -> None:
    expr = fused_expression(ctx)
    ctx.set_output_dtype("out", default_out_dtype(expr, [t.dtype for t in ctx.inputs("in")]))


@get_sbp(FUSED_OP)
def fused_sbp(ctx: InferContext):
    shapes = [t.shape for t in ctx.inputs("in")]
    if not shapes or any(s is None for s in shapes):
        return []
    n = max(len(s) for s in shapes)
    sigs = []
    for axis in range(n):
        ins = {}
        for i, s in enumerate(shapes):
            own = axis - (n - len(s))
            ins[blob("in", i)] = f"S({own})" if own >= 0 and s[own] != 1 else "B"
        sigs.append(SbpSignature.make(ins, {blob("out", 0): f"S({axis})"}))
    return sigs


@grad_rule("tdflow.bias_add", saves=("b",))
def _bias_add(g: Emitter, fwd: Forward) -> dict[str, Any]:
    dout, b = fwd.douts["out"], fwd.inputs["b"]
    rank = len(g.type_of(dout).shape)
    axis = fwd.attrs["axis"] % rank if rank else 0
    out: dict[str, Any] = {"a": dout}
    if "b" in fwd.wants:
        others = [i for i in range(rank) if i != axis]
        out["b"] = g.op("tdflow.reduce_sum_like", [dout, b], {"axis": others})[0] if others \
            else dout
    return out
