"""Generated matmul / matmul_bias / batch_matmul kernels on cudasim equal the numpy backend: every dtype the
CPU kernel admits (f32, f64, f16, i8, i32, i64; bf16 through raw 16-bit buffers), all four
transposes, alpha, ``_add_to_output``, every tile configuration (SIMT 32/64/128, wmma 32/64),
split-K, tails of every tile, broadcast batch dims, TF32; then all compile with nvcc."""

from __future__ import annotations

import numpy as np
import pytest
from cuda_harness import GENERATED, check, nvcc_compile_all, prebuild, rand
from tdflow.lowering.cuda import TensorSpec, generate
from tdflow.lowering.cuda._gemm import gemm_tile
from tdflow.runtime.backends import get_backend

MM = "tdflow.matmul"
BMM = "tdflow.batch_matmul"
MMB = "tdflow.matmul_bias"  # made by the CPU's fuse-elementwise; the GPU kernel equals it too

# (m, k, n): small tiles with tails; medium (64x64) tiles; large (128x128) tiles; split-K;
# a single partial tile
SHAPES = {"small": (70, 40, 50), "medium": (65, 17, 66), "large": (130, 9, 129),
          "split": (8, 1100, 9), "tiny": (5, 3, 7)}


def _mm(dt: str, shape: str, ta: bool = False, tb: bool = False, alpha: float = 1.0,
        add: bool = False, seed: int = 0) -> tuple[str, list, dict]:
    m, k, n = SHAPES[shape]
    a = rand((k, m) if ta else (m, k), dt, seed=seed + 1)
    b = rand((n, k) if tb else (k, n), dt, seed=seed + 2)
    ins = [a, b] + ([rand((m, n), dt, seed=seed + 3)] if add else [])
    return MM, ins, {"transpose_a": ta, "transpose_b": tb, "alpha": alpha}


def _cases() -> list[tuple[str, list, dict]]:
    out = []
    for dt in ("f32", "f16"):  # SIMT and tensor cores: every transpose, every tile
        out += [_mm(dt, "small", ta, tb) for ta in (False, True) for tb in (False, True)]
        out += [_mm(dt, "medium", ta, tb, alpha=0.5) for ta in (False, True) for tb in (False, True)]
        out += [_mm(dt, "large"), _mm(dt, "split", add=True, alpha=-1.25), _mm(dt, "tiny")]
    for dt in ("f64", "i8", "i32", "i64"):  # i8 sums of 40 products wrap as numpy's do
        out += [_mm(dt, "small", True, False, alpha=2.0), _mm(dt, "medium", False, True, add=True),
                _mm(dt, "split"), _mm(dt, "tiny", True, True)]
    out.append(_mm("i32", "large", False, False))
    # split-K in integers, whose wrapping sums are exact in any order (a float bias cancelling
    # a product would magnify the split's other summation order past the harness's rtol)
    for dt, shape, ta, tb in (("f32", "small", False, True), ("f32", "large", True, False),
                              ("f16", "medium", False, False), ("f64", "tiny", True, True),
                              ("i8", "split", False, False), ("i32", "small", True, True)):
        _, ins, attrs = _mm(dt, shape, ta, tb, alpha=0.5 if dt != "i8" else 1.0, seed=9)
        out.append((MMB, [*ins, rand((SHAPES[shape][2],), dt, seed=10)], attrs))
    for dt in ("f32", "f16", "f64", "i32"):
        a, b = rand((3, 2, 7, 5), dt, seed=4), rand((3, 2, 5, 6), dt, seed=5)
        out.append((BMM, [a, b, rand((3, 2, 7, 6), dt, seed=6)], {"alpha": 1.5}))
        out.append((BMM, [rand((2, 9, 66), dt, seed=7), rand((2, 70, 9), dt, seed=8)],
                    {"transpose_a": True, "transpose_b": True}))
    return out


CASES = _cases()


@pytest.fixture(scope="module", autouse=True)
def _compiled_together() -> None:
    prebuild(CASES)


@pytest.mark.parametrize("case", range(len(CASES)),
                         ids=[f"{c[0].split('.')[1]}-{c[1][0].dtype}-{'x'.join(map(str, c[1][0].shape))}"
                              f"-{i}" for i, c in enumerate(CASES)])
def test_matches_numpy(case: int) -> None:
    op, ins, attrs = CASES[case]
    check(op, ins, attrs)


def test_every_tile_configuration_is_exercised() -> None:
    want = {"small", "medium", "large", "wmma32", "wmma64"}
    names = {"float32": "f32", "float16": "f16", "float64": "f64", "int8": "i8", "int32": "i32",
             "int64": "i64"}
    got = set()
    for _, ins, attrs in CASES:
        a, b = ins[0], ins[1]
        m = a.shape[-1] if attrs.get("transpose_a") else a.shape[-2]
        n = b.shape[-2] if attrs.get("transpose_b") else b.shape[-1]
        got.add(gemm_tile(names[a.dtype.name], m, n))
    assert got == want
    # split-K: a partial-sum launch and its fixed-order reduction
    m, k, n = SHAPES["split"]
    code = generate(MM, [TensorSpec((m, k), "f32"), TensorSpec((k, n), "f32")],
                    [TensorSpec((m, n), "f32")], {"alpha": 1.0})
    assert len(code.launches) == 2 and code.launches[0].grid[2] > 1 and code.scratch


