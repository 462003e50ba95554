"""``canonicalize``: the standard rewrite rules, trait-driven rewrites, constant folding, CSE and
DCE, to a fixed point.

Everything is decided by the ops' definitions, never by their names:

* The standard library's DRR rules (``tdflow/ops/canonical.td``: ``negative(negative(x)) -> x``,
  reshape of reshape, a cast to the same type, transposes that cancel, ``x * 1``, ...) run
  through the greedy pattern driver (:mod:`tdflow.lowering.patterns_driver`).
* For ops without rules, ``Involution`` ops cancel in pairs (``negative(negative(x)) -> x``); ``Idempotent`` ops
  collapse (``relu(relu(x)) -> relu(x)``), when both ops carry the same attributes.
* Constant folding: a pure op whose operands are all ``tdflow.constant`` is run through the CPU
  kernel handed in with the kernel table; a uniform result becomes a new ``tdflow.constant``
  (the constant op holds one fill value, so a non-uniform result is left unfolded).
* CSE: two pure (``NoMemoryEffect``/``NoSideEffect``) ops with the same name, operands,
  attributes and result types are one op.
* DCE: an unused pure op is erased. Ops with side effects, ops unknown to the dialect and ops
  that write their inputs (``modify_input_arg``, e.g. ``sgd_update``) are always kept.

Before::

    %0 = "tdflow.negative"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "tdflow.negative"(%0) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = "tdflow.relu"(%1) : (tensor<4xf32>) -> tensor<4xf32>
    %3 = "tdflow.relu"(%1) : (tensor<4xf32>) -> tensor<4xf32>
    %4 = "tdflow.broadcast_add"(%2, %3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>

after::

    %0 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "tdflow.broadcast_add"(%0, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tdflow.dialect.ir import RETURN, Operation, Rewriter

from ..constant_fold import fold_op
from ..ir_access import is_pure, mutated_operands, traits
from ..pass_manager import Pass, PassContext
from ..patterns_driver import PatternIndex, apply_greedily, fired_report

if TYPE_CHECKING:
    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.ir.core import FuncOp, Module

    from ..ir_access import LoweringDialect


class CanonicalizePass(Pass):
    name = "canonicalize"
    summary = ("standard rewrite rules, trait rewrites (Idempotent, Involution), constant "
               "folding, CSE and DCE")
    options = {"max-iterations": 8, "fold": True, "cse": True}

    def run(self, module: Module, context: PassContext) -> None:
        self.fired: list = []
        rules = standard_patterns(context.dialect)
        # an op with a rule is rewritten by its rules only, never also by its traits
        ruled = rules.roots()
        rw = Rewriter()
        for func in module:
            for _ in range(self.option("max-iterations")):
                changed = False
                if rules:
                    r = apply_greedily(func, rules, context.dialect, fold=None,
                                       max_iterations=self.option("max-iterations"))
                    self.fired.extend(r.fired)
                    changed |= bool(r.fired)
                changed |= _trait_rewrites(func, context.dialect, rw, ruled)
                if self.option("fold") and context.kernel_table is not None:
                    changed |= _fold_constants(func, context, rw)
                if self.option("cse"):
                    changed |= _cse(func, context.dialect, rw)
                changed |= _dce(func, context.dialect, rw)
                if not changed:
                    break

    def annotate(self, module: Module, context: PassContext) -> str:
        return fired_report(getattr(self, "fired", []))


def standard_patterns(dialect: Dialect | LoweringDialect) -> PatternIndex:
    """The standard library's rules (``ops/canonical.td``) when ``dialect`` holds the standard
    ops: a context's ``standard`` library, or the standard dialect itself.

    >>> from tdflow.dialect.context import standard_context
    >>> sorted(standard_patterns(standard_context()).roots())[:3]
    ['tdflow.broadcast_like', 'tdflow.broadcast_mul', 'tdflow.cast']
    """
    from tdflow.dialect.dialect import standard_dialect

    base = getattr(dialect, "base", dialect)  # through LoweringDialect
    base = getattr(base, "base", base)  # and a test's wrapper around it
    std = getattr(base, "standard", None)
    if std is None and base is standard_dialect():
        std = base
    return PatternIndex(getattr(std, "patterns", ()) or ())


def _same_kind(a: Operation, b: Operation) -> bool:
    return a.name == b.name and a.attributes == b.attributes


def _trait_rewrites(func: FuncOp, dialect: Dialect | LoweringDialect, rw: Rewriter, ruled: frozenset[str]) -> bool:
    changed = False
    for op in func.body.ops:
        if (op.parent is None or len(op.operands) != 1 or len(op.results) != 1
                or op.name in ruled):
            continue
        inner = op.operands[0].op
        if inner is None or len(inner.operands) != 1 or not _same_kind(op, inner):
            continue
        kinds = traits(dialect, op.name)
        if "Involution" in kinds and inner.operands[0].type == op.result.type:
            rw.replace_op(op, [inner.operands[0]])  # f(f(x)) -> x
            changed = True
        elif "Idempotent" in kinds and inner.result.type == op.result.type:
            rw.replace_op(op, [inner.result])  # f(f(x)) -> f(x)
            changed = True
    return changed


def _cse(func: FuncOp, dialect: Dialect | LoweringDialect, rw: Rewriter) -> bool:
    seen: dict[tuple, Operation] = {}
    # An op that writes an operand in place (sgd_update's model) makes it another value for
    # the ops after it: two reads around the write are not one op.
    version: dict[int, int] = {}
    changed = False
    for op in func.body.ops:
        for i in mutated_operands(dialect, op):
            if i < len(op.operands):
                v = id(op.operands[i])
                version[v] = version.get(v, 0) + 1
        if op.name == RETURN or not op.results or not is_pure(dialect, op):
            continue
        key = (op.name, tuple((id(v), version.get(id(v), 0)) for v in op.operands),
               tuple(sorted(op.attributes.items())), op.result_types)
        first = seen.get(key)
        if first is None:
            seen[key] = op
        else:
            rw.replace_op(op, list(first.results))
            changed = True
    return changed


def _dce(func: FuncOp, dialect: Dialect | LoweringDialect, rw: Rewriter) -> bool:
    changed = False
    for op in reversed(func.body.ops):
        if op.name != RETURN and not op.has_users() and is_pure(dialect, op):
            rw.erase_op(op)
            changed = True
    return changed


# -- constant folding --------------------------------------------------------------------------

def _fold_constants(func: FuncOp, context: PassContext, rw: Rewriter) -> bool:
    changed = False
    for op in func.body.ops:
        changed |= fold_op(op, context, rw)
    return changed
