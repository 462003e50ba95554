"""MLIR's own Toy tutorial rules (`ToyCombine.td`, chapter 3) applied, unchanged, to programs of
MLIR's own Toy dialect (`toy/Ops.td`, read with MLIR 19's installed includes): ops with unnamed
results load, the rules rewrite as Toy's C++ would, and the C++ pieces are Python natives."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "drr" / "toy" / "Ch3"
MLIR_INC = Path("/usr/lib/llvm-19/include")

PROG = """func.func @f(%x: tensor<2x3xf64>) -> (tensor<3x2xf64>, tensor<2x3xf64>) {
  %0 = "toy.reshape"(%x) : (tensor<2x3xf64>) -> tensor<6xf64>
  %1 = "toy.reshape"(%0) : (tensor<6xf64>) -> tensor<3x2xf64>
  %2 = "toy.reshape"(%x) : (tensor<2x3xf64>) -> tensor<2x3xf64>
  return %1, %2 : tensor<3x2xf64>, tensor<2x3xf64>
}
"""
HOOKS = '''import tdflow


@tdflow.native("TypesAreIdentical")
def types_are_identical(a, b):
    return a.type == b.type


@tdflow.native("ReshapeConstant")
def reshape_constant(value, res):
    raise AssertionError("no constant in this program")
'''


@pytest.fixture
def toy(tmp_path):
    if not (CORPUS / "ToyCombine.td").exists():
        pytest.skip("the shared corpus (../shared/corpus/drr) is absent")
    if not (MLIR_INC / "mlir" / "IR" / "PatternBase.td").exists():
        pytest.skip("MLIR's .td includes (libmlir-19-dev) are not installed")
    (tmp_path / "p.mlir").write_text(PROG)
    (tmp_path / "h.py").write_text(HOOKS)
    return tmp_path


def test_toy_combine_rewrites_toy_programs(toy):
    done = subprocess.run(
        [sys.executable, "-m", "tdflow", "opt", "--no-std", "-I", str(CORPUS / "include"),
         "-I", str(MLIR_INC), "--ops", str(CORPUS / "ToyCombine.td"), "--hooks", "h.py",
         "p.mlir", "--pipeline", "apply-patterns", "--print-ir-after-all"],
        cwd=toy, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    body = [ln.strip() for ln in done.stdout.splitlines() if "toy." in ln]
    # reshape(reshape(x)) is one reshape; a reshape to x's own type is x
    assert body == ['%0 = "toy.reshape"(%x) : (tensor<2x3xf64>) -> tensor<3x2xf64>']
    assert "return %0, %x : tensor<3x2xf64>, tensor<2x3xf64>" in done.stdout
    assert "pattern 'ReshapeReshapeOptPattern' fired on 'toy.reshape' at p.mlir:3:3" in done.stderr
    assert "pattern 'RedundantReshapeOptPattern' fired on 'toy.reshape' at p.mlir:4:3" in done.stderr
