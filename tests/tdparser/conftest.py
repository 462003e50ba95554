"""tdparser test helpers: print the MLIR sweep's score at the end of the pytest run.

The sweep (test_llvm_diff.py) is one test per MLIR file; this adds one line to pytest's summary,
``tblgen sweep: N/M MLIR files match llvm-tblgen``, with the first difference of each file that
does not match, so CI shows the score without running the sweep a second time. Likewise the LLVM target test
(test_llvm_targets.py) adds ``llvm targets: N/5 identical`` with the reason of each other one.
"""

from __future__ import annotations

SWEEP_TEST = "test_llvm_diff.py::test_mlir_file_matches_llvm_tblgen["
TARGET_TEST = "test_llvm_targets.py::test_target_matches_llvm_tblgen["
_outcomes: dict[str, str] = {}
_targets: dict[str, tuple[str, str]] = {}  # target -> (outcome, reason)


def _target_report(report):
    target = report.nodeid.split(TARGET_TEST, 1)[1][:-1]
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        if hasattr(report, "wasxfail"):
            outcome = "xfailed" if report.skipped else "xpassed"
            reason = report.wasxfail
        else:
            outcome = report.outcome
            reason = ""
            if outcome == "failed":
                crash = getattr(report.longrepr, "reprcrash", None)
                reason = crash.message.splitlines()[0] if crash else str(report.longrepr)[:200]
                if "XPASS(strict)" in str(report.longrepr):
                    outcome = "xpassed"
            elif outcome == "skipped":
                reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
        _targets[target] = (outcome, reason)


def pytest_runtest_logreport(report):
    if TARGET_TEST in report.nodeid:
        _target_report(report)
        return
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


def _targets_summary(tr):
    tr.write_sep("-", "llvm targets")
    ran = {t: o for t, o in _targets.items() if o[0] != "skipped"}
    if not ran:
        reasons = {r for _, r in _targets.values()}
        tr.write_line(f"llvm targets: not run ({'; '.join(sorted(reasons))})")
        return
    same = sum(1 for o, _ in ran.values() if o in ("passed", "xpassed"))
    tr.write_line(f"llvm targets: {same}/{len(_targets)} identical to llvm-tblgen")
    for target, (outcome, reason) in sorted(_targets.items()):
        if outcome == "xpassed":
            tr.write_line(f"  XPASS {target}: identical now; take it off TARGET_KNOWN")
        elif outcome != "passed":
            tr.write_line(f"  {outcome} {target}: {reason}")


def pytest_terminal_summary(terminalreporter):
    if _targets:
        _targets_summary(terminalreporter)
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
