"""The corpus of bad programs: every verifier error, with its expected message, line and column.

Each ``bad/NAME.mlir`` starts with a comment saying what is wrong; ``bad/NAME.expected`` lists
the diagnostics ``LINE:COL: error: MESSAGE`` in order. An undeclared attribute is a warning
(MLIR's discardable attributes): a program whose first line names ``--strict-attrs`` is
verified with ``strict_attrs=True``, which makes it an error. Regenerate after an intended wording
change with ``TDFLOW_UPDATE_GOLDEN=1 pytest tests/dialect/test_bad_programs.py`` and review the
diff.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tdflow.dialect import standard_dialect
from tdflow.dialect.ir import DiagnosticError, verify_module
from tdflow.dialect.ir.parser import parse_file

BAD = Path(__file__).resolve().parent / "bad"
PROGRAMS = sorted(BAD.glob("*.mlir"))
UPDATE = bool(os.environ.get("TDFLOW_UPDATE_GOLDEN"))


def diagnostics(path: Path) -> list[str]:
    strict = "--strict-attrs" in path.read_text().splitlines()[0]
    try:
        diags = verify_module(parse_file(path), standard_dialect(), strict_attrs=strict)
    except DiagnosticError as exc:
        diags = exc.diagnostics
    return [f"{d.loc.line}:{d.loc.col}: {d.severity}: {d.message}" for d in diags]


def test_corpus_is_large_enough():
    assert len(PROGRAMS) >= 40


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_bad_program(path: Path):
    got = diagnostics(path)
    expected_file = path.with_suffix(".expected")
    if UPDATE:
        expected_file.write_text("\n".join(got) + "\n")
    expected = expected_file.read_text().splitlines()
    assert got == expected
    assert any(": error: " in line for line in got), "a bad program must produce an error"
    assert path.read_text().startswith("// "), "say what is wrong in the first line"


def test_cli_reports_every_error_with_caret():
    path = BAD / "many_errors.mlir"
    proc = subprocess.run([sys.executable, "-m", "tdflow", "verify", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    expected = (BAD / "many_errors.expected").read_text().splitlines()
    for exp in expected:
        line_col, _, rest = exp.partition(": ")
        head = f"{path}:{line_col}: {rest}"
        assert head in lines
        i = lines.index(head)
        col = int(line_col.split(":")[1])
        assert lines[i + 2] == " " * (col - 1) + "^"
    assert lines[-1] == f"{sum(': error: ' in e for e in expected)} errors"  # warnings uncounted
