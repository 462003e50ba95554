"""IR diagnostics: ``Diagnostic(message, loc, notes)`` and the ``DiagnosticError`` exception.

A diagnostic renders like ``mlir-opt``'s, with the source line and a caret::

    prog.mlir:3:8: error: use of undefined value '%7'
      %1 = "tdflow.relu"(%7) : (tensor<4xf32>) -> tensor<4xf32>
                         ^

The source text comes from :func:`register_source` (the parser registers every text it reads)
or, failing that, from the file on disk. The CLI prints anything with ``.render()``.

>>> from tdflow.dialect.ir.core import Location
>>> register_source("t.mlir", "x = 1\\n")
>>> print(Diagnostic("bad", Location("t.mlir", 1, 5)).render())
t.mlir:1:5: error: bad
x = 1
    ^
"""

from __future__ import annotations

from collections.abc import Iterable

from tdflow.dialect.ir.core import UNKNOWN_LOC, Location

from tdflow.core.errors import TdflowError

__all__ = ["Diagnostic", "DiagnosticError", "register_source", "source_line", "sort_diagnostics"]

# file name -> source text of what the parser read (kept so diagnostics can quote lines).
_SOURCES: dict[str, str] = {}
# file name -> offsets of its line starts, built on the first quote: a module with 100k errors
# renders in linear time, not 100k scans from the top of the file.
_LINE_STARTS: dict[str, list[int]] = {}
# A location may name any path (``loc("/dev/zero":1:1)`` is valid MLIR): only regular files of
# a sane size are read to quote a line, so rendering never blocks or exhausts memory.
_MAX_QUOTED_FILE = 64 << 20
# Control characters in a quoted line would garble the terminal: show them as the Unicode
# "control pictures" (one column each, so the caret stays aligned). Tabs are kept.
_VISIBLE = {c: 0x2400 + c for c in range(0x20) if c != 0x09} | {0x7F: 0x2421}
# The same for messages (which quote names and strings from the program), keeping line breaks.
_VISIBLE_MESSAGE = {c: v for c, v in _VISIBLE.items() if c != 0x0A}


def register_source(file: str, text: str) -> None:
    """Remember ``text`` as the contents of ``file`` for quoting in diagnostics."""
    _SOURCES[file] = text
    _LINE_STARTS.pop(file, None)


def _read_for_quoting(file: str) -> str | None:
    import os

    try:
        if not os.path.isfile(file) or os.path.getsize(file) > _MAX_QUOTED_FILE:
            return None
        with open(file, "rb") as fh:
            return fh.read().decode("utf-8", errors="replace")
    except (OSError, ValueError):  # unreadable, or a name the OS refuses (NUL in it)
        return None


def source_line(loc: Location) -> str | None:
    """The text of line ``loc.line`` of ``loc.file``, or ``None`` if unavailable."""
    if loc.line <= 0:
        return None
    text = _SOURCES.get(loc.file)
    if text is None:
        text = _read_for_quoting(loc.file)
        if text is None:
            return None
        _SOURCES[loc.file] = text
    starts = _LINE_STARTS.get(loc.file)
    if starts is None:
        starts = [0]
        find = text.find
        i = find("\n")
        while i >= 0:
            starts.append(i + 1)
            i = find("\n", i + 1)
        _LINE_STARTS[loc.file] = starts
    if loc.line > len(starts):
        return None
    start = starts[loc.line - 1]
    end = text.find("\n", start)
    return (text[start:] if end < 0 else text[start:end]).rstrip("\r")


class Diagnostic:
    """One message at a location, with optional notes (themselves diagnostics).

    ``severity`` is ``"error"``, ``"warning"`` or ``"note"``. Notes may be given as
    ``Diagnostic``\\ s, ``(message, loc)`` pairs or plain strings.
    """

    __slots__ = ("message", "loc", "notes", "severity")

    def __init__(self, message: str, loc: Location | None = None, notes: Iterable = (),
                 severity: str = "error") -> None:
        self.message = message
        self.loc = UNKNOWN_LOC if loc is None else loc
        self.notes = tuple(_as_note(n, self.loc) for n in notes)
        self.severity = severity

    def render(self) -> str:
        """``file:line:col: error: message``, the source line and a caret, then the notes."""
        loc = self.loc
        if loc.line > 0:
            head = f"{loc.file}:{loc.line}:{loc.col}: {self.severity}: {self.message}"
        elif loc.file and loc.file != UNKNOWN_LOC.file:
            head = f"{loc.file}: {self.severity}: {self.message}"
        else:
            head = f"{self.severity}: {self.message}"
        lines = [head.translate(_VISIBLE_MESSAGE)]
        src = source_line(loc)
        if src is not None:
            if len(src) > 1000:  # a megabyte-long line: quote the part around the column
                lo = max(loc.col - 500, 0)
                src = src[lo:lo + 1000]
                loc = Location(loc.file, loc.line, loc.col - lo)
            lines.append(src.translate(_VISIBLE))
            # Keep tabs so the caret lines up under tab-indented source.
            prefix = "".join(c if c == "\t" else " " for c in src[: max(loc.col - 1, 0)])
            lines.append(prefix + "^")
        for n in self.notes:
            lines.append(n.render())
        return "\n".join(lines)

    def __str__(self) -> str:
        loc = self.loc
        where = f"{loc}: " if loc.line > 0 else ""
        return f"{where}{self.severity}: {self.message}"

    def __repr__(self) -> str:
        return f"Diagnostic({self.message!r}, {self.loc!r})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Diagnostic) and self.message == other.message
                and self.loc == other.loc and self.severity == other.severity)

    __hash__ = None  # type: ignore[assignment]


def _as_note(note, loc: Location) -> Diagnostic:
    if isinstance(note, Diagnostic):
        return note
    if isinstance(note, tuple):
        message, nloc = note
        return Diagnostic(message, nloc, severity="note")
    return Diagnostic(str(note), loc, severity="note")


def sort_diagnostics(diags: list[Diagnostic]) -> list[Diagnostic]:
    """Diagnostics in source order (stable for equal positions)."""
    return sorted(diags, key=lambda d: (d.loc.file, d.loc.line, d.loc.col))


class DiagnosticError(TdflowError):
    """One or more diagnostics raised as an exception; ``render()`` prints them all.

    >>> e = DiagnosticError([Diagnostic("bad thing")])
    >>> str(e), e.render()
    ('error: bad thing', 'error: bad thing')
    """

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))

    def render(self) -> str:
        out = [d.render() for d in self.diagnostics]
        n = sum(1 for d in self.diagnostics if d.severity == "error")
        if n > 1:
            out.append(f"{n} errors")
        return "\n".join(out)
