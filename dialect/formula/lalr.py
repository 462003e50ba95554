"""What tdflow's small LALR grammars share (the ``formula`` and ``grad`` fields): a parser built
once on first use, trees whose depth is bounded while they are built, and every failure as a
located ``TdError`` (syntax errors said in words).

>>> p = SharedParser(Path(__file__).with_name("formula.lark"), lambda: None)
>>> p.get().options.parser
'lalr'
>>> expected_text({"NAME", "RPAR"}, {"NAME": "a name", "RPAR": "')'"}, ("NAME", "RPAR"))
"; expected a name or ')'"
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import lark
from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from tdflow.tdparser.errors import TdError

Pos = tuple[int, int]

__all__ = ["DepthTracking", "Located", "SharedParser", "expected_text", "parse_located",
           "number_literal", "syntax_error", "token_pos"]


class Located(Exception):
    """An error raised inside a parse callback, at a position of the parsed text."""

    def __init__(self, message: str, pos: Pos) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos


_depths = threading.local()


def _depth_table() -> dict[int, int]:
    """Depth of each node built during one parse, keyed by ``id`` (nodes are alive while the
    parse runs, so ids are stable), kept per thread because the parser is shared."""
    t = getattr(_depths, "table", None)
    if t is None:
        t = _depths.table = {}
    return t


class DepthTracking(Transformer):
    """A transformer whose callbacks record each node's depth as the parser reduces, so a
    tree deeper than ``max_depth`` is a located error before anything recurses over it.
    Subclasses set ``max_depth`` and ``too_deep`` (the message)."""

    max_depth = 100
    too_deep = "nesting too deep"

    def _made(self, node: Any, depth: int) -> Any:
        if depth > self.max_depth:
            raise Located(self.too_deep, node.pos)
        _depth_table()[id(node)] = depth
        return node

    @staticmethod
    def _depth(*nodes: Any) -> int:
        table = _depth_table()
        return max((table.get(id(n), 1) for n in nodes), default=0)


def parse_located(parser: Lark, text: str, origin: Any, what: str,
                  syntax: Callable[[UnexpectedInput, str, Pos], tuple[str, Pos]]) -> Any:
    """``parser.parse(text)``, every failure a :class:`TdError` at its place in the ``.td``
    file (``origin.loc(pos)`` maps a position in the text; ``syntax`` words Lark's syntax
    errors; ``what`` names the text in the rest)."""
    table = _depth_table()
    table.clear()
    try:
        return parser.parse(text)
    except Located as e:
        loc = origin.loc(e.pos)
        raise TdError(e.message, loc.file, loc.line, loc.col) from None
    except lark.exceptions.VisitError as e:  # a callback's Located, wrapped by Lark
        inner = e.orig_exc
        if isinstance(inner, Located):
            loc = origin.loc(inner.pos)
            raise TdError(inner.message, loc.file, loc.line, loc.col) from None
        raise TdError(f"bad {what}: {inner}", origin.file, origin.line, origin.col) from None
    except UnexpectedInput as e:
        message, pos = syntax(e, text, origin.end_pos())
        loc = origin.loc(pos)
        raise TdError(message, loc.file, loc.line, loc.col) from None
    except lark.exceptions.LarkError as e:  # pragma: no cover - defensive: still located
        raise TdError(f"bad {what}: {e}", origin.file, origin.line, origin.col) from None
    finally:
        table.clear()


class SharedParser:
    """The LALR parser of one grammar file with its transformer, built on first :meth:`get`
    (tens of milliseconds) and shared by every caller and thread."""

    def __init__(self, grammar: Path, transformer: Callable[[], Any]) -> None:
        self.grammar = grammar
        self.transformer = transformer
        self._parser: Lark | None = None
        self._lock = threading.Lock()

    def get(self) -> Lark:
        if self._parser is None:
            with self._lock:
                if self._parser is None:
                    self._parser = Lark(self.grammar.read_text(encoding="utf-8"), parser="lalr",
                                        transformer=self.transformer(),
                                        maybe_placeholders=True)
        return self._parser


_I64_MAX = 2**63 - 1


def number_literal(tok: Token) -> int | float:
    """The value of a NUMBER token of the formula and grad grammars, range-checked the same
    way for both: a float that overflows f64 or an integer past 2**63 - 1 is a located error.

    >>> number_literal(Token("NUMBER", "2.5")), number_literal(Token("NUMBER", "7"))
    (2.5, 7)
    """
    text = str(tok)
    if any(ch in text for ch in ".eE"):
        value = float(text)
        if value in (float("inf"), float("-inf")):
            raise Located(f"float literal {text} is out of range (it overflows f64)",
                          token_pos(tok))
        return value
    # The length test comes first: int() of a huge digit string is slow (and refused past
    # 4300 digits).
    if len(text) > 19 or int(text) > _I64_MAX:
        shown = text if len(text) <= 30 else text[:27] + "..."
        raise Located(f"integer literal {shown} is out of range (at most 2**63 - 1)",
                      token_pos(tok))
    return int(text)


def token_pos(tok: Token) -> Pos:
    return (tok.line or 1, tok.column or 1)


def expected_text(names, table: Mapping[str, str], order: Sequence[str]) -> str:
    """``"; expected a name, '(' or '-'"`` for the terminals ``names`` (``""`` for none)."""
    shown = [table.get(n, n) for n in order if n in names]
    shown += sorted(table.get(n, n) for n in names if n not in order)
    if not shown:
        return ""
    if len(shown) == 1:
        return f"; expected {shown[0]}"
    return "; expected " + ", ".join(shown[:-1]) + " or " + shown[-1]


def _describe(tok: Token) -> str:
    text = str(tok)
    return repr(text if len(text) <= 20 else text[:17] + "...")


def syntax_error(e: UnexpectedInput, text: str, end: Pos, *, what: str,
                 table: Mapping[str, str], order: Sequence[str], empty: str,
                 is_blank: Callable[[str], bool],
                 special: Callable[[Token, Any], str | None] | None = None) -> tuple[str, Pos]:
    """Lark's exception as ``(message, position)``: ``what`` names the text (``formula``),
    ``empty`` is the message for blank text, ``special(token, expected)`` may say better
    than the list of expected terminals (a missing ``;``)."""
    def exp(names) -> str:
        return expected_text(names, table, order)

    if isinstance(e, UnexpectedCharacters):
        ch = text[e.pos_in_stream] if 0 <= e.pos_in_stream < len(text) else "?"
        return (f"unexpected character {ch!r} in {what}{exp(e.allowed or set())}",
                (e.line, e.column))
    if isinstance(e, UnexpectedToken):
        tok = e.token
        if tok.type == "$END":
            if is_blank(text):
                return empty, end
            return f"unexpected end of {what}{exp(e.expected)}", end
        better = special(tok, e.expected) if special else None
        if better:
            return better, token_pos(tok)
        return f"unexpected {_describe(tok)} in {what}{exp(e.expected)}", token_pos(tok)
    if isinstance(e, UnexpectedEOF):
        return f"unexpected end of {what}{exp(set(e.expected))}", end
    return f"bad {what}: {e}", end  # pragma: no cover - Lark's three kinds are handled above
