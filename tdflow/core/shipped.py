"""Generated files shipped with the package (a parser table, a kernel table): write them, or
check that the shipped copy equals a fresh build, so they can never drift from their source.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "t.json"
>>> write_or_check(p, "{}", "python -m gen", ["--check"])  # doctest: +ELLIPSIS
/.../t.json: STALE: run python -m gen
1
>>> write_or_check(p, "{}", "python -m gen", []), p.read_text()  # doctest: +ELLIPSIS
wrote /.../t.json (2 bytes)
(0, '{}')
>>> write_or_check(p, "{}", "python -m gen", ["--check"])  # doctest: +ELLIPSIS
/.../t.json: up to date
0
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

__all__ = ["write_or_check"]


def write_or_check(shipped: Path | str, text: str, regenerate: str, args: Sequence[str]) -> int:
    """With ``--check`` in ``args``: 0 when ``shipped`` holds exactly ``text``, else 1 (saying
    to run ``regenerate``); without it, write ``text`` there. Prints what it did."""
    if "--check" in args:
        try:
            with open(shipped, encoding="utf-8") as fh:
                same = fh.read() == text
        except OSError:
            same = False
        print(f"{shipped}: {'up to date' if same else 'STALE: run ' + regenerate}")
        return 0 if same else 1
    with open(shipped, "w", encoding="utf-8") as fh:
        fh.write(text)
    print(f"wrote {shipped} ({len(text)} bytes)")
    return 0
