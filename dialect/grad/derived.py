"""Gradients derived from an op's formula: nothing to write.

The formula, with the op's attributes bound, is differentiated symbolically
(:func:`tdflow.dialect.formula.derive.vjp`); each input's gradient is an elementwise
expression over the op's inputs and output gradients, emitted as one
``tdflow.fused_elementwise`` op (or passed through when it is just an output gradient, as for
``broadcast_add``). The expression renders to numpy and CUDA C like the forward, and graph
mode fuses it with its neighbours. ``tdflow.fused_elementwise`` differentiates the same way:
its formula is its ``expr`` attribute.

>>> from tdflow.dialect.context import standard_context
>>> ctx = standard_context()
>>> sorted(derived_gradient(ctx, ctx.lookup("tdflow.broadcast_mul")).differentiable)
['x', 'y']
>>> d = derived_gradient(ctx, ctx.lookup("tdflow.broadcast_add"))
>>> sorted(d.saves({}))   # dz/dx = dz/dy = dz: no forward value is kept for backward
[]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tdflow.dialect.formula.expr import Expr, Input, inputs_used, remap_inputs
from tdflow.dialect.formula.text import format_expr, parse_expr

from .core import Emitter, Forward, GradDef, _default_differentiable

__all__ = ["derived_gradient", "FUSED_OP"]

#: The op a derived gradient is emitted as (the one op whose formula is an attribute).
FUSED_OP = "tdflow.fused_elementwise"
_CACHE_LIMIT = 4096


def _freeze(attrs: Mapping[str, Any]) -> tuple:
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in attrs.items()))


class _Derived:
    """The derived gradient of one op; vjp expressions are cached per attribute values."""

    def __init__(self, opdef: Any) -> None:
        self.opdef = opdef
        self.is_fused = opdef.name == FUSED_OP
        self._cache: dict[tuple, list[Expr]] = {}

    def outputs(self, attrs: Mapping[str, Any]) -> list[Expr]:
        key = _freeze(attrs)
        exprs = self._cache.get(key)
        if exprs is None:
            if self.is_fused:
                exprs = [parse_expr(attrs["expr"])]
            else:
                formula = self.opdef.formula
                exprs = [formula.bind(attrs, result=k, leaky_max=False)
                         for k in range(len(self.opdef.results))]
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            self._cache[key] = exprs
        return exprs

    def _flat(self, fwd: Forward) -> tuple[list[Any], list[tuple[str, int | None]]]:
        """Operand values in formula order, and (operand name, index in a variadic) of each."""
        values, where = [], []
        for d in self.opdef.operands:
            v = fwd.inputs.get(d.name)
            if isinstance(v, tuple):
                for j, e in enumerate(v):
                    values.append(e)
                    where.append((d.name, j))
            elif v is not None:
                values.append(v)
                where.append((d.name, None))
        return values, where

    def saves(self, attrs: Mapping[str, Any]) -> frozenset[str]:
        key = ("saves",) + _freeze(attrs)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self._saves(attrs)  # (the outputs cache's bound applies)
        return hit

    def _saves(self, attrs: Mapping[str, Any]) -> frozenset[str]:
        from tdflow.dialect.formula.derive import vjp

        exprs = self.outputs(attrs)
        n = max((_arity(e) for e in exprs), default=0)
        if self.is_fused:
            grads = vjp(exprs, n, range(n))
            return frozenset({"in"}) if any(
                g is not None and any(i < n for i in inputs_used(g)) for g in grads.values()
            ) else frozenset()
        names = [d.name for d in self.opdef.operands]
        grads = vjp(exprs, len(names), range(len(names)))
        used = set()
        for g in grads.values():
            if g is not None:
                used |= {names[i] for i in inputs_used(g) if i < len(names)}
        return frozenset(used)

    def _plan(self, attrs: Mapping[str, Any], n: int, wanted: tuple[int, ...],
              present: tuple[bool, ...]) -> list[tuple[int, Any]]:
        """Per wanted input: ``None`` (zero), a leaf index, or ``(used leaves, expr text)``;
        cached, so a training loop differentiates each (op, attributes) once."""
        key = ("plan", n, wanted, present) + _freeze(attrs)
        plan = self._cache.get(key)
        if plan is None:
            from tdflow.dialect.formula.derive import vjp

            grads = vjp(self.outputs(attrs), n, wanted, douts_present=present)
            plan = [(i, _emit_plan(grads.get(i))) for i in wanted]
            self._cache[key] = plan
        return plan

    def __call__(self, g: Emitter, fwd: Forward) -> dict[str, Any]:
        values, where = self._flat(fwd)
        douts = [fwd.douts.get(r.name) for r in self.opdef.results]
        wanted = tuple(i for i, (name, _) in enumerate(where) if name in fwd.wants)
        plan = self._plan(fwd.attrs, len(values), wanted, tuple(d is not None for d in douts))
        leaves = values + douts
        out: dict[str, Any] = {}
        for i, step in plan:
            name, j = where[i]
            v = None if step is None else _emit(g, step, leaves)
            if j is None:
                out[name] = v
            else:
                slot = out.setdefault(name, [None] * len(fwd.inputs[name]))
                slot[j] = v
        return {k: tuple(v) if isinstance(v, list) else v for k, v in out.items()}


def _arity(e: Expr) -> int:
    used = inputs_used(e)
    return max(used) + 1 if used else 0


def _emit_plan(expr: Expr | None) -> Any:
    """How to emit ``expr``: ``None`` (zero), a leaf's index, or (used leaves, its text over
    them)."""
    if expr is None:
        return None
    if isinstance(expr, Input):
        return expr.index
    used = sorted(inputs_used(expr))
    body = remap_inputs(expr, {old: new for new, old in enumerate(used)})
    return tuple(used), format_expr(body)


def _emit(g: Emitter, step: Any, leaves: list[Any]) -> Any:
    """One gradient as one op (a leaf itself when the expression is one)."""
    if isinstance(step, int):
        return leaves[step]
    used, text = step
    return g.op(FUSED_OP, [[leaves[i] for i in used]], {"expr": text})[0]


def derived_gradient(ctx: Any, opdef: Any) -> GradDef | None:
    """The formula-derived gradient of ``opdef``, or ``None`` when it has no formula."""
    if opdef.formula is None and opdef.name != FUSED_OP:
        return None
    d = _Derived(opdef)
    diff = _default_differentiable(ctx, opdef)
    return GradDef("formula", d, diff, d.saves)
