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
from tdflow.tdparser.errors import TdflowError

__all__ = ["Diagnostic", "DiagnosticError", "register_source", "source_line", "sort_diagnostics"]

# file name -> source text of what the parser read (kept so diagnostics can quote lines).
_SOURCES: dict[str, str] = {}


def register_source(file: str, text: str) -> None:
    """Remember ``text`` as the contents of ``file`` for quoting in diagnostics."""
    _SOURCES[file] = text


def source_line(loc: Location) -> str | None:
    """The text of line ``loc.line`` of ``loc.file``, or ``None`` if unavailable."""
    if loc.line <= 0:
        return None
    text = _SOURCES.get(loc.file)
    if text is None:
        try:
            with open(loc.file, encoding="utf-8") as fh:
                text = fh.read()
        except OSError:
            return None
        _SOURCES[loc.file] = text
    # Find the line without splitting the whole (possibly huge) text.
    start = 0
    for _ in range(loc.line - 1):
        start = text.find("\n", start) + 1
        if start == 0:
            return None
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
        lines = [head]
        src = source_line(loc)
        if src is not None:
            lines.append(src)
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
