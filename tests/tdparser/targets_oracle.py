"""Run llvm-tblgen-19 and tdflow side by side on one of LLVM's target descriptions (issue 12).

A target takes tens of seconds in each tool, so the two run as parallel processes (the CI
machine has two cores). tdflow's side parses once and writes both its ``--dump-json`` document
and, when asked, its ``--print-records`` text; llvm-tblgen's side runs ``--dump-json`` and then
``--print-records`` one after the other in the background while tdflow works (two llvm-tblgen
runs at once would need AMDGPU's 16 GB twice). tdflow's side gets a time limit, so a target
tdflow cannot finish yet costs a bounded time. llvm-tblgen's outputs are memoised per session.

>>> run = run_target("llvm-tblgen-19", Path("X86/X86.td"), ["X86", "include"], 600,
...                  printed=True)                                     # doctest: +SKIP
>>> compare_target(run)                                                # doctest: +SKIP
TargetResult(names=[], documents=[], printed=[], bytes_identical=False)

As a script it is tdflow's side: ``python targets_oracle.py TD OUT.json [--print-records
OUT.txt] INCLUDE...``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

TARGET_NAMES = ("X86", "ARM", "RISCV", "AArch64", "AMDGPU")


@dataclass
class TargetRun:
    """Both tools' outputs (``ours``/``ours_text`` are None when tdflow failed or ran out of
    time; the texts are None when ``--print-records`` was not asked for) and times."""

    theirs: dict[str, Any] | None
    ours: dict[str, Any] | None
    llvm_s: float
    ours_s: float
    ours_error: str = ""
    theirs_text: str | None = None
    ours_text: str | None = None
    llvm_failure: str = ""


@dataclass
class TargetResult:
    """What differs between the two tools on one target; every list empty means identical.

    ``names``: the sorted record names (``anonymous_N`` included) are not llvm-tblgen's;
    ``documents``: the JSON documents after anonymous records are renamed by content;
    ``printed``: the ``--print-records`` texts block by block, renamed the same way;
    ``bytes_identical``: the texts are equal as they are (anonymous numbering included)."""

    names: list[str] = field(default_factory=list)
    documents: list[str] = field(default_factory=list)
    printed: list[str] = field(default_factory=list)
    bytes_identical: bool = False


_LLVM_CACHE: dict[tuple, tuple[dict | None, str | None, float]] = {}
#: why llvm-tblgen gave no document, per key (its exit status or signal)
_LLVM_FAILURE: dict[tuple, str] = {}


class _LlvmSide:
    """llvm-tblgen's ``--dump-json`` then (optionally) ``--print-records``, in a thread."""

    def __init__(self, tblgen: str, td: Path, incs: list[str], tmp: Path, printed: bool):
        self.args = [tblgen, *(f"-I{d}" for d in incs), str(td)]
        self.outs = [(Path(tmp) / "llvm.json", "--dump-json")]
        if printed:
            self.outs.append((Path(tmp) / "llvm.txt", "--print-records"))
        self.codes: list[int] = []
        self.proc: subprocess.Popen | None = None
        self.stopped = False
        self.lock = threading.Lock()
        self.t0 = time.perf_counter()
        self.elapsed = float("nan")
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        for out, action in self.outs:
            with self.lock:
                if self.stopped:
                    return
                with open(out, "wb") as f:
                    self.proc = subprocess.Popen([self.args[0], action, *self.args[1:]],
                                                 stdout=f, stderr=subprocess.DEVNULL)
            self.codes.append(self.proc.wait())
        self.elapsed = time.perf_counter() - self.t0

    def kill(self) -> None:
        with self.lock:
            self.stopped = True
            if self.proc is not None:
                self.proc.kill()
        self.thread.join()

    def killed(self) -> bool:
        """Whether a run was ended by a signal (the kernel's OOM killer, when tdflow's side and
        the test session's own memory left too little for llvm-tblgen's peak)."""
        self.thread.join()
        return any(c < 0 for c in self.codes)

    def rerun_alone(self) -> None:
        """Run every output again, now that tdflow's side has finished and freed its memory."""
        self.codes = []
        self.t0 = time.perf_counter()
        self._run()

    def failure(self) -> str:
        """Why llvm-tblgen gave no document: its exit status or the signal that ended it."""
        bad = [c for c in self.codes if c != 0]
        if not bad:
            return "" if len(self.codes) == len(self.outs) else "not run"
        c = bad[0]
        return f"killed by signal {-c}" + (" (out of memory?)" if c == -9 else "") if c < 0 \
            else f"exit status {c}"

    def result(self) -> tuple[dict | None, str | None, float]:
        self.thread.join()
        ok = [c == 0 for c in self.codes] + [False] * (len(self.outs) - len(self.codes))
        doc = json.loads(self.outs[0][0].read_bytes()) if ok[0] else None
        text = None
        if len(self.outs) > 1 and ok[1]:
            text = self.outs[1][0].read_text(encoding="utf-8")
        return doc, text, self.elapsed


