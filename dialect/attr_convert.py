"""IR attributes (:mod:`tdflow.dialect.ir.attrs`) <-> the typed Python values hooks see.

``to_value(kind, attr)`` accepts what DESIGN.md's "Program text" allows for each kind (an
integer literal where a float is expected, ``[1, 0]`` or ``array<i64: 1, 0>`` for integer
arrays, a type for a dtype) and raises ``TypeError`` saying what was expected; ``to_attr`` is
the inverse used by the builder, producing MLIR's spelling of each kind (``0.2 : f32``,
``[1 : si32]``, ``f16``).

>>> from tdflow.dialect.ir.attrs import FloatAttr, IntegerAttr
>>> to_value("f32", IntegerAttr(1)), str(to_attr("f32", 0.2)), str(to_attr("si32_array", (1, 0)))
(1.0, '2.000000e-01 : f32', '[1 : si32, 0 : si32]')

An ``enum`` attribute (``enum`` lists its cases) is written as MLIR's generic printer writes an
``I32EnumAttr``, ``2 : i32`` (also ``2 : si32`` or a plain ``2``), or by name as a string
(``"DT_Float"``); either gives the :class:`~tdflow.dialect.attr_kinds.EnumCase`:

>>> e = EnumInfo("DataType", (("DT_Char", 1), ("DT_Float", 2)))
>>> to_value("enum", IntegerAttr(2, "i32"), e), to_value("enum", StringAttr("DT_Char"), e)
(EnumCase(2, 'DT_Float'), EnumCase(1, 'DT_Char'))
>>> to_value("enum", IntegerAttr(9, "i32"), e)
Traceback (most recent call last):
ValueError: got 9 : i32; expected one of DT_Char(1), DT_Float(2)
"""

from __future__ import annotations

from typing import Any

from .attr_kinds import (
    DTYPE_NAMES,
    INT_RANGE,
    EnumInfo,
    coerce,
    element_kind,
    enum_case,
    kind_description,
)
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


def to_value(kind: str, attr: Any, enum: EnumInfo | None = None) -> Any:
    """The typed Python value of IR attribute ``attr`` for an attribute of ``kind`` (``enum``:
    the cases of an ``enum`` or ``enum_array`` attribute)."""
    if not isinstance(attr, Attribute):
        return coerce(kind, attr, enum)  # already a Python value (builder, eager calls)
    t = type(attr)
    if kind == "other":
        return attr
    if kind == "enum":
        return _enum_value(attr, enum)
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
                    return tuple(to_value(elem, a, enum) for a in attr.value)
                except TypeError as exc:
                    raise TypeError(f"expected {kind_description(kind, enum)}, got {attr}: {exc}") from None
            if t is DenseArrayAttr and elem in ("si32", "si64", "f32", "f64", "bool"):
                if (elem[0] == "f") == (attr.type[0] == "f") and (elem == "bool") == (attr.type == "i1"):
                    return tuple(attr.value)
    raise TypeError(f"expected {kind_description(kind, enum)}, got {describe(attr)}")


def _enum_value(attr: Attribute, enum: EnumInfo | None) -> Any:
    t = type(attr)
    if t is IntegerAttr:
        # MLIR stores an I32EnumAttr as a signless i32 and prints `2 : i32`; the signed and
        # the untyped (i64) spellings are accepted too, as the brief for OneFlow's IR asks.
        store = enum.type if enum is not None else "i32"
        if attr.type in (store, "s" + store, "i64"):
            try:
                return enum_case(enum, attr.value)
            except ValueError:
                raise ValueError(f"got {attr}; expected one of {enum.listing()}") from None
        if attr.type != "i1":  # ValueError: the message is the detail the verifier shows
            raise ValueError(f"got {attr}; an enum case is stored as {store}: write "
                             f"{attr.value} : {store}")
    elif t is StringAttr:
        return enum_case(enum, attr.value)
    raise TypeError(f"expected {kind_description('enum', enum)}, got {describe(attr)}")


def to_attr(kind: str, value: Any, enum: EnumInfo | None = None) -> Attribute:
    """The IR attribute for a Python value of ``kind`` (MLIR's spelling of the kind; an enum
    case as its integer, ``2 : i32``)."""
    if isinstance(value, Attribute):
        return value
    value = coerce(kind, value, enum)
    if kind == "enum":
        if isinstance(value, str):  # a name without the enum's cases: kept as written
            return StringAttr(value)
        return IntegerAttr(int(value), enum.type if enum is not None else "i32")
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
        return ArrayAttr(tuple(to_attr(elem, v, enum) for v in value))
    raise TypeError(f"cannot build an attribute of kind {kind!r} from {value!r}")
