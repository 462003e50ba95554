"""The lexical layer of the IR text parser: positions, errors that say what was found and what
was expected, and token helpers working on ``text`` at ``pos`` with compiled regexes (no
per-character Python loops)."""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate

from tdflow.dialect.ir.core import Location
from tdflow.dialect.ir.diagnostics import Diagnostic, DiagnosticError

_PLUS_ONE = (1).__add__
_WS = re.compile(r"(?:[ \t\r\n]+|//[^\n]*)*")
# The token patterns below without a leading underscore are shared with the parsers
# (parser.py, type_attr_parser.py), which match them at a position of their own.
BARE_ID = re.compile(r"[A-Za-z_][\w$.]*")
SSA_ID = re.compile(r"%((?:\d+|[A-Za-z$._\-][\w$.\-]*))")
SSA_USE = re.compile(r"%((?:\d+|[A-Za-z$._\-][\w$.\-]*))(?:#(\d+))?")
RESULT_GROUP = re.compile(r"%((?:\d+|[A-Za-z$._\-][\w$.\-]*))(?::[ \t]*(\d+))?")
SYMBOL = re.compile(r"@([A-Za-z_][\w$.\-]*)")
BLOCK_LABEL = re.compile(r"\^[\w$.\-]+")
# runs of plain characters matched whole (an alternation per character is ~100x slower on the
# megabytes of hex a dense_resource blob holds)
_STRING = re.compile(r'"([^"\\\n]*(?:\\.[^"\\\n]*)*)"')
NUMBER = re.compile(r"-?(?:0x[0-9A-Fa-f]+|[0-9]+(\.[0-9]*(?:[eE][+-]?[0-9]+)?)?)")
SCALAR_TYPE = re.compile(r"(?:[su]?i[1-9][0-9]*|bf16|f16|f32|f64|f8\w*|index|none)\b")
_FILE_LINE_COL = re.compile(r'loc\("((?:[^"\\\n]|\\.)*)":([0-9]+):([0-9]+)\)')
_LOC_REF = re.compile(r"loc\(#([\w$.\-]+)\)")
#: Inside a nested ``loc(...)`` (name, fused, callsite): its first file position or alias.
_LOC_PART = re.compile(r'"((?:[^"\\\n]|\\.)*)":([0-9]+):([0-9]+)|#([\w$.\-]+)')
_ANY_TOKEN = re.compile(
    r'"(?:[^"\\\n]|\\.)*"?|%[\w$.\-#:]*|@[\w$.\-]*|\^[\w$.\-]*|[A-Za-z_][\w$.]*(?:<)?'
    r"|-?[0-9][\w.+\-]*|->|<\{|\}>|.",
)
_STRING_ESCAPE = re.compile(r"\\(?:([0-9A-Fa-f]{2})|(.))", re.S)
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


def _unescape(body: str) -> str:
    if "\\" not in body:
        return body
    out = bytearray()
    pos = 0
    for m in _STRING_ESCAPE.finditer(body):
        out += body[pos:m.start()].encode("utf-8")
        if m.group(1):
            out.append(int(m.group(1), 16))
        else:
            c = m.group(2)
            out += _ESCAPES.get(c, c).encode("utf-8")
        pos = m.end()
    out += body[pos:].encode("utf-8")
    return out.decode("utf-8", errors="surrogateescape")


_CONTROL_NAMES = {"\0": "NUL", "\t": "tab", "\r": "carriage return", "\x1b": "ESC",
                  "\x7f": "DEL", "\x0b": "vertical tab", "\x0c": "form feed"}


def _char_name(c: str) -> str:
    """How :meth:`Lexer.found` names an unprintable character: ``NUL (U+0000)``."""
    name = _CONTROL_NAMES.get(c)
    return f"{name} (U+{ord(c):04X})" if name else f"U+{ord(c):04X}"


