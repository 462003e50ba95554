"""A fast path for the attribute dictionaries programs write most: ``{name = scalar, ...}``.

A program's ops often differ only in their attribute values (``{alpha = 5.002000e-01 : f32}``),
so caching whole attribute texts hits rarely; the general parser (:mod:`.type_attr_parser`)
then costs ~100 µs per dictionary. :func:`scalar_attr_dict` reads the common shapes with string
operations: each entry a bare name and a float or integer literal (with its type), ``true`` or
``false``. It returns ``None`` for anything else, and for anything it would have to report (a
duplicate name, an integer out of range): the general parser reads those and gives the errors,
so a dictionary read here is exactly the one the general parser returns
(``tests/dialect/ir/test_fast_attrs.py`` checks that differentially).

>>> scalar_attr_dict("{alpha = 5.000000e-01 : f32, keepdims = true, axis = 1 : si32}")
{'alpha': FloatAttr(value=0.5, type='f32'), 'keepdims': BoolAttr(value=True), 'axis': IntegerAttr(value=1, type='si32')}
>>> scalar_attr_dict("{perm = [1, 0]}") is None   # arrays: the general parser
True
"""

from __future__ import annotations

import re

from tdflow.dialect.ir.attrs import (
    BoolAttr,
    FloatAttr,
    IntegerAttr,
    int_range,
)
from tdflow.dialect.ir.lexer import signless

__all__ = ["scalar_attr_dict"]

# Characters that start anything but a scalar (arrays, nested dicts, strings, types, aliases,
# symbols, hex literals' 'x' is caught by the literal patterns below).
_NOT_SCALAR = re.compile(r'[\[\]{}<>()"#@!]')
_NAME = re.compile(r"[A-Za-z_][\w$.]*\Z")
# The general parser's NUMBER, without hex literals, then an optional `: type`.
_FLOAT = re.compile(r"(-?[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?)(?:[ \t]*:[ \t]*(bf16|f16|f32|f64))?\Z")
_INT = re.compile(r"(-?[0-9]{1,18})(?:[ \t]*:[ \t]*([su]?i[1-9][0-9]{0,2}))?\Z")


def scalar_attr_dict(text: str) -> dict | None:
    """The attributes of ``{...}`` when every entry is a name and a scalar, else ``None``.

    >>> scalar_attr_dict("{}"), scalar_attr_dict("{x = 300 : i8}")   # out of range: general
    ({}, None)
    """
    if not (text.startswith("{") and text.endswith("}")):
        return None
    inner = text[1:-1]
    if _NOT_SCALAR.search(inner) is not None or "\n" in inner:
        return None
    attrs: dict = {}
    if not inner.strip(" \t"):
        return attrs
    for entry in inner.split(","):
        name, eq, value = entry.partition("=")
        name = name.strip(" \t")
        if not eq or _NAME.match(name) is None or name in attrs:
            return None
        attr = _scalar(value.strip(" \t"))
        if attr is None:
            return None
        attrs[name] = attr
    return attrs


def _scalar(text: str):
    if text == "true":
        return BoolAttr(True)
    if text == "false":
        return BoolAttr(False)
    m = _FLOAT.match(text)
    if m is not None:
        try:
            return FloatAttr(float(m.group(1)), m.group(2) or "f64")
        except OverflowError:  # the general parser words the error
            return None
    m = _INT.match(text)
    if m is None:
        return None
    value, type = int(m.group(1)), m.group(2) or "i64"
    lo, hi = int_range(type)
    if not lo <= value <= hi:
        return None
    if type == "i1":
        return BoolAttr(bool(value))
    return IntegerAttr(signless(value, type), type)
