"""``tdflow lower --nproc N [--rank R]``: the chosen SBP of every value, the boxing ops, and
one rank's physical program (in-process through ``tdflow.cli.main``)."""

from __future__ import annotations

import re

import pytest

from tdflow.cli import main

PROG = """func.func @mlp(%x: tensor<5x6xf64>, %w1: tensor<6x8xf64> {sbp = [#sbp.S<1>]},
               %w2: tensor<8x6xf64> {sbp = [#sbp.S<0>]}) -> (tensor<5x6xf64> {sbp = [#sbp.B]}) {
  %h = "tdflow.matmul"(%x, %w1) : (tensor<5x6xf64>, tensor<6x8xf64>) -> tensor<5x8xf64>
  %a = "tdflow.relu"(%h) : (tensor<5x8xf64>) -> tensor<5x8xf64>
  %y = "tdflow.matmul"(%a, %w2) : (tensor<5x8xf64>, tensor<8x6xf64>) -> tensor<5x6xf64>
  return %y : tensor<5x6xf64>
}
"""


def lower(tmp_path, capsys, *args: str) -> tuple[int, str, str]:
    prog = tmp_path / "mlp.mlir"
    prog.write_text(PROG)
    code = main(["lower", str(prog), *args])
    out, err = capsys.readouterr()
    return code, out, err.replace(str(prog), "mlp.mlir")


def test_prints_every_values_sbp_and_the_boxing(tmp_path, capsys):
    """Values keep their source names (``%h``); an inserted boxing op's result is numbered."""
    code, out, _ = lower(tmp_path, capsys, "--nproc", "4", "--rank", "3")
    out = out.replace(str(tmp_path / "mlp.mlir"), "mlp.mlir")
    assert code == 0
    table = [line for line in out.splitlines() if line.startswith("//   ")]
    assert table == [
        "//   %x       [B]     argument #0",
        "//   %w1      [S(1)]  argument #1",
        "//   %w2      [S(0)]  argument #2",
        "//   %h       [S(1)]  tdflow.matmul at mlp.mlir:3:3",
        "//   %a       [S(1)]  tdflow.relu at mlp.mlir:4:3",
        "//   %y       [P]     tdflow.matmul at mlp.mlir:5:3",
        "//   %0       [B]     boxing tdflow.boxing_all_reduce{mesh_axis=0} at mlp.mlir:6:3",
        "//   results  [B]",
        "//   boxing ops: 1",
    ]
    # rank 3 of 4 holds 8 // 4 = 2 of w1's columns; its plan runs the all-reduce kernel
    rank_ir = out.split("// -----// rank 3 of 4 //----- //")[1]
    assert "%w1: tensor<6x2xf64>" in rank_ir and "%w2: tensor<2x6xf64>" in rank_ir
    assert re.search(r"boxing_all_reduce.*\(tensor<5x6xf64>\) -> tensor<5x6xf64>", rank_ir)


@pytest.mark.parametrize("args, message", [
    (("--nproc", "2", "--rank", "2"), "--rank 2 is outside 0..1 (--nproc 2)"),
    (("--nproc", "0"), "--nproc must be >= 1, not 0"),
    (("--rank", "1"), "--rank needs --nproc"),
])
def test_bad_rank_is_a_usage_error(tmp_path, capsys, args, message):
    code, _, err = lower(tmp_path, capsys, *args)
    assert code == 2 and message in err


def test_unsatisfiable_sbp_is_a_located_diagnostic(tmp_path, capsys):
    prog = tmp_path / "bad.mlir"
    prog.write_text(PROG.replace("{sbp = [#sbp.S<1>]}", "{sbp = [#sbp.S<2>]}"))
    code = main(["lower", str(prog), "--nproc", "2"])
    err = capsys.readouterr().err
    assert code == 1
    assert f"{prog}:1:" in err and "argument #1: SBP [S(2)] splits an axis" in err
