"""The LLVM oracle for differential tests: run ``llvm-tblgen-19`` and tdflow on the same input,
compare their ``--dump-json`` documents and then their ``--print-records`` texts.

Shared by ``test_llvm_diff.py``, ``test_oneflow_like.py``, ``test_properties.py`` and
``tools/tblgen_sweep.py``. llvm-tblgen's output is memoised per process (keyed by its arguments
and the main file's stat), so each file is run through the real tool once per test session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from jsoncompare import diff_documents, diff_print_records  # noqa: E402

# The first difference of each swept file that did not match (for the summary in conftest.py).
SWEEP_FIRST_DIFFERENCE: dict[str, str] = {}

# Where the compatibility notes (and the list of files that cannot match) live.
COMPAT_DOC = ROOT / "docs" / "tablegen-compat.md"


def _conftest():
    """tests/conftest.py's tool finders, loaded under a private name (pytest or not: a plain
    ``import conftest`` would find whichever conftest.py is first on sys.path)."""
    import importlib.util

    mod = sys.modules.get("_tdflow_tests_conftest")
    if mod is None:
        spec = importlib.util.spec_from_file_location("_tdflow_tests_conftest",
                                                      ROOT / "tests" / "conftest.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sys.modules["_tdflow_tests_conftest"] = mod
    return mod


def find_llvm_tblgen() -> str | None:
    return _conftest().find_tool("llvm-tblgen")


def mlir_include_dir() -> Path | None:
    return _conftest().mlir_include_dir()


def mlir_td_files(include: Path) -> list[str]:
    """Every ``.td`` under ``include/mlir``, as paths relative to ``include``, sorted."""
    return sorted(str(p.relative_to(include)) for p in (include / "mlir").rglob("*.td"))


@dataclass(frozen=True)
class ToolResult:
    ok: bool
    stdout: str
    stderr: str


@cache
def _run_llvm_cached(tblgen: str, args: tuple[str, ...], cwd: str, stamp: tuple) -> ToolResult:
    proc = subprocess.run([tblgen, *args], capture_output=True, text=True, cwd=cwd,
                          errors="surrogateescape", timeout=120)
    return ToolResult(proc.returncode == 0, proc.stdout, proc.stderr)


def run_llvm(tblgen: str, file: str | os.PathLike, include_dirs=(), defines=(), *,
             action: str = "--dump-json", cwd: str | os.PathLike | None = None) -> ToolResult:
    """Run llvm-tblgen (memoised while ``file`` is unchanged)."""
    file = str(file)
    st = os.stat(os.path.join(cwd or ".", file))
    args = (action, *(f"-I{d}" for d in include_dirs), *(f"-D{d}" for d in defines), file)
    return _run_llvm_cached(tblgen, args, str(cwd or os.getcwd()),
                            (st.st_mtime_ns, st.st_size, st.st_ino))


def llvm_json(tblgen: str, file, include_dirs=(), defines=(), *, cwd=None) -> dict | None:
    """llvm-tblgen's ``--dump-json`` document, or ``None`` when llvm-tblgen rejects the input."""
    res = run_llvm(tblgen, file, include_dirs, defines, cwd=cwd)
    return json.loads(res.stdout) if res.ok else None


def ours_json(file, include_dirs=(), defines=()) -> dict[str, Any]:
    """tdflow's ``--dump-json`` document, parsed without the record cache."""
    from tdflow.tdparser import to_json

    return to_json(ours_records(file, include_dirs, defines))


def ours_records(file, include_dirs=(), defines=()):
    """tdflow's RecordKeeper, parsed without the record cache."""
    from tdflow.tdparser import parse_file

    return parse_file(str(file), include_dirs=list(map(str, include_dirs)),
                      defines=list(defines), use_cache=False)


def compare(tblgen: str, file, include_dirs=(), defines=(), *, limit: int = 20,
            printed: bool = True) -> list[str]:
    """Differences between tdflow and llvm-tblgen on one input (empty when they match).

    First the ``--dump-json`` documents; when they agree and ``printed`` is set, also the
    ``--print-records`` texts (they show the classes, which the JSON leaves out). A tdflow
    error on an input llvm-tblgen accepts is reported as a difference; an input both reject
    compares equal.
    """
    from tdflow.tdparser import TdError, to_json

    theirs = llvm_json(tblgen, file, include_dirs, defines)
    try:
        records = ours_records(file, include_dirs, defines)
    except TdError as exc:
        if theirs is None:
            return []
        return [f"tdflow rejects what llvm-tblgen accepts: {exc}"]
    if theirs is None:
        err = run_llvm(tblgen, file, include_dirs, defines).stderr.strip().splitlines()
        return [f"tdflow accepts what llvm-tblgen rejects: {err[0] if err else '?'}"]
    ours = to_json(records)
    diffs = diff_documents(ours, theirs, limit=limit) or numbering_diffs(ours, theirs, limit)
    if diffs or not printed:
        return diffs
    from tdflow.tdparser.json_export import print_records

    text = run_llvm(tblgen, file, include_dirs, defines, action="--print-records").stdout
    return ["--print-records: " + d
            for d in diff_print_records(print_records(records), text, ours, theirs, limit=limit)]


def numbering_diffs(ours: dict, theirs: dict, limit: int = 20) -> list[str]:
    """Where two documents equal up to the numbering of anonymous records differ as they are:
    llvm-tblgen's numbers name real records (``anonymous_8877DATA_DROP``), so they must match.

    >>> numbering_diffs({"anonymous_0": {"x": 1}}, {"anonymous_0": {"x": 1}})
    []
    >>> numbering_diffs({"anonymous_0": {"x": 2}}, {"anonymous_0": {"x": 1}})
    ['anonymous_0: not llvm-tblgen\'s record of that name (anonymous records numbered in another order)']
    """
    if ours == theirs:
        return []
    out = []
    for name in sorted(set(ours) | set(theirs)):
        if ours.get(name) != theirs.get(name):
            out.append(f"{name}: not llvm-tblgen's record of that name (anonymous records "
                       f"numbered in another order)")
            if len(out) >= limit:
                break
    return out


def known_mismatches() -> dict[str, str]:
    """Files listed in docs/tablegen-compat.md as unable to match: relative path -> reason.

    The list is the table under the heading ``## Files that cannot match``; rows look like
    ``| `mlir/Dialect/X/Y.td` | reason |``.
    """
    try:
        text = COMPAT_DOC.read_text(encoding="utf-8")
    except OSError:
        return {}
    out: dict[str, str] = {}
    in_section = False
    for line in text.splitlines():
        if line.startswith("## "):
            in_section = line.strip().lower() == "## files that cannot match"
            continue
        if in_section and line.startswith("| `"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            out[cells[0].strip("`")] = cells[1] if len(cells) > 1 else ""
    return out
