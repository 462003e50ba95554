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

from tdflow.core.errors import SourceLoc

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


@dataclass(frozen=True)
class Formula:
    """A parsed formula: its statements, and where its text starts in the ``.td`` file.

    ``single`` is true for the one-expression form (one :class:`Stmt` named ``None``).
    """

    body: tuple[Stmt, ...]
    file: str
    line: int
    col: int
    text: str

    @property
    def single(self) -> bool:
        return len(self.body) == 1 and self.body[0].name is None

    def loc(self, pos: Pos) -> SourceLoc:
        """The ``.td`` location of a position inside the text: lines add up, and the column
        is shifted only on the text's first line (later lines start at column 1 of the file)."""
        line, col = pos
        return SourceLoc(self.file, self.line + line - 1,
                         self.col + col - 1 if line == 1 else col)

    def end_pos(self) -> Pos:
        """The position just past the text (for "missing ..." errors)."""
        lines = self.text.split("\n")
        return len(lines), len(lines[-1]) + 1