def signless(value: int, type: str) -> int:
    """MLIR keeps signless integers in two's complement and prints them signed: 255 : i8 is -1.

    >>> signless(255, "i8"), signless(255, "ui8"), signless(255, "i16")
    (-1, 255, 255)
    """
    if type[0] == "i" and type != "index":
        bits = int(type[1:])
        if value >= 1 << (bits - 1):
            value -= 1 << bits
    return value


class Lexer:
    """Position bookkeeping and token helpers over one text (base of the parsers)."""

    __slots__ = ("text", "file", "pos", "_line_starts", "loc_aliases", "loc_defs", "loc_uses")

    def __init__(self, text: str, file: str = "<string>") -> None:
        self.text = text
        self.file = file
        self.pos = 0
        self._line_starts: list[int] | None = None
        # `loc(#loc7)` may come before `#loc7 = loc(...)` (mlir-opt prints most definitions at
        # the end): a use gets the alias's one Location object, filled in by resolve_locs().
        self.loc_aliases: dict[str, Location] = {}
        self.loc_defs: dict[str, tuple[Location | str | None, int]] = {}
        self.loc_uses: dict[str, int] = {}

    # -- positions and errors --------------------------------------------------------------
    def loc(self, pos: int) -> Location:
        starts = self._line_starts
        if starts is None:
            # where each line starts: 0, then one past each "\n" (the sums run in C)
            lines = self.text.split("\n")
            lines.pop()
            starts = self._line_starts = [0, *accumulate(map(_PLUS_ONE, map(len, lines)))]
        line = bisect_right(starts, pos)
        return Location(self.file, line, pos - starts[line - 1] + 1)

    def found(self, pos: int | None = None) -> str:
        pos = self.pos if pos is None else pos
        if pos >= len(self.text):
            return "end of input"
        m = _ANY_TOKEN.match(self.text, pos)
        tok = m.group() if m else self.text[pos]
        if tok == "\n":
            return "end of line"
        if len(tok) > 40:  # a 10 MB identifier or number: quote its start
            tok = tok[:40] + "..."
        if not tok.isprintable():
            # A control character (NUL, ESC, ...) would garble the terminal: name it instead.
            if len(tok) == 1:
                return _char_name(tok)
            tok = tok.encode("unicode_escape", errors="backslashreplace").decode("ascii")
        return f"'{tok}'"

    def error(self, message: str, pos: int | None = None, notes=()) -> DiagnosticError:
        return DiagnosticError([Diagnostic(message, self.loc(self.pos if pos is None else pos),
                                           notes)])

    def expected(self, what: str, pos: int | None = None) -> DiagnosticError:
        pos = self.pos if pos is None else pos
        return self.error(f"expected {what}, found {self.found(pos)}", pos)

    # -- token helpers ---------------------------------------------------------------------
    def skip(self) -> int:
        self.pos = _WS.match(self.text, self.pos).end()
        return self.pos

    def peek(self, s: str) -> bool:
        self.skip()
        return self.text.startswith(s, self.pos)

    def accept(self, s: str) -> bool:
        self.skip()
        if self.text.startswith(s, self.pos):
            self.pos += len(s)
            return True
        return False

    def expect(self, s: str, what: str | None = None) -> None:
        if not self.accept(s):
            raise self.expected(what or f"'{s}'")

    def match(self, regex: re.Pattern) -> re.Match | None:
        self.skip()
        m = regex.match(self.text, self.pos)
        if m is not None:
            self.pos = m.end()
        return m

    def keyword(self, *words: str) -> str | None:
        """Consume a bare identifier if it is one of ``words``."""
        self.skip()
        m = BARE_ID.match(self.text, self.pos)
        if m is not None and m.group() in words:
            self.pos = m.end()
            return m.group()
        return None

    def string(self, what: str = "a string") -> str:
        m = self.match(_STRING)
        if m is None:
            if self.text.startswith('"', self.pos):
                raise self.error("unterminated string (a string ends with '\"' on the same line)")
            raise self.expected(what)
        return _unescape(m.group(1))

    def skip_loc(self) -> Location | None:
        """Consume an optional ``loc(...)`` trailer; return its file position, if it has one.

        ``loc("f":l:c)`` and ``loc(#alias)`` are located; in nested forms (``loc("name"(...))``,
        ``fused[...]``, ``callsite(...)``) the first file position or alias inside counts;
        ``loc(unknown)`` and a bare name have none (the caller uses the source position).
        """
        self.skip()
        text, pos = self.text, self.pos
        if not text.startswith("loc(", pos):
            return None
        m = _FILE_LINE_COL.match(text, pos)
        if m is not None:
            self.pos = m.end()
            return Location(_unescape(m.group(1)), int(m.group(2)), int(m.group(3)))
        m = _LOC_REF.match(text, pos)
        if m is not None:
            self.pos = m.end()
            return self.loc_alias(m.group(1), pos)
        end = self._loc_end(pos)
        self.pos = end
        for part in _LOC_PART.finditer(text, pos + 4, end):
            if part.group(4) is not None:
                return self.loc_alias(part.group(4), part.start())
            return Location(_unescape(part.group(1)), int(part.group(2)), int(part.group(3)))
        return None

    def _loc_end(self, pos: int) -> int:
        depth, i, n = 0, pos + 3, len(self.text)
        text = self.text
        while i < n:
            c = text[i]
            if c == '"':
                sm = _STRING.match(text, i)
                if sm is None:
                    break
                i = sm.end()
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        raise self.error("unterminated 'loc(' (expected ')')", pos)

    def loc_alias(self, name: str, pos: int) -> Location:
        """The Location object that ``#name`` will hold once resolved (used at ``pos``)."""
        loc = self.loc_aliases.get(name)
        if loc is None:
            loc = self.loc_aliases[name] = Location(self.file, 0, 0)
            self.loc_uses[name] = pos
        return loc

    def define_loc_alias(self, name: str, pos: int) -> None:
        """``#name = loc(...)`` at ``pos`` (the text is at ``loc(``)."""
        if name in self.loc_defs:
            raise self.error(f"redefinition of location alias '#{name}'", pos)
        self.skip()
        text, start = self.text, self.pos
        m = _LOC_REF.match(text, start)
        if m is not None:
            self.pos = m.end()
            self.loc_defs[name] = (m.group(1), pos)
            return
        m = _FILE_LINE_COL.match(text, start)
        if m is None:  # nested: its first file position or alias
            end = self._loc_end(start)
            part = _LOC_PART.search(text, start + 4, end)
            self.pos = end
            if part is None:
                self.loc_defs[name] = (None, pos)
            elif part.group(4) is not None:
                self.loc_defs[name] = (part.group(4), pos)
            else:
                self.loc_defs[name] = (Location(_unescape(part.group(1)), int(part.group(2)),
                                                int(part.group(3))), pos)
            return
        self.pos = m.end()
        self.loc_defs[name] = (Location(_unescape(m.group(1)), int(m.group(2)),
                                        int(m.group(3))), pos)

    def resolve_locs(self) -> None:
        """Fill every used ``#loc`` with its definition (following ``#a = loc(#b)``); an
        alias without a file position takes the position of its first use."""
        defs = self.loc_defs
        for name, loc in self.loc_aliases.items():
            target: Location | str | None = name
            seen = set()
            while isinstance(target, str):
                if target in seen:
                    raise self.error(f"location alias '#{name}' refers to itself",
                                     self.loc_uses[name])
                seen.add(target)
                entry = defs.get(target)
                if entry is None:
                    raise self.error(f"undefined location alias '#{target}'",
                                     self.loc_uses.get(target, self.loc_uses[name]))
                target = entry[0]
            if target is None:
                target = self.loc(self.loc_uses[name])
            loc.file, loc.line, loc.col = target.file, target.line, target.col
