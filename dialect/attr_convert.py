"""IR attributes (:mod:`tdflow.dialect.ir.attrs`) <-> the typed Python values hooks see.

``to_value(kind, attr)`` accepts what DESIGN.md's "Program text" allows for each kind (an
integer literal where a float is expected, ``[1, 0]`` or ``array<i64: 1, 0>`` for integer
arrays, a type for a dtype) and raises ``TypeError`` saying what was expected; ``to_attr`` is
the inverse used by the builder, producing MLIR's spelling of each kind (``0.2 : f32``,
``[1 : si32]``, ``f16``).

>>> from tdflow.dialect.ir.attrs import FloatAttr, IntegerAttr
>>> to_value("f32", IntegerAttr(1)), str(to_attr("f32", 0.2)), str(to_attr("si32_array", (1, 0)))
(1.0, '2.000000e-01 : f32', '[1 : si32, 0 : si32]')
"""

from __future__ import annotations

from typing import Any

from .attr_kinds import DTYPE_NAMES, INT_RANGE, coerce, element_kind, kind_description
from .ir.attrs import (
    ArrayAttr,
    Attribute,
    BoolAttr,
    DenseArrayAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TypeAttr,
)

_INT_TYPES = {"si32": "si32", "si64": "si64"}


def describe(attr: Any) -> str:
    """How an attribute was written, for messages: ``"NCHW" (a string)``."""
    kinds = {BoolAttr: "a bool", IntegerAttr: "an integer", FloatAttr: "a float",
             StringAttr: "a string", ArrayAttr: "an array", DenseArrayAttr: "a dense array",
             TypeAttr: "a type"}
    return f"{attr} ({kinds.get(type(attr), type(attr).__name__)})"


def to_value(kind: str, attr: Any) -> Any:
    """The typed Python value of IR attribute ``attr`` for an attribute of ``kind``."""
    if not isinstance(attr, Attribute):
        return coerce(kind, attr)  # already a Python value (builder, eager calls)
    t = type(attr)
    if kind == "other":
        return attr
    if kind in ("f32", "f64"):
        if t is FloatAttr or t is IntegerAttr:
            return float(attr.value)
    elif kind in INT_RANGE:
        if t is IntegerAttr and attr.type != "i1":
            lo, hi = INT_RANGE[kind]
            if not lo <= attr.value <= hi:
                raise ValueError(f"{attr.value} is out of range for {kind} [{lo}, {hi}]")
            return attr.value
    elif kind == "bool":
        if t is BoolAttr:
            return attr.value
        if t is IntegerAttr and attr.type == "i1":
            return bool(attr.value)
    elif kind == "str":
        if t is StringAttr:
            return attr.value
    elif kind == "dtype":
        if t is TypeAttr and isinstance(attr.value, str) and attr.value in DTYPE_NAMES:
            return attr.value
    else:
        elem = element_kind(kind)
        if elem is not None:
            if t is ArrayAttr:
                try:
                    return tuple(to_value(elem, a) for a in attr.value)
                except TypeError as exc:
                    raise TypeError(f"expected {kind_description(kind)}, got {attr}: {exc}") from None
            if t is DenseArrayAttr and elem in ("si32", "si64", "f32", "f64", "bool"):
                if (elem[0] == "f") == (attr.type[0] == "f") and (elem == "bool") == (attr.type == "i1"):
                    return tuple(attr.value)
    raise TypeError(f"expected {kind_description(kind)}, got {describe(attr)}")


def to_attr(kind: str, value: Any) -> Attribute:
    """The IR attribute for a Python value of ``kind`` (MLIR's spelling of the kind)."""
    if isinstance(value, Attribute):
        return value
    value = coerce(kind, value)
    if kind == "bool":
        return BoolAttr(value)
    if kind in _INT_TYPES:
        return IntegerAttr(value, _INT_TYPES[kind])
    if kind in ("f32", "f64"):
        return FloatAttr(value, kind)
    if kind == "str":
        return StringAttr(value)
    if kind == "dtype":
        return TypeAttr(value)
    if kind == "shape":
        return ArrayAttr(tuple(IntegerAttr(v) for v in value))
    elem = element_kind(kind)
    if elem is not None:
        return ArrayAttr(tuple(to_attr(elem, v) for v in value))
    raise TypeError(f"cannot build an attribute of kind {kind!r} from {value!r}")
