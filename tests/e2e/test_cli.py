"""`tdflow run` and `tdflow lower` through a subprocess, as a user types them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
MLP = str(ROOT / "examples" / "mlp.mlir")


def tdflow(*args, cwd=None):
    # env: os.environ as Python sees it. Under pytest the C environment may hold a COLUMNS=80
    # that readline exported, which the result tables would then follow.
    return subprocess.run([sys.executable, "-m", "tdflow", *map(str, args)], capture_output=True,
                          text=True, timeout=300, cwd=cwd, env=dict(os.environ))


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    d = tmp_path_factory.mktemp("in")
    rng = np.random.default_rng(3)
    arrays = {"x": rng.standard_normal((64, 784)).astype(np.float32),
              "w1": (rng.standard_normal((784, 256)) * 0.05).astype(np.float32)}
    for k, v in arrays.items():
        np.save(d / f"{k}.npy", v)
    return d, arrays


def test_run_with_random_inputs_says_so():
    r = tdflow("run", MLP, "--repeat", 3)
    assert r.returncode == 0, r.stderr
    assert "random inputs (seed 0): %x, %w1, %b1, %w2, %b2" in r.stdout
    assert "result0" in r.stdout and "64x10" in r.stdout and "float32" in r.stdout
    assert "3 calls: median" in r.stdout


def test_run_inputs_output_and_seed(tmp_path, weights):
    d, arrays = weights
    out = tmp_path / "out.npz"
    r = tdflow("run", MLP, "--input", f"x={d / 'x.npy'}", "--input", f"w1={d / 'w1.npy'}",
               "--random-inputs", 7, "--output", out)
    assert r.returncode == 0, r.stderr
    assert "random inputs (seed 7): %b1, %w2, %b2" in r.stdout
    got = np.load(out)
    assert list(got.keys()) == ["result0"]
    # Same run from Python: the seeded generator fills b1, w2, b2 in argument order.
    import tdflow as td
    from tdflow.commands.run import random_array

    program = td.compile(MLP)
    rng = np.random.default_rng(7)
    rest = {a.name: random_array(rng, a.shape, a.dtype) for a in program.plan.arguments[2:]}
    np.testing.assert_array_equal(got["result0"], program(**arrays, **rest))
    np.testing.assert_allclose(got["result0"].sum(axis=1), 1, rtol=1e-5)


def test_run_errors_name_the_argument(tmp_path, weights):
    d, _ = weights
    r = tdflow("run", MLP, "--input", f"nope={d / 'x.npy'}")
    assert r.returncode == 1 and "%nope" in r.stderr and "%x, %w1" in r.stderr
    assert "Traceback" not in r.stderr
    r = tdflow("run", MLP, "--input", f"w1={d / 'x.npy'}")
    assert r.returncode == 1 and "argument %w1 must be tensor<784x256xf32>" in r.stderr
    np.save(tmp_path / "i.npy", np.zeros((64, 784), np.int64))
    r = tdflow("run", MLP, "--input", f"x={tmp_path / 'i.npy'}")
    assert r.returncode == 1 and "%x" in r.stderr and "int64" in r.stderr
    assert "never cast implicitly" in r.stderr
    r = tdflow("run", MLP, "--input", f"x={tmp_path / 'missing.npy'}")
    assert r.returncode == 1 and "cannot open --input x: no such file" in r.stderr
    assert "Traceback" not in r.stderr


def test_run_usage_and_program_errors(tmp_path):
    r = tdflow("run", MLP, "--input", "x")
    assert r.returncode == 2 and "NAME=FILE.npy" in r.stderr
    r = tdflow("run", tmp_path / "nothing.mlir")
    assert r.returncode == 1 and "nothing.mlir: error: cannot open program: no such file" in r.stderr
    bad = tmp_path / "bad.mlir"
    bad.write_text('func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n'
                   '  %0 = "tdflow.relux"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n'
                   '  return %0 : tensor<4xf32>\n}\n')
    r = tdflow("run", bad)
    assert r.returncode == 1 and "bad.mlir:2:" in r.stderr and "Traceback" not in r.stderr
    r = tdflow("run", MLP, "--entry", "nope")
    assert r.returncode == 1 and "@mlp" in r.stderr


def test_lower_prints_ir_and_plan():
    r = tdflow("lower", MLP, "--timing")
    assert r.returncode == 0, r.stderr
    assert '"tdflow.matmul"' in r.stdout and "plan @mlp" in r.stdout
    assert "buffers" in r.stdout and "launches" in r.stdout and "pass timing" in r.stdout


def test_lower_print_ir_after_and_bad_pipeline():
    r = tdflow("lower", MLP, "--pipeline", "infer-shapes,canonicalize", "--print-ir-after-all")
    assert r.returncode == 0, r.stderr
    assert "IR Dump After InferShapesPass (infer-shapes)" in r.stdout
    assert "IR Dump After CanonicalizePass (canonicalize)" in r.stdout
    assert "plan @" not in r.stdout
    r = tdflow("lower", MLP, "--pipeline", "infer-shapes,fuse")
    assert r.returncode == 1 and "unknown pass 'fuse'" in r.stderr
    assert "fuse-elementwise" in r.stderr
    r = tdflow("lower", MLP, "--print-ir-after", "canonicalise")
    assert r.returncode == 1 and "canonicalize" in r.stderr


def test_eager_example_runs_and_agrees_with_compiled():
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "eager.py")], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "max |eager - compiled|" in r.stdout
    err = float(r.stdout.split("max |eager - compiled| = ")[1].split()[0])
    assert err < 1e-5
    assert 'relu(): argument "x" must be Tensor, not int' in r.stdout


def test_run_dynamic_program_needs_its_dynamic_inputs(tmp_path):
    prog = tmp_path / "dyn.mlir"
    prog.write_text('func.func @dyn(%x: tensor<?x4xf32>, %w: tensor<4x3xf32>) -> tensor<?x3xf32> {\n'
                    '  %0 = "tdflow.matmul"(%x, %w) : (tensor<?x4xf32>, tensor<4x3xf32>) -> '
                    'tensor<?x3xf32>\n  return %0 : tensor<?x3xf32>\n}\n')
    r = tdflow("run", prog)
    assert r.returncode == 1 and "%x has a dynamic shape" in r.stderr and "--input x=" in r.stderr
    np.save(tmp_path / "x.npy", np.ones((5, 4), np.float32))
    r = tdflow("run", prog, "--input", f"x={tmp_path / 'x.npy'}")
    assert r.returncode == 0, r.stderr
    assert "random inputs (seed 0): %w" in r.stdout and "5x3" in r.stdout


def test_run_on_a_device_without_kernels_says_why():
    r = tdflow("run", MLP, "--device", "gpu")
    # The wording is the runtime's ("unknown device 'gpu'; devices: cpu, ..."): it names both.
    assert r.returncode == 2 and "device 'gpu'" in r.stderr and "cpu" in r.stderr
    assert "Traceback" not in r.stderr


def test_lower_lists_passes_and_needs_a_program():
    r = tdflow("lower", "--list-passes")
    assert r.returncode == 0 and "plan-memory" in r.stdout and "{reuse=true" in r.stdout
    r = tdflow("lower")
    assert r.returncode == 2 and "PROGRAM.mlir" in r.stderr
