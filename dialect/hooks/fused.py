"""Hooks of ``tdflow.fused_elementwise``, the op ``fuse-elementwise`` creates.

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

from ..formula.expr import Expr, arity
from ..formula.text import parse_expr
from ..formula.types import default_out_dtype
from ..infer import broadcast_shapes
from .context import HookError, InferContext, SbpSignature
from .registry import (
    check_attr,
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_physical_tensor_desc,
)
from .sbp import blob

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
        shape = broadcast_shapes(shapes)
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
