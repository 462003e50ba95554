"""A checked formula (:class:`CheckedFormula`) and the formula text it came from
(:class:`Formula`): what an op's ``formula`` field becomes, and all a loaded dialect needs of
it, apart from the grammar and the checker (:mod:`.parse`, :mod:`.check`), so a dialect read
back from its cached artifact imports neither.

>>> f = Formula((), "f.td", 7, 20, " x")
>>> str(f.loc((1, 2))), str(f.loc((2, 5)))
('f.td:7:21', 'f.td:8:5')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tdflow.core.errors import SourceLoc
from tdflow.core.valueclass import field, value_class

from .expr import Expr, bind

Pos = tuple[int, int]


@value_class(frozen=True)
class Formula:
    """A parsed formula: its statements, and where its text starts in the ``.td`` file.

    ``single`` is true for the one-expression form (one :class:`Stmt` named ``None``).
    """

    body: tuple[Any, ...]  # the parsed statements (syntax.Stmt); () when read from a cache
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


@value_class(frozen=True)
class CheckedFormula:
    """A formula that type-checked against its op, as expression trees.

    ``exprs[i]`` computes result ``results[i]`` (the op's result order) over the operands
    ``operands`` (``Input(i)`` is ``operands[i]``); ``attr_kinds`` and ``attr_defaults`` cover
    the attributes the formula reads, in the op's order (default ``None`` when the attribute
    has none).
    """

    op: str
    formula: Formula
    operands: tuple[str, ...]
    results: tuple[str, ...]
    exprs: tuple[Expr, ...]
    attr_kinds: Mapping[str, str] = field(default_factory=dict)
    attr_defaults: Mapping[str, Any] = field(default_factory=dict)

    @property
    def expr(self) -> Expr:
        """The expression of a one-result op."""
        if len(self.exprs) != 1:
            raise ValueError(f"{self.op} has {len(self.exprs)} results; use exprs or result()")
        return self.exprs[0]

    def result(self, name: str) -> Expr:
        """The expression computing the result called ``name``."""
        return self.exprs[self.results.index(name)]

    def filled(self, attrs: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Values of the attributes the formula reads: ``attrs``, else the ``.td`` default."""
        attrs = attrs or {}
        return {k: attrs.get(k, d) for k, d in self.attr_defaults.items()
                if k in attrs or d is not None}

    def bind(self, attrs: Mapping[str, Any] | None = None, result: int = 0,
             leaky_max: bool = True) -> Expr:
        """Result ``result``'s expression with attribute values (defaults filled) substituted
        and constants folded, as a kernel is built from it (gradients pass
        ``leaky_max=False``: see :func:`~tdflow.dialect.formula.expr.fold_constants`).

        Raises ``KeyError`` for an attribute with no default and no value.
        """
        return bind(self.exprs[result], self.filled(attrs), leaky_max)
