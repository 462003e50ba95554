"""Logical SBP programs compiled by the SBP pipeline (infer-sbp, physicalize, the standard
passes) and run on 2 and 4 thread ranks: data and tensor parallel, uneven splits; the same
through ``tdflow run --nproc`` (threads, and MPI when installed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tdflow
import tdflow.distributed as dist
from tdflow.distributed.launch import mpi_available

ROOT = Path(__file__).resolve().parents[2]

DP = """func.func @f(%x: tensor<5x3xf64> {sbp = [#sbp.S<0>]}, %w: tensor<3x4xf64>) -> tensor<5x4xf64> {
  %y = "tdflow.matmul"(%x, %w) : (tensor<5x3xf64>, tensor<3x4xf64>) -> tensor<5x4xf64>
  %z = "tdflow.relu"(%y) : (tensor<5x4xf64>) -> tensor<5x4xf64>
  return %z : tensor<5x4xf64>
}
"""

TP = """func.func @mlp(%x: tensor<3x4xf64>, %w1: tensor<4x6xf64> {sbp = [#sbp.S<1>]}, %w2: tensor<6x5xf64> {sbp = [#sbp.S<0>]}) -> (tensor<3x5xf64>, tensor<5xf64>) {
  %h = "tdflow.matmul"(%x, %w1) : (tensor<3x4xf64>, tensor<4x6xf64>) -> tensor<3x6xf64>
  %a = "tdflow.relu"(%h) : (tensor<3x6xf64>) -> tensor<3x6xf64>
  %y = "tdflow.matmul"(%a, %w2) : (tensor<3x6xf64>, tensor<6x5xf64>) -> tensor<3x5xf64>
  %s = "tdflow.reduce_sum"(%y) {axis = [0 : si32]} : (tensor<3x5xf64>) -> tensor<5xf64>
  return %y, %s : tensor<3x5xf64>, tensor<5xf64>
}
"""

HYBRID = """func.func @f(%x: tensor<6x4xf64> {sbp = [#sbp.S<0>, #sbp.B]}, %w: tensor<4x5xf64> {sbp = [#sbp.B, #sbp.S<1>]}, %w2: tensor<5x3xf64>) -> (tensor<6x3xf64>, tensor<5xf64>) attributes {hierarchy = [2, 2]} {
  %y = "tdflow.matmul"(%x, %w) : (tensor<6x4xf64>, tensor<4x5xf64>) -> tensor<6x5xf64>
  %z = "tdflow.relu"(%y) : (tensor<6x5xf64>) -> tensor<6x5xf64>
  %o = "tdflow.matmul"(%z, %w2) : (tensor<6x5xf64>, tensor<5x3xf64>) -> tensor<6x3xf64>
  %s = "tdflow.reduce_sum"(%z) {axis = [0 : si32]} : (tensor<6x5xf64>) -> tensor<5xf64>
  return %o, %s : tensor<6x3xf64>, tensor<5xf64>
}
"""


def _args(text, seed=0):
    prog = tdflow.compile(text)
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for _, shape, _ in prog.arguments], prog


@pytest.mark.parametrize("nproc", [2, 4])
@pytest.mark.parametrize("text", [DP, TP], ids=["data-parallel", "tensor-parallel"])
def test_logical_results_equal_the_single_process_ones(text, nproc):
    args, single = _args(text)
    expect = single(*args)
    got = dist.compile(text, nproc)(*args)
    expect = expect if isinstance(expect, tuple) else (expect,)
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, expect):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-15)


def test_a_2x2_hybrid_program_equals_the_single_process_one():
    args, single = _args(HYBRID)
    prog = dist.compile(HYBRID, 4)
    for g, e in zip(prog(*args), single(*args)):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-15)
    assert prog.plan(3).hierarchy == (2, 2)
    with pytest.raises(Exception, match=r"hierarchy \[2, 2\] has 4 ranks"):
        dist.compile(HYBRID, 2)


def test_the_pipeline_boxes_the_partial_product_of_the_row_parallel_matmul():
    prog = dist.compile(TP, 2)
    ops = [op.name for op in prog.plan(0).program.lowering.module["mlp"].ops]
    # the matmul of S(1) by S(0) is P: whatever the compiler picks, a collective follows it
    assert any(o.startswith("tdflow.boxing_") for o in ops[ops.index("tdflow.matmul", 1):]), ops
    assert [s[0].kind for s in prog.plan(1).arg_sbp] == ["B", "S", "S"]


def test_kwargs_and_wrong_shapes():
    args, _ = _args(DP)
    prog = dist.compile(DP, 2)
    np.testing.assert_allclose(prog(w=args[1], x=args[0]), prog(*args), rtol=0, atol=0)
    with pytest.raises(dist.DistributedError, match=r"argument #1 has shape \(4, 3\)"):
        prog(args[0], np.zeros((4, 3)))


def _run_cli(*argv):
    return subprocess.run([sys.executable, "-m", "tdflow", "run", *argv], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)


@pytest.mark.parametrize("extra", [["--nproc", "3"], ["--nproc", "2", "--mpi"]],
                         ids=["threads", "mpi"])
def test_tdflow_run_nproc_writes_the_logical_results(tmp_path, extra):
    if "--mpi" in extra and mpi_available() is not None:
        pytest.skip(f"MPI absent: {mpi_available()}")
    prog = tmp_path / "tp.mlir"
    prog.write_text(TP)
    one = _run_cli(str(prog), "--output", str(tmp_path / "one.npz"))
    many = _run_cli(str(prog), *extra, "--output", str(tmp_path / "many.npz"))
    assert one.returncode == 0 and many.returncode == 0, many.stderr
    assert many.stdout.count("wrote 1") == 0 and many.stdout.count("wrote 2 result(s)") == 1
    a, b = np.load(tmp_path / "one.npz"), np.load(tmp_path / "many.npz")
    for k in ("result0", "result1"):
        np.testing.assert_allclose(b[k], a[k], rtol=1e-12, atol=1e-15)


def test_tdflow_run_nproc_usage_errors(tmp_path):
    prog = tmp_path / "dp.mlir"
    prog.write_text(DP)
    bad = _run_cli(str(prog), "--nproc", "0")
    assert bad.returncode == 2 and "positive integer" in bad.stderr
    both = _run_cli(str(prog), "--nproc", "2", "--pipeline", "infer-shapes")
    assert both.returncode == 2 and "--pipeline cannot be combined" in both.stderr
    alone = _run_cli(str(prog), "--mpi")
    assert alone.returncode == 2 and "--mpi needs --nproc" in alone.stderr


def test_an_sbp_the_tensor_cannot_have_is_a_located_error(tmp_path):
    prog = tmp_path / "bad.mlir"
    prog.write_text(DP.replace("#sbp.S<0>", "#sbp.S<2>"))
    done = _run_cli(str(prog), "--nproc", "2")
    assert done.returncode == 1
    assert f"{prog}:1:1: error: @f argument #0: SBP [S(2)]" in done.stderr
