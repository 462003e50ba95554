"""The base of every error tdflow reports, and the source position errors point at.

Every package derives its errors from :class:`TdflowError` (the TableGen front end's
``TdError``, the IR's ``DiagnosticError``, the runtime's argument errors), so the CLI catches
one class. It lives in :mod:`tdflow.core`, below every other package.

>>> str(SourceLoc("ops.td", 3, 14))
'ops.td:3:14'
"""

from __future__ import annotations

from .plain import Frozen, frozen_init


class SourceLoc(Frozen):
    """A position in a source file; ``line`` and ``col`` are 1-based (a frozen value class)."""

    field_names = ("file", "line", "col")
    file: str
    line: int
    col: int

    def __init__(self, file: str, line: int, col: int) -> None:
        frozen_init(self, file=file, line=line, col=col)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class TdflowError(Exception):
    """The base of every error tdflow reports to a user: bad ``.td`` input, bad IR, a wrong
    argument to a compiled program or a functional call, an unusable backend, a usage mistake.

    ``render()`` gives the diagnostic text (``file:line:col: error: ...``, the source line and a
    caret where there is a location); ``exit_code`` is what the CLI exits with: 1 for
    diagnostics, 2 for usage errors. The CLI catches this one class; anything else escaping a
    command is an internal bug.

    >>> class Oops(TdflowError):
    ...     pass
    >>> Oops("no such thing").render(), Oops.exit_code
    ('error: no such thing', 1)
    """

    exit_code: int = 1

    def render(self) -> str:
        """The diagnostic text the CLI prints to stderr."""
        return f"error: {self}"


def position(where) -> tuple:
    """``(file, line, col, include_stack)`` of a token, a :class:`SourceLoc` or a record's
    ``Loc`` (tokens name the column ``column``, the others ``col``)."""
    col = getattr(where, "column", None)
    if col is None:
        col = getattr(where, "col", 0)
    return where.file, where.line, col, tuple(getattr(where, "stack", ()))