def test_batch_dims_broadcast() -> None:
    """The CPU kernel broadcasts batch dims numpy-style (the op's hook is stricter): so does
    the generated one."""
    from tdflow.runtime.kernels.linalg import batch_matmul

    sim = get_backend("cudasim")
    a, b = rand((3, 1, 7, 5), seed=1), rand((4, 5, 6), seed=2)
    attrs = {"transpose_a": False, "transpose_b": False, "alpha": 1.0}
    want = batch_matmul(attrs, [a, b], [None])[0]
    got = sim.run_op(BMM, attrs, [a, b], [np.empty((3, 4, 7, 6), np.float32)])[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bits, round to nearest even (as __float2bfloat16)."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def _from_bf16(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


@pytest.mark.parametrize("ta,tb,shape", [(False, False, "small"), (True, True, "medium"),
                                         (False, True, "split")])
def test_bf16_tensor_cores(ta: bool, tb: bool, shape: str) -> None:
    """bf16 tensors are f32 arrays on the CPU, so the harness cannot hold them: run the
    generated kernel on raw 16-bit buffers against numpy on the same bf16 values, rounded once
    (the products are exact in f32; only the summation order differs, so 1 bf16 ulp, 2^-8)."""
    m, k, n = SHAPES[shape]
    a = _to_bf16(rand((k, m) if ta else (m, k), seed=11))
    b = _to_bf16(rand((n, k) if tb else (k, n), seed=12))
    c = _to_bf16(rand((m, n), seed=13))
    attrs = {"transpose_a": ta, "transpose_b": tb, "alpha": 0.5}
    code = generate(MM, [TensorSpec(a.shape, "bf16"), TensorSpec(b.shape, "bf16"),
                         TensorSpec(c.shape, "bf16")], [TensorSpec((m, n), "bf16")], attrs)
    GENERATED.append(code)
    out = get_backend("cudasim").run(code, [a, b, c], [np.empty((m, n), np.uint16)])[0]
    fa, fb = _from_bf16(a), _from_bf16(b)
    want = ((fa.T if ta else fa) @ (fb.T if tb else fb)) * np.float32(0.5) + _from_bf16(c)
    np.testing.assert_allclose(_from_bf16(out), _from_bf16(_to_bf16(want)), rtol=2 ** -8,
                               atol=2 ** -8 * float(np.abs(want).max()) * 1e-2)


def _tf32(x: np.ndarray) -> np.ndarray:
    """float32 rounded to TF32 (10 mantissa bits, nearest even), as __float_to_tf32."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0xFFF + ((u >> 13) & 1)) & ~np.uint64(0x1FFF)).astype(np.uint32).view(np.float32)


def _f32_product(shape: str, ta: bool, tb: bool, seed: int):
    """Random f32 operands of a SHAPES product, its result's shape, and a thunk generating its
    code (the switches below are read when code is generated)."""
    m, k, n = SHAPES[shape]
    a = rand((k, m) if ta else (m, k), seed=seed)
    b = rand((n, k) if tb else (k, n), seed=seed + 1)
    attrs = {"transpose_a": ta, "transpose_b": tb, "alpha": 1.0}
    specs = [TensorSpec(a.shape, "f32"), TensorSpec(b.shape, "f32")], [TensorSpec((m, n), "f32")]

    return a, b, (m, n), lambda: generate(MM, *specs, attrs)


@pytest.mark.parametrize("ta,tb,shape", [(False, False, "medium"), (True, True, "small")])
def test_tf32_switch(monkeypatch: pytest.MonkeyPatch, ta: bool, tb: bool, shape: str) -> None:
    """TDFLOW_CUDA_TF32=1 (read when code is generated) puts f32 GEMMs on TF32 tensor cores:
    the result is then the f32 sum of the TF32-rounded operands' products."""
    a, b, (m, n), gen = _f32_product(shape, ta, tb, seed=21)
    plain = gen()
    monkeypatch.setenv("TDFLOW_CUDA_TF32", "1")
    code = gen()
    assert code.source != plain.source and "precision::tf32" in code.source
    GENERATED.append(code)
    out = get_backend("cudasim").run(code, [a, b], [np.empty((m, n), np.float32)])[0]
    ra, rb = _tf32(a).astype(np.float64), _tf32(b).astype(np.float64)
    want = (ra.T if ta else ra) @ (rb.T if tb else rb)
    # the products of TF32 values are exact in f32; what is left is f32 summation (K <= 40)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    assert np.abs(out - a_b(a, b, ta, tb)).max() > 0  # TF32 really rounded the operands


@pytest.mark.parametrize("ta,tb,shape", [(False, False, "large"), (True, False, "medium"),
                                         (False, True, "small"), (True, True, "split")])
def test_simt_vec4_layout_gives_the_same_bits(monkeypatch: pytest.MonkeyPatch, ta: bool,
                                               tb: bool, shape: str) -> None:
    """f32 micro-tiles lie in float4 runs (the default) or strided (TDFLOW_CUDA_SIMT_VEC4=0):
    other elements per thread, the same sums in the same order, so the same bits (tails and
    split-K too)."""
    a, b, (m, n), gen = _f32_product(shape, ta, tb, seed=31)
    vec = gen()
    monkeypatch.setenv("TDFLOW_CUDA_SIMT_VEC4", "0")
    plain = gen()
    GENERATED.append(plain)
    assert vec.source != plain.source and "float4" in vec.source
    sim = get_backend("cudasim")
    want = sim.run(plain, [a, b], [np.empty((m, n), np.float32)])[0]
    got = sim.run(vec, [a, b], [np.empty((m, n), np.float32)])[0]
    np.testing.assert_array_equal(got, want)
    ref = a_b(a, b, ta, tb)  # and both are the product (f32 sums over K up to 1100)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5 * float(np.abs(ref).max()))


def a_b(a: np.ndarray, b: np.ndarray, ta: bool, tb: bool) -> np.ndarray:
    return (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)


def test_all_compile_with_nvcc() -> None:
    # runs last in this module: every kernel the tests above generated, in one nvcc call
    report = nvcc_compile_all()
    assert "Compiling entry function" in report
