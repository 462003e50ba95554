"""Where a code field's text starts in a ``.td`` file (line and column after ``[{``).

The TableGen front end records where a record is defined, not where each field value is, so
this finds the value by searching the source from the record's line for ``field = [{`` whose
body is the field's text -- a stopgap until ``tdparser`` keeps value locations.

>>> src = 'def A : Op {\\n  let summary = "a";\\n  let formula = [{ x * 2 }];\\n}\\n'
>>> locate_code_field(src, "formula", " x * 2 ", start_line=1)
(3, 19)
"""

from __future__ import annotations

import re


def _line_col(source: str, offset: int) -> tuple[int, int]:
    line = source.count("\n", 0, offset) + 1
    return line, offset - (source.rfind("\n", 0, offset) + 1) + 1


def locate_code_field(source: str, field: str, code: str, start_line: int = 1
                      ) -> tuple[int, int] | None:
    """``(line, col)`` (1-based) of the first character of ``code`` where the source writes
    ``field = [{<code>}]`` (``let field = ...`` in a def, or ``code field = ...`` in a class),
    searching from ``start_line`` first and then from the top; ``None`` when not found (the
    value came from a ``defvar``, a template argument or a paste).
    """
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", field):
        raise ValueError(f"not a field name: {field!r}")
    pattern = re.compile(r"\b" + field + r"\s*=\s*\[\{")
    start = 0
    for _ in range(start_line - 1):
        nl = source.find("\n", start)
        if nl < 0:
            break
        start = nl + 1
    for origin in (start, 0):
        for m in pattern.finditer(source, origin):
            body = m.end()
            if source.startswith(code, body) and source.startswith("}]", body + len(code)):
                return _line_col(source, body)
    return None


def code_field_start(source: str | None, field: str, code: str, record_line: int
                     ) -> tuple[int, int]:
    """Where ``field``'s text starts (:func:`locate_code_field`), or the record's line when it
    cannot be found or there is no source: the place errors inside the code point from.

    >>> code_field_start("def A {\\n  let formula = [{ x }];\\n}\\n", "formula", " x ", 1)
    (2, 19)
    >>> code_field_start(None, "formula", " x ", 7)
    (7, 1)
    """
    where = locate_code_field(source, field, code, record_line) if source else None
    return where if where is not None else (record_line, 1)


def check_code_field(code: str, opdef, *, file: str, record_line: int, field: str = "formula",
                     source: str | None = None):
    """Parse and check the ``field`` code value of ``opdef``'s record (defined at
    ``record_line`` of ``file``), locating its text in the file's ``source`` (read when not
    given); returns the :class:`~.check.CheckedFormula`. When the text cannot be found (or
    the file read), errors point at the record's line instead.

    This is the one call the dialect reader needs per op with a ``formula``:

    >>> from tdflow.dialect import standard_dialect
    >>> op = standard_dialect().lookup("tdflow.relu")
    >>> src = "def R : Op {\\n  let formula = [{ max(x, 0) }];\\n}\\n"
    >>> check_code_field(" max(x, 0) ", op, file="r.td", record_line=1, source=src).expr
    max(in0, 0)
    """
    from .check import check_formula
    from .parse import parse_formula

    if source is None:
        try:
            with open(file, encoding="utf-8", errors="replace") as fh:
                source = fh.read()
        except OSError:
            source = ""
    line, col = code_field_start(source, field, code, record_line)
    return check_formula(parse_formula(code, file=file, line=line, col=col), opdef)
