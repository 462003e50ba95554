"""Writes ``tablegen_lark.json``, the LALR table of ``tablegen.lark`` shipped with the package.

Run ``python -m tdflow.tdparser.grammar_table`` after editing the grammar: a test checks that
the shipped file equals a fresh build, so it cannot drift. :mod:`.parser` reads it through
:func:`.lalr.load_shipped` (JSON, never pickle; no Lark needed) and ignores it when it was made
from another grammar text; Lark then builds the table (:mod:`.grammar_cache`).

>>> fresh_table() == open(SHIPPED, encoding="utf-8").read()  # doctest: +SKIP
True
"""

from __future__ import annotations

import sys

import lark

from tdflow.core.shipped import write_or_check

from .grammar_cache import Feed, build, table_from_lark
from .lalr import SHIPPED, table_json
from .parser import GRAMMAR


def fresh_table() -> str:
    """The table's JSON text built from the grammar now, as :func:`main` writes it.

    >>> fresh_table().startswith('{"format":2,')
    True
    """
    with open(GRAMMAR, encoding="utf-8") as fh:
        grammar = fh.read()
    table = table_from_lark(build(grammar, lexer=Feed, transformer=None))
    return table_json(table, grammar, f"lark {lark.__version__}")


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check``, compare) the shipped table; 1 when ``--check`` differs.

    >>> main(["--check"])  # doctest: +SKIP
    0
    """
    args = sys.argv[1:] if argv is None else argv
    return write_or_check(SHIPPED, fresh_table(), "python -m tdflow.tdparser.grammar_table", args)


if __name__ == "__main__":
    sys.exit(main())
