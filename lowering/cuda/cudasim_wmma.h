// cudasim_wmma.h: nvcuda::wmma (warp matrix multiply-accumulate) on the CPU, for cudasim.
// Concatenated after cudasim_shim.h (tdflow.lowering.cuda.common.prelude), so kernels using
// tensor cores through <mma.h> compile with g++ unchanged.
//
// CUDA leaves the element layout of a fragment opaque: which lane holds which elements is
// unspecified, and correct kernels touch fragment elements only through fill_fragment or a loop
// over frag.num_elements applying the same operation to each (scaling, __float_to_tf32). So
// here every lane holds the whole tile (row-major in x[]) and computes the whole product: a
// lane-redundant emulation that such kernels cannot tell apart from the real thing. Each
// operation is warp-synchronous, as on the GPU: it passes a warp barrier, so a warp whose lanes
// do not all reach it is reported as a divergent barrier.
#pragma once
#include <type_traits>

#ifndef __align__
#define __align__(n) __attribute__((aligned(n)))
#endif

namespace nvcuda {
namespace wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
namespace precision {
struct tf32 {};
}  // namespace precision
enum layout_t { mem_row_major, mem_col_major };

// The value an element type holds (tf32 fragments hold floats, as in CUDA).
template <typename T> struct tdf_storage { typedef T type; };
template <> struct tdf_storage<precision::tf32> { typedef float type; };

inline float tdf_to_float(float v) { return v; }
inline float tdf_to_float(__half v) { return __half2float(v); }
inline float tdf_to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
inline double tdf_to_float(double v) { return v; }

// Rows and columns of the tile a fragment holds.
template <typename Use, int M, int N, int K> struct tdf_shape;
template <int M, int N, int K> struct tdf_shape<matrix_a, M, N, K> { enum { R = M, C = K }; };
template <int M, int N, int K> struct tdf_shape<matrix_b, M, N, K> { enum { R = K, C = N }; };
template <int M, int N, int K> struct tdf_shape<accumulator, M, N, K> { enum { R = M, C = N }; };

template <typename Use, int M, int N, int K, typename T, typename Layout = void>
struct fragment {
  typedef typename tdf_storage<T>::type element_type;
  enum { rows = tdf_shape<Use, M, N, K>::R, cols = tdf_shape<Use, M, N, K>::C };
  static const int num_elements = rows * cols;
  element_type x[rows * cols];
  // the layout a fragment was declared with (accumulators take theirs at load/store time)
  static constexpr bool col = false;
};
template <typename Use, int M, int N, int K, typename T>
struct fragment<Use, M, N, K, T, col_major> : fragment<Use, M, N, K, T, void> {
  static constexpr bool col = true;
};
template <typename Use, int M, int N, int K, typename T>
struct fragment<Use, M, N, K, T, row_major> : fragment<Use, M, N, K, T, void> {};

inline void tdf_warp_sync_op() { __syncwarp(); }

// Round to TF32 (10 mantissa bits), nearest even, as __float_to_tf32 does.
inline float __float_to_tf32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0xfffu + ((u >> 13) & 1u)) & ~0x1fffu;
  std::memcpy(&f, &u, 4);
  return f;
}
// What a tensor core reads of a tf32 operand: its top 19 bits (the low mantissa bits ignored).
inline float tdf_tf32_operand(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u &= ~0x1fffu;
  std::memcpy(&f, &u, 4);
  return f;
}
template <typename T> inline float tdf_operand(const T& v, bool) { return tdf_to_float(v); }
inline float tdf_operand(float v, bool tf32) { return tf32 ? tdf_tf32_operand(v) : v; }

template <typename Use, int M, int N, int K, typename T, typename L>
inline void fill_fragment(fragment<Use, M, N, K, T, L>& f,
                          typename fragment<Use, M, N, K, T, L>::element_type v) {
  tdf_warp_sync_op();
  for (int i = 0; i < f.num_elements; ++i) f.x[i] = v;
}

// matrix_a / matrix_b: the layout is the fragment's; ldm is in elements.
template <typename Use, int M, int N, int K, typename T, typename L, typename P>
inline void load_matrix_sync(fragment<Use, M, N, K, T, L>& f, const P* p, unsigned ldm) {
  tdf_warp_sync_op();
  typedef fragment<Use, M, N, K, T, L> F;
  for (int r = 0; r < F::rows; ++r)
    for (int c = 0; c < F::cols; ++c)
      f.x[r * F::cols + c] = F::col ? p[(size_t)c * ldm + r] : p[(size_t)r * ldm + c];
}
// accumulators: the memory layout is given at the call.
template <int M, int N, int K, typename T, typename P>
inline void load_matrix_sync(fragment<accumulator, M, N, K, T>& f, const P* p, unsigned ldm,
                             layout_t layout) {
  tdf_warp_sync_op();
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c)
      f.x[r * N + c] = layout == mem_col_major ? p[(size_t)c * ldm + r] : p[(size_t)r * ldm + c];
}
template <int M, int N, int K, typename T, typename P>
inline void store_matrix_sync(P* p, const fragment<accumulator, M, N, K, T>& f, unsigned ldm,
                              layout_t layout) {
  tdf_warp_sync_op();
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) {
      P& dst = layout == mem_col_major ? p[(size_t)c * ldm + r] : p[(size_t)r * ldm + c];
      dst = (P)f.x[r * N + c];
    }
}

// d = a * b + c, accumulated in the accumulator's type, k in order.
template <int M, int N, int K, typename TA, typename LA, typename TB, typename LB, typename TC>
inline void mma_sync(fragment<accumulator, M, N, K, TC>& d,
                     const fragment<matrix_a, M, N, K, TA, LA>& a,
                     const fragment<matrix_b, M, N, K, TB, LB>& b,
                     const fragment<accumulator, M, N, K, TC>& c) {
  tdf_warp_sync_op();
  const bool tf32 = std::is_same<TA, precision::tf32>::value;
  TC out[M * N];
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      TC s = c.x[i * N + j];
      for (int k = 0; k < K; ++k)
        s += (TC)tdf_operand(a.x[i * K + k], tf32) * (TC)tdf_operand(b.x[k * N + j], tf32);
      out[i * N + j] = s;
    }
  for (int e = 0; e < M * N; ++e) d.x[e] = out[e];
}

}  // namespace wmma
}  // namespace nvcuda
