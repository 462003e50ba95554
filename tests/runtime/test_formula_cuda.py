"""CUDA C for a user's formula ops: rendered, compiled for ``sm_90`` and run through cudasim.

A user library (dialect ``cu``) gives its ops' math only as ``formula`` fields: a select over a
comparison with an attribute, a predicate (``i1`` result), C's remainder with an integer
attribute, and ``pow`` between casts. Each op's bound expression is rendered with
``render_cuda`` and wrapped in a ``__global__`` kernel; the file must compile with
``nvcc -arch=sm_90 -cubin`` (skipped when nvcc is absent) and, through ``CUDASIM_SHIM``, with
``g++``, whose build runs on the CPU against the derived numpy kernel (called eagerly through
``lib.functional``). Then a program mixing ``cu`` and standard ops is lowered; the fused op's
expression is rendered, compiled the same two ways, and checked against the compiled numpy
program.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from collections.abc import Sequence

import numpy as np
import pytest
from tdflow.dialect.element_types import INT_TYPES
from tdflow.dialect.formula.expr import Expr
from tdflow.dialect.formula.text import parse_expr
from tdflow.dialect.formula.types import default_out_dtype
from tdflow.dialect.ir import parse_module
from tdflow.dialect.ir.attrs import to_python
from tdflow.lowering.elementwise_cuda import C_TYPES, CUDASIM_SHIM, render_cuda
from tdflow.lowering.elementwise_ops import elementwise_def
from tdflow.lowering.ir_access import FUSED_OP
from tdflow.runtime.backends.cuda_status import find_nvcc
from tdflow.runtime.compiled import lower

import tdflow

CU_OPS = '''include "tdflow/Base.td"

def Cu_Dialect : Dialect { let name = "cu"; }
class Cu_Op<string mnemonic, list<Trait> traits = []> : TDF_Op<mnemonic, traits> {
  let opDialect = Cu_Dialect;
}

// select over a comparison, with a float attribute
def Cu_GatedOp : Cu_Op<"gated", [NoMemoryEffect, Elementwise]> {
  let input = (ins TDF_Tensor:$x, TDF_Tensor:$y);
  let output = (outs TDF_Tensor:$z);
  let attrs = (ins DefaultValuedAttr<F32Attr, "0.25">:$alpha);
  let formula = [{ x > y ? x - y : alpha * (y - x) }];
}

// a predicate: its result is i1 whatever its operands are
def Cu_NearOp : Cu_Op<"near", [NoMemoryEffect, Elementwise]> {
  let input = (ins TDF_Tensor:$x, TDF_Tensor:$y);
  let output = (outs TDF_Tensor:$close);
  let attrs = (ins DefaultValuedAttr<F32Attr, "0.5">:$tol);
  let formula = [{ abs(x - y) <= tol && !(x < -2.0) }];
}

// C's remainder (fmod for floats, truncated for integers) by an integer attribute
def Cu_WrapOp : Cu_Op<"wrap", [NoMemoryEffect, Elementwise]> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "3">:$period);
  let formula = [{ x % period }];
}

// pow between casts: computed in f64, truncated to i32
def Cu_PowCastOp : Cu_Op<"pow_cast", [NoMemoryEffect, Elementwise]> {
  let input = (ins TDF_Tensor:$x, TDF_Tensor:$e);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<F64Attr, "1.5">:$scale);
  let formula = [{ i32(pow(f64(abs(x)) + 1.0, f64(e)) * scale) }];
}
'''

# Attribute values the kernels are built with (defaults for what is not given).
ATTRS = {"cu.gated": {"alpha": 0.5}, "cu.near": {}, "cu.wrap": {"period": -4},
         "cu.pow_cast": {"scale": 2.0}}
NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i1": np.bool_,
      **{n: np.dtype(t.numpy).type for n, t in INT_TYPES.items()}}
HEADERS = ["#include <cstdint>", "#include <cuda_fp16.h>", "#include <cuda_bf16.h>"]


# ---- kernel text, builds and launches ----------------------------------------------------------


def kernel_source(name: str, expr: Expr, in_dts: Sequence[str], out_dt: str,
                  index: Sequence[str] | None = None) -> str:
    """A ``__global__`` kernel writing ``expr`` of its inputs to ``out`` at every ``i < n``;
    ``index[k]`` is the C index of input ``k`` (``i`` unless it is broadcast)."""
    index = index or ["i"] * len(in_dts)
    body = render_cuda(expr, in_dts, out_dt, names=[f"x{k}[{ix}]" for k, ix in enumerate(index)])
    params = ", ".join(f"const {C_TYPES[t]}* __restrict__ x{k}" for k, t in enumerate(in_dts))
    return (f"__global__ void {name}({params}, {C_TYPES[out_dt]}* __restrict__ out, long n) {{\n"
            f"  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"  if (i < n) out[i] = {body};\n}}\n")


def launcher_source(name: str, in_dts: Sequence[str], out_dt: str) -> str:
    """An ``extern "C"`` entry that runs kernel ``name`` through cudasim's ``tdf_launch``."""
    params = ", ".join(f"const void* x{k}" for k in range(len(in_dts)))
    args = ", ".join(f"(const {C_TYPES[t]}*)x{k}" for k, t in enumerate(in_dts))
    return (f'extern "C" void run_{name}({params}, void* out, long n) {{\n'
            f"  tdf_launch((unsigned)((n + 63) / 64), 64u, {name}, {args}, "
            f"({C_TYPES[out_dt]}*)out, n);\n}}\n")


