"""The verifier's memo keys (:func:`~tdflow.dialect.op_verify.verify_operation`).

An op found valid is remembered by (name, operand types, result types, declared attributes),
and a later op with the same key is accepted at once. Programs give many ops their own float
constant (every ``leaky_relu`` its ``alpha``, every ``scalar_mul`` its operand), which would make
each of them a miss. For an op whose verification cannot depend on such a constant, the
constant's value is left out of the key (its attribute type stays in):

- the op has no normalization rule on its attributes, and each of its ``check_attr``,
  ``infer_logical_tensor_desc`` and ``infer_data_type`` hooks is either absent or marked
  :func:`~tdflow.dialect.hooks.registry.float_values_unread` (what else verification checks,
  counts, kinds, traits, never reads a float's value);
- the attribute is declared ``f32``/``f64`` (any :class:`FloatAttr` is a valid value) and, for
  an op with a formula (its own, or the serving standard op's), is not one of the formula's
  type-deciding attributes (a float read in a select's condition picks a branch, so its value
  stays in the key: :func:`~tdflow.dialect.formula.dtypes.type_deciding_attrs`).

Hashing that key runs the ``__hash__`` of every type and attribute in it (Python code, ~3 per
op). So the memo first looks up :func:`identity_key`, built from the objects' ids (hashed in
C), which the parser makes repeat: an op whose types and attribute values are the very objects
of an op found valid is valid. Only on a miss is the key by value built and looked up; a hit
there adds the identity key too.

>>> from tdflow.dialect.ir.attrs import FloatAttr
>>> def key(alpha):
...     return memo_key("tdflow.leaky_relu", (), (), {"alpha": alpha}, frozenset({"alpha"}))
>>> key(FloatAttr(0.1, "f32")) == key(FloatAttr(0.3, "f32")), key(FloatAttr(0.1, "f64")) == key(FloatAttr(0.1, "f32"))
(True, False)
"""

from __future__ import annotations

from typing import Any

from .ir.attrs import FloatAttr

__all__ = ["BY_ID", "float_blind_attrs", "identity_key", "memo_key", "memo_plan"]

_FLOAT_KINDS = ("f32", "f64")


class _AnyFloat:
    """Stands for "some float" in a memo key; equal only to itself (no attribute equals it)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<any float>"


_ANY_FLOAT = _AnyFloat()


def float_blind_attrs(dialect, name: str) -> frozenset[str]:
    """The attributes of op ``name`` whose float values cannot change its verification (see
    the module notes).

    >>> from tdflow.dialect import standard_dialect
    >>> sorted(float_blind_attrs(standard_dialect(), "tdflow.scalar_mul"))
    ['float_operand']
    >>> sorted(float_blind_attrs(standard_dialect(), "tdflow.matmul"))
    []
    """
    info = dialect.op_info(name)
    return _blind(info)


def memo_plan(info, declared: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """``(declared, blind)`` of an op: the attribute names it declares, and
    :func:`float_blind_attrs`; cached on its :class:`~tdflow.dialect.infer.OpInfo`, which the
    dialect drops when its hooks change.

    >>> from tdflow.dialect import standard_dialect
    >>> info = standard_dialect().op_info("tdflow.leaky_relu")
    >>> memo_plan(info, frozenset({"alpha"})) == (frozenset({"alpha"}), frozenset({"alpha"}))
    True
    """
    plan = info.memo_plan = (declared, _blind(info))
    return plan


def _blind(info) -> frozenset[str]:
    if info.ruled or any(getattr(h, "reads_float_values", True)
                         for h in (info.check, info.logical, info.dtype) if h is not None):
        return frozenset()
    op = info.op
    fop = op if op.formula is not None else info.hook_op
    deciding: set[str] = set()
    if fop.formula is not None:
        from .formula.dtypes import type_deciding_attrs

        deciding.update(type_deciding_attrs(fop.formula))
    return frozenset(a.name for a in op.attributes
                     if a.kind in _FLOAT_KINDS and a.name not in deciding)


def memo_key(name: str, types: tuple, results: tuple, attrs: dict[str, Any],
             blind: frozenset[str]) -> tuple | None:
    """The memo key of op ``name`` with operand types ``types``, result types ``results`` and
    declared attributes ``attrs`` (non-empty): the values of the ``blind`` attributes replaced
    by a marker and their float type; ``None`` (no memo) when a value holds constant elements.
    Hashing it raises ``TypeError`` for an unhashable value.

    >>> from tdflow.dialect.ir.attrs import FloatAttr
    >>> k = memo_key("t.a", (), (), {"c": FloatAttr(0.5, "f32")}, frozenset({"c"}))
    >>> k == memo_key("t.a", (), (), {"c": FloatAttr(2.5, "f32")}, frozenset({"c"}))
    True
    """
    parts = []
    for k, v in attrs.items():
        if type(v) is FloatAttr:
            parts.append((k, (_ANY_FLOAT, v.type)) if k in blind else (k, v))
        elif getattr(v, "holds_elements", False):  # holds_constant: no memo
            return None
        else:
            parts.append((k, v))
    return (name, types, results, tuple(parts))


#: The first element of every identity key (no key by value has it).
BY_ID = _AnyFloat()


def identity_key(name: str, op, attrs: dict[str, Any], blind: frozenset[str]) -> tuple | None:
    """The memo key by identity: the ids of the op's operand and result types and of its
    declared attribute values (a blind float: its type), hashed in C. Equal ids mean the very
    objects an op found valid had, which the memo keeps alive beside the key, so that no id
    is reused meanwhile. The parser shares them: one type object per distinct type, one
    attribute object per distinct attribute text. ``None`` where :func:`memo_key` is.

    >>> from tdflow.dialect.ir.core import Block
    >>> from tdflow.dialect.types import TensorType
    >>> b = Block([TensorType((2,), "f32")])
    >>> op = b.append_new("t.a", (b.args[0],), [b.args[0].type], {}, None)
    >>> identity_key("t.a", op, {}, frozenset()) == identity_key("t.a", op, {}, frozenset())
    True
    """
    key = [BY_ID, name, *[id(v.type) for v in op.operands], None,
           *[id(r.type) for r in op.results]]
    for k, v in attrs.items():
        if type(v) is FloatAttr and k in blind:
            key += (k, v.type)  # a str: never equal to an id
        elif getattr(v, "holds_elements", False):
            return None
        else:
            key += (k, id(v))
    return tuple(key)
