"""Run llvm-tblgen-19 and tdflow side by side on one of LLVM's target descriptions (issue 12).

A target takes tens of seconds in each tool, so the two run as parallel processes (the CI
machine has two cores), each writing its ``--dump-json`` document to a file; tdflow's side
gets a time limit, so a target tdflow cannot finish yet costs a bounded time. llvm-tblgen's
document is memoised per test session.

As a script it is tdflow's side: ``python targets_oracle.py TD OUT.json INCLUDE...``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


@dataclass
class TargetRun:
    """Both documents (``ours`` is None when tdflow failed or ran out of time) and times."""

    theirs: dict[str, Any] | None
    ours: dict[str, Any] | None
    llvm_s: float
    ours_s: float
    ours_error: str = ""


_LLVM_CACHE: dict[tuple, tuple[dict | None, float]] = {}


def _start_llvm(tblgen: str, td: Path, incs: list[str], out: Path):
    with open(out, "wb") as f:
        return subprocess.Popen([tblgen, "--dump-json", *(f"-I{d}" for d in incs), str(td)],
                                stdout=f, stderr=subprocess.DEVNULL)


def run_target(tblgen: str, td: Path, incs: list[str], ours_limit_s: float) -> TargetRun:
    """Run both tools on ``td`` at the same time; tdflow is stopped after ``ours_limit_s``."""
    key = (tblgen, str(td), tuple(incs))
    with tempfile.TemporaryDirectory(prefix="tdflow-target-") as tmp:
        llvm_out, ours_out = Path(tmp) / "llvm.json", Path(tmp) / "ours.json"
        t0 = time.perf_counter()
        llvm = None if key in _LLVM_CACHE else _start_llvm(tblgen, td, incs, llvm_out)
        ours = subprocess.Popen([sys.executable, __file__, str(td), str(ours_out), *incs],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        error = ""
        try:
            _, err = ours.communicate(timeout=ours_limit_s)
            if ours.returncode != 0:
                lines = err.strip().splitlines()
                error = lines[-1] if lines else f"exit status {ours.returncode}"
        except subprocess.TimeoutExpired:
            ours.kill()
            ours.communicate()
            error = f"tdflow did not finish within {ours_limit_s:.0f} s"
        ours_s = time.perf_counter() - t0
        if llvm is not None:
            if error and ours_s >= ours_limit_s:
                llvm.kill()  # nothing to compare with; do not wait for it
                llvm.wait()
                _LLVM_CACHE[key] = (None, float("nan"))
            else:
                llvm.wait()
                doc = json.loads(llvm_out.read_bytes()) if llvm.returncode == 0 else None
                _LLVM_CACHE[key] = (doc, time.perf_counter() - t0)
        theirs, llvm_s = _LLVM_CACHE[key]
        doc = json.loads(ours_out.read_bytes()) if not error else None
    return TargetRun(theirs, doc, llvm_s, ours_s, error)


def _main(argv: list[str]) -> int:
    sys.setrecursionlimit(100000)
    from tdflow.tdparser import parse_file, to_json

    td, out, *incs = argv
    doc = to_json(parse_file(td, include_dirs=incs, use_cache=False))
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
