"""The CLI's CUDA commands: ``tdflow lower --emit cuda`` prints the plan's translation unit with a
comment per launch; ``tdflow kernels PROGRAM`` reports ptxas's resources (nvcc needed) and
``tdflow kernels`` lists the cached cubins with registers read from them."""

from __future__ import annotations

import re

import pytest
from cli_run import cli
from tdflow.runtime.backends.cuda_status import find_nvcc

PROGRAM = """func.func @f(%x: tensor<3x5xf32>, %b: tensor<5xf32>) -> tensor<3x5xf32> {
  %0 = "tdflow.bias_add"(%x, %b) {axis = 1 : si64} : (tensor<3x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  %1 = "tdflow.relu"(%0) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  return %1 : tensor<3x5xf32>
}
"""


@pytest.fixture
def prog(tmp_path):
    p = tmp_path / "p.mlir"
    p.write_text(PROGRAM)
    return p


def test_lower_emit_cuda(prog, capsys):
    code, out, err = cli(capsys, "lower", str(prog), "--emit", "cuda")
    assert code == 0, err
    assert re.search(r"launch 0: tdflow.bias_add at .*p.mlir:2:3: bias_add_f32_\w+<<<", out)
    assert re.search(r"launch 1: tdflow.relu at .*p.mlir:3:3", out)
    assert out.count('extern "C" __global__') == 2 and "#include <cuda_fp16.h>" in out
    code, _, err = cli(capsys, "lower", str(prog), "--emit", "cuda", "--device", "cpu")
    assert code == 2 and "needs a GPU device" in err


def test_kernels_reports_ptxas_resources(prog, capsys):
    if find_nvcc() is None:
        pytest.skip("nvcc not found (the message without it: test_kernels_without_nvcc)")
    code, out, err = cli(capsys, "kernels", str(prog))
    assert code == 0, err
    rows = [ln for ln in out.splitlines() if "tdflow." in ln]
    assert len(rows) == 2 and all(re.search(r"│\s+\d+ │", r) for r in rows)
    code, out, err = cli(capsys, "kernels")
    assert code == 0, err
    assert re.search(r"bias_add_f32_\w+\s+│\s+\d+ │", out)


def test_kernels_without_nvcc(prog, capsys, monkeypatch):
    from tdflow.runtime.backends import cuda_status

    monkeypatch.setattr(cuda_status, "find_nvcc", lambda: None)
    for args in (("kernels",), ("kernels", str(prog))):
        code, out, err = cli(capsys, *args)
        assert code == 1 and "nvcc not found" in err and not out
