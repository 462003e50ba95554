"""A user's hand-written CUDA kernel (register_kernel(..., device="cuda", source=BODY)) for an op
without a formula: its templated body (T, N, IN0_DIM1, ATTR_shift) runs on cudasim from Python
and from the CLI and equals the user's numpy kernel; it compiles with nvcc."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cuda_harness import need_gxx
from tdflow.lowering.cuda import TensorSpec
from tdflow.runtime.kernels.device import user_kernel_code

import tdflow

LIB = Path(__file__).parent / "data" / "culib"


@pytest.fixture(scope="module")
def ops():
    need_gxx()
    return tdflow.load_ops(str(LIB / "culib.td"), hooks=[str(LIB / "culib_hooks.py")])


def _text(shape, dt):
    t = "x".join(map(str, shape)) + "x" + dt
    return (f'func.func @f(%x: tensor<{t}>, %s: tensor<{shape[0]}x{dt}>) -> tensor<{t}> {{\n'
            f'  %0 = "culib.row_scale"(%x, %s) {{shift = 0.5 : f32}} : (tensor<{t}>, '
            f'tensor<{shape[0]}x{dt}>) -> tensor<{t}>\n  return %0 : tensor<{t}>\n}}')


@pytest.mark.parametrize("dt", ["f32", "f64", "i32"])
@pytest.mark.parametrize("shape", [(5, 7), (1, 1), (33, 130)])
def test_user_kernel_on_cudasim_equals_numpy(ops, dt, shape):
    rng = np.random.default_rng(1)
    npdt = {"f32": np.float32, "f64": np.float64, "i32": np.int32}[dt]
    x = (rng.standard_normal(shape) * 5).astype(npdt)
    s = (rng.standard_normal(shape[0]) * 3).astype(npdt)
    text = _text(shape, dt)
    got = tdflow.compile(text, device="cudasim", ops=ops)(x, s)
    want = tdflow.compile(text, ops=ops)(x, s)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6 if dt != "f64" else 1e-12)


def test_template_constants():
    code = user_kernel_code("u.op", "out0[0] = in0[0];", lambda i, o, a: (2, (8, 4)),
                            [TensorSpec((3, 4), "f16")], [TensorSpec((3, 4), "f16")],
                            {"flag": True, "k": 3, "alpha": 0.25, "name": "x"})
    src = code.source
    for want in ("typedef __half T;", "constexpr long long N = 12;", "IN0_DIM1 = 4;",
                 "constexpr int IN0_NDIM = 2;", "#define IN0_SHAPE {3, 4}",
                 "constexpr bool ATTR_flag = true;", "constexpr long long ATTR_k = 3LL;",
                 "constexpr double ATTR_alpha = 0.25;"):
        assert want in src, want
    assert "ATTR_name" not in src  # only bool, integer and float attributes
    (ln,) = code.launches
    assert ln.grid == (2, 1, 1) and ln.block == (8, 4, 1) and ln.args == ("in0", "out0")


def test_user_kernel_from_the_cli(tmp_path):
    need_gxx()
    out = {}
    for device in ("cpu", "cudasim"):
        path = tmp_path / f"{device}.npz"
        done = subprocess.run([sys.executable, "-m", "tdflow", "run", "culib.mlir", "--ops",
                               "culib.td", "--hooks", "culib_hooks.py", "--device", device,
                               "--output", str(path)], cwd=LIB, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        out[device] = np.load(path)["result0"]
    np.testing.assert_allclose(out["cudasim"], out["cpu"], rtol=1e-6)
    done = subprocess.run([sys.executable, "-m", "tdflow", "lower", "culib.mlir", "--ops",
                           "culib.td", "--hooks", "culib_hooks.py", "--emit", "cuda"], cwd=LIB,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "launch 0: culib.row_scale at culib.mlir:2:3" in done.stdout
    assert "(T)ATTR_shift" in done.stdout


def test_user_kernel_compiles_with_nvcc(ops):
    from tdflow.runtime.backends.cuda_status import find_nvcc

    if find_nvcc() is None:
        pytest.skip("nvcc not found")
    from tdflow.dialect.ir import parse_module
    from tdflow.runtime.backends.kernel_build import compile_cubin
    from tdflow.runtime.compiled import lower

    from tdflow.commands.lower import cuda_source

    srcs = []
    for dt in ("f32", "f64", "i32"):
        m = parse_module(_text((5, 7), dt), "<t>")
        srcs.append(cuda_source(lower(m, "cuda", ops=ops).plans.values(), "cuda", ops))
    for s in srcs:
        assert compile_cubin(s, flags=("-Xptxas", "-warn-spills,-Werror"))[:4] == b"\x7fELF"


BAD_TD = """include "tdflow/Base.td"
def Bad_Dialect : Dialect { let name = "cubad"; }
def Bad_NegOp : TDF_Op<"neg", [NoMemoryEffect]> {
  let opDialect = Bad_Dialect;
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let has_logical_tensor_desc_infer_fn = 1;
  let has_data_type_infer_fn = 1;
}
"""
BAD_HOOKS = '''from tdflow.dialect.hooks import infer_data_type, infer_logical_tensor_desc
from tdflow.runtime.kernels.registry import register_kernel


@infer_logical_tensor_desc("cubad.neg")
def shape(ctx):
    ctx.set_output_shape("y", ctx.input_shape("x"))


@infer_data_type("cubad.neg")
def dtype(ctx):
    ctx.set_output_dtype("y", ctx.input_dtype("x"))


NEG_CU = """
for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < N;
     i += (long long)gridDim.x * blockDim.x) {
  out0[i] = -in0[i] * ATTR_scael;
}
"""


@register_kernel("cubad.neg", device="cuda", dtypes=("f32",), source=NEG_CU)
def neg_launch(ins, outs, attrs):
    return 1, 128
'''
BAD_PROG = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "cubad.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


@pytest.mark.parametrize("compiler", ["g++", "nvcc"])
def test_a_compiler_error_points_into_the_hooks_file(tmp_path, compiler):
    """Issue 24: an error in a user's CUDA body is reported at its line in the hooks file
    (``#line``), not in the generated translation unit."""
    from tdflow.runtime.backends.cuda_status import find_nvcc

    if compiler == "g++":
        need_gxx()
        args = ["run", "--device", "cudasim"]
    else:
        if find_nvcc() is None:
            pytest.skip("nvcc not found")
        args = ["kernels", "--device", "cuda"]
    (tmp_path / "bad.td").write_text(BAD_TD)
    hooks = tmp_path / "bad_hooks.py"
    hooks.write_text(BAD_HOOKS)
    (tmp_path / "p.mlir").write_text(BAD_PROG)
    done = subprocess.run([sys.executable, "-m", "tdflow", *args, "p.mlir", "--ops", "bad.td",
                           "--hooks", str(hooks)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "TDFLOW_NO_CACHE": "1"})
    assert done.returncode == 1 and "Traceback" not in done.stderr
    line = BAD_HOOKS.splitlines().index("  out0[i] = -in0[i] * ATTR_scael;") + 1
    # g++ writes FILE:LINE:COL, nvcc FILE(LINE)
    assert (f"{hooks}:{line}:" in done.stderr or f"{hooks}({line})" in done.stderr), done.stderr
    assert "ATTR_scael" in done.stderr