def run_target(tblgen: str, td: Path, incs: list[str], ours_limit_s: float, *,
               printed: bool = False, memo: bool = True) -> TargetRun:
    """Run both tools on ``td`` at the same time; tdflow is stopped after ``ours_limit_s``.
    With ``printed`` both also give their ``--print-records`` text (tdflow from the same parse).
    ``memo=False`` keeps nothing of llvm-tblgen's outputs for later calls: a target's document
    is gigabytes as Python objects, and five of them held for the session left too little
    memory for AMDGPU's llvm-tblgen (16 GB) next to tdflow.
    """
    key = (tblgen, str(td), tuple(incs), printed)
    with tempfile.TemporaryDirectory(prefix="tdflow-target-") as tmp:
        ours_out, ours_txt = Path(tmp) / "ours.json", Path(tmp) / "ours.txt"
        t0 = time.perf_counter()
        llvm = None if key in _LLVM_CACHE else _LlvmSide(tblgen, td, incs, Path(tmp), printed)
        cmd = [sys.executable, __file__, str(td), str(ours_out)]
        if printed:
            cmd += ["--print-records", str(ours_txt)]
        ours = subprocess.Popen([*cmd, *incs], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
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
                _LLVM_CACHE[key] = (None, None, float("nan"))
            else:
                if llvm.killed():  # both at once did not fit in memory: llvm-tblgen alone
                    llvm.rerun_alone()
                _LLVM_CACHE[key] = llvm.result()
                _LLVM_FAILURE[key] = llvm.failure()
        theirs, theirs_text, llvm_s = _LLVM_CACHE[key]
        failure = _LLVM_FAILURE.get(key, "")
        if not memo:
            del _LLVM_CACHE[key]
            _LLVM_FAILURE.pop(key, None)
        doc = json.loads(ours_out.read_bytes()) if not error else None
        text = ours_txt.read_text(encoding="utf-8") if printed and not error else None
    return TargetRun(theirs, doc, llvm_s, ours_s, error, theirs_text, text, failure)


def compare_target(run: TargetRun, *, limit: int = 10, names_only: bool = False) -> TargetResult:
    """Compare a finished :func:`run_target` (both documents present), at most ``limit``
    lines per kind; the texts are compared when both are present. ``names_only``: only the
    record names (seconds, where the rest takes minutes on the largest targets)."""
    from jsoncompare import diff_documents, diff_print_records
    from oracle import numbering_diffs

    res = TargetResult()
    ours = sorted(k for k in run.ours if not k.startswith("!"))
    theirs = sorted(k for k in run.theirs if not k.startswith("!"))
    if ours != theirs:
        diff = len(set(ours) ^ set(theirs))
        only_ours, only_theirs = sorted(set(ours) - set(theirs)), sorted(set(theirs) - set(ours))
        res.names = [f"{len(ours)} vs {len(theirs)} records, {diff} names differ; only tdflow "
                     f"{only_ours[:5]}, only llvm-tblgen {only_theirs[:5]}"]
    if names_only:
        return res
    if run.ours != run.theirs:  # equal documents need no (minutes-long) renaming
        res.documents = (diff_documents(run.ours, run.theirs, limit=limit)
                         or numbering_diffs(run.ours, run.theirs, limit=limit))
    if run.ours_text is not None and run.theirs_text is not None:
        res.bytes_identical = run.ours_text == run.theirs_text
        if not res.bytes_identical:
            res.printed = diff_print_records(run.ours_text, run.theirs_text, run.ours,
                                             run.theirs, limit=limit) or \
                [_first_line_difference(run.ours_text, run.theirs_text)]
    return res


def _first_line_difference(ours: str, theirs: str) -> str:
    """Where two texts equal up to anonymous record numbering first differ.

    >>> _first_line_difference("a\nb\n", "a\nc\n")
    "line 2: tdflow 'b' != llvm-tblgen 'c' (anonymous_N numbering)"
    """
    a, b = ours.splitlines(), theirs.splitlines()
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"line {i + 1}: tdflow {x!r} != llvm-tblgen {y!r} (anonymous_N numbering)"
    return f"{len(a)} vs {len(b)} lines (anonymous_N numbering)"


def _main(argv: list[str]) -> int:
    """``TD OUT.json [--print-records OUT.txt] INCLUDE...``: one parse, both outputs."""
    sys.setrecursionlimit(100000)
    from tdflow.tdparser import parse_file, to_json
    from tdflow.tdparser.json_export import print_records

    td, out, *incs = argv
    text_out = None
    if incs[:1] == ["--print-records"]:
        text_out, incs = incs[1], incs[2:]
    records = parse_file(td, include_dirs=incs, use_cache=False)
    if text_out is not None:
        with open(text_out, "w", encoding="utf-8") as f:
            f.write(print_records(records))
    doc = to_json(records)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
