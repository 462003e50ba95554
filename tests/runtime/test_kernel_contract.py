"""The kernel contract is checked (issue 24): a user kernel that returns a result of the wrong
shape, a bare array instead of a list, or too few results is an error naming the op and the
kernel's own file and line, compiled and eager alike, never silent garbage."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

LIB = '''include "tdflow/Base.td"
def Kc_Dialect : Dialect { let name = "kc"; }
def Kc_TwiceOp : Op<Kc_Dialect, "twice", [NoMemoryEffect, SameOperandsAndResultType]> {
  let arguments = (ins TDF_Tensor:$x);
  let results = (outs TDF_Tensor:$y);
}
'''

HOOKS = '''import numpy as np
from tdflow.runtime.kernels.registry import register_kernel


@register_kernel("kc.twice", device="cpu", dtypes=("f32",))
def twice_cpu(attrs, inputs, outs):
    (x,) = inputs
    return {body}
'''

PROGRAM = '''func.func @f(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %y = "kc.twice"(%x) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}
'''

CASES = {
    "wrong shape": ("[np.ones(3, np.float32)]", "gave result 0 of shape (3,), its output is (4, 3)"),
    "bare array": ("x * 2", "returned ndarray, not a list of its results"),
    "no results": ("[]", "returned 0 result(s) for 1 output(s)"),
}


@pytest.fixture
def lib(tmp_path: Path):
    def make(body: str) -> Path:
        (tmp_path / "kc.td").write_text(LIB)
        (tmp_path / "kc_hooks.py").write_text(HOOKS.format(body=body))
        (tmp_path / "p.mlir").write_text(PROGRAM)
        return tmp_path
    return make


@pytest.mark.parametrize("case", list(CASES))
def test_compiled_run_names_the_op_and_the_kernel(lib, case):
    body, message = CASES[case]
    d = lib(body)
    proc = subprocess.run([sys.executable, "-m", "tdflow", "run", "--ops", "kc.td", "--hooks",
                           "kc_hooks.py", "p.mlir", "--random-inputs", "0"], cwd=d,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    err = proc.stderr
    assert "Traceback" not in err and message in err, err
    assert "kc.twice" in err and "twice_cpu (" in err and "kc_hooks.py:5)" in err, err
    assert "p.mlir:2" in err, err  # the op's place in the program


@pytest.mark.parametrize("case", list(CASES))
def test_eager_call_names_the_op_and_the_kernel(lib, case):
    body, message = CASES[case]
    d = lib(body)
    script = (
        "import numpy as np, tdflow\n"
        f"ctx = tdflow.load_ops({str(d / 'kc.td')!r}, hooks=[{str(d / 'kc_hooks.py')!r}])\n"
        "x = tdflow.tensor(np.ones((4, 3), np.float32))\n"
        "try:\n"
        "    y = ctx.functional.twice(x)\n"
        "    y.numpy()\n"
        "except Exception as e:\n"
        "    print(type(e).__name__, e)\n"
        "else:\n"
        "    print('no error', y.numpy().tolist())\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    out = proc.stdout + proc.stderr
    assert message in out and "kc.twice" in out and "kc_hooks.py:5" in out, out
