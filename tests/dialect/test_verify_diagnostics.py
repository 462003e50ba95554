"""MLIR's testing habits: ``--split-input-file`` and ``--verify-diagnostics`` on ``tdflow opt`` and
``tdflow verify`` (goldens in ``golden_vd/``: ``NAME.mlir`` whose first line gives the command,
``NAME.expected`` = ``exit N`` then the stderr, ``NAME.out`` the stdout where it matters), each
compared with mlir-opt-19's outcome where the file says so; and the hook contract of a library
you did not write (missing hooks warn, ``--strict-hooks`` makes them errors)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tdflow.cli import main

GOLDEN = Path(__file__).parent / "golden_vd"
CASES = sorted(p.stem for p in GOLDEN.glob("*.mlir"))
CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "oneflow"


def _args(name: str) -> list[str]:
    first = (GOLDEN / f"{name}.mlir").read_text().splitlines()[0]
    assert first.startswith("// ARGS: "), first
    return first.removeprefix("// ARGS: ").split()


def cli(capsys, *args) -> tuple[int, str, str]:
    try:
        status = main([str(a) for a in args])
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return status, out, err


@pytest.mark.parametrize("name", CASES)
def test_golden(capsys, monkeypatch, name):
    monkeypatch.chdir(GOLDEN)  # diagnostics name the file as given: NAME.mlir
    status, out, err = cli(capsys, *_args(name), f"{name}.mlir")
    expected = (GOLDEN / f"{name}.expected").read_text()
    assert f"exit {status}\n{err}" == expected
    if (GOLDEN / f"{name}.out").exists():
        assert out == (GOLDEN / f"{name}.out").read_text()


@pytest.mark.parametrize("name", [c for c in CASES
                                  if "// MLIR-OPT: same outcome" in (GOLDEN / f"{c}.mlir").read_text()])
def test_same_outcome_as_mlir_opt(capsys, monkeypatch, name):
    tool = shutil.which("mlir-opt-19")
    if tool is None:
        pytest.skip("mlir-opt-19 is not installed")
    monkeypatch.chdir(GOLDEN)
    flags = _args(name)[1:]
    proc = subprocess.run([tool, "--allow-unregistered-dialect", *flags, f"{name}.mlir"],
                          capture_output=True, text=True, timeout=60)
    status, out, _ = cli(capsys, *_args(name), f"{name}.mlir")
    assert status == proc.returncode, proc.stderr
    if _args(name)[0] == "opt" and "--split-input-file" in flags:
        # the same chunks fail: the same number of separators and of printed chunks
        assert out.count("// -----") == proc.stdout.count("// -----")
        assert out.count("func.func @") == proc.stdout.count("func.func @")


def test_split_keeps_whole_file_lines_and_columns(capsys, tmp_path):
    p = tmp_path / "s.mlir"
    # the marker need not be alone on its line (mlir-opt 19 cuts at every occurrence)
    p.write_text("func.func @f() {\n  return\n} // -----  func.func @g() {\n"
                 "  \"tdflow.relu\"(%q) : (tensor<1xf32>) -> tensor<1xf32>\n  return\n}\n")
    status, _, err = cli(capsys, "verify", "--split-input-file", p)
    assert status == 1 and f"{p}:4:17: error: use of undefined value '%q'" in err
    status, _, err = cli(capsys, "verify", p)  # unsplit, the rest of line 3 is a comment
    assert status == 1 and f"{p}:4:3: error: expected a function" in err


def test_bad_regex_is_located(capsys, tmp_path):
    p = tmp_path / "r.mlir"
    p.write_text("func.func @f() {\n  return // expected-error-re {{a{{b}}\n}\n")
    status, _, err = cli(capsys, "verify", "--verify-diagnostics", p)
    assert status == 1 and f"{p}:2:13: error:" in err and "regex" in err


LIB = ('include "tdflow/Base.td"\ndef My_D : Dialect { let name = "mine"; }\n'
       'def Mine_ScaleOp : Op<My_D, "scale"> {\n'
       '  dag input = (ins TDF_Tensor:$x);\n  dag output = (outs TDF_Tensor:$y);\n'
       '  bit has_logical_tensor_desc_infer_fn = 1;\n  bit has_data_type_infer_fn = 1;\n}\n')


def test_missing_hooks_warn_unless_strict(capsys, tmp_path):
    td = tmp_path / "mine.td"
    td.write_text(LIB)
    status, out, err = cli(capsys, "verify", "--ops", td)
    assert status == 0
    assert "  has_logical_tensor_desc_infer_fn: 1 ops declare it, 0 have a hook, 1 missing" in out
    assert f"{td}: warning: 2 declared hooks of 1 ops are not registered" in err
    assert "mine.scale" not in err  # per-op details only with --verbose
    status, _, err = cli(capsys, "verify", "--ops", td, "--verbose")
    assert status == 0 and err.count("warning: op 'mine.scale' declares") == 2
    status, _, err = cli(capsys, "verify", "--ops", td, "--strict-hooks")
    assert status == 1 and f"{td}: error: 2 declared hooks" in err


PROG = ("func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
        '  %0 = "mine.scale"(%x) : (tensor<3xf32>) -> tensor<3xf32>\n'
        "  return %0 : tensor<3xf32>\n}\n")
FORGOTTEN = ("'mine.scale' op declares has_logical_tensor_desc_infer_fn, has_data_type_infer_fn "
             "but no Python registers its hooks (infer_logical_tensor_desc, infer_data_type): "
             "pass the hooks module that registers them (--hooks FILE.py, or "
             "load_ops(..., hooks=[...]))")


def test_forgotten_hooks_fail_verify(capsys, tmp_path):
    """An op of a tdflow/Base.td library whose declared hooks have no Python: a forgotten
    --hooks is an error at the op, not a note (issue 24, item 6)."""
    td = tmp_path / "mine.td"
    td.write_text(LIB)
    prog = tmp_path / "p.mlir"
    prog.write_text(PROG)
    status, out, err = cli(capsys, "verify", "--ops", td, prog)
    assert status == 1 and "verified" not in out
    assert f"{prog}:2:3: error: {FORGOTTEN}" in err
    assert "note" not in err  # an error, not the unchecked-results note
    hooks = tmp_path / "mine_hooks.py"
    hooks.write_text("from tdflow.dialect.hooks import infer_data_type, infer_logical_tensor_desc\n"
                     "@infer_logical_tensor_desc('mine.scale')\n"
                     "def shape(ctx):\n    ctx.set_output_shape('y', ctx.input_shape('x'))\n"
                     "@infer_data_type('mine.scale')\n"
                     "def dtype(ctx):\n    ctx.set_output_dtype('y', ctx.input_dtype('x'))\n")
    from tdflow.dialect.hooks.registry import HOOKS

    try:
        status, out, err = cli(capsys, "verify", "--ops", td, "--hooks", hooks, prog)
    finally:  # the registry is the process's: later tests must see mine.scale without hooks
        for kind in ("infer_logical_tensor_desc", "infer_data_type"):
            HOOKS.unregister("mine.scale", kind)
    assert (status, err) == (0, "") and "verified (2 operations)" in out


def test_unchecked_results_note_only_when_true(capsys, tmp_path):
    """An op declaring no hooks, with no formula and no type-determining traits: its results
    are not checked, and the note says so; checked results get no note."""
    td = tmp_path / "mine.td"
    td.write_text(LIB.replace("  bit has_logical_tensor_desc_infer_fn = 1;\n"
                              "  bit has_data_type_infer_fn = 1;\n", ""))
    prog = tmp_path / "p.mlir"
    prog.write_text(PROG)
    status, out, err = cli(capsys, "verify", "--ops", td, prog)
    assert status == 0 and "verified (2 operations)" in out
    assert err == (f"{prog}:2:3: note: result types not checked, their ops have no "
                   f"infer_logical_tensor_desc hook: %0 ('mine.scale', line 2)\n"
                   + PROG.splitlines()[1] + "\n  ^\n")
    prog.write_text(PROG.replace("mine.scale", "tdflow.relu"))
    status, out, err = cli(capsys, "verify", "--ops", td, prog)
    assert (status, err) == (0, "")


def test_unchecked_results_note_across_functions(capsys, tmp_path):
    """A function whose ops are all checked is passed over whole (by its set of op names); the
    unchecked ops of the others are each named, in order, the note at the first."""
    td = tmp_path / "mine.td"
    td.write_text(LIB.replace("  bit has_logical_tensor_desc_infer_fn = 1;\n"
                              "  bit has_data_type_infer_fn = 1;\n", ""))
    relu = PROG.replace("mine.scale", "tdflow.relu")
    prog = tmp_path / "p.mlir"
    prog.write_text(relu.replace("@f", "@a") + PROG.replace("@f", "@b")
                    + relu.replace("@f", "@c") + PROG.replace("@f", "@d"))
    status, out, err = cli(capsys, "verify", "--ops", td, prog)
    assert status == 0 and "verified (8 operations)" in out
    assert err.startswith(f"{prog}:6:3: note: result types not checked, their ops have no "
                          f"infer_logical_tensor_desc hook: %0 ('mine.scale', line 6); "
                          f"%0 ('mine.scale', line 14)\n")


def test_no_unchecked_note_for_formula_ops(capsys, tmp_path):
    """A formula infers its op's results, so they are checked: no note (issue 24)."""
    td = tmp_path / "f.td"
    td.write_text('include "tdflow/Base.td"\ndef F_D : Dialect { let name = "fo"; }\n'
                  'def F_TwiceOp : Op<F_D, "twice", [NoMemoryEffect, Elementwise]> {\n'
                  '  let arguments = (ins TDF_Tensor:$x);\n  let results = (outs TDF_Tensor:$y);\n'
                  '  let formula = [{ x * 2 }];\n}\n')
    prog = tmp_path / "p.mlir"
    prog.write_text("func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
                    '  %0 = "fo.twice"(%x) : (tensor<3xf32>) -> tensor<3xf32>\n'
                    "  return %0 : tensor<3xf32>\n}\n")
    status, out, err = cli(capsys, "verify", "--ops", td, prog)
    assert status == 0 and "verified (2 operations)" in out and "note" not in err
    prog.write_text(prog.read_text().replace("-> tensor<3xf32>\n  return", "-> tensor<4xf32>\n"
                                             "  return"))
    status, _, err = cli(capsys, "verify", "--ops", td, prog)
    assert status == 1 and "fo.twice" in err  # checked: a wrong result type is an error


