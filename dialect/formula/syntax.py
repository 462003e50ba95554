"""The syntax tree of a formula, as parsed (before names are resolved against an op).

Every node carries ``pos``, its ``(line, col)`` inside the formula text (1-based); a
:class:`Formula` knows where its text starts in the ``.td`` file and turns positions into
``.td`` locations (:meth:`Formula.loc`), so errors point inside the code block.

>>> f = Formula((Stmt(None, Name("x", (1, 2)), (1, 2)),), "f.td", 7, 20, " x")
>>> str(f.loc((1, 2))), str(f.loc((2, 5)))
('f.td:7:21', 'f.td:8:5')
"""

from __future__ import annotations

from dataclasses import dataclass

from .checked import Formula  # noqa: F401 - re-exported: where it lived

Pos = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Node:
    """Base of the syntax nodes."""


@dataclass(frozen=True, slots=True)
class Name(Node):
    """An operand or attribute name."""

    name: str
    pos: Pos


@dataclass(frozen=True, slots=True)
class Number(Node):
    """A literal; ``text`` keeps its spelling (``1.0`` is a float literal, ``1`` an int one)."""

    text: str
    value: int | float
    pos: Pos


@dataclass(frozen=True, slots=True)
class Call(Node):
    """``func(args...)``: a math function or a cast."""

    func: str
    args: tuple[Node, ...]
    pos: Pos


@dataclass(frozen=True, slots=True)
class UnaryOp(Node):
    """``-x``, ``!x`` or ``+x``."""

    op: str
    x: Node
    pos: Pos


@dataclass(frozen=True, slots=True)
class BinaryOp(Node):
    """``a op b``; ``pos`` is the left operand's start, ``op_pos`` the operator's."""

    op: str
    a: Node
    b: Node
    pos: Pos
    op_pos: Pos


@dataclass(frozen=True, slots=True)
class Cond(Node):
    """``cond ? a : b``; ``op_pos`` is the ``?``."""

    cond: Node
    a: Node
    b: Node
    pos: Pos
    op_pos: Pos


@dataclass(frozen=True, slots=True)
class Stmt:
    """``name = expr`` (``name`` is ``None`` for the single-expression form)."""

    name: str | None
    expr: Node
    pos: Pos
