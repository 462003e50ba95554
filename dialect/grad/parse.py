"""Parse a ``grad`` field (the text of an op's ``grad`` code block) into a syntax tree.

>>> g = parse_grad(" a: matmul(dout, b, transpose_b=true); b: a.shape ", file="ops.td",
...                line=3, col=20)
>>> [e.name for e in g.body], type(g.body[0].expr).__name__, g.body[0].expr.op
(['a', 'b'], 'Call', 'matmul')
>>> parse_grad("a: matmul(dout,, b)", file="ops.td", line=3, col=20)
Traceback (most recent call last):
  ...
tdflow.tdparser.errors.TdError: ops.td:3:35: error: unexpected ',' in grad field; expected a name, a number, a string, '(', '[', '-', '+' or '!'

The grammar (``grad.lark``) is LALR, so parsing is linear in the text; the parser is built on
first use and shared. Every bad input is a located :class:`TdError`, and nesting deeper than
:data:`MAX_DEPTH` is a located "nesting too deep" error (nothing later recurses without bound).
"""

from __future__ import annotations

from pathlib import Path

from lark import Lark, Token
from lark.exceptions import UnexpectedInput
from tdflow.dialect.formula.lalr import (
    DepthTracking,
    Located,
    SharedParser,
    number_literal,
    parse_located,
    syntax_error,
    token_pos,
)
from tdflow.dialect.formula.syntax import Formula
from tdflow.tdparser.errors import TdError

from .syntax import (
    BinaryOp,
    Call,
    Cond,
    Entry,
    Keyword,
    ListLit,
    Member,
    Name,
    Node,
    Number,
    Pos,
    Str,
    UnaryOp,
)

GRAMMAR_PATH = Path(__file__).with_name("grad.lark")
MAX_DEPTH = 100
MAX_LENGTH = 100_000

_TERMINAL_NAMES = {
    "NAME": "a name", "NUMBER": "a number", "STRING": "a string", "LPAR": "'('", "RPAR": "')'",
    "LBRACK": "'['", "RBRACK": "']'", "ADDOP": "'-', '+'", "MULOP": "'*', '/'",
    "COLON": "':'", "QUESTION": "'?'", "EQOP": "'==', '!='", "BANG": "'!'", "ASSIGN": "'='", "DOT": "'.'", "_SEMI": "';'", "_COMMA": "','",
    "$END": "the end of the grad field",
}
_TERMINAL_ORDER = ("NAME", "NUMBER", "STRING", "LPAR", "LBRACK", "ADDOP", "BANG", "MULOP",
                   "DOT", "EQOP", "QUESTION", "COLON", "ASSIGN", "_COMMA", "RPAR", "RBRACK", "_SEMI", "$END")


_pos = token_pos


