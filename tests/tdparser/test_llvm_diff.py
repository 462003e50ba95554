"""Differential sweep: every MLIR ``.td`` file llvm-tblgen accepts resolves identically in tdflow.

One test per file (the id is the path under the include dir), so pytest's summary counts the
files that match. Each file is run as ``llvm-tblgen --dump-json -I <include> -I <file's dir>``
and through ``parse_file`` with the same search path and the record cache off; the documents are
compared record by record after renaming anonymous records by content (see jsoncompare.py), then
the ``--print-records`` texts block by block (they also show every class, which the JSON lacks).
Files that cannot match for a documented reason are listed in docs/tablegen-compat.md and xfail
strictly: fixing one makes the test fail until it is taken off the list.
"""

from __future__ import annotations

import pytest
from oracle import (
    SWEEP_FIRST_DIFFERENCE,
    compare,
    known_mismatches,
    llvm_json,
    mlir_include_dir,
    mlir_td_files,
    run_llvm,
)

pytestmark = pytest.mark.oracle


def _params() -> list:
    include = mlir_include_dir()
    if include is None:
        return [pytest.param(None, id="mlir-includes-absent")]
    known = known_mismatches()
    out = []
    for rel in mlir_td_files(include):
        marks = []
        if rel in known:
            marks.append(pytest.mark.xfail(strict=True, reason=known[rel]))
        out.append(pytest.param(rel, id=rel, marks=marks))
    return out


@pytest.mark.parametrize("rel", _params())
def test_mlir_file_matches_llvm_tblgen(rel, llvm_tblgen, mlir_include):
    if rel is None:
        pytest.skip("MLIR .td files (Debian libmlir-19-dev) not installed")
    path = mlir_include / rel
    incs = [str(mlir_include), str(path.parent)]
    if llvm_json(llvm_tblgen, path, incs) is None:
        first = run_llvm(llvm_tblgen, path, incs).stderr.strip().splitlines()
        pytest.skip(f"llvm-tblgen rejects it too: {first[0] if first else '?'}")
    diffs = compare(llvm_tblgen, path, incs)
    if diffs:
        SWEEP_FIRST_DIFFERENCE[rel] = diffs[0]
    assert not diffs, f"{rel}: {len(diffs)}+ differences from llvm-tblgen:\n  " + "\n  ".join(
        diffs)


def test_compat_list_names_real_files(mlir_include):
    """Every file on the cannot-match list exists (a stale entry would hide nothing)."""
    missing = [f for f in known_mismatches() if not (mlir_include / f).is_file()]
    assert not missing, f"docs/tablegen-compat.md lists files that do not exist: {missing}"
