"""Program text in: bytes to ``str`` with a located error for anything that is not text.

MLIR reads a program as bytes; tdflow parses ``str``. The conversion is the one place where a
stray byte could otherwise escape as a ``UnicodeDecodeError``, so every reader of program text
(files, stdin, ``bytes`` handed to :func:`~tdflow.dialect.ir.parser.parse_module`) goes through
:func:`decode_source`, which reports the first byte that is not UTF-8 at its ``file:line:col``.

>>> decode_source(b"ok\\n", "t.mlir")
'ok\\n'
>>> decode_source(b"ab\\n c\\xff", "t.mlir")
Traceback (most recent call last):
...
tdflow.dialect.ir.diagnostics.DiagnosticError: t.mlir:2:3: error: invalid UTF-8 byte 0xff ...
"""

from __future__ import annotations

import os
import re

from tdflow.dialect.ir.core import Location
from tdflow.dialect.ir.diagnostics import Diagnostic, DiagnosticError, register_source

__all__ = ["decode_source", "read_source", "check_text"]

_BOM = b"\xef\xbb\xbf"
# Lone surrogates: what ``surrogateescape`` makes of undecodable bytes (U+DC80..U+DCFF), or
# any other unpaired surrogate a Python caller put in a ``str``; neither can be printed as UTF-8.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _located(message: str, file: str, text: str, pos: int) -> DiagnosticError:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return DiagnosticError([Diagnostic(message, Location(file, line, col))])


def decode_source(data: bytes, file: str) -> str:
    """``data`` as text; ``DiagnosticError`` at the first byte that is not UTF-8.

    A leading byte-order mark is dropped (editors hide it, so columns stay what the user sees).
    """
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # Quote the line with the bad bytes replaced, and count the column in characters of the
        # decodable prefix, like every other column of the IR's diagnostics.
        shown = data.decode("utf-8", errors="replace")
        register_source(file, shown)
        prefix = data[:exc.start].decode("utf-8", errors="replace")
        raise _located(f"invalid UTF-8 byte 0x{data[exc.start]:02x} (program text must be "
                       f"UTF-8)", file, prefix, len(prefix)) from None


def check_text(text: str, file: str) -> None:
    """Raise a located ``DiagnosticError`` if ``text`` holds an unpaired surrogate.

    Such a ``str`` comes from bytes decoded with ``surrogateescape`` (the escape stands for the
    original byte, reported as such) or from a Python caller; it cannot be written back as UTF-8.
    """
    if text.isascii():  # the common case, and a fast one
        return
    m = _SURROGATE.search(text)
    if m is None:
        return
    c = ord(m.group())
    what = (f"invalid UTF-8 byte 0x{c - 0xDC00:02x}" if 0xDC80 <= c <= 0xDCFF
            else f"unpaired surrogate U+{c:04X}")
    register_source(file, _SURROGATE.sub("\ufffd", text))
    raise _located(f"{what} (program text must be UTF-8)", file, text, m.start())


def read_source(path: str | os.PathLike) -> str:
    """The text of the program file at ``path`` (``OSError`` when it cannot be read)."""
    with open(path, "rb") as fh:
        data = fh.read()
    return decode_source(data, str(path))
