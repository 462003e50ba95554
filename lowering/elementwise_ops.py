"""Elementwise ops as lowering sees them: each op's ``formula`` from its ``.td`` record.

Nothing here restates an op: operand names, the formula, the attributes it reads with their
defaults and the element types its kernel admits all come from the op's definition
(:func:`elementwise_def`). ``ELEMENTWISE_OPS`` is that view of the standard library.

>>> d = ELEMENTWISE_OPS["tdflow.leaky_relu"]
>>> d.inputs, d.attrs
(('x',), {'alpha': 0.0})
>>> d.bind({"alpha": 0.2})
max(in0, mul(in0, 0.2))
>>> ELEMENTWISE_OPS["tdflow.scalar_add"].bind({"has_int_operand": True, "int_operand": 3})
add(in0, 3)

Attributes are bound when a kernel is built (:meth:`ElementwiseDef.bind`): missing ones take the
``.td`` default. OneFlow's scalar-operand family (``has_int_operand``/``has_float_operand``
choosing ``int_operand``/``float_operand``) must set one of its flags, as OneFlow requires.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from tdflow.dialect.formula.dtypes import FLOATS, INTS, NUMERIC, formula_dtypes
from tdflow.dialect.formula.expr import Expr, bind

from tdflow.core.valueclass import field, value_class

if TYPE_CHECKING:
    from tdflow.dialect.opdef import OpDef

__all__ = ["ELEMENTWISE_OPS", "ElementwiseDef", "elementwise_def", "FLOATS", "INTS", "NUMERIC"]

#: OneFlow's scalar-operand attributes: the flags choose which value is the operand.
SCALAR_FLAGS = ("has_int_operand", "has_float_operand")


@value_class(frozen=True)
class ElementwiseDef:
    """An elementwise op: operand names, formula, attribute defaults and supported dtypes.

    ``dtypes`` constrains input 0; ``same_dtype_inputs`` lists the inputs that must share its
    type (those declared with input 0's constraint); ``input_dtypes`` gives the admitted types
    of inputs whose constraint names its own (``dropout_grad``'s ``mask``).
    """

    name: str
    inputs: tuple[str, ...]
    exprs: tuple[Expr, ...]  # one per result, in the op's result order
    attrs: Mapping[str, Any] = field(default_factory=dict)
    dtypes: frozenset[str] = FLOATS
    same_dtype_inputs: tuple[int, ...] | None = None
    input_dtypes: Mapping[int, frozenset[str]] = field(default_factory=dict)
    summary: str = ""
    scalar_family: bool = False

    @property
    def expr(self) -> Expr:
        """The first result's expression (the only one, for most ops)."""
        return self.exprs[0]

    @property
    def arity(self) -> int:
        return len(self.inputs)

    @property
    def mnemonic(self) -> str:
        return self.name.split(".", 1)[-1]

    def filled(self, attrs: Mapping[str, Any]) -> dict[str, Any]:
        """``attrs`` with the defaults of the missing ones."""
        return {k: attrs.get(k, v) for k, v in self.attrs.items()}

    def bind(self, attrs: Mapping[str, Any] | None = None, result: int = 0) -> Expr:
        """Result ``result``'s formula with attribute values (defaults filled) substituted and
        folded."""
        attrs = attrs or {}
        values = self.filled(attrs)
        if self.scalar_family and not any(attrs.get(f) for f in SCALAR_FLAGS):
            raise ValueError(f"{self.name}: set has_int_operand or has_float_operand (neither "
                             f"is true), as OneFlow requires")
        return bind(self.exprs[result], values)

    def attr_key(self, attrs: Mapping[str, Any]) -> tuple[Any, ...]:
        """Hashable key of the attribute values the formula depends on (for kernel caches)."""
        return tuple(attrs.get(k, v) for k, v in self.attrs.items())


# OpDef -> its ElementwiseDef; OpDefs are immutable, so the view is made once per definition.
_DEFS: dict[int, tuple[Any, ElementwiseDef]] = {}


def elementwise_def(opdef: OpDef) -> ElementwiseDef | None:
    """The :class:`ElementwiseDef` of an op with a ``formula`` (``None`` without one).

    >>> from tdflow.dialect import standard_dialect
    >>> elementwise_def(standard_dialect().lookup("tdflow.relu")).dtypes == NUMERIC
    True
    """
    checked = getattr(opdef, "formula", None)
    if checked is None:
        return None
    hit = _DEFS.get(id(opdef))
    if hit is not None and hit[0] is opdef:
        return hit[1]
    operands = opdef.operands
    first = operands[0].constraint if operands else None
    same = tuple(i for i, o in enumerate(operands) if i and o.constraint == first)
    own = {i: frozenset(o.dtypes) for i, o in enumerate(operands)
           if i and o.constraint != first and o.dtypes is not None}
    names = {a.name for a in opdef.attributes}
    d = ElementwiseDef(
        name=opdef.name, inputs=tuple(checked.operands), exprs=tuple(checked.exprs),
        attrs=dict(checked.attr_defaults), dtypes=frozenset(formula_dtypes(checked)),
        same_dtype_inputs=same or None, input_dtypes=own, summary=opdef.summary,
        scalar_family=all(f in names for f in SCALAR_FLAGS))
    _DEFS[id(opdef)] = (opdef, d)
    return d


def _standard() -> dict[str, ElementwiseDef]:
    from tdflow.dialect import standard_dialect

    out = {}
    for op in standard_dialect():
        d = elementwise_def(op)
        if d is not None:
            out[op.name] = d
    return out


class _StandardDefs(Mapping[str, ElementwiseDef]):
    """:data:`ELEMENTWISE_OPS`, built on first use: the standard library's 71 formula ops'
    views cost a few ms that ``tdflow lower`` and ``tdflow run`` never need (fusion reads each
    op's own :func:`elementwise_def`)."""

    def __init__(self) -> None:
        self._defs: dict[str, ElementwiseDef] | None = None

    def _all(self) -> dict[str, ElementwiseDef]:
        if self._defs is None:
            self._defs = _standard()
        return self._defs

    def __getitem__(self, name: str) -> ElementwiseDef:
        if self._defs is not None:
            return self._defs[name]
        # one op's view (``in``/``get``, what plan-memory asks): the standard library's ops are
        # made on first lookup (dialect.lazy_ops), so building all 71 views would make them all
        from tdflow.dialect import standard_dialect

        op = standard_dialect().lookup(name)
        d = elementwise_def(op) if op is not None else None
        if d is None:
            raise KeyError(name)
        return d

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __repr__(self) -> str:
        return repr(self._all())


ELEMENTWISE_OPS: Mapping[str, ElementwiseDef] = _StandardDefs()
"""The :class:`ElementwiseDef` of every standard op with a formula, by op name (read-only).

>>> ELEMENTWISE_OPS["tdflow.relu"].name, "tdflow.matmul" in ELEMENTWISE_OPS
('tdflow.relu', False)
"""
