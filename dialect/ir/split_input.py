"""``--split-input-file``: one program file cut into chunks at ``// -----``, each its own module.

The chunks keep their place in the whole file: a chunk's text is padded with the newlines and
spaces that precede it, so every line and column the parser and the verifier report is the one
in the real file, under the real file name (mlir-opt 19 reports ``within split at f.mlir:6
offset :4:19`` instead; MLIR since 20 reports the whole file's line, as here).

Like mlir-opt 19 (``StringRef::split``), the marker is cut wherever it occurs, not only on a line
of its own; what follows it on its line (``// ------`` leaves ``-``) starts the next chunk.

>>> [(c.line, c.col, c.text.lstrip("\\n ")) for c in split_input("a\\n// -----\\nb\\n")]
[(1, 1, 'a\\n'), (2, 9, 'b\\n')]
>>> split_input("a\\n// -----\\nb\\n")[1].text.splitlines()  # b stays on line 3
['', '        ', 'b']
>>> [c.text for c in split_input("a\\n// -----\\nb\\n", split=False)]
['a\\n// -----\\nb\\n']
"""

from __future__ import annotations

from collections.abc import Callable

from tdflow.dialect.ir.diagnostics import Diagnostic, DiagnosticError, register_source

from tdflow.core.valueclass import value_class

__all__ = ["SPLIT_MARKER", "Chunk", "ChunkResult", "split_input", "join_outputs", "check_chunks"]

#: What separates the chunks of a split input, and the outputs of ``opt`` (mlir-opt's marker).
SPLIT_MARKER = "// -----"


@value_class(frozen=True)
class Chunk:
    """One chunk: ``text`` padded so that its first character sits at ``line``:``col``."""

    text: str
    line: int
    col: int


def split_input(text: str, split: bool = True) -> list[Chunk]:
    """The chunks of ``text`` (one, the whole text, unless ``split``)."""
    if not split:
        return [Chunk(text, 1, 1)]
    chunks = []
    start, line, col = 0, 1, 1
    while True:
        end = text.find(SPLIT_MARKER, start)
        piece = text[start:] if end < 0 else text[start:end]
        chunks.append(Chunk("\n" * (line - 1) + " " * (col - 1) + piece, line, col))
        if end < 0:
            return chunks
        # The next chunk starts right after the marker, on the marker's line.
        line += text.count("\n", start, end)
        line_start = text.rfind("\n", 0, end) + 1
        col = end - line_start + len(SPLIT_MARKER) + 1
        start = end + len(SPLIT_MARKER)


def join_outputs(outputs: list[str | None]) -> str:
    """The outputs of the chunks as mlir-opt writes them: each printed chunk followed by a blank
    line, chunks separated by ``// -----`` lines, a failed chunk (``None``) printing nothing.

    >>> print(join_outputs(["a\\n", None, "b\\n"]), end="")
    a
    <BLANKLINE>
    // -----
    // -----
    b
    <BLANKLINE>
    """
    parts = []
    for i, out in enumerate(outputs):
        if i:
            parts.append(SPLIT_MARKER + "\n")
        if out is not None:
            parts.append(out if out.endswith("\n") else out + "\n")
            parts.append("\n")
    return "".join(parts)


@value_class
class ChunkResult:
    """What became of one chunk: its ``module`` (``None`` when it did not parse, or when an
    error was produced: nothing to print), the ``diagnostics`` to show and whether it ``failed``.
    With ``--verify-diagnostics`` the diagnostics are the mismatches with the ``expected-*``
    comments, and only those fail it."""

    module: object | None
    diagnostics: list[Diagnostic]
    failed: bool


def check_chunks(text: str, name: str, verify: Callable[[object], list[Diagnostic]] | None, *,
                 split: bool = False, verify_diagnostics: bool = False) -> list[ChunkResult]:
    """Parse (and ``verify``, unless ``None``) each chunk of program ``text`` read from file
    ``name``; every chunk is checked, whatever became of the ones before (mlir-opt's way).

    >>> from tdflow.dialect.ir import verify_module
    >>> text = ('func.func @f() {\\n  return\\n}\\n// -----\\n'
    ...         'func.func @g() {\\n  "a.b"(%x) : (i32) -> ()\\n  return\\n}\\n')
    >>> r = check_chunks(text, "s.mlir", verify_module, split=True)
    >>> [(x.module is None, x.failed) for x in r]
    [(False, False), (True, True)]
    >>> str(r[1].diagnostics[0]).split(": error")[0]   # the whole file's line
    's.mlir:6:9'
    """
    from tdflow.dialect.ir.parser import parse_module

    results = []
    for chunk in split_input(text, split):
        try:
            module = parse_module(chunk.text, name)
            diags = list(verify(module)) if verify is not None else []
        except DiagnosticError as exc:
            module, diags = None, list(exc.diagnostics)
        finally:
            register_source(name, text)  # quote lines from the whole file, not the chunk
        if any(d.severity == "error" for d in diags):
            module = None
        if verify_diagnostics:
            # here: its dataclasses and regexes cost every plain `tdflow verify` (start-up)
            from tdflow.dialect.ir.expected_diagnostics import check, parse_expectations

            try:
                problems = check(diags, parse_expectations(chunk.text, name))
            except DiagnosticError as exc:
                problems = list(exc.diagnostics)
            results.append(ChunkResult(module, problems, bool(problems)))
        else:
            failed = any(d.severity == "error" for d in diags)
            results.append(ChunkResult(module, diags, failed))
    return results
