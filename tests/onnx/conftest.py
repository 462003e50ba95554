"""Counts ONNX's backend suite for the terminal summary: ``onnx node tests: N/M passed``, and
the same line for each model kind, CPU cases only."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from backend_suite import KINDS  # noqa: E402

_outcomes: dict[str, dict[str, str]] = {}


def pytest_runtest_logreport(report):
    parts = report.nodeid.split("::")
    if len(parts) < 3 or "test_backend_suite" not in parts[0] or not parts[-1].endswith("_cpu"):
        return
    kind = KINDS.get(parts[-2])
    if kind is None:
        return
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        outcome = "xfailed" if hasattr(report, "wasxfail") and report.skipped else report.outcome
        _outcomes.setdefault(kind, {})[parts[-1]] = outcome


def pytest_terminal_summary(terminalreporter):
    if not _outcomes:
        return
    tr = terminalreporter
    tr.write_sep("-", "onnx backend suite")
    for kind in KINDS.values():
        got = _outcomes.get(kind)
        if not got:
            continue
        passed = sum(1 for o in got.values() if o == "passed")
        xfailed = sum(1 for o in got.values() if o == "xfailed")
        failed = sum(1 for o in got.values() if o == "failed")
        tr.write_line(f"onnx {kind} tests: {passed}/{len(got)} passed ({xfailed} expected "
                      f"failures listed in backend_filters.json"
                      + (f", {failed} unexpected failures" if failed else "") + ")")
