"""The one error type of the TableGen front end.

Every lexical, syntax and semantic problem is a :class:`TdError` carrying the file, line and
column it points at and the include stack that led there, so the CLI can render it like
llvm-tblgen does::

    ops.td:3:14: error: Variable not defined: 'foo'
      def X : C<foo>;
                ^
"""

from __future__ import annotations

from tdflow.core.errors import SourceLoc, TdflowError, position
from tdflow.core.plain import Plain


class IncludeChain:
    """The ``include`` sites that led to a file, as a linked list (outermost first when
    iterated). Every token of a file shares its file's chain, and a nested file's chain is one
    node on top of its includer's, so an include chain of depth ``d`` costs ``O(d)`` memory
    (a tuple per file would cost ``O(d**2)``: 10,000 nested includes, which llvm-tblgen
    accepts, would need 400 MB). :class:`TdError` turns it into a tuple.

    >>> c = IncludeChain(IncludeChain((), SourceLoc("a.td", 1, 9)), SourceLoc("b.td", 2, 9))
    >>> [str(x) for x in c], len(c), c[-1].file
    (['a.td:1:9', 'b.td:2:9'], 2, 'b.td')
    """

    __slots__ = ("parent", "loc", "depth")

    def __init__(self, parent, loc: SourceLoc):
        self.parent = parent
        self.loc = loc
        self.depth = len(parent) + 1

    def __len__(self) -> int:
        return self.depth

    def __bool__(self) -> bool:
        return True

    def __iter__(self):
        out = []
        node = self
        while isinstance(node, IncludeChain):
            out.append(node.loc)
            node = node.parent
        out.extend(reversed(node))  # a plain tuple at the bottom
        return reversed(out)

    def __getitem__(self, i):
        if i == -1:
            return self.loc
        return tuple(self)[i]


class TdError(Plain, TdflowError):
    """A diagnostic from the TableGen front end.

    >>> str(TdError("expected ';'", "a.td", 3, 7))
    "a.td:3:7: error: expected ';'"

    ``include_stack`` lists the ``include`` sites (outermost first) that led to ``file``.
    ``notes`` are secondary diagnostics (``note: ...``) and ``others`` further independent
    errors reported in the same run, as llvm-tblgen reports several errors before giving up.
    """

    message: str
    file: str = "<unknown>"
    line: int = 0
    col: int = 0
    include_stack: tuple[SourceLoc, ...] = ()
    notes: tuple[tuple[str, SourceLoc | None], ...] = ()
    others: list[TdError]
    field_names = ("message", "file", "line", "col", "include_stack", "notes", "others")

    def __init__(self, message: str, file: str = "<unknown>", line: int = 0, col: int = 0,
                 include_stack: tuple[SourceLoc, ...] = (),
                 notes: tuple[tuple[str, SourceLoc | None], ...] = (),
                 others: list[TdError] | None = None) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.col = col
        self.include_stack = include_stack
        self.notes = notes
        self.others = [] if others is None else others
        if not isinstance(self.include_stack, tuple):  # an IncludeChain from the lexer
            self.include_stack = tuple(self.include_stack)
        super().__init__(self.message)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}: error: {self.message}"

    def place(self, where) -> TdError:
        """Give this error, if it has no location yet, the location of ``where`` (a token or
        anything with ``file``, ``line`` and ``column``); returns the error.

        >>> from types import SimpleNamespace as NS
        >>> str(TdError("too many").place(NS(file="a.td", line=2, column=5, stack=())))
        'a.td:2:5: error: too many'
        """
        if not self.line and where is not None and getattr(where, "line", 0):
            self.file, self.line, self.col, self.include_stack = position(where)
        return self

    @property
    def loc(self) -> SourceLoc:
        return SourceLoc(self.file, self.line, self.col)

    def all_errors(self) -> list[TdError]:
        """This error followed by every further independent error it carries."""
        return [self, *self.others]

    def render(self) -> str:
        """Render like llvm-tblgen: include stack, message, the source line and a caret."""
        out: list[str] = []
        lines: dict[str, list[str] | None] = {}  # each file read once, however many errors
        for err in self.all_errors():
            for inc in err.include_stack:
                out.append(f"Included from {inc.file}:{inc.line}:")
            out.append(str(err))
            src = _source_line(err.file, err.line, lines)
            if src is not None:
                out.append(src)
                out.append(" " * max(err.col - 1, 0) + "^")
            for note, where in err.notes:
                out.append(f"{where}: note: {note}" if where else f"note: {note}")
        return "\n".join(out)


def _source_line(path: str, line: int, cache: dict) -> str | None:
    """Line ``line`` of ``path`` for a caret display (``cache`` keeps each file's lines)."""
    if line <= 0:
        return None
    if path not in cache:
        try:
            # newline="": lines end at "\n" only, as the lexer counts them.
            with open(path, encoding="utf-8", errors="replace", newline="") as fh:
                cache[path] = fh.read().split("\n")
        except (OSError, ValueError):  # ValueError: a name with a NUL byte
            cache[path] = None
    text = cache[path]
    if text is None or line > len(text):
        return None
    return text[line - 1].rstrip("\r").replace("\t", " ")
