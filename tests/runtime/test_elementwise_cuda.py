"""CUDA C rendering of elementwise expressions: text, nvcc (sm_90 cubin) and the g++ shim.

Every op of ``ELEMENTWISE_OPS`` is rendered for each of its dtypes and wrapped in a
``__global__`` kernel; the file must compile with ``nvcc -arch=sm_90 -cubin`` (skipped when nvcc
is absent) and, through ``CUDASIM_SHIM``, with ``g++``; the g++ build is then run on the CPU and
its numbers are compared with the numpy renderer's (this is how ``cudasim`` works).
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess

import numpy as np
import pytest
from tdflow.dialect.element_types import INT_TYPES
from tdflow.dialect.formula.expr import Input, maximum, where
from tdflow.lowering.elementwise_cuda import C_TYPES, CUDASIM_SHIM, render_cuda
from tdflow.lowering.elementwise_numpy import render_numpy
from tdflow.lowering.elementwise_ops import ELEMENTWISE_OPS
from tdflow.runtime.backends.cuda_status import find_nvcc

ATTRS = {
    "tdflow.leaky_relu": {"alpha": 0.1}, "tdflow.leaky_relu_grad": {"alpha": 0.1},
    "tdflow.dropout_grad": {"scale": 2.0},
    "tdflow.scalar_add": {"has_float_operand": True, "float_operand": 1.5},
    "tdflow.scalar_mul": {"has_int_operand": True, "int_operand": 3},
    "tdflow.scalar_pow": {"has_int_operand": True, "int_operand": 2},
    "tdflow.scalar_div": {"has_float_operand": True, "float_operand": 4.0},
}
NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i1": np.bool_,
      **{n: np.dtype(t.numpy).type for n, t in INT_TYPES.items()}}


def _cases(include_bf16: bool):
    for d in ELEMENTWISE_OPS.values():
        for dt in sorted(d.dtypes):
            if dt == "bf16" and not include_bf16:
                continue
            in_dts = [dt] * d.arity
            if d.name == "tdflow.dropout_grad":
                in_dts = [dt, "i1"]
            yield d, dt, in_dts


def _kernel_source(d, dt, in_dts) -> tuple[str, str]:
    name = f"k_{d.mnemonic}_{dt}"
    expr = render_cuda(d.bind(ATTRS.get(d.name, {})), in_dts, dt,
                       names=[f"x{i}[i]" for i in range(len(in_dts))])
    params = ", ".join(f"const {C_TYPES[t]}* __restrict__ x{i}" for i, t in enumerate(in_dts))
    src = (f"__global__ void {name}({params}, {C_TYPES[dt]}* __restrict__ out, long n) {{\n"
           f"  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;\n"
           f"  if (i < n) out[i] = {expr};\n}}\n")
    return name, src


def test_rendered_text():
    x = Input(0)
    assert render_cuda(maximum(x, 0), ["f32"]) == (
        "([](const float a, const float b) -> float { return (a > b || a != a) ? a : b; }"
        "(x0, 0.0f))")
    assert render_cuda(maximum(x, 0), ["i64"]) == "((x0) > (0LL) ? (x0) : (0LL))"
    assert render_cuda(where(x > 0, x, x * 1.5), ["f64"]) == "((x0 > 0.0) ? x0 : (x0 * 1.5))"
    # with 0 < k <= 1 the select folds to max(x, x * k) (dialect.formula.expr._leaky_as_max)
    assert render_cuda(where(x > 0, x, x * 0.5), ["f64"]) == (
        "([](const double a, const double b) -> double { return (a > b || a != a) ? a : b; }"
        "(x0, (x0 * 0.5)))")
    gelu = render_cuda(ELEMENTWISE_OPS["tdflow.gelu"].bind(), ["f16"], "f16")
    assert gelu.startswith("__float2half(") and "erff(" in gelu and "__half2float(x0)" in gelu
    assert "erf(" in render_cuda(ELEMENTWISE_OPS["tdflow.gelu"].bind(), ["f64"])
    assert "__expf(" in render_cuda(ELEMENTWISE_OPS["tdflow.sigmoid"].bind(), ["f32"])
    assert "expf(" in render_cuda(ELEMENTWISE_OPS["tdflow.sigmoid"].bind(), ["f32"],
                                  fast_math=False)
    # integer division as the numpy kernels do it: x / 0 == 0, INT_MIN / -1 wraps (no trap)
    div = render_cuda(x / Input(1), ["i32", "i32"])
    assert "b == 0 ? (int32_t)0" in div and "(a / b)" in div and div.endswith("(x0, x1))")
    assert render_cuda(Input(0) * float("inf"), ["f32"]) == "(x0 * INFINITY)"
    assert render_cuda(Input(0) * -2.0, ["f64"]) == "(x0 * (-2.0))"


@pytest.fixture(scope="module")
def nvcc() -> str:
    path = find_nvcc()
    if path is None:
        pytest.skip("nvcc not found on PATH or under /usr/local/cuda/bin; CUDA compile check skipped")
    return path


def test_all_ops_compile_with_nvcc_sm90(nvcc, tmp_path):
    src = ["#include <cstdint>", "#include <cuda_fp16.h>", "#include <cuda_bf16.h>"]
    for d, dt, in_dts in _cases(include_bf16=True):
        src.append(_kernel_source(d, dt, in_dts)[1])
    cu = tmp_path / "elementwise.cu"
    cu.write_text("\n".join(src))
    r = subprocess.run([nvcc, "-arch=sm_90", "-cubin", "-o", str(tmp_path / "e.cubin"), str(cu)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    assert (tmp_path / "e.cubin").stat().st_size > 0


@pytest.fixture(scope="module")
def simlib(tmp_path_factory):
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ not found; cudasim compile check skipped")
    tmp = tmp_path_factory.mktemp("cudasim")
    (tmp / "cudasim.h").write_text(CUDASIM_SHIM)
    lines = ['#include "cudasim.h"']
    launchers = {}
    for d, dt, in_dts in _cases(include_bf16=False):
        name, src = _kernel_source(d, dt, in_dts)
        lines.append(src)
        args = ", ".join(f"(const {C_TYPES[t]}*)x{i}" for i, t in enumerate(in_dts))
        params = ", ".join(f"const void* x{i}" for i in range(len(in_dts)))
        lines.append(f'extern "C" void run_{name}({params}, void* out, long n) {{\n'
                     f"  tdf_launch((unsigned)((n + 63) / 64), 64u, {name}, {args}, "
                     f"({C_TYPES[dt]}*)out, n);\n}}\n")
        launchers[(d.name, dt)] = (f"run_{name}", in_dts)
    cpp = tmp / "kernels.cpp"
    cpp.write_text("\n".join(lines))
    so = tmp / "kernels.so"
    r = subprocess.run([gxx, "-std=c++17", "-O1", "-shared", "-fPIC", "-o", str(so), str(cpp)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    return ctypes.CDLL(str(so)), launchers


def _sample(dt, n, seed, positive=False, nonzero=False):
    rng = np.random.default_rng(seed)
    if dt == "i1":
        return rng.random(n) < 0.5
    if dt in INT_TYPES:  # unsigned types: small non-negative values (differences still wrap)
        v = rng.integers(1 if positive else (-9 if INT_TYPES[dt].signed else 0), 10, size=n)
        if nonzero:
            v[v == 0] = 2
        return v.astype(NP[dt])
    v = rng.normal(scale=2.0, size=n)
    if positive:
        v = np.abs(v) + 0.1
    if nonzero:
        v[np.abs(v) < 0.1] = 0.5
    return v.astype(NP[dt])


def test_g_plus_plus_build_matches_numpy(simlib):
    lib, launchers = simlib
    n = 100
    positive = {"tdflow.log", "tdflow.sqrt", "tdflow.scalar_pow", "tdflow.broadcast_pow"}
    nonzero = {"tdflow.reciprocal", "tdflow.broadcast_div"}
    for (op, dt), (fn, in_dts) in sorted(launchers.items()):
        d = ELEMENTWISE_OPS[op]
        xs = [np.ascontiguousarray(_sample(t, n, seed=i, positive=op in positive,
                                           nonzero=op in nonzero and i == 1 or op == "tdflow.reciprocal"))
              for i, t in enumerate(in_dts)]
        out = np.zeros(n, NP[dt])
        getattr(lib, fn)(*[ctypes.c_void_p(a.ctypes.data) for a in xs],
                         ctypes.c_void_p(out.ctypes.data), ctypes.c_long(n))
        want = render_numpy(d.bind(ATTRS.get(op, {})), in_dts, dt)(xs)
        if dt == "i1" or dt in INT_TYPES:
            np.testing.assert_array_equal(out, want, err_msg=f"{op} {dt}")
        else:
            tol = {"f16": 2e-3, "f32": 2e-6, "f64": 1e-13}[dt]
            np.testing.assert_allclose(out.astype(np.float64), want.astype(np.float64),
                                       rtol=tol, atol=tol, err_msg=f"{op} {dt}")
