// cudasim: the CUDA device API on the CPU, so that tdflow's generated .cu files compile with g++
// unchanged and run on numpy buffers (tdflow.runtime.backends.cudasim).
//
// Every block runs on the calling OS thread, one after another; inside a block every CUDA thread
// is a fiber (ucontext) with its own stack. A fiber runs until it finishes or reaches a barrier:
// __syncthreads() waits for every thread of the block, a warp primitive (__shfl_*_sync,
// __syncwarp) for every thread of its warp. A barrier some threads reach while others of the
// same group have finished is a divergent barrier: real GPUs hang or misbehave there, so the
// simulator stops the launch with an error naming the kernel. __shared__ variables are
// function-local statics: one instance, shared by the fibers of the running block. Atomics are
// plain read-modify-writes (only one fiber runs at a time).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <ucontext.h>
#include <sys/mman.h>
#include <type_traits>
#include <utility>

#define __global__
#define __device__ inline
#define __host__
#define __forceinline__
#define __noinline__
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __shared__ static
#define __constant__ static const

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  dim3() = default;
  dim3(unsigned a, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
typedef dim3 uint3;

// ---- fibers --------------------------------------------------------------------------------
enum { TDF_RUN = 0, TDF_BLOCK_BARRIER = 1, TDF_WARP_BARRIER = 2, TDF_DONE = 3 };
struct tdf_fiber {
  ucontext_t ctx;
  int state;
  unsigned linear;      // thread index within the block (x fastest)
  dim3 tid;
  unsigned long long warp_gen;  // warp barriers passed (selects the exchange slot)
};
static thread_local tdf_fiber* tdf_self = nullptr;
static thread_local ucontext_t tdf_scheduler;
static thread_local dim3 blockIdx, blockDim, gridDim;
#define threadIdx (tdf_self->tid)
static thread_local char tdf_error[512];
static const int warpSize = 32;

inline void tdf_yield(int state) {
  tdf_self->state = state;
  swapcontext(&tdf_self->ctx, &tdf_scheduler);
}
inline void __syncthreads() { tdf_yield(TDF_BLOCK_BARRIER); }
inline void __threadfence() {}
inline void __threadfence_block() {}

// Warp exchange: lane l of warp w writes slot[gen & 1][w][l] before the barrier and reads any
// lane's slot after it. Two generations, because a lane that passed barrier g may write its next
// value before a slower lane of the same warp read value g.
static thread_local uint64_t tdf_slots[2][32][32];
inline unsigned tdf_lane() { return tdf_self->linear & 31u; }
inline unsigned tdf_warp() { return tdf_self->linear >> 5; }
template <typename T>
inline T tdf_exchange(T v, int src_lane, bool valid) {
  unsigned long long g = tdf_self->warp_gen & 1ull;
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  tdf_slots[g][tdf_warp()][tdf_lane()] = bits;
  tdf_yield(TDF_WARP_BARRIER);
  tdf_self->warp_gen++;
  if (!valid) return v;
  T out;
  uint64_t got = tdf_slots[g][tdf_warp()][src_lane & 31];
  std::memcpy(&out, &got, sizeof(T));
  return out;
}
inline void __syncwarp(unsigned = 0xffffffffu) { tdf_exchange<int>(0, 0, false); }
template <typename T> inline T __shfl_sync(unsigned, T v, int src, int width = 32) {
  int base = tdf_lane() & ~(width - 1);
  return tdf_exchange(v, base + (src & (width - 1)), true);
}
template <typename T> inline T __shfl_down_sync(unsigned, T v, unsigned d, int width = 32) {
  int l = (int)tdf_lane(), in = (l & (width - 1)) + (int)d;
  return tdf_exchange(v, l + (int)d, in < width);
}
template <typename T> inline T __shfl_up_sync(unsigned, T v, unsigned d, int width = 32) {
  int l = (int)tdf_lane();
  return tdf_exchange(v, l - (int)d, (l & (width - 1)) >= (int)d);
}
template <typename T> inline T __shfl_xor_sync(unsigned, T v, int m, int width = 32) {
  int l = (int)tdf_lane(), s = l ^ m;
  return tdf_exchange(v, s, (s & ~(width - 1)) == (l & ~(width - 1)));
}

// ---- atomics (one fiber runs at a time, so a plain update is atomic) ---------------------------
template <typename T> inline T atomicAdd(T* p, T v) { T o = *p; *p = o + v; return o; }
template <typename T> inline T atomicMax(T* p, T v) { T o = *p; if (v > o) *p = v; return o; }
template <typename T> inline T atomicMin(T* p, T v) { T o = *p; if (v < o) *p = v; return o; }
template <typename T> inline T atomicExch(T* p, T v) { T o = *p; *p = v; return o; }
template <typename T> inline T atomicCAS(T* p, T cmp, T v) { T o = *p; if (o == cmp) *p = v; return o; }

// ---- numbers ------------------------------------------------------------------------------
typedef _Float16 __half;
struct __nv_bfloat16 { uint16_t bits; };
inline float __half2float(__half h) { return (float)h; }
inline __half __float2half(float f) { return (__half)f; }
inline float __bfloat162float(__nv_bfloat16 b) {
  uint32_t u = (uint32_t)b.bits << 16; float f; std::memcpy(&f, &u, 4); return f;
}
inline __nv_bfloat16 __float2bfloat16(float f) {  // round to nearest even, as CUDA does
  uint32_t u; std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return __nv_bfloat16{(uint16_t)((u >> 16) | 0x40)};
  u += 0x7fffu + ((u >> 16) & 1u);
  return __nv_bfloat16{(uint16_t)(u >> 16)};
}
inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
inline unsigned __float_as_uint(float f) { unsigned i; std::memcpy(&i, &f, 4); return i; }
inline float __uint_as_float(unsigned i) { float f; std::memcpy(&f, &i, 4); return f; }
inline double __longlong_as_double(long long i) { double f; std::memcpy(&f, &i, 8); return f; }
inline long long __double_as_longlong(double f) { long long i; std::memcpy(&i, &f, 8); return i; }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
inline unsigned __umulhi(unsigned a, unsigned b) {
  return (unsigned)(((unsigned long long)a * b) >> 32);
}
template <typename T> inline T __ldg(const T* p) { return *p; }
using std::max;
using std::min;
// CUDA declares isnan/isinf for float and double in the global namespace; libstdc++ only in std.
using std::isinf;
using std::isnan;

struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
struct double2 { double x, y; };
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
inline float2 make_float2(float x, float y) { return float2{x, y}; }

// ---- the launcher -------------------------------------------------------------------------
static const size_t TDF_STACK = 256 * 1024;
struct tdf_pool {
  tdf_fiber* fibers = nullptr;
  char* stacks = nullptr;
  unsigned n = 0;
};
static thread_local tdf_pool tdf_fibers;
static thread_local void (*tdf_body)(void**) = nullptr;
static thread_local void** tdf_body_args = nullptr;

inline void tdf_fiber_main() {
  tdf_body(tdf_body_args);
  tdf_self->state = TDF_DONE;
  swapcontext(&tdf_self->ctx, &tdf_scheduler);
}

inline bool tdf_reserve(unsigned n) {
  if (tdf_fibers.n >= n) return true;
  if (tdf_fibers.stacks) munmap(tdf_fibers.stacks, TDF_STACK * tdf_fibers.n);
  delete[] tdf_fibers.fibers;
  void* m = mmap(nullptr, TDF_STACK * n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
                 MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) { tdf_fibers = tdf_pool(); return false; }
  tdf_fibers.stacks = (char*)m;
  tdf_fibers.fibers = new tdf_fiber[n];
  tdf_fibers.n = n;
  return true;
}

// Runs body(args) as grid x block CUDA threads; 0 on success, else tdf_error says why.
inline int tdf_run(const char* name, dim3 grid, dim3 block, void (*body)(void**), void** args) {
  unsigned nt = block.x * block.y * block.z;
  if (nt == 0 || nt > 1024) {
    snprintf(tdf_error, sizeof tdf_error, "%s: %u threads per block", name, nt);
    return 1;
  }
  if (!tdf_reserve(nt)) {
    snprintf(tdf_error, sizeof tdf_error, "%s: cannot map fiber stacks", name);
    return 1;
  }
  gridDim = grid; blockDim = block; tdf_body = body; tdf_body_args = args;
  tdf_fiber* f = tdf_fibers.fibers;
  for (unsigned bz = 0; bz < grid.z; ++bz)
  for (unsigned by = 0; by < grid.y; ++by)
  for (unsigned bx = 0; bx < grid.x; ++bx) {
    blockIdx = dim3(bx, by, bz);
    for (unsigned t = 0; t < nt; ++t) {
      f[t].linear = t; f[t].state = TDF_RUN; f[t].warp_gen = 0;
      f[t].tid = dim3(t % block.x, (t / block.x) % block.y, t / (block.x * block.y));
      getcontext(&f[t].ctx);
      f[t].ctx.uc_stack.ss_sp = tdf_fibers.stacks + (size_t)t * TDF_STACK;
      f[t].ctx.uc_stack.ss_size = TDF_STACK;
      f[t].ctx.uc_link = nullptr;
      makecontext(&f[t].ctx, tdf_fiber_main, 0);
    }
    for (;;) {
      for (unsigned t = 0; t < nt; ++t) {
        if (f[t].state != TDF_RUN) continue;
        tdf_self = &f[t];
        swapcontext(&tdf_scheduler, &f[t].ctx);
      }
      tdf_self = nullptr;
      // Every fiber is now done or waiting. Release what can be released.
      unsigned done = 0, at_block = 0;
      for (unsigned t = 0; t < nt; ++t) {
        done += f[t].state == TDF_DONE;
        at_block += f[t].state == TDF_BLOCK_BARRIER;
      }
      if (done == nt) break;
      bool progressed = false;
      if (at_block == nt) {
        for (unsigned t = 0; t < nt; ++t) f[t].state = TDF_RUN;
        progressed = true;
      } else {
        for (unsigned w = 0; w * 32 < nt; ++w) {
          unsigned lo = w * 32, hi = std::min(nt, lo + 32), waiting = 0, finished = 0;
          for (unsigned t = lo; t < hi; ++t) {
            waiting += f[t].state == TDF_WARP_BARRIER;
            finished += f[t].state == TDF_DONE;
          }
          if (waiting && waiting == hi - lo) {
            for (unsigned t = lo; t < hi; ++t) f[t].state = TDF_RUN;
            progressed = true;
          } else if (waiting && finished) {
            snprintf(tdf_error, sizeof tdf_error,
                     "%s: divergent warp barrier in block (%u,%u,%u), warp %u: %u lanes wait "
                     "at a shuffle or __syncwarp that %u finished lanes never reach",
                     name, bx, by, bz, w, waiting, finished);
            return 2;
          }
        }
      }
      if (!progressed) {
        snprintf(tdf_error, sizeof tdf_error,
                 "%s: divergent __syncthreads in block (%u,%u,%u): %u of %u threads wait at a "
                 "barrier, %u have finished without reaching it",
                 name, bx, by, bz, at_block, nt, done);
        return 2;
      }
    }
  }
  return 0;
}

inline const char* tdf_last_error() { return tdf_error; }

// Calls a kernel with the void* array the launcher holds: a pointer parameter gets the entry
// itself, a scalar parameter (a value passed by value, s<k>) the value the entry points to.
template <typename P>
inline P tdf_arg(void* a) {
  if constexpr (std::is_pointer<P>::value) return static_cast<P>(a);
  else return *static_cast<const P*>(a);
}
template <typename... P, size_t... I>
inline void tdf_invoke(void (*k)(P...), void** a, std::index_sequence<I...>) {
  k(tdf_arg<P>(a[I])...);
}
template <typename... P>
inline void tdf_call(void (*k)(P...), void** a) {
  tdf_invoke(k, a, std::index_sequence_for<P...>{});
}

// A direct launch from hand-written C++ (tests, drivers): kernel(args...) as grid x block
// threads of one dimension; 0 on success, else tdf_last_error() says why.
#include <functional>
static thread_local std::function<void()> tdf_direct_body;
template <typename K, typename... A>
inline int tdf_launch(unsigned grid, unsigned block, K kernel, A... args) {
  tdf_direct_body = [=]() { kernel(args...); };
  return tdf_run("tdf_launch", dim3(grid), dim3(block), [](void**) { tdf_direct_body(); },
                 nullptr);
}
