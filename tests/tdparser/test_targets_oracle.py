"""targets_oracle on a small file: one tdflow parse gives both outputs, llvm-tblgen's two runs
follow each other, and the comparison finds a difference where there is one.

The LLVM targets themselves take minutes (test_llvm_targets.py); this checks the machinery in
seconds. Skipped when llvm-tblgen-19 is absent (the ``llvm_tblgen`` fixture).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from targets_oracle import compare_target, run_target

pytestmark = pytest.mark.oracle

# Anonymous records made in two ways (a class instance in a field and an
# anonymous def), a class with template arguments, code and a dag: what --print-records shows.
SOURCE = """
def op;
class T<int n> { int v = n; }
class C<int a, string s = "x"> { int f = a; code c = [{ body }]; dag d = (op a, s); }
def : T<7>;
def R : C<3> { T t = T<4>; }
def Q : C<5, "y">;
"""


@pytest.fixture
def small_td(tmp_path: Path) -> Path:
    path = tmp_path / "small.td"
    path.write_text(SOURCE)
    return path


def test_both_outputs_match(small_td: Path, llvm_tblgen: str) -> None:
    run = run_target(llvm_tblgen, small_td, [str(small_td.parent)], 120, printed=True)
    assert not run.ours_error
    assert run.theirs_text is not None and run.ours_text is not None
    assert "class C<int C:a = ?, string C:s = \"x\">" in run.theirs_text
    res = compare_target(run)
    assert (res.names, res.documents, res.printed) == ([], [], [])
    assert res.bytes_identical


def test_a_printed_difference_is_found(small_td: Path, llvm_tblgen: str) -> None:
    run = run_target(llvm_tblgen, small_td, [str(small_td.parent)], 120, printed=True)
    # The documents still agree; only the text is changed, as a printer bug would change it.
    run.ours_text = run.ours_text.replace("int f = 5;", "int f = 6;")
    res = compare_target(run)
    assert res.documents == [] and not res.bytes_identical
    assert res.printed == ["def 'def Q' line 2: tdflow '  int f = 6;' != llvm-tblgen "
                           "'  int f = 5;'"]


def test_json_only_and_time_limit(small_td: Path, llvm_tblgen: str, tmp_path: Path) -> None:
    run = run_target(llvm_tblgen, small_td, [str(small_td.parent)], 120)
    assert run.theirs_text is None and run.ours_text is None and run.theirs is not None
    assert compare_target(run).printed == []
    # A tdflow side stopped by the limit is an error, and llvm-tblgen's side is stopped too.
    other = tmp_path / "other.td"
    other.write_text(SOURCE + "def Z;\n")
    late = run_target(llvm_tblgen, other, [str(tmp_path)], 0.01, printed=True)
    assert late.ours_error == "tdflow did not finish within 0 s"
    assert late.ours is None and late.theirs is None


def test_llvm_side_killed_runs_again_alone(small_td: Path, llvm_tblgen: str,
                                           tmp_path: Path) -> None:
    """An llvm-tblgen ended by a signal (the OOM killer, when both tools and the test session
    did not fit in memory together) runs again once tdflow's side is done; one that ends by a
    signal again is reported with the signal, and ``memo=False`` keeps nothing."""
    import os
    import stat

    marker = tmp_path / "killed-once"
    flaky = tmp_path / "flaky-tblgen"
    flaky.write_text(f"#!/bin/sh\nif [ ! -e {marker} ]; then touch {marker}; kill -9 $$; fi\n"
                     f'exec {llvm_tblgen} "$@"\n')
    flaky.chmod(flaky.stat().st_mode | stat.S_IEXEC)
    run = run_target(str(flaky), small_td, [str(small_td.parent)], 120, memo=False)
    assert marker.exists() and run.theirs is not None and run.llvm_failure == ""
    assert compare_target(run).documents == []

    dying = tmp_path / "dying-tblgen"
    dying.write_text("#!/bin/sh\nkill -9 $$\n")
    dying.chmod(dying.stat().st_mode | stat.S_IEXEC)
    run = run_target(str(dying), small_td, [str(small_td.parent)], 120, memo=False)
    assert run.theirs is None
    assert run.llvm_failure == "killed by signal 9 (out of memory?)"
    from targets_oracle import _LLVM_CACHE

    assert not any(str(dying) == k[0] or str(flaky) == k[0] for k in _LLVM_CACHE)
    assert os.path.exists(small_td)
