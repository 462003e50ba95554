"""``fuse-elementwise``: chains and DAGs of ``Elementwise`` ops become one fused op.

An ``Elementwise`` op whose only user is another elementwise op is absorbed into it: their scalar
expressions (``dialect/formula/expr.py``) are composed, attributes bound, and the operand lists
spliced and de-duplicated. The result is one ``tdflow.fused_elementwise`` op that carries the
composed expression as text (``expr``) and the names of the ops it replaced (``ops``).

On the CPU, with ``{epilogue=true}`` (the default), a last-axis ``bias_add`` fuses as an add and relu
gradients read relu's output, so a layer's bias and activation are one launch, and a last-axis
``bias_add`` left alone joins the ``matmul`` it reads as one ``matmul_bias``
(:mod:`.fuse_epilogue`; the same bits; ``{matmul-bias=false}`` keeps the two launches).
Also on the CPU, a sparse cross-entropy whose softmax only its gradient reads, with that
gradient's ``dy`` ready before the loss, becomes one launch with it (:mod:`.fuse_loss`; the same
bits; ``{loss-grad=false}`` keeps the two).

Broadcasting is respected: a producer is absorbed only when its result has the consumer's
shape and element type, so no element is computed twice and broadcast inputs stay inputs.

Before::

    %0 = "tdflow.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "tdflow.broadcast_mul"(%0, %s) : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>

after::

    %0 = "tdflow.fused_elementwise"(%x, %s) {expr = "mul(exp(in0), in1)",
          ops = ["tdflow.exp", "tdflow.broadcast_mul"]} : (...) -> tensor<4xf32>
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tdflow.dialect.formula.expr import Expr, compose, dedup_inputs, expr_depth
from tdflow.dialect.formula.text import format_expr, parse_expr
from tdflow.dialect.ir import RETURN, Operation, Rewriter
from tdflow.dialect.ir.attrs import ArrayAttr, StringAttr, to_python
from tdflow.dialect.types import TensorType

from ..ir_access import FUSED_OP, op_attributes, op_def, traits
from ..pass_manager import Pass, PassContext
from .fuse_epilogue import bias_add_expression, fuse_matmul_bias, read_relu_outputs
from .fuse_loss import fuse_loss_grad

if TYPE_CHECKING:
    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.ir.core import FuncOp, Module

    from ..ir_access import LoweringDialect

__all__ = ["FUSED_OP", "FuseElementwisePass", "op_expression"]


#: Deepest fused expression: a long chain becomes several fused kernels, each at most this deep
#: (rendering and printing walk the tree recursively; the fused op's text reader takes 400).
MAX_FUSED_DEPTH = 160


class FuseElementwisePass(Pass):
    name = "fuse-elementwise"
    summary = "merge chains and DAGs of Elementwise ops into one tdflow.fused_elementwise"
    options = {"max-inputs": 16, "epilogue": True, "matmul-bias": True, "loss-grad": True}

    def run(self, module: Module, context: PassContext) -> None:
        rw = Rewriter()
        # CPU only: there the fused epilogue is measured faster (bench/native_bench.py); GPU
        # plans keep their per-op kernels until it is measured on a GPU
        cpu = str(context.device).split(":")[0] == "cpu"
        epilogue = self.option("epilogue") and cpu
        for func in module:
            _fuse_function(func, context.dialect, rw, self.option("max-inputs"), epilogue,
                           epilogue and self.option("matmul-bias"))
            if cpu and self.option("loss-grad"):  # the loss and its gradient (fuse_loss)
                fuse_loss_grad(func, rw)


def op_expression(dialect: Dialect | LoweringDialect, op: Operation) -> tuple[Expr, list[str]] | None:
    """``(expression with attributes bound, names of the ops in it)`` for a fusable op."""
    if op.name == FUSED_OP:
        names = [str(n) for n in to_python(op.attributes.get("ops", ArrayAttr(())))]
        return parse_expr(str(to_python(op.attributes["expr"]))), names
    edef = formula_of(dialect, op.name)
    if edef is None:
        return None
    attrs = {k: to_python(v) for k, v in op_attributes(dialect, op).items()}
    try:
        return edef.bind(attrs), [op.name]
    except (KeyError, TypeError, ValueError):
        return None


def formula_of(dialect: Dialect | LoweringDialect, name: str) -> Any:
    """The :class:`~tdflow.lowering.elementwise_ops.ElementwiseDef` of an ``Elementwise`` op
    with a formula: its own, or that of the standard op serving it (``oneflow.relu``)."""
    from ..elementwise_ops import elementwise_def

    for candidate in (name, getattr(dialect, "served_by", {}).get(name)):
        if candidate is None or "Elementwise" not in traits(dialect, candidate):
            continue
        edef = elementwise_def(op_def(dialect, candidate))
        if edef is not None:
            return edef
    return None


def _fusable_type(op: Operation) -> TensorType | None:
    if len(op.results) != 1:
        return None
    t = op.results[0].type
    return t if isinstance(t, TensorType) and t.is_static else None


def _fuse_function(func: FuncOp, dialect: Dialect | LoweringDialect, rw: Rewriter,
                   max_inputs: int, epilogue: bool = True, matmul_bias: bool = True) -> None:
    exprs: dict[Operation, tuple[Expr, list[str]]] = {}

    def expression_of(o: Operation) -> tuple[Expr, list[str]] | None:
        found = exprs.get(o) or op_expression(dialect, o)
        if found is None and epilogue:
            bias = bias_add_expression(dialect, o)
            found = None if bias is None else (bias, [o.name])
        return found

    if epilogue:  # relu masks read relu's output, so the pre-activation fuses (fuse_epilogue)
        read_relu_outputs(func, rw, expression_of)
    # Program order of each op, so a fused op lists the ops it replaced in that order.
    pos = {o: i for i, o in enumerate(func.body.ops)}
    order: dict[Operation, list[tuple[int, str]]] = {}

    def members(o: Operation, names: list[str]) -> list[tuple[int, str]]:
        return order.get(o) or [(pos[o], n) for n in names]

    for op in func.body.ops:
        if op.parent is None or op.name == RETURN:
            continue
        out_t = _fusable_type(op)
        if out_t is None:
            continue
        found = expression_of(op)
        if found is None:
            continue
        expr, names = found
        listed = members(op, names)
        operands = list(op.operands)
        absorbed: list[Operation] = []
        progress = True
        while progress:
            progress = False
            for v in list(operands):
                p = v.op
                if p is None or p in absorbed or _fusable_type(p) != out_t:
                    continue
                if set(v.users) - {op} - set(absorbed):
                    continue  # p's result is needed outside the group: keep it materialised
                inner = expression_of(p)
                if inner is None:
                    continue
                # Every slot of `op` reading `v` gets p's expression (``mul(p, p)``).
                slots = [j for j, w in enumerate(operands) if w is v]
                new_operands: list[Any] = []
                for j, w in enumerate(operands):
                    new_operands.extend(p.operands if j in slots else [w])
                if len(set(map(id, new_operands))) > max_inputs:
                    continue
                composed = compose(expr, dict.fromkeys(slots, inner[0]),
                                   outer_arity=len(operands))
                if expr_depth(composed) > MAX_FUSED_DEPTH:
                    continue  # a deeper tree would outgrow the recursion of its tree walks
                expr = composed
                listed = listed + members(p, inner[1])
                operands = new_operands
                absorbed.append(p)
                progress = True
                break
        if not absorbed:
            continue
        expr, operands = dedup_inputs(expr, operands)
        listed.sort(key=lambda m: m[0])  # stable: names inside one fused op keep their order
        names = [n for _, n in listed]
        fused = Operation(FUSED_OP, operands, [out_t],
                          {"expr": StringAttr(format_expr(expr)),
                           "ops": ArrayAttr(tuple(StringAttr(n) for n in names))}, op.loc)
        rw.insert_before(op, fused)
        rw.replace_op(op, [fused.results[0]])
        for p in absorbed:  # users were absorbed before their producers
            if not p.has_users():
                rw.erase_op(p)
        exprs[fused] = (expr, names)
        pos[fused] = pos[op]
        order[fused] = listed

    if epilogue and matmul_bias:  # a bias_add left alone joins its product (fuse_epilogue)
        fuse_matmul_bias(func, dialect, rw)
