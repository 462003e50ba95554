"""What tdflow's small LALR grammars share (the ``formula`` and ``grad`` fields): a parser built
once on first use, and syntax errors said in words, at a position.

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

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

Pos = tuple[int, int]

__all__ = ["SharedParser", "expected_text", "syntax_error", "token_pos"]


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
