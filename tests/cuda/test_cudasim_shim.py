"""The simulator's CUDA semantics (lowering/cuda/cudasim_shim.h), kernel by kernel.

Hand-written kernels exercise what generated code relies on: block barriers with shared memory,
every warp shuffle (with widths), ``__syncwarp``, 2-D/3-D blocks and grids, atomics, and the
divergent-barrier diagnostics. Each kernel is also compiled by nvcc for sm_90 (skipped without
nvcc), so the simulator is only ever asked to run real CUDA C.
"""

from __future__ import annotations

import numpy as np
import pytest
from cuda_harness import need_gxx, nvcc_compile_all
from tdflow.lowering.cuda.code import KernelCode, LaunchSpec, uniquified
from tdflow.runtime.backends import get_backend
from tdflow.runtime.backends.cudasim import CudasimError

SOURCE = r"""
// reverse each block's 128 values through shared memory: needs the barrier between the phases
extern "C" __global__ void reverse(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float tile[128];
  const int t = threadIdx.x, base = blockIdx.x * 128;
  tile[t] = x[base + t];
  __syncthreads();
  y[base + t] = tile[127 - t];
}
// out[lane] for every shuffle flavour, one warp per 32 outputs of each
extern "C" __global__ void shuffles(const int* __restrict__ x, int* __restrict__ y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int n = gridDim.x * blockDim.x;
  int v = x[i];
  y[i] = __shfl_down_sync(0xffffffffu, v, 3);
  y[n + i] = __shfl_up_sync(0xffffffffu, v, 5);
  y[2 * n + i] = __shfl_xor_sync(0xffffffffu, v, 6);
  y[3 * n + i] = __shfl_sync(0xffffffffu, v, 7);
  y[4 * n + i] = __shfl_down_sync(0xffffffffu, v, 2, 8);
  y[5 * n + i] = __shfl_sync(0xffffffffu, v, 1, 16);
  __syncwarp();
  y[6 * n + i] = tdf_warp_sum(v);
}
extern "C" __global__ void block_sum(const double* __restrict__ x, double* __restrict__ y) {
  __shared__ double scratch[32];
  double v = x[blockIdx.x * blockDim.x + threadIdx.x];
  double s = tdf_block_sum(v, scratch);
  double m = tdf_block_max(v, scratch);
  if (threadIdx.x == 0) { y[2 * blockIdx.x] = s; y[2 * blockIdx.x + 1] = m; }
}
// 3-D indices: every (block, thread) coordinate writes its own linear id
extern "C" __global__ void coords(int* __restrict__ y) {
  const int bx = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const int tx = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int nt = blockDim.x * blockDim.y * blockDim.z;
  y[bx * nt + tx] = threadIdx.x + 10 * threadIdx.y + 100 * threadIdx.z + 1000 * blockIdx.x
                    + 10000 * blockIdx.y + 100000 * blockIdx.z;
}
extern "C" __global__ void histogram(const int* __restrict__ x, int* __restrict__ y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&y[x[i]], 1);
}
extern "C" __global__ void early_exit(const float* __restrict__ x, float* __restrict__ y) {
  if (threadIdx.x < 5) return;  // a bug: these threads never reach the barrier
  __syncthreads();
  y[threadIdx.x] = x[threadIdx.x];
}
extern "C" __global__ void early_exit_warp(const float* __restrict__ x, float* __restrict__ y) {
  if (threadIdx.x % 32 < 4) return;
  float v = __shfl_down_sync(0xffffffffu, x[threadIdx.x], 1);
  y[threadIdx.x] = v;
}
"""


def _code(kernel: str, grid, block, args) -> KernelCode:
    return uniquified(KernelCode("test", SOURCE, (LaunchSpec(kernel, grid, block, args),)),
                       "test", [], [])


@pytest.fixture(scope="module")
def sim():
    need_gxx()
    return get_backend("cudasim")


def test_block_barrier_with_shared_memory(sim) -> None:
    x = np.arange(512, dtype=np.float32)
    y = np.empty_like(x)
    sim.run(_code("reverse", 4, 128, ("in0", "out0")), [x], [y])
    np.testing.assert_array_equal(y, x.reshape(4, 128)[:, ::-1].reshape(-1))


