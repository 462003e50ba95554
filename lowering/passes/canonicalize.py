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

from typing import Any

import numpy as np
from tdflow.dialect.ir import RETURN, Operation, Rewriter
from tdflow.dialect.ir.attrs import (
    ArrayAttr,
    BoolAttr,
    FloatAttr,
    IntegerAttr,
    TypeAttr,
    to_python,
)
from tdflow.dialect.types import FLOAT_DTYPES, TensorType

from ..ir_access import is_pure, mutated_operands, traits
from ..pass_manager import Pass, PassContext
from ..patterns_driver import PatternIndex, apply_greedily

#: The op that materialises constants (MLIR's ``materializeConstant``): one fill value.
CONSTANT_OP = "tdflow.constant"


class CanonicalizePass(Pass):
    name = "canonicalize"
    summary = ("standard rewrite rules, trait rewrites (Idempotent, Involution), constant "
               "folding, CSE and DCE")
    options = {"max-iterations": 8, "fold": True, "cse": True}

    def run(self, module: Any, context: PassContext) -> None:
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

    def annotate(self, module: Any, context: PassContext) -> str:
        from .apply_patterns import fired_report

        return fired_report(getattr(self, "fired", []))


def standard_patterns(dialect: Any) -> PatternIndex:
    """The standard library's rules (``ops/canonical.td``) when ``dialect`` holds the standard
    ops: a context's ``standard`` library, or the standard dialect itself.

    >>> from tdflow.dialect.context import standard_context
    >>> sorted(standard_patterns(standard_context()).roots())[:2]
    ['tdflow.broadcast_mul', 'tdflow.cast']
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


def _trait_rewrites(func: Any, dialect: Any, rw: Rewriter, ruled: frozenset[str]) -> bool:
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


def _cse(func: Any, dialect: Any, rw: Rewriter) -> bool:
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


def _dce(func: Any, dialect: Any, rw: Rewriter) -> bool:
    changed = False
    for op in reversed(func.body.ops):
        if op.name != RETURN and not op.has_users() and is_pure(dialect, op):
            rw.erase_op(op)
            changed = True
    return changed


# -- constant folding --------------------------------------------------------------------------

def constant_value(op: Operation) -> np.ndarray | None:
    """The array a ``tdflow.constant`` op produces, or ``None`` if its type is not static."""
    t = op.results[0].type if op.results else None
    if not isinstance(t, TensorType) or not t.is_static:
        return None
    a = {k: to_python(v) for k, v in op.attributes.items()}
    value = a.get("floating_value", 0.0) if a.get("is_floating_value") else a.get(
        "integer_value", 0)
    return np.full(t.shape, value, dtype=t.np_dtype)


def make_constant(value: np.ndarray, t: TensorType, loc: Any) -> Operation | None:
    """A ``tdflow.constant`` op for a uniform ``value`` of type ``t``; ``None`` if not uniform."""
    flat = value.reshape(-1)
    if flat.size == 0:
        fill = 0
    else:
        fill = flat[0]
        if not (flat == fill).all() or (t.dtype in FLOAT_DTYPES and np.isnan(fill)):
            return None
    is_float = t.dtype in FLOAT_DTYPES
    attrs = {
        "dtype": TypeAttr(t.dtype),
        "shape": ArrayAttr(tuple(IntegerAttr(int(d), "i64") for d in t.shape)),
        "is_floating_value": BoolAttr(is_float),
        "floating_value": FloatAttr(float(fill) if is_float else 0.0, "f64"),
        "integer_value": IntegerAttr(0 if is_float else int(fill), "si64"),
    }
    return Operation(CONSTANT_OP, [], [t], attrs, loc)


def _fold_constants(func: Any, context: PassContext, rw: Rewriter) -> bool:
    changed = False
    for op in func.body.ops:
        changed |= fold_op(op, context, rw)
    return changed


def fold_op(op: Operation, context: PassContext, rw: Rewriter) -> bool:
    """Fold ``op`` when it is pure and its operands are all ``tdflow.constant``: run its CPU
    kernel and replace it by the (uniform) result constant. The greedy pattern driver uses it
    per op; ``canonicalize`` sweeps it over a function."""
    from .select_kernels import run_for_folding

    if op.parent is None or op.name == CONSTANT_OP or not op.operands or not op.results:
        return False
    producers = []
    for v in op.operands:  # the common case, a non-constant operand, leaves at once
        p = v.op
        if p is None or p.name != CONSTANT_OP:
            return False
        producers.append(p)
    if not is_pure(context.dialect, op):
        return False
    types = op.result_types
    if not all(isinstance(t, TensorType) and t.is_static for t in types):
        return False
    inputs = [constant_value(p) for p in producers]  # type: ignore[arg-type]
    if any(a is None for a in inputs):
        return False
    outputs = run_for_folding(context, op, inputs)
    if outputs is None:
        return False
    news = [make_constant(np.asarray(o), t, op.loc) for o, t in zip(outputs, types)]
    if any(n is None for n in news):
        return False
    for n in news:
        rw.insert_before(op, n)  # type: ignore[arg-type]
    rw.replace_op(op, [n.results[0] for n in news])  # type: ignore[union-attr]
    return True
