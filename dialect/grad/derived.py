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
from typing import TYPE_CHECKING, Any

from tdflow.dialect.formula.expr import (
    COMPARE_OPS,
    LOGICAL_BINARY_OPS,
    Binary,
    Cast,
    Expr,
    Input,
    Select,
    Unary,
    inputs_used,
    remap_inputs,
)
from tdflow.dialect.formula.text import format_expr, parse_expr
from tdflow.dialect.formula.types import infer_dtypes
from tdflow.dialect.types import FLOAT_DTYPES

from .defs import Emitter, Forward, GradDef, OpTable, default_differentiable

if TYPE_CHECKING:
    from tdflow.dialect.opdef import OpDef

__all__ = ["derived_gradient", "FUSED_OP"]

#: The op a derived gradient is emitted as (the one op whose formula is an attribute).
FUSED_OP = "tdflow.fused_elementwise"
_CACHE_LIMIT = 4096


def _freeze(attrs: Mapping[str, Any]) -> tuple:
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in attrs.items()))


class _Derived:
    """The derived gradient of one op; vjp expressions are cached per attribute values."""

    def __init__(self, opdef: OpDef) -> None:
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
              present: tuple[bool, ...], dtypes: tuple) -> list[tuple[int, Any]]:
        """Per wanted input: ``None`` (zero), a leaf index, or ``(used leaves, expr text)``;
        cached, so a training loop differentiates each (op, attributes, dtypes) once.
        ``dtypes`` is ``(input dtypes, result dtypes)``."""
        key = ("plan", n, wanted, present, dtypes) + _freeze(attrs)
        plan = self._cache.get(key)
        if plan is None:
            from tdflow.dialect.formula.derive import vjp

            in_dtypes, out_dtypes = dtypes
            exprs = [_explicit_casts(e, in_dtypes, d)
                     for e, d in zip(self.outputs(attrs), out_dtypes)]
            grads = vjp(exprs, n, wanted, douts_present=present)
            plan = [(i, _emit_plan(grads.get(i))) for i in wanted]
            self._cache[key] = plan
        return plan

    def __call__(self, g: Emitter, fwd: Forward) -> dict[str, Any]:
        values, where = self._flat(fwd)
        douts = [fwd.douts.get(r.name) for r in self.opdef.results]
        wanted = tuple(i for i, (name, _) in enumerate(where) if name in fwd.wants)
        dtypes = (tuple(g.type_of(v).dtype for v in values),
                  tuple(g.type_of(fwd.outputs[r.name]).dtype for r in self.opdef.results))
        plan = self._plan(fwd.attrs, len(values), wanted, tuple(d is not None for d in douts),
                          dtypes)
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


def _explicit_casts(expr: Expr, in_dtypes: tuple[str, ...], out_dtype: str) -> Expr:
    """``expr`` with every non-float operand that arithmetic promotes to a float type wrapped
    in an explicit ``cast``. The forward computes the same; but the gradient regroups products
    with constants (``dy * (mask * 2.0)`` for dropout_grad's ``dy * mask * scale``), and a
    constant is weak (it takes its operand's type), so without the cast ``mask * 2.0`` would
    compute in ``i1`` and drop the scale.

    >>> from tdflow.dialect.formula.expr import Input
    >>> _explicit_casts(Input(0) * Input(1) * 2.0, ("f64", "i1"), "f64")
    mul(mul(in0, cast(in1, f64)), 2.0)
    """
    if all(d in FLOAT_DTYPES for d in in_dtypes):
        return expr
    types = infer_dtypes(expr, in_dtypes, out_dtype if out_dtype in FLOAT_DTYPES else "f32")
    memo: dict[int, Expr] = {}

    def promoted(child: Expr, to: str) -> Expr:
        new = go(child)
        t = types.get(child)
        return Cast(new, to) if t is not None and t not in FLOAT_DTYPES else new

    def go(n: Expr) -> Expr:
        done = memo.get(id(n))
        if done is not None:
            return done
        t = types.get(n)
        floating = t in FLOAT_DTYPES
        if isinstance(n, Binary):
            arith = n.op not in COMPARE_OPS and n.op not in LOGICAL_BINARY_OPS
            if arith and floating:
                out: Expr = Binary(n.op, promoted(n.a, t), promoted(n.b, t))
            else:
                out = Binary(n.op, go(n.a), go(n.b))
        elif isinstance(n, Select):
            out = (Select(go(n.cond), promoted(n.a, t), promoted(n.b, t)) if floating
                   else Select(go(n.cond), go(n.a), go(n.b)))
        elif isinstance(n, Unary):
            out = Unary(n.op, go(n.x))
        elif isinstance(n, Cast):
            out = Cast(go(n.x), n.dtype)
        else:  # Input, Const
            out = n
        memo[id(n)] = out
        return out

    return go(expr)


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


def derived_gradient(ctx: OpTable, opdef: OpDef) -> GradDef | None:
    """The formula-derived gradient of ``opdef``, or ``None`` when it has no formula."""
    if opdef.formula is None and opdef.name != FUSED_OP:
        return None
    d = _Derived(opdef)
    diff = default_differentiable(ctx, opdef)
    return GradDef("formula", d, diff, d.saves)
