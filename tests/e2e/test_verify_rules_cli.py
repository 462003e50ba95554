"""What `verify` accepts, warns about and refuses (issue 24, items 6 and 8), on the command line.

- An attribute an op does not declare is MLIR's *discardable* attribute: a warning (exit 0),
  with "did you mean" when close to a declared name; ``--strict-attrs`` makes it an error
  (exit 1) on ``verify``, ``opt``, ``run`` and ``lower``. Kernels never see it: ``run`` gives
  the same numbers with and without it.
- A user library's op (tdflow/Base.td) whose declared hooks have no Python fails ``verify``
  (exit 1) with a hint to pass ``--hooks``; with them it verifies.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_run import cli

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "tests" / "data" / "userlib"

PROG = """func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "tdflow.leaky_relu"(%x) {alpha = 0.25 : f32, alhpa = 0.5 : f32, note = "mine"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
"""
TYPO = ("warning: 'tdflow.leaky_relu' op has no attribute 'alhpa'; did you mean 'alpha'? "
        "(attributes: alpha); kept as a discardable attribute")
NOTE = "warning: 'tdflow.leaky_relu' op has no attribute 'note' (attributes: alpha)"


@pytest.fixture
def prog(tmp_path) -> Path:
    p = tmp_path / "p.mlir"
    p.write_text(PROG)
    return p


def test_undeclared_attributes_warn_and_verify(capsys, prog):
    status, out, err = cli(capsys, "verify", prog)
    assert status == 0 and f"{prog}: verified (2 operations)" in out
    assert f"{prog}:2:3: {TYPO}" in err and f"{prog}:2:3: {NOTE}" in err
    assert " error: " not in err


@pytest.mark.parametrize("command", ["verify", "opt", "run", "lower"])
def test_strict_attrs_makes_them_errors(capsys, prog, command):
    extra = ["--random-inputs", "0"] if command == "run" else []
    status, _, err = cli(capsys, command, prog, *extra)
    assert status == 0, err
    status, out, err = cli(capsys, command, prog, "--strict-attrs", *extra)
    assert status == 1
    assert f"{prog}:2:3: {TYPO.replace('warning', 'error')}" in err
    assert f"{prog}:2:3: {NOTE.replace('warning', 'error')}" in err
    assert err.rstrip().endswith("2 errors")


def test_opt_prints_discardable_attributes_back(capsys, prog):
    status, out, err = cli(capsys, "opt", prog)
    assert status == 0
    assert 'alhpa = 5.000000e-01 : f32' in out and 'note = "mine"' in out
    assert f"{prog}:2:3: {TYPO}" in err  # the warnings on stderr, as mlir-opt prints them


def test_kernels_ignore_discardable_attributes(capsys, prog, tmp_path):
    x = np.array([[-2.0, -1.0, 0.0], [1.0, 2.0, -4.0]], np.float32)
    np.save(tmp_path / "x.npy", x)
    plain = tmp_path / "plain.mlir"
    plain.write_text(PROG.replace(', alhpa = 0.5 : f32, note = "mine"', ""))
    results = []
    for p in (prog, plain):
        out = tmp_path / f"{p.stem}.npz"
        status, _, err = cli(capsys, "run", p, "--input", f"x={tmp_path / 'x.npy'}",
                             "--output", out)
        assert status == 0, err
        with np.load(out) as z:
            results.append([z[k] for k in sorted(z.files)])
    expected = np.where(x > 0, x, 0.25 * x)  # alpha, not the misspelt alhpa
    np.testing.assert_array_equal(results[0][0], expected)
    np.testing.assert_array_equal(results[0][0], results[1][0])


def _tdflow(*args) -> subprocess.CompletedProcess:
    """A fresh process: no hooks module imported by an earlier test."""
    proc = subprocess.run([sys.executable, "-m", "tdflow", *map(str, args)], capture_output=True,
                          text=True, timeout=120, env=dict(os.environ))
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_forgotten_hooks_fail_verify_with_a_hint():
    mixed = LIB / "mixed.mlir"
    proc = _tdflow("verify", "--ops", LIB / "my_ops.td", mixed)
    assert proc.returncode == 1, proc.stdout
    assert (f"{mixed}:4:3: error: 'mylib.scale_shift' op declares "
            f"has_logical_tensor_desc_infer_fn, has_data_type_infer_fn but no Python registers "
            f"its hooks (infer_logical_tensor_desc, infer_data_type): pass the hooks module "
            f"that registers them (--hooks FILE.py, or load_ops(..., hooks=[...]))") in proc.stderr
    assert "result types not checked" not in proc.stderr  # an error, not the old note
    proc = _tdflow("verify", "--ops", LIB / "my_ops.td", "--hooks", LIB / "my_hooks.py", mixed)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
