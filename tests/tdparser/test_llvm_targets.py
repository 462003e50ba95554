"""Differential tests from LLVM's own target descriptions (issue 12).

``../shared/corpus/llvm19-targets/<T>/<T>.td`` for X86, ARM, RISCV, AArch64 and AMDGPU: one
test per target, tdflow and llvm-tblgen run at the same time (``targets_oracle``): the
``--dump-json`` documents must be equal as parsed JSON, each ``anonymous_N`` naming the record
llvm-tblgen gives that number (real records' names are built from them), and the
``--print-records`` texts byte for byte (``PRINTED_TARGETS``); on a difference the report says
where (``jsoncompare.diff_documents`` and ``diff_print_records``, with anonymous records renamed
by content, then ``oracle.numbering_diffs``). A target that differs is listed in
``TARGET_KNOWN`` with the reason and xfails strictly. conftest.py prints ``llvm targets: N/5
identical``.

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

# Targets whose document differs from llvm-tblgen's, with the precise reason (strict xfail: a
# target that starts matching fails until it is taken off this list). See
# docs/tablegen-compat.md, "LLVM's target descriptions".
TARGET_KNOWN: dict[str, str] = {}

# Targets whose --print-records text CI compares too, from the same tdflow parse as the JSON
# (llvm-tblgen's run follows its --dump-json in the background). Equal texts compare in a
# moment; only a difference takes the slow block-by-block report.
PRINTED_TARGETS = frozenset({"X86", "ARM", "AArch64", "RISCV", "AMDGPU"})

# tdflow's time limit per target; a target it cannot finish in time fails with that reason.
TARGET_LIMIT_S: dict[str, float] = {}
DEFAULT_LIMIT_S = 600.0


def _target_params() -> list:
    out = []
    for name in ("X86", "ARM", "RISCV", "AArch64", "AMDGPU"):
        marks = []
        if name in TARGET_KNOWN:
            marks.append(pytest.mark.xfail(strict=True, reason=TARGET_KNOWN[name]))
        out.append(pytest.param(name, id=name, marks=marks))
    return out


@pytest.mark.parametrize("target", _target_params())
def test_target_matches_llvm_tblgen(target: str, llvm_tblgen: str) -> None:
    """LLVM's target description ``target`` gives llvm-tblgen's ``--dump-json`` document as it
    is (the same record under each name, ``anonymous_N`` included) and, for
    ``PRINTED_TARGETS``, its ``--print-records`` text byte for byte. Both tools run at once
    (targets_oracle.run_target); conftest.py prints ``llvm targets: N/5 identical``."""
    from targets_oracle import compare_target, run_target

    td = TARGETS / target / f"{target}.td"
    if not td.is_file():
        pytest.skip(f"shared corpus absent ({TARGETS}); LLVM target test skipped")
    include = mlir_include_dir()  # LLVM 19's include dir, which holds include/llvm too
    if include is None:
        pytest.skip("LLVM 19's .td files (Debian llvm-19-dev) not installed")
    printed = target in PRINTED_TARGETS
    run = run_target(llvm_tblgen, td, [str(td.parent), str(include)],
                     TARGET_LIMIT_S.get(target, DEFAULT_LIMIT_S), printed=printed,
                     memo=False)
    print(f"{target}: tdflow {run.ours_s:.1f} s, llvm-tblgen {run.llvm_s:.1f} s")
    assert not run.ours_error, f"{target}: {run.ours_error}"
    assert run.theirs is not None, (f"llvm-tblgen-19 gave no document for the {target} target: "
                                     f"{run.llvm_failure}")
    assert not printed or run.theirs_text is not None, \
        f"llvm-tblgen-19 --print-records fails on {target}"
    # Names first: cheap, and what the known targets xfail on (their documents are not
    # compared then, which saves minutes).
    res = compare_target(run, names_only=True)
    assert not res.names, f"{target}: record names differ: {res.names[0]}"
    res = compare_target(run)
    assert not res.documents, (f"{target}: --dump-json differs from llvm-tblgen:\n  "
                               + "\n  ".join(res.documents))
    assert not res.printed, (f"{target}: --print-records differs from llvm-tblgen:\n  "
                             + "\n  ".join(res.printed))
