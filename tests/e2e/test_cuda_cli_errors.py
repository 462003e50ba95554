"""A user's wrong inputs to the CUDA paths of the CLI, each an error message and exit status 1
(2 for a usage error), never a traceback: a CUDA body that does not compile (the message names
the op and quotes the generated line), a divergent ``__syncthreads`` on cudasim, an op without a
GPU kernel, ``--device cuda`` without a GPU, unknown device names, ``tdflow kernels`` for the
cpu device."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import cli
from tdflow.runtime.backends.cuda_status import cuda_status, find_nvcc

LIB = Path(__file__).resolve().parent.parent / "cuda" / "data" / "hqlib"
OPS = ("--ops", LIB / "hqerr.td", "--hooks", LIB / "hqerr_hooks.py")


def _program(tmp_path, op: str) -> Path:
    p = tmp_path / f"{op}.mlir"
    p.write_text('func.func @f(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {\n'
                 f'  %0 = "hqerr.{op}"(%x) : (tensor<3x5xf32>) -> tensor<3x5xf32>\n'
                 '  return %0 : tensor<3x5xf32>\n}\n')
    return p


@pytest.fixture
def need_gxx():
    import shutil

    if shutil.which("g++") is None:
        pytest.skip("g++ not installed (cudasim compiles with it)")


def test_a_user_body_that_does_not_compile(tmp_path, capsys, need_gxx):
    prog = _program(tmp_path, "bad_body")
    code, out, err = cli(capsys, "run", *OPS, prog, "--device", "cudasim")
    assert code == 1, err
    assert "undefined_scale" in err and "out0[i] = in0[i] * undefined_scale;" in err
    # the op whose code it is (the compiler only knows a mangled kernel name), with its types
    assert "failed on the generated code of hqerr.bad_body((3, 5):f32)" in err, err
    assert cli(capsys, "run", *OPS, prog, "--device", "cpu")[0] == 0  # the op itself is fine


def test_a_divergent_syncthreads(tmp_path, capsys, need_gxx):
    prog = _program(tmp_path, "divergent")
    code, out, err = cli(capsys, "run", *OPS, prog, "--device", "cudasim")
    assert code == 1, err
    assert "CudasimError" in err and "divergent __syncthreads" in err
    assert "4 of 32 threads wait" in err and f"{prog}:2:3" in err and "hqerr.divergent" in err


def test_an_op_without_a_gpu_kernel(tmp_path, capsys):
    prog = _program(tmp_path, "cpu_only")
    code, out, err = cli(capsys, "run", *OPS, prog, "--device", "cudasim")
    assert code == 1
    assert "no kernel for hqerr.cpu_only on device 'cudasim'" in err and "device=cpu" in err


def test_device_cuda_without_a_gpu(tmp_path, capsys):
    status = cuda_status()
    if status.available:
        pytest.skip("a usable GPU is here: --device cuda runs")
    code, out, err = cli(capsys, "run", *OPS, _program(tmp_path, "cpu_only"), "--device", "cuda")
    assert code == 1 and f"CUDA unavailable: {status.reason}" in err


@pytest.mark.parametrize("device", ["gpu", "CUDA", "cuda:0", ""])
def test_unknown_device_names(tmp_path, capsys, device):
    prog = _program(tmp_path, "cpu_only")
    code, out, err = cli(capsys, "run", *OPS, prog, "--device", device)
    # a usage error in the CLI's words: no "compile():" (a function the user never called)
    assert code == 2 and f"--device: unknown device '{device}'" in err
    assert "cpu, cuda, cudasim" in err and "compile()" not in err
    code, out, err = cli(capsys, "kernels", *OPS, prog, "--device", device)
    assert code in (1, 2) and f"'{device}'" in err and not out


def test_kernels_for_the_cpu_device_is_an_error(tmp_path, capsys):
    """``tdflow kernels --device cpu`` printed an empty table and exited 0."""
    if find_nvcc() is None:
        pytest.skip("nvcc not found: tdflow kernels stops before looking at --device")
    prog = _program(tmp_path, "cpu_only")
    code, out, err = cli(capsys, "kernels", *OPS, prog, "--device", "cpu")
    assert code == 2 and "kernels need a GPU device (cuda or cudasim), not 'cpu'" in err and not out


def test_nvcc_errors_quote_the_line_once_without_warnings(tmp_path, capsys):
    """nvcc's report of a user body's error was buried under a "#pragma once in main file"
    warning and one "declared but never referenced" warning per unused template constant, and
    quoted the bad line twice (nvcc prints it, and so did tdflow)."""
    if find_nvcc() is None:
        pytest.skip("nvcc not found")
    prog = _program(tmp_path, "bad_body")
    code, out, err = cli(capsys, "kernels", *OPS, prog)
    assert code == 1 and "failed on the generated code of hqerr.bad_body((3, 5):f32)" in err
    assert 'identifier "undefined_scale" is undefined' in err
    assert err.count("out0[i] = in0[i] * undefined_scale;") == 1, err
    assert "warning" not in err, err
