"""Helpers shared by the benchmark scripts: finding LLVM 19 tools, and writing a script's own
section of ``docs/benchmarks.md``.

The scripts run as ``python bench/NAME.py`` and import this module as ``_common`` (each puts
``bench/`` on ``sys.path`` first, so importing them as ``bench.NAME`` works too).
"""

from __future__ import annotations

from pathlib import Path

from tdflow.tdparser.llvm_tools import find_llvm_tool, mlir_include_dir  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "benchmarks.md"


find_tool = find_llvm_tool  # LLVM 19's tools only (see tdflow.tdparser.llvm_tools)


def write_docs_section(heading: str, section: str, docs: Path = DOCS) -> None:
    """Replace (or append) the section of ``docs`` that starts with ``heading`` (a ``## ...``
    line) by ``section`` (heading included); the other sections stay as they are.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "b.md"
    >>> write_docs_section("## A", "## A\\n\\nold\\n", p)
    >>> p.write_text(p.read_text() + "\\n## B\\n\\nb\\n") and None
    >>> write_docs_section("## A", "## A\\n\\nnew\\n", p)
    >>> print(p.read_text())
    # Benchmarks
    <BLANKLINE>
    ## A
    <BLANKLINE>
    new
    <BLANKLINE>
    ## B
    <BLANKLINE>
    b
    <BLANKLINE>
    """
    text = docs.read_text() if docs.is_file() else "# Benchmarks\n"
    start = text.find(heading)
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        nxt = text.find("\n## ", start + len(heading))
        text = text[:start] + section + ("" if nxt < 0 else "\n" + text[nxt + 1:])
    docs.parent.mkdir(parents=True, exist_ok=True)
    docs.write_text(text)
