"""llvm-tblgen's preprocessor: ``#define``, ``#ifdef``/``#ifndef``/``#else``/``#endif`` and
``include`` file search.

Macros are global to a run (a ``#define`` in an included file is seen afterwards); conditional
blocks must close in the file that opened them. Include search follows llvm-tblgen: the name as
given (relative to the working directory), then each ``-I`` directory in order (a name that
starts with ``/`` is appended to the directory too, as LLVM's ``sys::path::append`` does); as a
convenience tdflow finally tries the including file's own folder (llvm-tblgen does not).

>>> p = Preprocessor(defines=["X"])
>>> "X" in p.macros
True
"""

from __future__ import annotations

import os
import re

from tdflow.core.errors import SourceLoc

from .errors import TdError

_NAME_RE = re.compile(r"[ \t]*([a-zA-Z_][a-zA-Z0-9_]*)")
# What may follow a directive: blanks, `/* */` comments (which, as in llvm-tblgen, may span
# lines) and a final `//` comment; then the line must end. A block comment's body cannot contain
# `*/` and every character is matched one way only, so the match is linear (a lazy `.*?` here
# could span several comments and split `/* */ /* */ ...` exponentially).
_REST_RE = re.compile(r"(?:[ \t\r]|/\*(?:[^*]|\*(?!/))*\*/)*(?://[^\n]*)?")
_LINE_DIRECTIVE_RE = re.compile(r"^[ \t]*#(ifdef|ifndef|else|endif|define)\b", re.MULTILINE)


def _append_path(directory: str, name: str) -> str:
    """``directory`` and ``name`` joined as LLVM's ``sys::path::append`` does for an include:
    unlike :func:`os.path.join`, a name that starts with ``/`` does not replace the directory
    (llvm-tblgen finds ``include "/mlir/X.td"`` as ``<dir>/mlir/X.td`` under each ``-I``).

    >>> _append_path("/inc", "/mlir/X.td"), _append_path("/inc/", "/a.td"), _append_path("/inc", "a.td")
    ('/inc/mlir/X.td', '/inc/a.td', '/inc/a.td')
    """
    if not directory:
        return name
    if directory.endswith("/"):
        return directory + name.lstrip("/")
    return directory + name if name.startswith("/") else directory + "/" + name


