"""Writes ``tablegen_lark.json``, the LALR table of ``tablegen.lark`` shipped with the package.

Run ``python -m tdflow.tdparser.grammar_table`` after editing the grammar (or moving to another
Lark version): a test checks that the shipped file equals a fresh build, so it cannot drift.
:mod:`.grammar_cache` reads it (JSON, never pickle) and ignores it when it was made from another
grammar text or Lark version.

>>> fresh_table() == SHIPPED.read_text(encoding="utf-8")  # doctest: +SKIP
True
"""

from __future__ import annotations

import sys

from .grammar_cache import SHIPPED, build, table_document
from .parser import GRAMMAR, Feed, ToAst


def fresh_table() -> str:
    """The table's JSON text built from the grammar now, as :func:`main` writes it.

    >>> fresh_table().startswith('{"d":[["format",1]')
    True
    """
    with open(GRAMMAR, encoding="utf-8") as fh:
        grammar = fh.read()
    return table_document(build(grammar, lexer=Feed, transformer=ToAst()), grammar, Feed)


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check``, compare) the shipped table; 1 when ``--check`` differs.

    >>> main(["--check"])  # doctest: +SKIP
    0
    """
    args = sys.argv[1:] if argv is None else argv
    text = fresh_table()
    if "--check" in args:
        same = SHIPPED.is_file() and SHIPPED.read_text(encoding="utf-8") == text
        print(f"{SHIPPED}: {'up to date' if same else 'STALE: run python -m tdflow.tdparser.grammar_table'}")
        return 0 if same else 1
    SHIPPED.write_text(text, encoding="utf-8")
    print(f"wrote {SHIPPED} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
