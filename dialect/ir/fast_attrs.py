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
    IntegerAttr,
    float_attr,
    int_range,
)
from tdflow.dialect.ir.lexer import signless

__all__ = ["scalar_attr_dict"]

# One entry: a bare name, `=`, then `true`/`false`, a float (the general parser's NUMBER without
# hex literals) or an integer, each with its optional `: type`, and the `,` or `}` after it.
# Only blanks and tabs between the pieces: anything else (a line break, arrays, strings, types,
# aliases, symbols) fails the match and the general parser reads the dictionary.
_ENTRY = re.compile(
    r"[ \t]*([A-Za-z_][\w$.]*)[ \t]*=[ \t]*"  # 1 name
    r"(?:(true|false)"  # 2
    r"|(-?[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?)(?:[ \t]*:[ \t]*(bf16|f16|f32|f64))?"  # 3, 4
    r"|(-?[0-9]{1,18})(?:[ \t]*:[ \t]*([su]?i[1-9][0-9]{0,2}))?)"  # 5, 6
    r"[ \t]*([,}])"  # 7
)
_EMPTY = re.compile(r"\{[ \t]*\}\Z")
# Booleans are shared (attributes are immutable): equal values are then the same object,
# which the verifier's memo key by identity matches without hashing.
_BOOLS = {"true": BoolAttr(True), "false": BoolAttr(False)}


def scalar_attr_dict(text: str) -> dict | None:
    """The attributes of ``{...}`` when every entry is a name and a scalar, else ``None``.

    >>> scalar_attr_dict("{}"), scalar_attr_dict("{x = 300 : i8}")   # out of range: general
    ({}, None)
    """
    if not (text.startswith("{") and text.endswith("}")):
        return None
    # One regex match per entry (the dictionaries of a program's ops that differ only in a
    # constant are each read here once: ~19,000 in the 100k-op benchmark).
    match = _ENTRY.match
    attrs: dict = {}
    pos = 1
    while True:
        m = match(text, pos)
        if m is None:
            return attrs if not attrs and _EMPTY.match(text) is not None else None
        name, word, flt, ftype, integer, itype, sep = m.groups()
        if name in attrs:
            return None  # a duplicate: the general parser reports it
        if word is not None:
            attr = _BOOLS[word]
        elif flt is not None:
            try:
                attr = float_attr(float(flt), ftype or "f64")
            except OverflowError:  # the general parser words the error
                return None
        else:
            attr = _integer(int(integer), itype or "i64")
            if attr is None:
                return None
        attrs[name] = attr
        pos = m.end()
        if sep == "}":
            return attrs if pos == len(text) else None


def _integer(value: int, type: str):
    lo, hi = int_range(type)
    if not lo <= value <= hi:
        return None
    if type == "i1":
        return _BOOLS["true" if value else "false"]
    return IntegerAttr(signless(value, type), type)
