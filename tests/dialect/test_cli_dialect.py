"""The dialect subcommands through the real console entry point (subprocess): ops, verify,
doc (golden), opt and gen-hooks; exit codes 0/1/2 and no tracebacks for user mistakes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
BAD = Path(__file__).resolve().parent / "bad"


def _std_count() -> str:
    """``"N ops;"`` as verify reports the standard library (the count grows as ops are added)."""
    from tdflow.dialect.context import standard_context
    return f"ops.td: {len(standard_context().ops)} ops;"


def tdflow(*args: str, cwd: Path | None = None, stdin: str | None = None):
    # env: os.environ as Python sees it. Under pytest the C environment may hold a COLUMNS=80
    # that readline exported, which tables would then follow.
    proc = subprocess.run([sys.executable, "-m", "tdflow", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, input=stdin, timeout=120, env=dict(os.environ))
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_ops_json():
    proc = tdflow("ops", "ops.td", "--json")
    assert proc.returncode == 0
    ops = json.loads(proc.stdout)
    # every op of the standard library, each once (the count grows as ops are added)
    from tdflow.dialect.context import standard_context
    std = sorted(op.name for op in standard_context().ops.values())
    assert sorted(o["name"] for o in ops) == std and len(std) >= 96
    leaky = next(o for o in ops if o["name"] == "tdflow.leaky_relu")
    assert leaky["operands"] == [{"name": "x", "constraint": "TDF_Tensor", "arity": "single",
                                  "dtypes": None}]
    assert leaky["attrs"] == [{"name": "alpha", "kind": "f32", "constraint": "F32Attr",
                               "default": 0.0, "default_text": "0.", "required": False,
                               "optional": False}]
    assert leaky["traits"] == ["NoMemoryEffect", "Elementwise"]
    assert leaky["flags"] == []  # a formula op: its formula provides OneFlow's four hooks
    matmul = next(o for o in ops if o["name"] == "tdflow.matmul")
    assert matmul["flags"] == ["has_logical_tensor_desc_infer_fn",
                               "has_physical_tensor_desc_infer_fn", "has_get_sbp_fn",
                               "has_data_type_infer_fn", "has_compute_complexity_fn"]
    reshape = next(o for o in ops if o["name"] == "tdflow.reshape")
    assert reshape["attrs"][0]["required"] is True and reshape["attrs"][0]["kind"] == "shape"


def test_ops_table():
    proc = tdflow("ops")
    assert proc.returncode == 0
    assert "tdflow.leaky_relu" in proc.stdout and "alpha: f32 = 0." in proc.stdout


def _std_op_count() -> int:
    """How many ops the standard library declares (as the context loads them), so the
    verify tests need no edit when an op is added."""
    from tdflow.dialect.context import standard_context

    return sum(1 for op in standard_context().ops.values() if op.dialect == "tdflow")


def test_verify_dialect_contract_ok():
    proc = tdflow("verify")
    assert proc.returncode == 0 and _std_count() in proc.stdout


def test_verify_good_programs():
    proc = tdflow("verify", "examples/mlp.mlir", "examples/cnn.mlir")
    assert proc.returncode == 0, proc.stderr
    assert "examples/mlp.mlir: verified" in proc.stdout


def test_verify_bad_program_exit_1():
    proc = tdflow("verify", str(BAD / "unknown_op.mlir"), "examples/mlp.mlir")
    assert proc.returncode == 1
    assert "error: unknown operation 'tdflow.relus'; did you mean 'tdflow.relu'" in proc.stderr
    assert "examples/mlp.mlir: verified" in proc.stdout  # later files are still checked


def test_verify_syntax_error_exit_1(tmp_path):
    p = tmp_path / "syntax.mlir"
    p.write_text("func.func @f( {\n")
    proc = tdflow("verify", str(p))
    assert proc.returncode == 1 and f"{p}:1:" in proc.stderr


def test_usage_errors_exit_2():
    assert tdflow("verify", "--bogus").returncode == 2
    assert tdflow("opt").returncode == 2


def test_missing_files_exit_1_naming_the_file(tmp_path):
    """A file that cannot be opened is a diagnostic naming it (exit 1), as in llvm-tblgen and
    mlir-opt; tests/e2e/test_cli_hostile.py checks the same for every subcommand."""
    for args, path in [(("verify", "no/such/file.mlir"), "no/such/file.mlir"),
                       (("verify", "--td", "no/such.td"), "no/such.td"),
                       (("ops", "no/such.td"), "no/such.td")]:
        proc = tdflow(*args)
        assert proc.returncode == 1, args
        assert f"{path}: error: cannot open" in proc.stderr and "no such file" in proc.stderr
    missing = tmp_path / "missing.py"
    proc = tdflow("verify", "--hooks", str(missing))
    assert proc.returncode == 1 and f"{missing}: error: cannot open hook file" in proc.stderr


def test_tablegen_error_in_td_file_exit_1(tmp_path):
    p = tmp_path / "broken.td"
    p.write_text('include "tdflow/Base.td"\ndef X : TDF_Op<"x"> { let input = (ins Nope:$a); }\n')
    proc = tdflow("ops", str(p))
    assert proc.returncode == 1 and "broken.td:2:" in proc.stderr


def test_bad_default_exit_1(tmp_path):
    p = tmp_path / "bad_default.td"
    p.write_text('include "tdflow/Base.td"\ndef X : TDF_Op<"x"> {\n'
                 '  let attrs = (ins DefaultValuedAttr<F32Attr, "fast">:$alpha);\n}\n')
    proc = tdflow("verify", "--td", str(p))
    assert proc.returncode == 1
    assert "bad_default.td:2:" in proc.stderr and "attribute 'alpha'" in proc.stderr


def test_gen_hooks_then_verify(tmp_path):
    td = tmp_path / "mine.td"
    td.write_text('include "tdflow/Base.td"\n'
                  'def My_D : Dialect { let name = "mine"; }\n'
                  'def Mine_ScaleOp : Op<My_D, "scale"> {\n'
                  '  dag input = (ins TDF_Tensor:$x);\n  dag output = (outs TDF_Tensor:$y);\n'
                  '  dag attrs = (ins DefaultValuedAttr<F32Attr, "2.">:$factor);\n'
                  '  bit has_logical_tensor_desc_infer_fn = 1;\n  bit has_data_type_infer_fn = 1;\n'
                  '  bit has_get_sbp_fn = 1;\n}\n')
    proc = tdflow("verify", "--ops", str(td))  # missing hooks are warnings by default
    assert proc.returncode == 0 and "3 declared hooks of 1 ops are not registered" in proc.stderr
    assert "has_get_sbp_fn: 1 ops declare it, 0 have a hook, 1 missing" in proc.stdout
    # a differentiable op without a gradient is reported like a missing hook
    assert "gradients: 0 ops have one (none), 1 differentiable ops have none" in proc.stdout
    assert "1 differentiable ops have no gradient (--verbose lists them" in proc.stderr
    proc = tdflow("verify", "--ops", str(td), "--strict-hooks", "--verbose")
    assert proc.returncode == 1 and "4 errors" in proc.stderr
    assert "declares has_get_sbp_fn = 1 but no get_sbp hook" in proc.stderr
    assert "op 'mine.scale' is differentiable but has no gradient" in proc.stderr
    hooks = tmp_path / "mine_hooks.py"
    proc = tdflow("gen-hooks", str(td), "-o", str(hooks))
    assert proc.returncode == 0 and "wrote 3 hook(s)" in proc.stderr
    subprocess.run([sys.executable, "-m", "ruff", "check", "-q", "--no-cache", str(hooks)],
                   check=True)
    assert tdflow("verify", "--ops", str(td), "--hooks", str(hooks)).returncode == 0
    prog = tmp_path / "p.mlir"
    prog.write_text('func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {\n'
                    '  %0 = "mine.scale"(%x) {factor = 3.0 : f32} : (tensor<3xf32>) -> tensor<3xf32>\n'
                    '  return %0 : tensor<3xf32>\n}\n')
    proc = tdflow("verify", "--ops", str(td), "--hooks", str(hooks), str(prog))
    assert proc.returncode == 0, proc.stderr


def test_doc_golden():
    proc = tdflow("doc", "ops.td")
    assert proc.returncode == 0
    expected = (GOLDEN / "ops.md").read_text()
    if os.environ.get("TDFLOW_UPDATE_GOLDEN"):
        (GOLDEN / "ops.md").write_text(proc.stdout)
        expected = proc.stdout
    assert proc.stdout == expected


def test_opt_round_trip(tmp_path):
    proc = tdflow("opt", "examples/mlp.mlir")
    assert proc.returncode == 0
    again = tmp_path / "again.mlir"
    again.write_text(proc.stdout)
    second = tdflow("opt", str(again))
    assert second.returncode == 0 and second.stdout == proc.stdout
    generic = tdflow("opt", "examples/mlp.mlir", "--generic")
    assert '"func.func"()' in generic.stdout and '"func.return"' in generic.stdout


def test_opt_rejects_bad_programs():
    proc = tdflow("opt", str(BAD / "declared_result_shape.mlir"))
    assert proc.returncode == 1 and "declared tensor<8x17xf32>" in proc.stderr
    assert proc.stdout == ""


@pytest.mark.oracle
def test_opt_output_is_accepted_by_mlir_opt(mlir_opt):
    proc = tdflow("opt", "examples/cnn.mlir", "--generic")
    check = subprocess.run([mlir_opt, "--allow-unregistered-dialect", "--verify-roundtrip"],
                           input=proc.stdout, capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stderr


def test_broken_hook_file_is_a_diagnostic(tmp_path):
    bad = tmp_path / "bad_hooks.py"
    bad.write_text("import os\n\ndef broken(:\n    pass\n")
    proc = tdflow("verify", "--hooks", str(bad))
    assert proc.returncode == 1
    assert f"{bad}:3: error: cannot import hook file: SyntaxError" in proc.stderr
    raising = tmp_path / "raising_hooks.py"
    raising.write_text("x = 1\nraise RuntimeError('no GPU here')\n")
    proc = tdflow("verify", "--hooks", str(raising))
    assert proc.returncode == 1 and f"{raising}:2: error" in proc.stderr
    assert "RuntimeError: no GPU here" in proc.stderr


def test_buggy_hook_is_reported_not_a_crash(tmp_path):
    hooks = tmp_path / "buggy.py"
    hooks.write_text("from tdflow.dialect.hooks import check_attr\n\n\n"
                     "@check_attr('tdflow.cast', replace=True)\n"
                     "def buggy(ctx):\n    return {}['missing']\n")
    prog = tmp_path / "p.mlir"
    prog.write_text('func.func @f(%x: tensor<2xf32>) -> tensor<2xf16> {\n'
                    '  %0 = "tdflow.cast"(%x) {dtype = f16} : (tensor<2xf32>) -> tensor<2xf16>\n'
                    '  return %0 : tensor<2xf16>\n}\n')
    proc = tdflow("verify", "--hooks", str(hooks), str(prog))
    assert proc.returncode == 1
    # the op, and the hook's own file and line (issue 24)
    assert f"'tdflow.cast' op its hook buggy ({hooks}:6) failed with KeyError: 'missing'" \
        in proc.stderr


def test_verify_accepts_the_td_file_first():
    proc = tdflow("verify", "ops.td", "examples/mlp.mlir")
    assert proc.returncode == 0 and "examples/mlp.mlir: verified" in proc.stdout
    proc = tdflow("verify", "ops.td")
    assert proc.returncode == 0 and _std_count() in proc.stdout