def test_run_without_hooks_says_to_pass_them(capsys, tmp_path):
    td = tmp_path / "mine.td"
    td.write_text(LIB)
    prog = tmp_path / "p.mlir"
    prog.write_text("func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
                    '  %0 = "mine.scale"(%x) : (tensor<3xf32>) -> tensor<3xf32>\n'
                    "  return %0 : tensor<3xf32>\n}\n")
    status, _, err = cli(capsys, "run", "--ops", td, prog, "--random-inputs", "0")
    assert status == 1
    assert f"{prog}:2:3: error: {FORGOTTEN}" in err  # found by run's verification, first
    assert "(declare has_logical" not in err  # it does declare it


def test_oneflow_contract_summary(capsys):
    if not (CORPUS / "top.td").exists():
        pytest.skip("the shared corpus (../shared/corpus/oneflow) is absent")
    llvm = shutil.which("llvm-config-19")
    if llvm is None:
        pytest.skip("llvm-config-19 (MLIR's include dir) is not installed")
    inc = subprocess.run([llvm, "--includedir"], capture_output=True, text=True).stdout.strip()
    import re

    groups = sorted(set(re.findall(r"GET_ONEFLOW_\w+_OP_DEFINITIONS",
                                   (CORPUS / "OneFlow" / "OneFlowUserOps.td").read_text())))
    defines = [a for g in groups if "_BASE_" not in g for a in ("-D", g)]
    status, out, err = cli(capsys, "verify", "--ops", CORPUS / "top.td", "-I", inc,
                           "-I", CORPUS, *defines)
    assert status == 0, err
    flags = [line for line in out.splitlines() if line.startswith("  has_")]
    assert any(re.fullmatch(r"  has_logical_tensor_desc_infer_fn: \d+ ops declare it, \d+ have a "
                            r"hook( \(\d+ served by standard ops\))?, \d+ missing", f) for f in flags)
    # one warning for the unregistered hooks, one for the ops with no gradient (OneFlow writes
    # its gradients in C++; served ops and formula ops have ours)
    lines = err.splitlines()
    assert len(lines) == 2 and all("warning:" in ln for ln in lines)
    assert "differentiable ops have no gradient" in lines[1]
    grads = next(ln for ln in out.splitlines() if ln.startswith("  gradients: "))
    assert re.fullmatch(r"  gradients: \d+ ops have one \(.*\), \d+ differentiable ops have none",
                        grads)

