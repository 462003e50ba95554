"""Counts ONNX's backend suite for the terminal summary: ``onnx node tests: N/M passed``, and
the same line for each model kind; the CUDA twins (run where a GPU is, skipped elsewhere) get
their own lines, ``onnx node tests on cuda: N/M passed``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from backend_suite import KINDS  # noqa: E402

_outcomes: dict[tuple[str, str], dict[str, str]] = {}  # (kind, device) -> case -> outcome


def pytest_runtest_logreport(report):
    parts = report.nodeid.split("::")
    if len(parts) < 3 or "test_backend_suite" not in parts[0]:
        return
    device = parts[-1].rsplit("_", 1)[-1]
    kind = KINDS.get(parts[-2])
    if kind is None or device not in ("cpu", "cuda"):
        return
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        outcome = "xfailed" if hasattr(report, "wasxfail") and report.skipped else report.outcome
        if device == "cuda" and outcome == "skipped":
            return  # no GPU here: the twins say nothing
        _outcomes.setdefault((kind, device), {})[parts[-1]] = outcome


def pytest_terminal_summary(terminalreporter):
    if not _outcomes:
        return
    tr = terminalreporter
    tr.write_sep("-", "onnx backend suite")
    for kind, device in [(k, d) for d in ("cpu", "cuda") for k in KINDS.values()]:
        got = _outcomes.get((kind, device))
        if not got:
            continue
        passed = sum(1 for o in got.values() if o == "passed")
        xfailed = sum(1 for o in got.values() if o == "xfailed")
        failed = sum(1 for o in got.values() if o == "failed")
        where = "" if device == "cpu" else f" on {device}"
        tr.write_line(f"onnx {kind} tests{where}: {passed}/{len(got)} passed ({xfailed} expected "
                      f"failures listed in backend_filters.json"
                      + (f", {failed} unexpected failures" if failed else "") + ")")