def compile_cubin(nvcc: str, kernels: Sequence[str], where) -> None:
    """``nvcc -arch=sm_90 -cubin`` of the kernels; fails the test with nvcc's message."""
    cu = where / "kernels.cu"
    cu.write_text("\n".join([*HEADERS, *kernels]))
    cubin = where / "kernels.cubin"
    r = subprocess.run([nvcc, "-arch=sm_90", "-cubin", "-o", str(cubin), str(cu)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    assert cubin.stat().st_size > 0


def build_cudasim(kernels: Sequence[tuple[str, str, Sequence[str], str]], where) -> ctypes.CDLL:
    """The kernels ``(name, source, in_dts, out_dt)`` built with g++ and the cudasim shim."""
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ not found; the cudasim build is skipped")
    (where / "cudasim.h").write_text(CUDASIM_SHIM)
    lines = ['#include "cudasim.h"']
    for name, src, in_dts, out_dt in kernels:
        lines += [src, launcher_source(name, in_dts, out_dt)]
    cpp, so = where / "kernels.cpp", where / "kernels.so"
    cpp.write_text("\n".join(lines))
    r = subprocess.run([gxx, "-std=c++17", "-O1", "-shared", "-fPIC", "-o", str(so), str(cpp)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    return ctypes.CDLL(str(so))


def run_cudasim(lib: ctypes.CDLL, name: str, xs: Sequence[np.ndarray], out_dt: str,
                n: int) -> np.ndarray:
    """Launch ``run_<name>`` over ``n`` output elements; the output array."""
    xs = [np.ascontiguousarray(x) for x in xs]
    out = np.zeros(n, NP[out_dt])
    getattr(lib, f"run_{name}")(*[ctypes.c_void_p(x.ctypes.data) for x in xs],
                                ctypes.c_void_p(out.ctypes.data), ctypes.c_long(n))
    return out


def assert_matches(got: np.ndarray, want: np.ndarray, dt: str, what: str) -> None:
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    if dt == "i1" or dt in INT_TYPES:
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        tol = {"f16": 2e-3, "f32": 2e-6, "f64": 1e-13}[dt]
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol,
                                   atol=tol, err_msg=what)


# ---- the user library, op by op -----------------------------------------------------------------


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    path = tmp_path_factory.mktemp("cu") / "cu.td"
    path.write_text(CU_OPS)
    return tdflow.load_ops(path)


@pytest.fixture(scope="module")
def nvcc() -> str:
    path = find_nvcc()
    if path is None:
        pytest.skip("nvcc not found on PATH, under $CUDA_HOME/bin or /usr/local/cuda/bin; the "
                    "sm_90 compile check is skipped")
    return path


def op_cases(lib, include_bf16: bool):
    """``(op name, kernel name, bound expression, input dtypes, result dtype)`` for every
    dtype each ``cu`` op's formula admits."""
    for op in lib.user_ops():
        d = elementwise_def(op)
        expr = d.bind(ATTRS[op.name])
        for dt in sorted(d.dtypes):
            if dt == "bf16" and not include_bf16:
                continue
            in_dts = [dt] * d.arity
            yield op.name, f"k_{op.mnemonic}_{dt}", expr, in_dts, default_out_dtype(expr, in_dts)


def test_the_library_covers_what_it_claims(lib):
    cases = {(name, tuple(ins)): out for name, _, _, ins, out in op_cases(lib, True)}
    assert cases[("cu.near", ("f32", "f32"))] == "i1"  # a predicate
    assert cases[("cu.pow_cast", ("f64", "f64"))] == "i32"  # the cast decides
    assert cases[("cu.wrap", ("i32",))] == "i32" and ("cu.wrap", ("f16",)) in cases
    assert ("cu.gated", ("i32", "i32")) not in cases  # a float attribute: floats only
    # the rendered text uses the CUDA spellings
    text = {name: render_cuda(expr, ins, out) for name, _, expr, ins, out in op_cases(lib, False)
            if ins[0] in ("f32", "i64")}
    assert "fmodf(" in text["cu.wrap"] or "% b" in text["cu.wrap"]
    assert "pow(" in text["cu.pow_cast"] and "((int32_t)(" in text["cu.pow_cast"]
    assert " ? " in text["cu.gated"] and "fabsf(" in text["cu.near"]


def test_every_op_compiles_with_nvcc_for_sm90(lib, nvcc, tmp_path):
    kernels = [kernel_source(k, expr, ins, out) for _, k, expr, ins, out in op_cases(lib, True)]
    compile_cubin(nvcc, kernels, tmp_path)


def _sample(dt: str, shape, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dt in INT_TYPES:  # unsigned types: small non-negative values (differences still wrap)
        return rng.integers(-20 if INT_TYPES[dt].signed else 0, 21, size=shape).astype(NP[dt])
    return rng.normal(scale=2.0, size=shape).astype(NP[dt])


def test_every_op_on_cudasim_matches_its_numpy_kernel(lib, tmp_path):
    cases = list(op_cases(lib, include_bf16=False))
    sim = build_cudasim([(k, kernel_source(k, expr, ins, out), ins, out)
                         for _, k, expr, ins, out in cases], tmp_path)
    n = 257
    for name, k, _, ins, out in cases:
        xs = [_sample(t, n, seed=j) for j, t in enumerate(ins)]
        if name == "cu.pow_cast":  # keep pow in i32's range
            xs = [np.clip(xs[0], -3, 3), np.clip(xs[1], -2, 2)]
        if name == "cu.near":  # some exact and near hits
            xs[1][::3] = xs[0][::3]
            xs[1][1::3] = xs[0][1::3] + np.asarray(0.25, xs[0].dtype)
        fn = getattr(lib.functional, name.split(".", 1)[1])
        want = fn(*[tdflow.tensor(x) for x in xs], **ATTRS[name]).numpy()
        got = run_cudasim(sim, k, xs, out, n)
        assert_matches(got, want, out, f"{name} on {ins}")


# ---- a fused program mixing cu and standard ops --------------------------------------------------

PROGRAM = '''func.func @f(%x: tensor<64x32xf32>, %y: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<64x32xf32> {
  %0 = "cu.gated"(%x, %y) {alpha = 0.5 : f32} : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  %1 = "cu.wrap"(%0) {period = 2 : si64} : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %2 = "tdflow.tanh"(%1) : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %3 = "tdflow.broadcast_mul"(%2, %b) : (tensor<64x32xf32>, tensor<32xf32>) -> tensor<64x32xf32>
  %4 = "tdflow.leaky_relu"(%3) {alpha = 0.1 : f32} : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %5 = "tdflow.broadcast_add"(%4, %y) : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  return %5 : tensor<64x32xf32>
}
'''
FUSED_OPS = ["cu.gated", "cu.wrap", "tdflow.tanh", "tdflow.broadcast_mul", "tdflow.leaky_relu",
             "tdflow.broadcast_add"]


def broadcast_index(shape: Sequence[int], out: Sequence[int]) -> str:
    """C index into a row-major input of ``shape`` broadcast to ``out`` at flat output ``i``."""
    shape = (1,) * (len(out) - len(shape)) + tuple(shape)
    if tuple(shape) == tuple(out):
        return "i"
    terms, stride, in_stride = [], 1, 1
    for d in reversed(range(len(out))):
        if shape[d] != 1:
            terms.append(f"((i / {stride}L) % {out[d]}L) * {in_stride}L")
            in_stride *= shape[d]
        stride *= out[d]
    return " + ".join(terms) or "0"


@pytest.fixture(scope="module")
def fused(lib):
    """``(expression, input dtypes, input shapes, output type, argument index of each
    operand)`` of the one fused op."""
    result = lower(parse_module(PROGRAM, "mixed.mlir"), ops=lib)
    ops = [op for f in result.module for op in f.body if op.name == FUSED_OP]
    assert len(ops) == 1, [op.name for f in result.module for op in f.body]
    (op,) = ops
    assert list(to_python(op.attributes["ops"])) == FUSED_OPS
    expr = parse_expr(to_python(op.attributes["expr"]))
    ins = [v.type for v in op.operands]
    args = list(result.module["f"].args)
    assert all(v in args for v in op.operands)  # every producer was absorbed
    return (expr, [t.dtype for t in ins], [t.shape for t in ins], op.results[0].type,
            [args.index(v) for v in op.operands])


def _fused_kernel(fused) -> tuple[str, str, list[str], str]:
    expr, in_dts, shapes, out_t, _ = fused
    index = [broadcast_index(s, out_t.shape) for s in shapes]
    return "k_fused", kernel_source("k_fused", expr, in_dts, out_t.dtype, index), in_dts, \
        out_t.dtype


def test_the_fused_program_compiles_with_nvcc_for_sm90(fused, nvcc, tmp_path):
    compile_cubin(nvcc, [_fused_kernel(fused)[1]], tmp_path)


def test_the_fused_program_on_cudasim_matches_the_compiled_numpy_program(lib, fused, tmp_path):
    name, src, in_dts, out_dt = _fused_kernel(fused)
    sim = build_cudasim([(name, src, in_dts, out_dt)], tmp_path)
    rng = np.random.default_rng(7)
    x = rng.normal(scale=2.0, size=(64, 32)).astype(np.float32)
    y = rng.normal(scale=2.0, size=(64, 32)).astype(np.float32)
    b = rng.uniform(-3.0, 3.0, size=32).astype(np.float32)
    f = tdflow.compile(parse_module(PROGRAM, "mixed.mlir"), ops=lib)
    assert [launch.kernel for launch in f.plan.launches] == ["cpu.fused_elementwise"]
    want = np.asarray(f(x, y, b))
    # the fused op's operands are program arguments, each once, in the op's order
    args = [(x, y, b)[k] for k in fused[4]]
    out_t = fused[3]
    got = run_cudasim(sim, name, args, out_dt, x.size).reshape(out_t.shape)
    assert_matches(got, want, out_dt, "fused program")
    # and the reference itself is right: the program in plain numpy
    g = np.where(x > y, x - y, np.float32(0.5) * (y - x))
    h = np.tanh(np.fmod(g, np.float32(2))) * b
    np.testing.assert_allclose(want, np.where(h > 0, h, np.float32(0.1) * h) + y, rtol=1e-5,
                               atol=1e-6)
