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