class Preprocessor:
    """Holds macros, the include path and the files read so far."""

    def __init__(self, include_dirs=(), defines=()):
        self.include_dirs = [os.fspath(d) for d in include_dirs]
        self.macros = set(defines)
        self.files: list[str] = []
        self.texts: dict[str, str] = {}
        # The files being lexed, outermost first (absolute paths), and the same as a set: an
        # include cycle is one lookup, not a walk of the include stack for every include.
        self._open: list[str] = []
        self._open_set: set[str] = set()

    def open_text(self, name: str) -> None:
        """Note that source text named ``name`` is being lexed (so it cannot include itself)."""
        self._push(os.path.abspath(name))

    def close(self) -> None:
        """The innermost file being lexed is done."""
        self._open_set.discard(self._open.pop())

    def _push(self, key: str) -> None:
        self._open.append(key)
        self._open_set.add(key)

    def read(self, path: str, stack) -> str:
        """The text of ``path``, included from the sites ``stack`` (an IncludeChain or ``()``);
        the caller calls :meth:`close` once it is lexed."""
        key = os.path.abspath(path)
        if key in self._open_set:
            where = stack[-1]
            raise TdError(f"include cycle: '{path}' includes itself", where.file, where.line,
                          where.col, stack.parent)
        try:
            # newline="": the text as it is, "\r\n" included, as llvm-tblgen reads it (code
            # blocks keep their "\r"; lines and columns are counted as llvm-tblgen does).
            with open(path, encoding="utf-8", errors="replace", newline="") as fh:
                text = fh.read()
        except OSError as exc:
            if stack:
                w = stack[-1]
                raise TdError(f"Could not find include file '{path}'", w.file, w.line, w.col,
                              stack.parent) from None
            raise TdError(f"Could not open input file '{path}': {exc.strerror}", path) from None
        if path not in self.texts:
            self.files.append(path)
        self.texts[path] = text
        self._push(key)
        return text

    def resolve_include(self, name: str, includer: str, where: SourceLoc, stack: tuple) -> str:
        candidates = [name] + [_append_path(d, name) for d in self.include_dirs]
        if not os.path.isabs(name):
            candidates.append(os.path.join(os.path.dirname(includer), name))
        for c in candidates:
            if os.path.isfile(c):
                return c
        raise TdError(f"Could not find include file '{name}'", where.file, where.line,
                      where.col, stack)

    def directive(self, lexer, text, m, file, line, line_start, stack, conds):
        """Handle the directive matched by ``m``; return the new (pos, line, line_start)."""
        kind = m.group("pp")[1:]
        col = m.start("pp") - line_start + 2
        pos = m.end()
        if kind in ("ifdef", "ifndef", "define"):
            nm = _NAME_RE.match(text, pos)
            if nm is None:
                eol = text.find("\n", pos)
                eol = len(text) if eol < 0 else eol
                raise TdError(f"Expected macro name after #{kind}", file, line,
                              eol - line_start + 1, stack)
            name = nm.group(1)
            pos = nm.end()
        pos, line, line_start = self._check_rest(text, pos, file, line, line_start, stack, kind)
        if kind == "define":
            self.macros.add(name)
            return pos, line, line_start
        if kind in ("ifdef", "ifndef"):
            taken = (name in self.macros) == (kind == "ifdef")
            conds.append(["if", (file, line, nm.start(1) - line_start + 1)])
            if taken:
                return pos, line, line_start
            return self._skip(text, pos, file, line, stack, conds)
        if not conds:
            raise TdError(f"#{kind} without #ifdef" + (" or #ifndef" if kind == "else" else ""),
                          file, line, col, stack)
        if kind == "endif":
            conds.pop()
            return pos, line, line_start
        # #else reached while the if-branch was active: skip the else-branch.
        if conds[-1][0] == "else":
            prev = conds[-1][1]
            raise TdError("double #else", file, line, col, stack,
                          notes=(("Previous #else is here", SourceLoc(*prev)),))
        conds[-1] = ["else", (file, line, col)]
        return self._skip(text, pos, file, line, stack, conds)

    def _check_rest(self, text, pos, file, line, line_start, stack, kind):
        """Check what follows a directive; return (pos, line, line_start) at the end of its
        line (a block comment after it may end on a later line)."""
        end = _REST_RE.match(text, pos).end()
        nl = text.count("\n", pos, end)
        if nl:
            line += nl
            line_start = text.rfind("\n", pos, end) + 1
        if end < len(text) and text[end] != "\n":
            col = end - line_start + 1
            if text.startswith("/*", end):
                raise TdError("Unterminated comment!", file, line, col, stack)
            what = {"else": "#else", "endif": "#endif"}.get(kind, f"#{kind} NAME")
            raise TdError(f"Only comments are supported after {what}", file, line, col, stack)
        return end, line, line_start

    def _skip(self, text, pos, file, line, stack, conds):
        """Skip a false branch; stop after its ``#else`` or ``#endif`` line."""
        depth = 0
        for m in _LINE_DIRECTIVE_RE.finditer(text, pos):
            kind = m.group(1)
            if kind in ("ifdef", "ifndef"):
                depth += 1
                continue
            if kind == "define":
                continue
            if depth:
                if kind == "endif":
                    depth -= 1
                continue
            line += text.count("\n", pos, m.start())
            line_start = text.rfind("\n", 0, m.start()) + 1
            col = m.start(1) - line_start
            if kind == "endif":
                conds.pop()
            else:
                if conds[-1][0] == "else":
                    prev = conds[-1][1]
                    raise TdError("double #else", file, line, col, stack,
                                  notes=(("Previous #else is here", SourceLoc(*prev)),))
                conds[-1] = ["else", (file, line, col)]
            return self._check_rest(text, m.end(), file, line, line_start, stack, kind)
        f, ln, c = conds[-1][1]
        eof_line = line + text.count("\n", pos)
        eof_col = len(text) - (text.rfind("\n") + 1) + 1
        raise TdError("Reached EOF without matching #endif", file, eof_line, eof_col, stack,
                      notes=(("The latest preprocessor control is here", SourceLoc(f, ln, c)),))
