"""The tiled GEMM every matrix-product kernel shares (matmul, batch_matmul, the convolutions).

:func:`gemm_code` writes one batched GEMM ``C[z] = A[z] @ B[z]`` whose operands are read, and
whose result written, by generated device functions (``load_a(P, z, m, k)``, ``load_b(P, z, k,
n)``, ``store_c(P, z, m, n, acc)``): plain or transposed matrices with alpha and
``_add_to_output`` (``matmul.py``), implicit im2col matrices (``conv.py``). Two families:

* SIMT (f32, f64, integers): shared-memory tiles of A and B, double-buffered (the next tile is
  fetched into registers while the current one is multiplied, then stored into the other
  buffer: one ``__syncthreads`` per tile), each thread accumulating a ``TM x TN`` register
  micro-tile (strided across the block tile, so shared reads are conflict-free and global
  stores coalesce). Tiles by size: 128x128x8 with 8x8 per thread (256 threads) when both M and
  N reach 128, 64x64x16 with 4x4 (256 threads) from 64, else 32x32x16 with 4x4 (64 threads);
  8-byte types stop at 64x64. Integers accumulate in unsigned arithmetic (numpy's wrap-around,
  without C's signed-overflow undefined behaviour); f32 in float, f64 in double.
* Tensor cores (f16, bf16; f32 when ``TDFLOW_CUDA_TF32=1`` is set in the environment when the
  code is generated, off by default because TF32 misses f32's rtol 1e-5): ``nvcuda::wmma``
  16x16x16 fragments (16x16x8 for TF32) with float accumulators, 4 warps per block, 64x64x32
  block tiles (2x2 fragments per warp) from M, N >= 64, else 32x32x32. A transposed operand is
  staged in shared memory as it lies in global memory and read with a ``col_major`` fragment.

Tails (any M, N, K) load zeros and skip stores out of range. When the tiles alone cannot fill an
H200 (fewer than 132 block tiles) and K is long, K is split: each split writes float (double,
unsigned) partial sums to scratch and a second kernel adds them in a fixed order, then applies
``store_c`` (deterministic, no atomics).

>>> gemm_tile("f32", 70, 50), gemm_tile("f32", 130, 129), gemm_tile("f16", 64, 64)
('small', 'large', 'wmma64')
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tdflow.dialect.element_types import INT_TYPES

from .code import CudaCodegenError, LaunchSpec
from .common import acc_type, ctype, launch_1d, store

SMS = 132  # H200 streaming multiprocessors: the block count a launch should at least reach
# Integers accumulate in unsigned 32 or 64 bits: the low bits of a wrapped sum are numpy's.
INT_ACC = {n: "uint64_t" if t.bits == 64 else "uint32_t" for n, t in INT_TYPES.items()}
TENSOR_CORE = ("f16", "bf16")


def gemm_acc(dtype: str) -> str:
    """The C type a GEMM of ``dtype`` accumulates in: ``gemm_acc("i8") == "uint32_t"``."""
    return INT_ACC.get(dtype) or acc_type(dtype)


def tf32_enabled() -> bool:
    """Whether f32 GEMMs use TF32 tensor cores (``TDFLOW_CUDA_TF32=1`` at generation time).

    >>> tf32_enabled() == (os.environ.get("TDFLOW_CUDA_TF32") == "1")
    True
    """
    return os.environ.get("TDFLOW_CUDA_TF32", "") == "1"


def simt_vec4_enabled() -> bool:
    """Whether f32 SIMT GEMMs read their shared tiles as float4 runs: yes unless
    ``TDFLOW_CUDA_SIMT_VEC4=0`` when the code is generated (the strided layout, kept to compare:
    on the H200 the float4 runs took the 4096^3 product from 22.5 to 25.0 TFLOP/s, the same
    bits).

    >>> simt_vec4_enabled() == (os.environ.get("TDFLOW_CUDA_SIMT_VEC4") != "0")
    True
    """
    return os.environ.get("TDFLOW_CUDA_SIMT_VEC4", "") != "0"


@dataclass(frozen=True)
class Gemm:
    """One batched GEMM: ``Z`` products of ``M x K`` by ``K x N`` through generated accessors.

    ``fields`` are the kernel parameters as ``(C declaration, member name, launch argument)``
    (``("const float* __restrict__", "a", "in0")``), gathered in a struct ``Args P`` the accessor
    bodies read; ``load_a``/``load_b`` are the bodies of ``T load_a(const Args& P, int z, int m,
    int k)`` and ``T load_b(const Args& P, int z, int k, int n)`` (called only in range),
    ``store_c`` of ``void store_c(const Args& P, int z, int m, int n, ACC acc)``. ``a_k_fast``/
    ``b_n_fast`` say which index walks memory contiguously (loads are arranged to coalesce).
    ``index`` is the C type of element offsets (``I`` in the bodies). ``gather`` marks heavy
    accessors (the convolutions'): loads go to shared memory after each multiply, not through
    prefetch registers, and ``store_c`` stays out of line (else ptxas ran out of registers).
    """

    name: str
    dtype: str
    z: int
    m: int
    n: int
    k: int
    fields: Sequence[tuple[str, str, str]]
    load_a: str
    load_b: str
    store_c: str
    a_k_fast: bool = True
    b_n_fast: bool = True
    index: str = "int"
    gather: bool = False


_SIMT_TILES = {"large": (128, 128, 8, 8, 8), "medium": (64, 64, 16, 4, 4),
               "small": (32, 32, 16, 4, 4)}  # BM, BN, BK, TM, TN
_WMMA_TILES = {"wmma64": (64, 64, 32), "wmma32": (32, 32, 32)}  # BM, BN, BK (4 warps)


def gemm_tile(dtype: str, m: int, n: int) -> str:
    """The tile configuration a GEMM of ``dtype`` and ``m x n`` results gets."""
    if dtype in TENSOR_CORE or (dtype == "f32" and tf32_enabled()):
        return "wmma64" if m >= 64 and n >= 64 else "wmma32"
    if m >= 128 and n >= 128 and dtype not in ("f64", "i64", "ui64"):
        return "large"
    return "medium" if m >= 64 and n >= 64 else "small"


def _split_k(tiles: int, k: int, bk: int) -> tuple[int, int]:
    """``(splits, chunk)``: K cut into chunks when the tiles leave most SMs idle."""
    if tiles >= SMS or k < 1024:
        return 1, max(k, 1)
    split = max(1, min(-(-2 * SMS // tiles), k // 512))
    chunk = ((k + split - 1) // split + bk - 1) // bk * bk
    return -(-k // chunk), chunk


def _fill(template: str, values: Mapping[str, Any]) -> str:
    return re.sub(r"@(\w+)@", lambda mt: str(values[mt.group(1)]), template)


_HEAD = """typedef @T@ T; typedef @ACC@ ACC; typedef @I@ I;
struct Args { @FIELDS@ };
__device__ __forceinline__ T load_a(const Args& P, int z, int m, int k) { @LOAD_A@ }
__device__ __forceinline__ T load_b(const Args& P, int z, int k, int n) { @LOAD_B@ }
__device__ @STORE_INLINE@ void store_c(const Args& P, int z, int m, int n, ACC acc) { @STORE_C@ }
constexpr int M = @M@, N = @N@, K = @K@, Z = @Z@, SPLIT = @SPLIT@, KCHUNK = @KCHUNK@;
constexpr int BM = @BM@, BN = @BN@, BK = @BK@, MT = (M + BM - 1) / BM;
constexpr bool A_K_FAST = @AKF@, B_N_FAST = @BNF@;
static_assert(MT > 0 && Z > 0 && (SPLIT == 1 || KCHUNK % BK == 0), "GEMM tiling");
"""

# Which M tile and (batch, K split) pair a block computes. Grid-stride loops only where the
# grid would pass CUDA's y/z limits (every thread runs the same iterations, so the barriers
# inside stay uniform); otherwise straight from blockIdx, which keeps registers free.
_LOOPS = """  const Args P = {@MEMBERS@};
  const int tid = threadIdx.x, n0 = blockIdx.x * BN;
  for (int mt = blockIdx.y; mt < MT; mt += gridDim.y) {
  const int m0 = mt * BM;
  for (int zs = blockIdx.z; zs < Z * SPLIT; zs += gridDim.z) {
@ZS@"""
_BLOCK = """  const Args P = {@MEMBERS@};
  const int tid = threadIdx.x, n0 = blockIdx.x * BN;
  { const int m0 = blockIdx.y * BM;
  { const int zs = blockIdx.z;
@ZS@"""
_ZS = """    const int z = zs / SPLIT, sp = zs % SPLIT, k_lo = sp * KCHUNK;
    const int k_hi = k_lo + KCHUNK < K ? k_lo + KCHUNK : K;
    const int nk = (k_hi - k_lo + BK - 1) / BK;
"""

_FETCH = """    #pragma unroll
    for (int e = 0; e < APT; ++e) {
      const int idx = tid + e * NT, kk = A_K_FAST ? idx % BK : idx / BM;
      const int mm = A_K_FAST ? idx / BK : idx % BM, gm = m0 + mm, gk = @K0@ + kk;
      ra[e] = (gm < M && gk < k_hi) ? load_a(P, z, gm, gk) : zero;
    }
    #pragma unroll
    for (int e = 0; e < BPT; ++e) {
      const int idx = tid + e * NT, kk = B_N_FAST ? idx / BN : idx % BK;
      const int nn = B_N_FAST ? idx % BN : idx / BK, gn = n0 + nn, gk = @K0@ + kk;
      rb[e] = (gn < N && gk < k_hi) ? load_b(P, z, gk, gn) : zero;
    }
"""

_STASH = """    #pragma unroll
    for (int e = 0; e < APT; ++e) {
      const int idx = tid + e * NT, kk = A_K_FAST ? idx % BK : idx / BM;
      const int mm = A_K_FAST ? idx / BK : idx % BM;
      @AS@ = ra[e];
    }
    #pragma unroll
    for (int e = 0; e < BPT; ++e) {
      const int idx = tid + e * NT, kk = B_N_FAST ? idx / BN : idx % BK;
      const int nn = B_N_FAST ? idx % BN : idx / BK;
      @BS@ = rb[e];
    }
"""

# Without register prefetch: global straight to shared (for gathering loaders, whose index
# arithmetic would otherwise hold too many registers across the multiply).
_DIRECT = """    #pragma unroll 2
    for (int e = 0; e < APT; ++e) {
      const int idx = tid + e * NT, kk = A_K_FAST ? idx % BK : idx / BM;
      const int mm = A_K_FAST ? idx / BK : idx % BM, gm = m0 + mm, gk = @K0@ + kk;
      @AS@ = (gm < M && gk < k_hi) ? load_a(P, z, gm, gk) : zero;
    }
    #pragma unroll 2
    for (int e = 0; e < BPT; ++e) {
      const int idx = tid + e * NT, kk = B_N_FAST ? idx / BN : idx % BK;
      const int nn = B_N_FAST ? idx % BN : idx / BK, gn = n0 + nn, gk = @K0@ + kk;
      @BS@ = (gn < N && gk < k_hi) ? load_b(P, z, gk, gn) : zero;
    }
"""

_RESULT = "store_c(P, z, gm, gn, @V@);"
_PARTIAL = "P.part[((long long)sp * Z + z) * ((long long)M * N) + (long long)gm * N + gn] = @V@;"

_SIMT = """constexpr int TM = @TM@, TN = @TN@, TX = BN / TN, TY = BM / TM, NT = TX * TY;
constexpr int APT = BM * BK / NT, BPT = BK * BN / NT;
extern "C" __global__ __launch_bounds__(NT, 1) void @NAME@(@PARAMS@) {
  // +4: the k-fastest global walk stores down a column; padding spreads it over the banks
  __shared__ @ALIGN@T As[2][BK][BM + 4];
  __shared__ @ALIGN@T Bs[2][BK][BN + 4];
  const T zero = T(0);
@LOOPS@    const int tx = tid % TX, ty = tid / TX;
    ACC acc[TM][TN];
    #pragma unroll
    for (int i = 0; i < TM; ++i)
      #pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] = ACC(0);
@REGS@@FETCH0@    { const int buf = 0;
@STASH0@    }
    __syncthreads();
    #pragma unroll 1
    for (int t = 0; t < nk; ++t) {
      const int cur = t & 1;
@NEXT@      #pragma unroll
      for (int kk = 0; kk < BK; ++kk) {
        ACC av[TM], bv[TN];
@LOADS@
        #pragma unroll
        for (int i = 0; i < TM; ++i)
          #pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] += av[i] * bv[j];
      }
@STASHN@      __syncthreads();
    }
    #pragma unroll
    for (int i = 0; i < TM; ++i)
      #pragma unroll
      for (int j = 0; j < TN; ++j) {
        const int gm = m0 + @ROW@, gn = n0 + @COL@;
        if (gm < M && gn < N) {
          @RESULT@
        }
      }
  }}
}
"""

# Each thread's TM x TN micro-tile: strided across the block tile (row ty + i * TY), one scalar
# shared load per element; or, for float, in runs of 4 (rows ty * 4 + i % 4 of the i / 4-th
# quarter or half of the tile), read as float4: a quarter of the shared-load instructions, and
# 8 threads of a warp read 128 consecutive bytes (no bank conflicts).
_STRIDED_LOADS = """        #pragma unroll
        for (int i = 0; i < TM; ++i) av[i] = (ACC)As[cur][kk][ty + i * TY];
        #pragma unroll
        for (int j = 0; j < TN; ++j) bv[j] = (ACC)Bs[cur][kk][tx + j * TX];
"""
_VEC4_LOADS = """        #pragma unroll
        for (int g = 0; g < TM / 4; ++g) {
          const float4 q = *reinterpret_cast<const float4*>(&As[cur][kk][g * 4 * TY + ty * 4]);
          av[g * 4] = q.x; av[g * 4 + 1] = q.y; av[g * 4 + 2] = q.z; av[g * 4 + 3] = q.w;
        }
        #pragma unroll
        for (int g = 0; g < TN / 4; ++g) {
          const float4 q = *reinterpret_cast<const float4*>(&Bs[cur][kk][g * 4 * TX + tx * 4]);
          bv[g * 4] = q.x; bv[g * 4 + 1] = q.y; bv[g * 4 + 2] = q.z; bv[g * 4 + 3] = q.w;
        }
"""

_WMMA = """namespace wm = nvcuda::wmma;
constexpr int NT = 128, WN = 2, FM = BM / 32, FN = BN / 32, WK = @WK@;
constexpr int APT = BM * BK / NT, BPT = BK * BN / NT;
// Shared tiles as the operands lie in memory (a transposed one read col_major); rows padded
// by 16 bytes against bank conflicts (ldm stays a multiple of 16 bytes, fragments 32-byte
// aligned).
constexpr int PAD = 16 / sizeof(T);
constexpr int LDA = A_K_FAST ? BK + PAD : BM + PAD, LDB = B_N_FAST ? BN + PAD : BK + PAD;
constexpr int LDC = BN + 4;
typedef @FT@ FT;
typedef wm::fragment<wm::matrix_a, 16, 16, WK, FT, @ALAYOUT@> FragA;
typedef wm::fragment<wm::matrix_b, 16, 16, WK, FT, @BLAYOUT@> FragB;
typedef wm::fragment<wm::accumulator, 16, 16, WK, float> FragC;
extern "C" __global__ __launch_bounds__(NT, 1) void @NAME@(@PARAMS@) {
  __shared__ __align__(32) T As[(A_K_FAST ? BM : BK) * LDA];
  __shared__ __align__(32) T Bs[(B_N_FAST ? BK : BN) * LDB];
  __shared__ __align__(32) float Cs[BM * LDC];
  const T zero = @ZERO@;
@LOOPS@    const int warp = tid / 32, wm0 = (warp / WN) * FM * 16, wn0 = (warp % WN) * FN * 16;
    FragC acc[FM][FN];
    #pragma unroll
    for (int i = 0; i < FM; ++i)
      #pragma unroll
      for (int j = 0; j < FN; ++j) wm::fill_fragment(acc[i][j], 0.0f);
@REGS@@FETCH0@    #pragma unroll 1
    for (int t = 0; t < nk; ++t) {
      __syncthreads();  // the previous tile's fragments are loaded
@STASHT@      __syncthreads();
@NEXT@      #pragma unroll
      for (int kk = 0; kk < BK; kk += WK) {
        FragA fa[FM];
        FragB fb[FN];
        #pragma unroll
        for (int i = 0; i < FM; ++i) {
          wm::load_matrix_sync(fa[i], As + @AFRAG@, LDA);
@CVTA@        }
        #pragma unroll
        for (int j = 0; j < FN; ++j) {
          wm::load_matrix_sync(fb[j], Bs + @BFRAG@, LDB);
@CVTB@        }
        #pragma unroll
        for (int i = 0; i < FM; ++i)
          #pragma unroll
          for (int j = 0; j < FN; ++j) wm::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
      }
    }
    #pragma unroll
    for (int i = 0; i < FM; ++i)
      #pragma unroll
      for (int j = 0; j < FN; ++j)
        wm::store_matrix_sync(Cs + (wm0 + i * 16) * LDC + wn0 + j * 16, acc[i][j], LDC,
                              wm::mem_row_major);
    __syncthreads();
    for (int e = tid; e < BM * BN; e += NT) {  // consecutive threads, consecutive columns
      const int gm = m0 + e / BN, gn = n0 + e % BN;
      if (gm < M && gn < N) {
          @RESULT@
      }
    }
    __syncthreads();  // Cs is rewritten by the next tile
  }}
}
"""

_SPLIT_SUM = """extern "C" __global__ void @NAME@_sum(@PARAMS@) {
  const Args P = {@MEMBERS@};
  const long long total = (long long)Z * M * N;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total;
       e += (long long)blockDim.x * gridDim.x) {
    ACC s = P.part[e];
    for (int sp = 1; sp < SPLIT; ++sp) s += P.part[sp * total + e];  // a fixed order
    const int z = (int)(e / ((long long)M * N)), r = (int)(e % ((long long)M * N));
    store_c(P, z, r / N, r % N, s);
  }
}
"""


def gemm_code(g: Gemm) -> tuple[str, list[LaunchSpec], tuple[int, ...]]:
    """``(source, launches, scratch)`` of the GEMM ``g`` (see :class:`Gemm`).

    >>> g = Gemm("mm", "f32", 1, 8, 9, 1100, [("const float* __restrict__", "a", "in0"),
    ...          ("const float* __restrict__", "b", "in1"), ("float*", "c", "out0")],
    ...          "return P.a[m * 1100 + k];", "return P.b[k * 9 + n];", "P.c[m * 9 + n] = acc;")
    >>> src, launches, scratch = gemm_code(g)
    >>> [(ln.kernel, ln.grid, ln.args) for ln in launches], scratch  # K split in two
    ([('mm', (1, 1, 2), ('in0', 'in1', 'out0', 'tmp0')), ('mm_sum', (1, 1, 1), ('in0', 'in1', \
'out0', 'tmp0'))], (576,))
    """
    if max(g.m, g.n, g.k, g.z) >= 2 ** 31:
        raise CudaCodegenError(f"{g.name}: GEMM of {g.z}x{g.m}x{g.n}x{g.k} exceeds 32-bit extents")
    tile = gemm_tile(g.dtype, g.m, g.n)
    wmma = tile.startswith("wmma")
    bm, bn, bk = _WMMA_TILES[tile] if wmma else _SIMT_TILES[tile][:3]
    if wmma and g.dtype == "f32":
        bk = 16  # TF32 tiles are twice the bytes: a 32-deep prefetch ran out of registers
    acc = "float" if wmma else gemm_acc(g.dtype)
    tiles = -(-g.n // bn) * -(-g.m // bm) * g.z
    split, chunk = _split_k(tiles, g.k, bk)
    fields = list(g.fields) + ([(f"{acc}*", "part", "tmp0")] if split > 1 else [])
    v = {"T": ctype(g.dtype), "ACC": acc, "I": g.index,
         "FIELDS": " ".join(f"{decl.replace('__restrict__', '').strip()} {name};"
                            for decl, name, _ in fields),
         "LOAD_A": g.load_a, "LOAD_B": g.load_b, "STORE_C": g.store_c,
         "STORE_INLINE": "__noinline__" if g.gather else "__forceinline__",
         "M": g.m, "N": g.n, "K": g.k, "Z": g.z, "SPLIT": split, "KCHUNK": chunk, "BM": bm,
         "BN": bn, "BK": bk, "AKF": str(g.a_k_fast).lower(), "BNF": str(g.b_n_fast).lower(),
         "NAME": g.name, "PARAMS": ", ".join(f"{decl} {name}" for decl, name, _ in fields),
         "MEMBERS": ", ".join(name for _, name, _ in fields)}
    loops = _LOOPS if -(-g.m // bm) > 65535 or g.z * split > 65535 else _BLOCK
    v["LOOPS"] = _fill(loops, {**v, "ZS": _ZS})
    result = _PARTIAL if split > 1 else _RESULT
    pre = not g.gather
    v["REGS"] = "    T ra[APT], rb[BPT];\n" if pre else ""
    v["FETCH0"] = _fill(_FETCH, {"K0": "k_lo"}) if pre else ""
    fetch_next = _fill(_FETCH, {"K0": "(k_lo + (t + 1) * BK)"})
    if wmma:
        tf32 = g.dtype == "f32"
        a_sh = "As[mm * LDA + kk]" if g.a_k_fast else "As[kk * LDA + mm]"
        b_sh = "Bs[kk * LDB + nn]" if g.b_n_fast else "Bs[nn * LDB + kk]"
        cvt = ("          for (int q = 0; q < {f}.num_elements; ++q) "
               "{f}.x[q] = wm::__float_to_tf32({f}.x[q]);\n")
        sh = {"AS": a_sh, "BS": b_sh}
        v.update(STASHT=_fill(_STASH, sh) if pre else _fill(_DIRECT, {**sh, "K0": "(k_lo + t * BK)"}),
                 NEXT=f"      if (t + 1 < nk) {{\n{fetch_next}      }}\n" if pre else "",
                 WK=8 if tf32 else 16,
                 FT="wm::precision::tf32" if tf32 else "T",
                 ALAYOUT="wm::row_major" if g.a_k_fast else "wm::col_major",
                 BLAYOUT="wm::row_major" if g.b_n_fast else "wm::col_major",
                 AFRAG="(wm0 + i * 16) * LDA + kk" if g.a_k_fast else "kk * LDA + wm0 + i * 16",
                 BFRAG="kk * LDB + wn0 + j * 16" if g.b_n_fast else "(wn0 + j * 16) * LDB + kk",
                 CVTA=cvt.format(f="fa[i]") if tf32 else "", CVTB=cvt.format(f="fb[j]") if tf32
                 else "", ZERO=store(g.dtype, "0.0f") if g.dtype in TENSOR_CORE else "0.0f",
                 RESULT=_fill(result, {"V": "Cs[(gm - m0) * LDC + gn - n0]"}))
        body, threads = _fill(_WMMA, v), 128
    else:
        tm, tn = _SIMT_TILES[tile][3:]
        sh = {"AS": "As[buf][kk][mm]", "BS": "Bs[buf][kk][nn]"}
        stash = _fill(_STASH, sh)
        nxt = "      if (t + 1 < nk) {{ const int buf = cur ^ 1;\n{}      }}\n"
        vec = g.dtype == "f32" and simt_vec4_enabled()
        v.update(LOADS=(_VEC4_LOADS if vec else _STRIDED_LOADS).rstrip("\n"),
                 ALIGN="__align__(16) " if vec else "",
                 ROW="(i / 4) * 4 * TY + ty * 4 + i % 4" if vec else "ty + i * TY",
                 COL="(j / 4) * 4 * TX + tx * 4 + j % 4" if vec else "tx + j * TX")
        v.update(TM=tm, TN=tn, STASH0=stash if pre else _fill(_DIRECT, {**sh, "K0": "k_lo"}),
                 NEXT=f"      if (t + 1 < nk) {{\n{fetch_next}      }}\n" if pre else "",
                 # direct loads go after the multiply, so that they hold no registers across it
                 STASHN=nxt.format(stash if pre else
                                   _fill(_DIRECT, {**sh, "K0": "(k_lo + (t + 1) * BK)"})),
                 RESULT=_fill(result, {"V": "acc[i][j]"}))
        body, threads = _fill(_SIMT, v), (bm // tm) * (bn // tn)
    source = _fill(_HEAD, v) + body
    grid = (-(-g.n // bn), min(-(-g.m // bm), 65535), min(g.z * split, 65535))
    launches = [LaunchSpec(g.name, grid, threads, [a for _, _, a in fields])]
    scratch: tuple[int, ...] = ()
    if split > 1:
        source += _fill(_SPLIT_SUM, v)
        g1, b1 = launch_1d(g.z * g.m * g.n)
        launches.append(LaunchSpec(f"{g.name}_sum", g1, b1, [a for _, _, a in fields]))
        scratch = (split * g.z * g.m * g.n * (8 if acc in ("double", "uint64_t") else 4),)
    return source, launches, scratch