def test_warp_shuffles(sim) -> None:
    n = 64
    x = (np.arange(n, dtype=np.int32) * 7 + 3) % 101
    y = np.empty(7 * n, np.int32)
    sim.run(_code("shuffles", 2, 32, ("in0", "out0")), [x], [y])
    lane = np.arange(n) % 32
    warp0 = np.arange(n) - lane
    down = np.where(lane + 3 < 32, x[np.minimum(np.arange(n) + 3, n - 1)], x)
    up = np.where(lane >= 5, x[np.maximum(np.arange(n) - 5, 0)], x)
    xor = x[warp0 + (lane ^ 6)]
    bcast = x[warp0 + 7]
    seg8 = lane % 8
    down8 = np.where(seg8 + 2 < 8, x[np.minimum(np.arange(n) + 2, n - 1)], x)
    sub16 = x[warp0 + (lane // 16) * 16 + 1]
    wsum = np.repeat(x.reshape(2, 32).sum(1), 32)
    for k, want in enumerate((down, up, xor, bcast, down8, sub16, wsum)):
        np.testing.assert_array_equal(y[k * n:(k + 1) * n], want, err_msg=f"shuffle {k}")


def test_block_reductions(sim) -> None:
    x = np.random.default_rng(0).standard_normal(3 * 96)
    y = np.empty(6)
    sim.run(_code("block_sum", 3, 96, ("in0", "out0")), [x], [y])
    np.testing.assert_allclose(y[0::2], x.reshape(3, 96).sum(1), rtol=1e-12)
    np.testing.assert_array_equal(y[1::2], x.reshape(3, 96).max(1))


def test_block_max_propagates_nan(sim) -> None:
    x = np.arange(96.0)
    x[70] = np.nan
    y = np.empty(2)
    sim.run(_code("block_sum", 1, 96, ("in0", "out0")), [x], [y])
    assert np.isnan(y[0]) and np.isnan(y[1])


def test_3d_blocks_and_grids(sim) -> None:
    grid, block = (2, 3, 2), (4, 2, 3)
    y = np.full(12 * 24, -1, np.int32)
    sim.run(_code("coords", grid, block, ("out0",)), [], [y])
    want = []
    for bz in range(2):
        for by in range(3):
            for bx in range(2):
                for tz in range(3):
                    for ty in range(2):
                        for tx in range(4):
                            want.append(tx + 10 * ty + 100 * tz + 1000 * bx + 10000 * by
                                        + 100000 * bz)
    np.testing.assert_array_equal(y, want)


def test_atomics(sim) -> None:
    x = np.random.default_rng(1).integers(0, 10, 256).astype(np.int32)
    y = np.zeros(10, np.int32)
    sim.run(_code("histogram", 2, 128, ("in0", "out0")), [x], [y])
    np.testing.assert_array_equal(y, np.bincount(x, minlength=10))


def test_divergent_barriers_are_reported(sim) -> None:
    x = np.zeros(64, np.float32)
    y = np.zeros(64, np.float32)
    with pytest.raises(CudasimError, match=r"divergent __syncthreads .*59 of 64 threads wait"):
        sim.run(_code("early_exit", 1, 64, ("in0", "out0")), [x], [y])
    with pytest.raises(CudasimError, match=r"divergent warp barrier .*warp 0: 28 lanes"):
        sim.run(_code("early_exit_warp", 1, 64, ("in0", "out0")), [x], [y])


def test_the_same_source_compiles_with_nvcc() -> None:
    codes = [_code(k, 1, 32, ("in0", "out0")) for k in
             ("reverse", "shuffles", "block_sum", "histogram", "early_exit", "early_exit_warp")]
    codes.append(_code("coords", 1, 32, ("out0",)))
    assert "Compiling entry function" in nvcc_compile_all(codes)


ASAN_SCRIPT = r'''
import numpy as np
from tdflow.lowering.cuda.code import KernelCode, LaunchSpec, uniquified
from tdflow.runtime.backends import get_backend
src = """extern "C" __global__ void off_by_one(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float t[32];
  t[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  y[threadIdx.x + 1] = t[31 - threadIdx.x];
}"""
c = uniquified(KernelCode("t", src, (LaunchSpec("off_by_one", 1, 32, ("in0", "out0")),)), "t", [], [])
get_backend("cudasim").run(c, [np.arange(32, dtype=np.float32)], [np.empty(32, np.float32)])
'''


def test_addresssanitizer_build_finds_an_out_of_bounds_write(tmp_path) -> None:
    """``TDFLOW_CUDASIM_ASAN=1`` (with libasan preloaded) reports a kernel's bad write."""
    import os
    import shutil
    import subprocess
    import sys

    need_gxx()
    gxx = shutil.which("g++")
    lib = subprocess.run([gxx, "-print-file-name=libasan.so"], capture_output=True,
                         text=True).stdout.strip() if gxx else ""
    if not lib or not os.path.isabs(lib):
        pytest.skip("g++ has no AddressSanitizer runtime (libasan.so)")
    env = dict(os.environ, TDFLOW_CUDASIM_ASAN="1", ASAN_OPTIONS="detect_leaks=0",
               LD_PRELOAD=lib, TDFLOW_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", ASAN_SCRIPT], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode != 0
    assert "heap-buffer-overflow" in done.stderr and "off_by_one" in done.stderr
