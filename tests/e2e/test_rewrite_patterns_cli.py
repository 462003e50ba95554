"""Rewrite rules on the command line: ``tdflow opt --pipeline apply-patterns`` with ``--ops``
rules and ``--hooks`` natives, ``--print-ir-after-all``'s account of what fired where, the
program's results before and after (``tdflow run``, compared with numpy), and ``tdflow verify``
reporting a rule whose native has no Python (exit 1), like a missing hook.

The missing-native checks run in a fresh process (``python -m tdflow``): natives are registered
process-wide, so an earlier in-process test that imported the hooks would hide the error.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from cli_run import cli

RULES = r'''
include "tdflow/Patterns.td"
include "tdflow/ops.td"

def CliPositive : Constraint<CPred<"$0.getValueAsDouble() > 0">, "a positive scale">;
def CliMulScales : NativeCodeCall<"$_builder.getF64FloatAttr($0.getValueAsDouble() * $1.getValueAsDouble())">;

// x * a * b -> x * (a * b)
def FoldScalarMuls : Pat<(TDF_ScalarMulOp (TDF_ScalarMulOp $x, ConstBoolAttrFalse, $hf1, $i1, $a),
                                          ConstBoolAttrFalse, $hf2, $i2, $b),
                         (TDF_ScalarMulOp $x, ConstBoolAttrFalse, ConstBoolAttrTrue, $i1,
                                          (CliMulScales $a, $b))>;
// relu(x * a) -> relu(x) * a when a > 0
def ReluThroughScale : Pat<(TDF_ReluOp (TDF_ScalarMulOp $x, ConstBoolAttrFalse, $hf, $i, $a)),
                           (TDF_ScalarMulOp (TDF_ReluOp $x), ConstBoolAttrFalse, ConstBoolAttrTrue,
                                            $i, $a),
                           [(CliPositive $a)]>;
'''

HOOKS = '''
import tdflow


@tdflow.native("CliPositive")
def positive(a):
    return a > 0


@tdflow.native("CliMulScales")
def mul_scales(a, b):
    return a * b
'''

PROGRAM = '''func.func @f(%x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {
  %0 = "tdflow.scalar_mul"(%x) {has_float_operand = true, float_operand = 2.0 : f64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %1 = "tdflow.scalar_mul"(%0) {has_float_operand = true, float_operand = 1.5 : f64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %2 = "tdflow.relu"(%1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %3 = "tdflow.scalar_mul"(%x) {has_float_operand = true, float_operand = -1.0 : f64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %4 = "tdflow.relu"(%3) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %2, %4 : tensor<3x4xf32>, tensor<3x4xf32>
}
'''


@pytest.fixture
def files(tmp_path):
    (tmp_path / "rules.td").write_text(RULES)
    (tmp_path / "h.py").write_text(HOOKS)
    (tmp_path / "prog.mlir").write_text(PROGRAM)
    x = np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    return tmp_path, x


def fresh(*args) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "tdflow", *map(str, args)], capture_output=True,
                          text=True, timeout=120, env=dict(os.environ))
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def run_program(capsys, d, program, out_name):
    status, _, err = cli(capsys, "run", program, "--ops", d / "rules.td", "--hooks", d / "h.py",
                         "--input", f"x={d / 'x.npy'}", "--output", d / out_name)
    assert status == 0, err
    got = np.load(d / out_name)
    return got["result0"], got["result1"]


def test_opt_applies_the_rules_and_results_do_not_change(capsys, files):
    d, x = files
    user = ("--ops", d / "rules.td", "--hooks", d / "h.py")
    status, out, err = cli(capsys, "opt", d / "prog.mlir", *user, "--pipeline", "apply-patterns",
                           "--print-ir-after-all")
    assert status == 0, err
    assert out.count('"tdflow.scalar_mul"') == 2  # the two muls folded, one mul kept
    assert "float_operand = 3.0" in out or "float_operand = 3.000000e+00" in out
    ops = [ln.split("=", 1)[1].split("(")[0].strip() for ln in out.splitlines() if " = " in ln]
    assert ops == ['"tdflow.relu"', '"tdflow.scalar_mul"', '"tdflow.scalar_mul"', '"tdflow.relu"']
    # which pattern fired on which op, at the op's place in the program
    assert "IR Dump After ApplyPatternsPass (apply-patterns)" in err
    assert f"// pattern 'FoldScalarMuls' fired on 'tdflow.scalar_mul' at {d / 'prog.mlir'}:3:3" in err
    assert f"// pattern 'ReluThroughScale' fired on 'tdflow.relu' at {d / 'prog.mlir'}:4:3" in err
    assert err.count("// pattern") == 2  # the relu of x * -1 is left alone
    (d / "after.mlir").write_text(out)
    before = run_program(capsys, d, d / "prog.mlir", "before.npz")
    after = run_program(capsys, d, d / "after.mlir", "after.npz")
    np.testing.assert_allclose(before[0], np.maximum(x * 3, 0), rtol=1e-6)
    np.testing.assert_allclose(before[1], np.maximum(-x, 0), rtol=1e-6)
    for b, a in zip(before, after):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_verify_reports_a_missing_native_like_a_missing_hook(files):
    d, _ = files
    proc = fresh("verify", "--ops", d / "rules.td")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    err = proc.stderr
    assert f"{d / 'rules.td'}:9:5: error: pattern 'FoldScalarMuls' needs a Python function " \
           f"for 'CliMulScales'" in err
    assert f"{d / 'rules.td'}:14:5: error: pattern 'ReluThroughScale' needs a Python function " \
           f"for 'CliPositive'" in err
    assert "@tdflow.native('CliPositive')" in err and "--hooks FILE.py" in err
    # opt reports it too, before rewriting anything, and prints no program
    proc = fresh("opt", d / "prog.mlir", "--ops", d / "rules.td", "--pipeline", "apply-patterns")
    assert proc.returncode == 1 and proc.stdout == ""
    assert "needs a Python function for 'CliMulScales'" in proc.stderr
    # with the hooks module, verify passes
    proc = fresh("verify", "--ops", d / "rules.td", "--hooks", d / "h.py", d / "prog.mlir")
    assert proc.returncode == 0, proc.stderr


def test_the_rewrite_patterns_page_runs(tmp_path, monkeypatch):
    """docs/rewrite-patterns.md, read as a script the way tests/e2e/test_tutorial.py reads the op
    tutorial: every file block is written, every session and Python block run and checked."""
    import test_tutorial as page

    doc = page.DOC.parent / "rewrite-patterns.md"
    monkeypatch.setattr(page, "DOC", doc)  # failures name this page
    blocks = page.read_blocks(doc)
    assert {b.file for b in blocks} >= {"toy_ops.td", "toy_combine.td", "toy_hooks.py",
                                        "prog.mlir"}
    assert any(b.lang == "python" and b.file is None for b in blocks)
    for i, block in enumerate(blocks):
        page.run_block(block, tmp_path, i)
