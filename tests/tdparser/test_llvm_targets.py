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
from oracle import ROOT, compare, llvm_json, ours_json

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
