// tdf_device.h: __device__ helpers shared by tdflow's generated kernels. Compiled by nvcc after
// CUDA's headers and by g++ after cudasim_shim.h, so it uses only names both define.
#pragma once

// Sum / max / min of v over the 32 lanes of a warp; every lane gets the result. Max and min
// propagate NaN, as numpy's do (`w != w` is false for integers).
template <typename T> __device__ __forceinline__ T tdf_warp_sum(T v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
template <typename T> __device__ __forceinline__ T tdf_warp_max(T v) {
  for (int o = 16; o > 0; o >>= 1) { T w = __shfl_xor_sync(0xffffffffu, v, o); v = (w > v || w != w) ? w : v; }
  return v;
}
template <typename T> __device__ __forceinline__ T tdf_warp_min(T v) {
  for (int o = 16; o > 0; o >>= 1) { T w = __shfl_xor_sync(0xffffffffu, v, o); v = (w < v || w != w) ? w : v; }
  return v;
}

// Block-wide reduction over blockDim.x threads (a multiple of 32, at most 1024): every thread
// of the block must call it (it holds two __syncthreads); every thread gets the result.
// `scratch` is a __shared__ array of 32 elements the caller owns.
#define TDF_BLOCK_REDUCE(NAME, WARP_OP)                                                        \
  template <typename T> __device__ __forceinline__ T NAME(T v, T* scratch) {                   \
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;               \
    v = WARP_OP(v);                                                                            \
    __syncthreads(); /* scratch may still be read by a previous call */                        \
    if (lane == 0) scratch[warp] = v;                                                          \
    __syncthreads();                                                                           \
    v = scratch[lane < nw ? lane : 0];                                                         \
    return WARP_OP(lane < nw ? v : scratch[0]);                                               \
  }
TDF_BLOCK_REDUCE(tdf_block_max, tdf_warp_max)
TDF_BLOCK_REDUCE(tdf_block_min, tdf_warp_min)
#undef TDF_BLOCK_REDUCE
template <typename T> __device__ __forceinline__ T tdf_block_sum(T v, T* scratch) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = tdf_warp_sum(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  return tdf_warp_sum(lane < nw ? scratch[lane] : (T)0);
}

// Float max/min as atomics (CUDA has them for integers only): compare-and-swap on the bits.
__device__ __forceinline__ float tdf_atomic_max(float* addr, float v) {
  int* p = (int*)addr;
  int old = *p, assumed;
  do {
    assumed = old;
    if (__int_as_float(assumed) >= v) break;
    old = atomicCAS(p, assumed, __float_as_int(v));
  } while (old != assumed);
  return __int_as_float(old);
}

// Counter-based random numbers: element `counter` of stream `seed` is a fixed function of the
// two (a SplitMix64 finaliser over their mix), so a launch is reproducible from (seed, offset)
// and the numpy backend computes the very same numbers (tdflow.runtime.rng).
__device__ __forceinline__ unsigned long long tdf_mix64(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
// A float in [0, 1) with 24 random bits.
__device__ __forceinline__ float tdf_uniform(unsigned long long seed, unsigned long long counter) {
  unsigned long long h = tdf_mix64(tdf_mix64(seed + 0x9e3779b97f4a7c15ULL) ^ counter);
  return (float)(h >> 40) * (1.0f / 16777216.0f);
}
