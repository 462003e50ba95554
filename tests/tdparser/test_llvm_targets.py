"""Differential tests from LLVM's own target descriptions (issue 12).

``../shared/corpus/tablegen-repros/`` holds minimal reproducers of the ways tdflow differed from
llvm-tblgen on the X86, AArch64, ARM, RISCV and AMDGPU ``.td`` files; llvm-tblgen-19 accepts each.
One test per file: tdflow's ``--dump-json`` document and ``--print-records`` text must equal
llvm-tblgen's (oracle.compare), and so must the record names, ``anonymous_N`` included, since
real records' names are built from them (``anonymous_8877DATA_DROP``). A reproducer tdflow does
not handle yet is listed in ``KNOWN`` and xfails strictly, so a fix shows up.

Skipped with a reason when the shared corpus or llvm-tblgen-19 is absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from oracle import ROOT, compare, llvm_json, mlir_include_dir, ours_json

pytestmark = pytest.mark.oracle

REPROS = ROOT.parent / "shared" / "corpus" / "tablegen-repros"

# Reproducers tdflow does not match yet: file name -> the precise reason.
KNOWN: dict[str, str] = {}


def _params() -> list:
    if not REPROS.is_dir():
        return [pytest.param(None, id="corpus-absent")]
    out = []
    for path in sorted(REPROS.glob("*.td")):
        marks = []
        if path.name in KNOWN:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN[path.name]))
        out.append(pytest.param(path, id=path.stem, marks=marks))
    return out


@pytest.mark.parametrize("path", _params())
def test_repro_matches_llvm_tblgen(path: Path | None, llvm_tblgen: str) -> None:
    if path is None:
        pytest.skip(f"shared corpus absent ({REPROS}); LLVM target reproducers skipped")
    diffs = compare(llvm_tblgen, path)
    assert not diffs, f"{path.name}: differences from llvm-tblgen:\n  " + "\n  ".join(diffs)
    # The comparison above renames anonymous records by content; the numbering must match too.
    theirs = llvm_json(llvm_tblgen, path)
    ours = ours_json(path)
    assert sorted(k for k in ours if not k.startswith("!")) == \
        sorted(k for k in theirs if not k.startswith("!"))


TARGETS = ROOT.parent / "shared" / "corpus" / "llvm19-targets"


@pytest.mark.slow
def test_arm_target_matches_llvm_tblgen(llvm_tblgen: str) -> None:
    """LLVM's ARM target (38,718 records; about 30 s here) resolves as llvm-tblgen does, record
    names included. X86 matches too but takes twice as long; see docs/tablegen-compat.md."""
    from jsoncompare import diff_documents

    td = TARGETS / "ARM" / "ARM.td"
    if not td.is_file():
        pytest.skip(f"shared corpus absent ({TARGETS}); LLVM target test skipped")
    include = mlir_include_dir()  # LLVM 19's include dir, which holds include/llvm too
    if include is None:
        pytest.skip("LLVM 19's .td files (Debian llvm-19-dev) not installed")
    incs = [str(td.parent), str(include)]
    theirs = llvm_json(llvm_tblgen, td, incs)
    assert theirs is not None, "llvm-tblgen-19 rejects the ARM target"
    ours = ours_json(td, incs)
    assert sorted(ours) == sorted(theirs)
    diffs = diff_documents(ours, theirs, limit=10)
    assert not diffs, "ARM: differences from llvm-tblgen:\n  " + "\n  ".join(diffs)