class _ToSyntax(DepthTracking):
    """One callback per rule; tracks each node's depth so deep input fails, located."""

    max_depth = MAX_DEPTH
    too_deep = f"grad field nesting too deep (more than {MAX_DEPTH} levels)"

    def number(self, c: list[Token]) -> Node:
        return Number(str(c[0]), number_literal(c[0]), _pos(c[0]))

    def string(self, c: list[Token]) -> Node:
        return Str(str(c[0])[1:-1], _pos(c[0]))

    def name(self, c: list[Token]) -> Node:
        return Name(str(c[0]), _pos(c[0]))

    def paren(self, c: list) -> Node:
        return c[1]

    def list(self, c: list) -> Node:
        items = tuple(x for x in c[1:-1] if x is not None)
        return self._made(ListLit(items, _pos(c[0])), self._depth(*items) + 1)

    def member(self, c: list) -> Node:
        return self._made(Member(c[0], str(c[2]), c[0].pos), self._depth(c[0]) + 1)

    def call(self, c: list) -> Node:
        callee, *rest = c
        args = [x for x in rest[1:-1] if x is not None]
        op = _callee_name(callee)
        positional = tuple(a for a in args if not isinstance(a, Keyword))
        keywords = tuple(a for a in args if isinstance(a, Keyword))
        seen_kw = False
        for a in args:
            if isinstance(a, Keyword):
                seen_kw = True
            elif seen_kw:
                raise Located("a positional argument follows a keyword argument", a.pos)
        return self._made(Call(op, positional, keywords, callee.pos),
                          self._depth(*args) + 1)

    def kwarg(self, c: list) -> Node:
        return self._made(Keyword(str(c[0]), c[2], _pos(c[0])), self._depth(c[2]))

    def unary(self, c: list) -> Node:
        return self._made(UnaryOp(str(c[0]), c[1], _pos(c[0])), self._depth(c[1]) + 1)

    def binary(self, c: list) -> Node:
        a, op, b = c
        return self._made(BinaryOp(str(op), a, b, a.pos, _pos(op)), self._depth(a, b) + 1)

    def select(self, c: list) -> Node:
        cond, q, a, _, b = c
        return self._made(Cond(cond, a, b, cond.pos, _pos(q)), self._depth(cond, a, b) + 1)

    def entry(self, c: list) -> Entry:
        return Entry(str(c[0]), c[2], _pos(c[0]))

    def entries(self, c: list) -> tuple[Entry, ...]:
        return tuple(c)


def _callee_name(node: Node) -> str:
    if isinstance(node, Name):
        return node.name
    if isinstance(node, Member) and isinstance(node.obj, Name):
        return f"{node.obj.name}.{node.field}"
    raise Located("only an op can be called (`matmul(...)` or `tdflow.matmul(...)`)", node.pos)


_PARSER = SharedParser(GRAMMAR_PATH, lambda: _ToSyntax())


def parser() -> Lark:
    """The shared LALR parser of ``grad.lark``, built on first use.

    >>> parser().options.parser
    'lalr'
    """
    return _PARSER.get()


def _missing_semicolon(tok, expected) -> str | None:
    if tok.type == "NAME" and "_SEMI" in expected:  # the usual slip
        shown = str(tok) if len(str(tok)) <= 20 else str(tok)[:17] + "..."
        return (f"unexpected {shown!r} in grad field; expected an operator, or ';' before "
                f"the next entry")
    return None


def _syntax_error(e: UnexpectedInput, text: str, end: Pos) -> tuple[str, Pos]:
    return syntax_error(e, text, end, what="grad field", table=_TERMINAL_NAMES,
                        order=_TERMINAL_ORDER, is_blank=lambda t: not t.strip(),
                        empty="empty grad field; expected entries such as `x: dy * 2`",
                        special=_missing_semicolon)


def parse_grad(text: str, *, file: str, line: int, col: int) -> Formula:
    """Parse a ``grad`` field's text; ``(file, line, col)`` is where the text starts in the
    ``.td`` file, so errors point inside the code block. Raises :class:`TdError` for any bad
    input (never anything else). Two entries for one input are an error.

    >>> g = parse_grad("x: dy * 2\\n  y: dy", file="a.td", line=3, col=19)
    Traceback (most recent call last):
      ...
    tdflow.tdparser.errors.TdError: a.td:4:3: error: unexpected 'y' in grad field; expected an operator, or ';' before the next entry
    """
    origin = Formula((), file, line, col, text)
    if len(text) > MAX_LENGTH:
        raise TdError(f"grad field is too long ({len(text)} characters; at most {MAX_LENGTH})",
                      file, line, col)
    body = parse_located(parser(), text, origin, "grad field", _syntax_error)
    seen: dict[str, Entry] = {}
    for entry in body:
        if entry.name in seen:
            loc = origin.loc(entry.pos)
            raise TdError(f"two gradients for input '{entry.name}'", loc.file, loc.line, loc.col)
        seen[entry.name] = entry
    return Formula(body, file, line, col, text)
