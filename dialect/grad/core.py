"""One gradient definition per op, and the driver both autograd modes call.

An op's gradient comes from exactly one place, found by :func:`gradient_of` in this order:

1. its ``grad`` field (``let grad = [{ a: matmul(dout, b, transpose_b=true); ... }]``), parsed
   by tdflow's grammar and evaluated against an :class:`Emitter` (:mod:`.field`);
2. a Python rule registered with :func:`grad_rule` in a hooks module, for what a field cannot
   say (``@grad_rule("tdflow.conv2d")``);
3. for an op with a ``formula`` (and ``tdflow.fused_elementwise``, whose formula is its
   ``expr``), derived by symbolic differentiation: the gradient is itself a formula, emitted as
   one ``fused_elementwise`` op, so it fuses and renders like any other (:mod:`.derived`).

``NoGrad`` ops have none, and asking for one is a :class:`GradError`; so are integer inputs
and inputs whose ``modify_input_arg`` hook says ``requires_grad=False`` (``label``, ``like``).

A definition is written against an :class:`Emitter`: ``op(name, operands, attrs)`` applies
an op of the context and returns its results; ``type_of(value)`` is a value's
:class:`~tdflow.dialect.types.TensorType`. Eager mode's emitter runs kernels on tensors,
graph mode's (the ``autodiff`` pass) builds IR, so both modes use the same definition.
:func:`input_gradients` runs a definition for one op application (a :class:`Forward`) and
reduces each gradient to its input's shape when the op broadcast it.

>>> from tdflow.dialect.context import standard_context
>>> ctx = standard_context()
>>> g = gradient_of(ctx, ctx.lookup("tdflow.matmul"))
>>> g.source, sorted(g.differentiable)
('grad field', ['_add_to_output', 'a', 'b'])
>>> gradient_of(ctx, ctx.lookup("tdflow.tanh")).source
'formula'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from tdflow.core.declarations import declared_by, record

from .defs import Emitter, Forward, GradDef, GradError, OpTable, Rule, default_differentiable

if TYPE_CHECKING:
    from tdflow.dialect.opdef import OpDef

__all__ = ["Emitter", "Forward", "GradDef", "GradError", "grad_rule", "gradient_of",
           "gradient_report", "input_gradients", "needs_gradient", "registered_rules", "sum_to_shape"]


_RULES: dict[str, tuple[Rule, frozenset[str] | None, Iterable[str] | None]] = {}


def grad_rule(op: str, *, saves: Iterable[str] | None = None,
              inputs: Iterable[str] | None = None) -> Callable[[Rule], Rule]:
    """Register a Python gradient rule for ``op`` (qualified; a bare name means ``tdflow``):
    ``fn(emitter, forward) -> {input name: gradient value or None}``. ``saves`` names the
    inputs and results the rule reads (default: all); ``inputs`` the inputs it differentiates
    (default: the op's floating-point operands).

    >>> @grad_rule("doc.twice", saves=())
    ... def _twice(g, fwd):
    ...     return {"x": g.op("tdflow.scalar_mul", [fwd.douts["y"]],
    ...                       {"has_float_operand": True, "float_operand": 2.0})[0]}
    >>> "doc.twice" in registered_rules()
    True
    """
    name = op if "." in op else f"tdflow.{op}"

    def deco(fn: Rule) -> Rule:
        rule = (fn, None if saves is None else frozenset(saves), inputs)
        if record("grad_rule", (name, rule), getattr(fn, "__module__", None)):
            return fn  # a hooks module imported for a context: that context's
        _RULES[name] = rule
        _DEFS.clear()
        return fn

    return deco


def registered_rules() -> frozenset[str]:
    """Names of the ops with a Python gradient rule."""
    return frozenset(_RULES)


_DEFS: dict[tuple[int, str], GradDef | None] = {}


def own_rules(ctx: OpTable) -> dict[str, tuple]:
    """The gradient rules ``ctx``'s hooks modules declare (``@grad_rule`` in a file given to
    ``load_ops(hooks=...)``), by op: they serve that context only.

    >>> from tdflow.dialect.context import standard_context
    >>> own_rules(standard_context())
    {}
    """
    return dict(declared_by(ctx, "grad_rule"))


def gradient_of(ctx: OpTable, opdef: OpDef) -> GradDef | None:
    """The op's gradient definition (see the module docstring), ``None`` when it has none.
    Raises :class:`~tdflow.tdparser.errors.TdError` for a ``grad`` field that does not parse or
    check (located inside the field) and :class:`GradError` for an op with two definitions."""
    key = (id(ctx), opdef.name)
    if key in _DEFS:
        return _DEFS[key]
    result = _resolve(ctx, opdef)
    _DEFS[key] = result
    return result


def _resolve(ctx: OpTable, opdef: OpDef) -> GradDef | None:
    if opdef.has_trait("NoGrad"):
        return None
    served = getattr(ctx, "served_by", None) or {}
    rule = own_rules(ctx).get(opdef.name) or _RULES.get(opdef.name)
    field_code = getattr(opdef, "grad_code", None)
    if rule is not None and field_code:
        raise GradError(f"op '{opdef.name}' has two gradient definitions: a `grad` field and "
                        f"a Python rule ({rule[0].__module__}.{rule[0].__qualname__}); keep one")
    if field_code:
        from .field import field_gradient

        return field_gradient(ctx, opdef)
    if rule is not None:
        fn, saves, inputs = rule
        diff = (frozenset(inputs) if inputs is not None
                else default_differentiable(ctx, opdef))
        return GradDef("rule", fn, diff, lambda attrs, s=saves: s)
    from .derived import derived_gradient

    derived = derived_gradient(ctx, opdef)
    if derived is not None:
        return derived
    std = served.get(opdef.name)
    if std is not None:  # served by a standard op: its gradient, under this op's name
        return gradient_of(ctx, ctx.lookup(std))
    return None


def needs_gradient(ctx: OpTable, opdef: OpDef) -> bool:
    """Whether a missing gradient definition is a problem ``tdflow verify`` reports: the op is
    not ``NoGrad``, not created by lowering only, not lowered before autodiff runs
    (``LoweredFirst``: ONNX's ops), and has an operand that may be floating-point."""
    if any(opdef.has_trait(t) for t in ("NoGrad", "LoweringOnly", "LoweredFirst")):
        return False
    return bool(default_differentiable(ctx, opdef))


def gradient_report(ctx: OpTable, ops: Iterable[Any]) -> tuple[dict[str, int], list, list]:
    """What ``tdflow verify`` says of gradients: ``(count per source, ops that need a
    gradient and have none, errors)``; an error is a ``TdError`` from a ``grad`` field that
    does not parse or check (located in it) or a :class:`GradError` (two definitions).

    >>> from tdflow.dialect.context import standard_context
    >>> ctx = standard_context()
    >>> counts, missing, errors = gradient_report(ctx, [ctx.lookup("tdflow.tanh")])
    >>> counts, missing, errors
    ({'formula': 1}, [], [])
    """
    from tdflow.tdparser.errors import TdError

    counts: dict[str, int] = {}
    missing, errors = [], []
    for op in ops:
        try:
            gd = gradient_of(ctx, op)
        except (TdError, GradError) as e:
            errors.append(e)
            continue
        if gd is not None:
            counts[gd.source] = counts.get(gd.source, 0) + 1
        elif needs_gradient(ctx, op):
            missing.append(op)
    return counts, missing, errors


def input_gradients(ctx: OpTable, g: Emitter, fwd: Forward) -> dict[str, Any]:
    """Run the op's gradient for ``fwd``: ``{input name: gradient}`` for each wanted input
    (``None`` when it is zero; a tuple for a variadic operand), each with its input's shape.
    Raises :class:`GradError` naming the op and input when a wanted gradient cannot be had."""
    opdef = fwd.opdef
    gd = gradient_of(ctx, opdef)
    if gd is None:
        if opdef.has_trait("NoGrad"):
            raise GradError(f"'{opdef.name}' is marked NoGrad: no gradient flows through it "
                            f"(asked for '{', '.join(sorted(fwd.wants))}')")
        raise GradError(f"'{opdef.name}' has no gradient definition (no `grad` field, no "
                        f"formula, no @grad_rule); asked for "
                        f"'{', '.join(sorted(fwd.wants))}'")
    missing = sorted(fwd.wants - gd.differentiable)
    if missing:
        raise GradError(f"'{opdef.name}' has no gradient for input '{missing[0]}' (its "
                        f"gradient is defined for: {', '.join(sorted(gd.differentiable)) or 'none'})")
    if all(d is None for d in fwd.douts.values()):
        return dict.fromkeys(fwd.wants)
    raw = gd.fn(g, fwd)
    out: dict[str, Any] = {}
    for name in fwd.wants:
        grad = raw.get(name)
        x = fwd.inputs.get(name)
        if grad is None or x is None:
            out[name] = None
        elif isinstance(x, tuple):
            out[name] = tuple(None if gi is None else sum_to_shape(g, gi, xi)
                              for gi, xi in zip(grad, x))
        else:
            out[name] = sum_to_shape(g, grad, x)
    return out


def sum_to_shape(g: Emitter, grad: Any, like: Any) -> Any:
    """``grad`` summed over the dims a broadcast of ``like`` stretched, so it has ``like``'s
    shape (the gradient of numpy broadcasting); ``grad`` itself when the shapes agree."""
    gt, xt = g.type_of(grad), g.type_of(like)
    gs, xs = tuple(gt.shape), tuple(xt.shape)
    if gs == xs:
        return grad
    lead = len(gs) - len(xs)
    if lead < 0:
        raise GradError(f"a gradient of shape {list(gs)} cannot be reduced to its input's "
                        f"shape {list(xs)}")
    stretched = [lead + i for i, d in enumerate(xs) if d == 1 and gs[lead + i] != 1]
    axes = list(range(lead)) + stretched
    if not stretched or lead == 0:  # summing drops the leading dims or keeps the stretched
        return g.op("tdflow.reduce_sum_like", [grad, like], {"axis": axes})[0]
    summed = g.op("tdflow.reduce_sum", [grad], {"axis": axes, "keepdims": True})[0]
    return g.op("tdflow.reshape", [summed], {"shape": list(xs)})[0]
