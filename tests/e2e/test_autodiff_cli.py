"""`tdflow lower --pipeline autodiff,...` prints @f_grad; a user library's ops differentiate in
graph mode from the CLI's context; bad autodiff options are diagnostics, not tracebacks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from cli_run import cli

import tdflow

ROOT = Path(__file__).resolve().parents[2]
GRADLIB = ROOT / "tests" / "data" / "gradlib"

PROG = """func.func @f(%x: tensor<3x4xf64>, %b: tensor<4xf64>) -> tensor<f64> {
  %0 = "glib.softplus"(%x) {beta = 2.0 : f32} : (tensor<3x4xf64>) -> tensor<3x4xf64>
  %1 = "tdflow.broadcast_mul"(%0, %b) : (tensor<3x4xf64>, tensor<4xf64>) -> tensor<3x4xf64>
  %2 = "glib.cube"(%1) : (tensor<3x4xf64>) -> tensor<3x4xf64>
  %3 = "tdflow.reduce_sum"(%2) {axis = [0 : si32, 1 : si32]} : (tensor<3x4xf64>) -> tensor<f64>
  return %3 : tensor<f64>
}
"""


def test_lower_prints_the_gradient_function(capsys, tmp_path):
    prog = tmp_path / "p.mlir"
    prog.write_text(PROG)
    status, out, err = cli(capsys, "lower", "--ops", GRADLIB / "grad_ops.td", "--hooks",
                           GRADLIB / "grad_hooks.py", "--pipeline",
                           "autodiff{wrt=b},infer-shapes,canonicalize,fuse-elementwise", prog)
    assert status == 0, err
    assert ("func.func @f_grad(%x: tensor<3x4xf64>, %b: tensor<4xf64>, %seed0: tensor<f64>) -> "
            "(tensor<f64>, tensor<4xf64>)") in out
    assert '"tdflow.reduce_sum_like"' in out  # b's gradient summed back over the broadcast


def test_bad_autodiff_options_are_diagnostics(capsys, tmp_path):
    prog = tmp_path / "p.mlir"
    prog.write_text(PROG)
    ops = ["--ops", GRADLIB / "grad_ops.td", "--hooks", GRADLIB / "grad_hooks.py"]
    status, _, err = cli(capsys, "lower", *ops, "--pipeline", "autodiff{wrt=nope}", prog)
    assert status == 1 and "autodiff: @f has no argument %nope" in err
    status, _, err = cli(capsys, "lower", *ops, "--pipeline", "autodiff{func=g}", prog)
    assert status == 1 and "no function @g" in err


def test_user_ops_against_finite_differences():
    lib = tdflow.load_ops(GRADLIB / "grad_ops.td", hooks=[GRADLIB / "grad_hooks.py"])
    rng = np.random.default_rng(3)
    x, b = rng.normal(size=(3, 4)), rng.normal(size=(4,))
    f = tdflow.value_and_grad(PROG, ops=lib)
    plain = tdflow.compile(PROG, ops=lib)
    _, (gx, gb) = f(x, b)
    eps = 1e-6
    for arr, grad, which in ((x, gx, 0), (b, gb, 1)):
        num = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            hi, lo = arr.copy(), arr.copy()
            hi[idx] += eps
            lo[idx] -= eps
            args_hi = (hi, b) if which == 0 else (x, hi)
            args_lo = (lo, b) if which == 0 else (x, lo)
            num[idx] = (float(plain(*args_hi)) - float(plain(*args_lo))) / (2 * eps)
        np.testing.assert_allclose(grad, num, rtol=1e-6, atol=1e-7)
    # and the scaled_matmul grad-field op, eagerly
    a, w = rng.normal(size=(2, 3)), rng.normal(size=(3, 2))
    ta, tw = tdflow.tensor(a, requires_grad=True), tdflow.tensor(w, requires_grad=True)
    tdflow.functional.reduce_sum(lib.functional.glib.scaled_matmul(ta, tw, k=1.5),
                                 axis=[]).backward()

    def loss(a_, w_):
        return float((1.5 * a_ @ w_).sum())

    num = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        hi, lo = a.copy(), a.copy()
        hi[idx] += eps
        lo[idx] -= eps
        num[idx] = (loss(hi, w) - loss(lo, w)) / (2 * eps)
    np.testing.assert_allclose(ta.grad.numpy(), num, rtol=1e-6)
