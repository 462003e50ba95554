"""`tdflow patterns` through the real console entry point (subprocess): the table and --json of
a good pattern file, exit 1 with every located diagnostic for a bad one, exit 2 for usage
mistakes, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

GOOD = """\
include "tdflow/Patterns.td"
include "tdflow/ops.td"
def Same : Constraint<CPred<"$0.getType() == $1.getType()">, "same type">;
def ReluRelu : Pat<(TDF_ReluOp (TDF_ReluOp $x)), (TDF_ReluOp $x)>;
def : Pat<(TDF_LeakyReluOp:$r $x, ConstF32Attr<"0.0">), (TDF_ReluOp $x), [(Same $r, $x)],
          [], (addBenefit 5)>;
"""

BAD = """\
include "tdflow/Patterns.td"
include "tdflow/ops.td"
def A : Pat<(TDF_ReluOp $x, $y), (TDF_ReluOp $x)>;
def B : Pat<(TDF_ReluOp $x), (TDF_ReluOp $nope)>;
"""


def tdflow(*args: str, cwd: Path):
    proc = subprocess.run([sys.executable, "-m", "tdflow", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120, env={**os.environ, "COLUMNS": "250"})
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def mine(patterns: list[dict]) -> list[dict]:
    """The file's own patterns (the standard library's rules come in with tdflow/ops.td)."""
    return [p for p in patterns if p["location"].startswith("good.td:")]


def test_patterns_json(tmp_path):
    (tmp_path / "good.td").write_text(GOOD)
    proc = tdflow("patterns", "good.td", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    got = mine(json.loads(proc.stdout))
    assert [(p["name"], p["root"], p["benefit"]) for p in got][0] == (
        "ReluRelu", "tdflow.relu", 2)
    relu_relu, leaky = got
    assert relu_relu["matched_ops"] == ["tdflow.relu", "tdflow.relu"]
    assert relu_relu["generated_ops"] == ["tdflow.relu"]
    assert relu_relu["location"] == "good.td:4:5"
    assert leaky["name"].startswith("GeneratedConvert") and leaky["benefit"] == 6
    assert leaky["constraints"] == [{"record": "Same", "args": ["r", "x"], "kind": "cpred",
                                     "pred": "($0.getType() == $1.getType())",
                                     "summary": "same type"}]
    assert leaky["natives"] == ["Same"]


def test_patterns_table(tmp_path):
    (tmp_path / "good.td").write_text(GOOD)
    proc = tdflow("patterns", "good.td", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if "good.td:" in line]
    assert len(rows) == 2
    assert "ReluRelu" in rows[0] and "tdflow.relu, tdflow.relu" in rows[0]
    assert "tdflow.leaky_relu" in rows[1] and "Same($r, $x)" in rows[1] and " 6 " in rows[1]
    total = json.loads(tdflow("patterns", "good.td", "--json", cwd=tmp_path).stdout)
    assert proc.stdout.rstrip().endswith(f"{len(total)} patterns")


def test_patterns_bad_file_every_error_located(tmp_path):
    (tmp_path / "bad.td").write_text(BAD)
    proc = tdflow("patterns", "bad.td", cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    errors = [line for line in proc.stderr.splitlines() if ": error: " in line]
    assert errors == [
        "bad.td:3:5: error: op 'tdflow.relu' argument number mismatch: 2 in pattern vs. 1 in "
        "definition",
        "bad.td:4:5: error: referencing unbound symbol 'nope'",
    ]


def test_patterns_defines_and_include_dirs(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "rules.td").write_text(GOOD)
    (tmp_path / "main.td").write_text('#ifdef WITH_RULES\ninclude "rules.td"\n#endif\n'
                                      'include "tdflow/Patterns.td"\n')
    without = json.loads(tdflow("patterns", "main.td", "--json", cwd=tmp_path).stdout)
    proc = tdflow("patterns", "main.td", "-I", "inc", "-D", "WITH_RULES", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    names = [p["name"] for p in json.loads(proc.stdout)]
    assert without == [] and "ReluRelu" in names


def test_patterns_usage_and_file_errors(tmp_path):
    proc = tdflow("patterns", "--frobnicate", cwd=tmp_path)
    assert proc.returncode == 2
    proc = tdflow("patterns", "missing.td", cwd=tmp_path)
    assert proc.returncode == 1
    assert "missing.td" in proc.stderr and "no such file" in proc.stderr
