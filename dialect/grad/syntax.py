"""The syntax tree of a ``grad`` field, as parsed (before names are resolved against an op).

Names, numbers and the arithmetic nodes are the formula language's
(:mod:`tdflow.dialect.formula.syntax`); a parsed field is a
:class:`~tdflow.dialect.formula.syntax.Formula` whose body holds one :class:`Entry` per input,
so locations work the same way.

>>> e = Entry("a", Member(Name("b", (1, 4)), "shape", (1, 5)), (1, 1))
>>> e.name, e.expr.field
('a', 'shape')
"""

from __future__ import annotations

from dataclasses import dataclass

from tdflow.dialect.formula.syntax import BinaryOp, Cond, Name, Node, Number, Pos, UnaryOp

__all__ = ["BinaryOp", "Call", "Cond", "Entry", "Keyword", "ListLit", "Member", "Name", "Node", "Number",
           "Pos", "Str", "UnaryOp"]


@dataclass(frozen=True, slots=True)
class Str(Node):
    """A string literal (``"channels_first"``), without its quotes."""

    value: str
    pos: Pos


@dataclass(frozen=True, slots=True)
class ListLit(Node):
    """``[a, b, ...]``: a list of numbers (an attribute value such as ``axis``)."""

    items: tuple[Node, ...]
    pos: Pos


@dataclass(frozen=True, slots=True)
class Member(Node):
    """``x.shape``, ``x.dtype``, ``x.ndim``, or result ``y`` of a call: ``f(...).y``;
    ``tdflow.matmul`` when it is called (a qualified op name)."""

    obj: Node
    field: str
    pos: Pos


@dataclass(frozen=True, slots=True)
class Keyword(Node):
    """``name=value`` in a call: an attribute (or an operand by name)."""

    name: str
    value: Node
    pos: Pos


@dataclass(frozen=True, slots=True)
class Call(Node):
    """``op(args..., name=value...)``; ``op`` is the op's mnemonic or qualified name."""

    op: str
    args: tuple[Node, ...]
    keywords: tuple[Keyword, ...]
    pos: Pos


@dataclass(frozen=True, slots=True)
class Entry:
    """``input: expr``: the gradient of one input."""

    name: str
    expr: Node
    pos: Pos
