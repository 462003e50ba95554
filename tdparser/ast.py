"""The TableGen syntax tree: frozen dataclasses built by :mod:`.parser` from the Lark grammar.

Every node carries ``loc``, the :class:`~.lexer.Tok` it starts at (file, line, column and the
include stack), so the evaluator can point errors at the source.

>>> Int(5, None).value
5
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_dc = dataclass(frozen=True, slots=True)


# ---- types ------------------------------------------------------------------------------------
@_dc
class TypeRef:
    """``kind`` is bit/int/string/code/dag/bits/list/class; ``arg`` the width, element or name."""

    kind: str
    arg: Any
    loc: Any


# ---- values -----------------------------------------------------------------------------------
@_dc
class Int:
    value: int
    loc: Any


@_dc
class BinLit:
    """``0b0101``: a ``bits<n>`` value with one bit per digit written."""

    digits: str
    loc: Any


@_dc
class Str:
    value: str
    is_code: bool
    loc: Any


@_dc
class Unset:
    loc: Any


@_dc
class Bool:
    value: bool
    loc: Any


@_dc
class Ident:
    name: str
    loc: Any


@_dc
class Arg:
    """A template argument value, positional (``name is None``) or named ``name=value``."""

    name: Any
    value: Any


@_dc
class AnonInst:
    cls: str
    args: tuple
    loc: Any


@_dc
class Range:
    """``lo...hi`` / ``lo-hi`` inside ``{}`` or ``[]``; ``hi`` is None for a single value."""

    lo: Any
    hi: Any
    loc: Any


@_dc
class BitsLit:
    items: tuple  # of Range
    loc: Any


@_dc
class ListLit:
    items: tuple
    elem_type: TypeRef | None
    loc: Any


@_dc
class DagLit:
    op: Any
    op_name: str | None
    args: tuple  # of (value-or-None, name-or-None)
    loc: Any


@_dc
class Bang:
    op: str
    type: TypeRef | None
    args: tuple
    loc: Any
    end: Any = None  # the closing `)`, where llvm-tblgen reports operand type errors


@_dc
class Cond:
    clauses: tuple  # of (cond, value)
    loc: Any


@_dc
class BitSlice:
    base: Any
    ranges: tuple
    loc: Any


@_dc
class ListSlice:
    base: Any
    ranges: tuple
    loc: Any


@_dc
class FieldAccess:
    base: Any
    name: str
    loc: Any


@_dc
class Paste:
    lhs: Any
    rhs: Any  # None for a trailing `#`
    loc: Any


# ---- statements -------------------------------------------------------------------------------
@_dc
class TemplateArg:
    type: TypeRef
    name: str
    default: Any
    loc: Any


@_dc
class ClassRef:
    name: str
    args: tuple  # of Arg
    loc: Any


@_dc
class FieldDecl:
    is_field: bool
    type: TypeRef
    name: str
    value: Any
    loc: Any


@_dc
class BodyLet:
    name: str
    bits: tuple | None
    value: Any
    loc: Any


@_dc
class ClassDef:
    name: str
    targs: tuple
    parents: tuple
    body: tuple | None  # None for `;`
    loc: Any


@_dc
class Def:
    name: Any  # value node or None (anonymous)
    parents: tuple
    body: tuple | None
    loc: Any
    name_loc: Any


@_dc
class Defm:
    name: Any
    refs: tuple
    loc: Any
    name_loc: Any


@_dc
class Defset:
    type: TypeRef
    name: str
    body: tuple
    loc: Any


@_dc
class Deftype:
    name: str
    type: TypeRef
    loc: Any


@_dc
class Defvar:
    name: str
    value: Any
    loc: Any


@_dc
class Assert:
    cond: Any
    message: Any
    loc: Any


@_dc
class Dump:
    value: Any
    loc: Any


@_dc
class Foreach:
    var: str
    iter: Range
    body: tuple
    loc: Any


@_dc
class If:
    cond: Any
    then: tuple
    orelse: tuple | None
    loc: Any


@_dc
class LetItem:
    name: str
    bits: tuple | None
    value: Any
    loc: Any


@_dc
class Let:
    items: tuple
    body: tuple
    loc: Any


@_dc
class Multiclass:
    name: str
    targs: tuple
    parents: tuple
    body: tuple | None
    loc: Any


def mentions(node, names) -> bool:
    """Whether syntax ``node`` refers to any identifier in ``names``.

    >>> mentions((Int(1, None), Ident("n", None)), {"n"})
    True
    """
    # Asked for every statement and value under a multiclass or a tainted loop (X86: 4% of a
    # cold run), so the walk decides by the node's type, looked up once per type.
    how = _HOW.get(type(node))
    if how is None:
        how = _how(type(node))
    if how is _IDENT:
        return node.name in names
    if how is _TUPLE:
        for x in node:
            if mentions(x, names):
                return True
        return False
    for f in how:  # a node's fields other than loc
        if mentions(getattr(node, f), names):
            return True
    return False


_IDENT, _TUPLE = object(), object()
_HOW: dict = {}  # type -> _IDENT, _TUPLE or the names of the fields to look into


def _how(t):
    if issubclass(t, Ident):
        how = _IDENT
    elif issubclass(t, tuple):
        how = _TUPLE
    else:
        how = tuple(f for f in getattr(t, "__dataclass_fields__", ()) if f != "loc")
    _HOW[t] = how
    return how
