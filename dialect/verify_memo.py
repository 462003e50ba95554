"""The attributes part of the verifier's memo key (:func:`~tdflow.dialect.op_verify.verify_operation`).

An op found valid is remembered by (name, operand types, result types, declared attributes),
and a later op with the same key is accepted at once. Programs give many ops their own float
constant (every ``leaky_relu`` its ``alpha``, every ``scalar_mul`` its operand), which would make
each of them a miss. For an op whose verification cannot depend on such a constant, the
constant's value is left out of the key (its attribute type stays in):

- the op has a formula (its own, or the serving standard op's) and no normalization rule on
  its attributes, and each of its ``check_attr``, ``infer_logical_tensor_desc`` and
  ``infer_data_type`` hooks is either absent or marked
  :func:`~tdflow.dialect.hooks.registry.float_values_unread`;
- the attribute is declared ``f32``/``f64`` (any :class:`FloatAttr` is a valid value) and is
  not one of the formula's type-deciding attributes (a float read in a select's condition picks
  a branch, so its value stays in the key: :func:`~tdflow.dialect.formula.dtypes.type_deciding_attrs`).

>>> from tdflow.dialect import standard_dialect
>>> from tdflow.dialect.ir.attrs import FloatAttr
>>> d = standard_dialect()
>>> a = attrs_key(d, "tdflow.leaky_relu", {"alpha": FloatAttr(0.1, "f32")})
>>> a == attrs_key(d, "tdflow.leaky_relu", {"alpha": FloatAttr(0.3, "f32")})
True
>>> a == attrs_key(d, "tdflow.leaky_relu", {"alpha": FloatAttr(0.1, "f64")})
False
"""

from __future__ import annotations

from typing import Any

from .ir.attrs import FloatAttr

__all__ = ["attrs_key", "float_blind_attrs"]

_FLOAT_KINDS = ("f32", "f64")


class _AnyFloat:
    """Stands for "some float" in a memo key; equal only to itself (no attribute equals it)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<any float>"


_ANY_FLOAT = _AnyFloat()


def float_blind_attrs(dialect, name: str) -> frozenset[str]:
    """The attributes of op ``name`` whose float values cannot change its verification (see
    the module notes); cached on the op's :class:`~tdflow.dialect.infer.OpInfo`, which the
    dialect drops when its hooks change.

    >>> from tdflow.dialect import standard_dialect
    >>> sorted(float_blind_attrs(standard_dialect(), "tdflow.scalar_mul"))
    ['float_operand']
    >>> sorted(float_blind_attrs(standard_dialect(), "tdflow.matmul"))
    []
    """
    info = dialect.op_info(name)
    blind = info.memo_blind
    if blind is None:
        blind = info.memo_blind = _blind(info)
    return blind


def _blind(info) -> frozenset[str]:
    if info.ruled or any(getattr(h, "reads_float_values", True)
                         for h in (info.check, info.logical, info.dtype) if h is not None):
        return frozenset()
    op = info.op
    fop = op if op.formula is not None else info.hook_op
    if fop.formula is None:
        return frozenset()
    from .formula.dtypes import type_deciding_attrs

    deciding = set(type_deciding_attrs(fop.formula))
    return frozenset(a.name for a in op.attributes
                     if a.kind in _FLOAT_KINDS and a.name not in deciding)


def attrs_key(dialect, name: str, attrs: dict[str, Any]) -> tuple:
    """The memo key's attributes part for op ``name`` with declared attributes ``attrs``:
    ``(name, value)`` pairs, the values of :func:`float_blind_attrs` replaced by a marker and
    their float type. Raises ``TypeError`` for an unhashable value, when the key is hashed.
    """
    if not attrs:
        return ()
    blind = float_blind_attrs(dialect, name)
    if not blind:
        return tuple(attrs.items())
    return tuple([(k, (_ANY_FLOAT, v.type)) if k in blind and type(v) is FloatAttr else (k, v)
                  for k, v in attrs.items()])
