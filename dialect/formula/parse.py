"""Parse a formula (the text of an op's ``formula`` code block) into a syntax tree.

>>> f = parse_formula(" x > 0 ? x : x * alpha ", file="ops.td", line=12, col=20)
>>> f.single, type(f.body[0].expr).__name__
(True, 'Cond')
>>> parse_formula("x +* 2", file="ops.td", line=12, col=20)
Traceback (most recent call last):
  ...
tdflow.tdparser.errors.TdError: ops.td:12:23: error: unexpected '*' in formula; expected a name, a number, '(', '-', '+' or '!'

The grammar (``formula.lark``) is LALR, so parsing is linear in the text; the parser is built
on first use (about 25 ms) and shared. Trees are built by one callback per rule while parsing,
so no step recurses over the input: a formula nested deeper than :data:`MAX_DEPTH` is a located
"nesting too deep" error, and any other bad input is a located :class:`TdError`.
"""

from __future__ import annotations

import re
from pathlib import Path

from lark import Lark, Token
from lark.exceptions import UnexpectedInput
from tdflow.tdparser.errors import TdError

from .lalr import (
    DepthTracking,
    SharedParser,
    number_literal,
    parse_located,
    syntax_error,
)
from .syntax import BinaryOp, Call, Cond, Formula, Name, Node, Number, Pos, Stmt, UnaryOp

GRAMMAR_PATH = Path(__file__).with_name("formula.lark")

# Depth of the expression tree a formula may build. The expression IR's utilities (bind,
# constant folding, dtype inference, the renderers) recurse over the tree, a few Python frames
# per level, so the limit keeps them well inside Python's default recursion limit of 1000
# (real formulas are under 15 deep; `sigmoid(...)` counts as the 4 levels it expands to).
MAX_DEPTH = 100
# Longest formula text accepted (a formula is a line or two; this bounds work and memory).
MAX_LENGTH = 100_000
# Extra tree levels a call adds when converted (sigmoid(x) is 1 / (1 + exp(-x))).
_CALL_DEPTH = {"sigmoid": 4}

_TERMINAL_NAMES = {
    "NAME": "a name", "NUMBER": "a number", "LPAR": "'('", "RPAR": "')'", "ADDOP": "'-', '+'",
    "BANG": "'!'", "MULOP": "'*', '/', '%'", "RELOP": "'<', '<=', '>', '>='",
    "EQOP": "'==', '!='", "ANDAND": "'&&'", "OROR": "'||'", "QUESTION": "'?'", "COLON": "':'",
    "ASSIGN": "'='", "_SEMI": "';'", "_COMMA": "','", "$END": "the end of the formula",
}
# Order in which expected terminals are listed (operands first, then operators).
_TERMINAL_ORDER = ("NAME", "NUMBER", "LPAR", "ADDOP", "BANG", "MULOP", "RELOP", "EQOP",
                   "ANDAND", "OROR", "QUESTION", "COLON", "ASSIGN", "_COMMA", "RPAR", "_SEMI",
                   "$END")
_BLANK = re.compile(r"(?:\s|//[^\n]*)*")


def _pos(tok: Token) -> Pos:
    return (tok.line or 1, tok.column or 1)


def _node_pos(node: Node) -> Pos:
    return node.pos  # type: ignore[attr-defined]


class _ToSyntax(DepthTracking):
    """One callback per rule alias of ``formula.lark``, run as the parser reduces."""

    max_depth = MAX_DEPTH
    too_deep = (f"formula nesting too deep (more than {MAX_DEPTH} levels; a chain like "
                f"a + b + ... counts one level per operator)")

    def number(self, c: list[Token]) -> Node:
        tok = c[0]
        text = str(tok)
        value = number_literal(tok)
        return self._made(Number(text, value, _pos(tok)), 1)

    def name(self, c: list[Token]) -> Node:
        return self._made(Name(str(c[0]), _pos(c[0])), 1)

    def paren(self, c: list) -> Node:
        return c[1]  # parentheses only group; the inner node keeps its own position

    def call(self, c: list) -> Node:
        func = c[0]
        args = tuple(a for a in c[2:-1] if a is not None)
        node = Call(str(func), args, _pos(func))
        return self._made(node, self._depth(*args) + _CALL_DEPTH.get(str(func), 1))

    def unary(self, c: list) -> Node:
        op, x = c
        if str(op) == "+":
            return x  # unary plus is the identity; no node
        # A negated literal stays one constant level (it is folded when converted).
        extra = 0 if str(op) == "-" and isinstance(x, Number) else 1
        return self._made(UnaryOp(str(op), x, _pos(op)), self._depth(x) + extra)

    def binary(self, c: list) -> Node:
        a, op, b = c
        node = BinaryOp(str(op), a, b, _node_pos(a), _pos(op))
        return self._made(node, max(self._depth(a), self._depth(b)) + 1)

    def select(self, c: list) -> Node:
        cond, q, a, _colon, b = c
        node = Cond(cond, a, b, _node_pos(cond), _pos(q))
        return self._made(node, max(self._depth(cond), self._depth(a), self._depth(b)) + 1)

    def stmt(self, c: list) -> Stmt:
        name, _eq, expr = c
        return Stmt(str(name), expr, _pos(name))

    def stmts(self, c: list) -> tuple[Stmt, ...]:
        return tuple(c)

    def single(self, c: list) -> tuple[Stmt, ...]:
        return (Stmt(None, c[0], _node_pos(c[0])),)

    def multi(self, c: list) -> tuple[Stmt, ...]:
        return c[0]


_PARSER = SharedParser(GRAMMAR_PATH, lambda: _ToSyntax())


def parser() -> Lark:
    """The shared LALR parser of ``formula.lark``, built on first use.

    >>> parser().options.parser
    'lalr'
    """
    return _PARSER.get()


def _syntax_error(e: UnexpectedInput, text: str, end: Pos) -> tuple[str, Pos]:
    return syntax_error(e, text, end, what="formula", table=_TERMINAL_NAMES,
                        order=_TERMINAL_ORDER, is_blank=lambda t: bool(_BLANK.fullmatch(t)),
                        empty="empty formula; expected an expression such as `x * 2`")


def parse_formula(text: str, *, file: str, line: int, col: int) -> Formula:
    """Parse a formula's text; ``(file, line, col)`` is where the text starts in the ``.td``
    file (the first character after ``[{``), so errors point inside the code block.

    Raises :class:`TdError` for any bad input (never anything else).

    >>> f = parse_formula("y = x * 2;\\n  mask = x > 0", file="a.td", line=3, col=19)
    >>> [s.name for s in f.body], str(f.loc(f.body[1].pos))
    (['y', 'mask'], 'a.td:4:3')
    """
    origin = Formula((), file, line, col, text)
    if not isinstance(text, str):
        raise TdError(f"a formula is text, got {type(text).__name__}", file, line, col)
    if len(text) > MAX_LENGTH:
        raise TdError(f"formula is too long ({len(text)} characters; at most {MAX_LENGTH})",
                      file, line, col)
    body = parse_located(parser(), text, origin, "formula", _syntax_error)
    return Formula(body, file, line, col, text)
