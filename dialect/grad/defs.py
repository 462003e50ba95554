"""What a gradient definition is written against (:class:`Emitter`, :class:`Forward`), what it
is (:class:`GradDef`), its error, and which operands can carry a gradient by default.

The three sources of a definition (:mod:`.field`, :mod:`.core`'s rules, :mod:`.derived`) all
build on these; :mod:`.core` picks among them.

>>> Forward(None, {}, {"x": 1}, {"y": 2}, {"y": None}, frozenset({"x"})).inputs
{'x': 1}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from tdflow.dialect.types import FLOAT_DTYPES, TensorType

from tdflow.core.errors import TdflowError
from tdflow.core.valueclass import field, value_class

if TYPE_CHECKING:
    from tdflow.dialect.opdef import OpDef


class OpTable(Protocol):
    """What gradients ask of a context: its ops by name and their hooks (a
    :class:`~tdflow.dialect.context.Context`, or a single
    :class:`~tdflow.dialect.dialect.Dialect`; typed by what is used, since both import the hooks
    that import this package)."""

    def lookup(self, name: str) -> OpDef | None:
        """The op called ``name`` (qualified), or ``None``."""

    def hook(self, op_name: str, kind: str) -> Callable[..., Any] | None:
        """The ``kind`` hook of ``op_name``, or ``None``."""


class GradError(TdflowError, ValueError):
    """A gradient that cannot be had: a ``NoGrad`` op, an integer input, an op without a
    gradient definition; the message names the op and the input."""


class Emitter(Protocol):
    """What a gradient definition builds with (eager: kernels; graph mode: IR)."""

    def op(self, name: str, operands: Sequence[Any], attrs: Mapping[str, Any]) -> tuple:
        """Apply op ``name`` to ``operands`` (a value, ``None`` for an absent optional, a list
        for a variadic operand) with Python attribute values; return its results."""

    def type_of(self, value: Any) -> TensorType:
        """The value's tensor type."""


@value_class
class Forward:
    """One application of an op, as its gradient sees it.

    ``inputs``/``outputs`` map operand and result names to values (``None`` for an absent
    optional operand, a tuple for a variadic one); ``douts`` maps result names to the gradient
    flowing into them, ``None`` meaning zero; ``attrs`` holds every attribute value (defaults
    filled); ``wants`` names the inputs whose gradients are asked for.
    """

    opdef: OpDef
    attrs: dict[str, Any]
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    douts: dict[str, Any]
    wants: frozenset[str]


Rule = Callable[[Emitter, Forward], Mapping[str, Any]]


@value_class(frozen=True)
class GradDef:
    """An op's gradient: ``fn(emitter, forward) -> {input name: gradient or None}``.

    ``source`` says where it comes from (``"grad field"``, ``"rule"``, ``"formula"``);
    ``differentiable`` names the inputs it can give gradients for; ``saves(attrs)`` names the
    inputs and results it reads (``None``: all), so eager mode keeps only those alive (MXNet's
    ``BackwardDependency``).
    """

    source: str
    fn: Rule
    differentiable: frozenset[str]
    saves: Callable[[Mapping[str, Any]], frozenset[str] | None] = field(
        default=lambda attrs: None)


def _modifiers_without_attrs(ctx: OpTable, opdef: OpDef) -> dict:
    """The op's ``modify_input_arg`` answer with only its attribute defaults: what an op says
    about ``requires_grad`` does not depend on attribute values (``like`` never takes one)
    even when the op has required attributes; a hook that reads a missing one gives none."""
    fn = ctx.hook(opdef.name, "modify_input_arg") if hasattr(ctx, "hook") else None
    if fn is None:
        return {}
    from ..hooks.context import InferContext

    defaults = {a.name: a.default for a in opdef.attributes if a.has_default}
    try:
        return dict(fn(InferContext(opdef, {}, defaults)) or {})
    except Exception:  # noqa: BLE001 - a hook that needs attributes or inputs: assume none
        return {}


def default_differentiable(ctx: OpTable, opdef: OpDef) -> frozenset[str]:
    """Operands that can carry a gradient: not declared ``requires_grad=False`` and not
    restricted to integer/bool element types by their constraint.

    >>> from tdflow.dialect.context import standard_context
    >>> ctx = standard_context()
    >>> sorted(default_differentiable(ctx, ctx.lookup("tdflow.matmul")))
    ['_add_to_output', 'a', 'b']
    """
    mods = _modifiers_without_attrs(ctx, opdef)
    out = set()
    for d in opdef.operands:
        m = mods.get(d.name)
        if m is not None and not m.requires_grad:
            continue
        if d.dtypes is not None and not any(t in FLOAT_DTYPES for t in d.dtypes):
            continue
        out.add(d.name)
    return frozenset(out)
