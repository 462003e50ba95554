"""tdparser test helpers: print the MLIR sweep's score at the end of the pytest run.

The sweep (test_llvm_diff.py) is one test per MLIR file; this adds one line to pytest's summary,
``tblgen sweep: N/M MLIR files match llvm-tblgen``, with the first difference of each file that
does not match, so CI shows the score without running the sweep a second time.
"""

from __future__ import annotations

SWEEP_TEST = "test_llvm_diff.py::test_mlir_file_matches_llvm_tblgen["
_outcomes: dict[str, str] = {}


def pytest_runtest_logreport(report):
    if SWEEP_TEST not in report.nodeid:
        return
    rel = report.nodeid.split(SWEEP_TEST, 1)[1][:-1]
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        if hasattr(report, "wasxfail"):
            outcome = "xfailed" if report.skipped else "xpassed"
        else:
            outcome = report.outcome
            if outcome == "skipped" and "rejects it too" in str(report.longrepr):
                outcome = "rejected"
            elif outcome == "failed" and "XPASS(strict)" in str(report.longrepr):
                outcome = "xpassed"
        _outcomes[rel] = outcome


def pytest_terminal_summary(terminalreporter):
    if not _outcomes:
        return
    from oracle import SWEEP_FIRST_DIFFERENCE

    counts: dict[str, int] = {}
    for outcome in _outcomes.values():
        counts[outcome] = counts.get(outcome, 0) + 1
    accepted = sum(n for k, n in counts.items() if k not in ("rejected", "skipped"))
    tr = terminalreporter
    tr.write_sep("-", "tblgen sweep")
    if accepted == 0:
        tr.write_line(f"tblgen sweep: not run ({counts.get('skipped', 0)} skipped)")
        return
    tr.write_line(f"tblgen sweep: {counts.get('passed', 0) + counts.get('xpassed', 0)}/{accepted} MLIR files match "
                  f"llvm-tblgen ({counts.get('xfailed', 0)} known mismatches, "
                  f"{counts.get('rejected', 0)} rejected by llvm-tblgen itself)")
    for rel, outcome in sorted(_outcomes.items()):
        if outcome == "failed":
            tr.write_line(f"  FAILED {rel}: {SWEEP_FIRST_DIFFERENCE.get(rel, '(see above)')}")
        elif outcome == "xpassed":
            tr.write_line(f"  XPASS {rel}: matches now; take it off docs/tablegen-compat.md")
