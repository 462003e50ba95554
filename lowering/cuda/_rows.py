"""Rows reduced by one warp or one block each (:class:`Rows`): the kernels of the softmax
family and of ``layer_norm``/``group_norm`` are built on it.

>>> Rows(64, 200, "float").warp, Rows(64, 4000, "float").cached, Rows(8, 9000, "float").cached
(True, True, False)
"""

from __future__ import annotations

from .code import LaunchSpec
from .common import MAX_GRID


def math_fn(name: str, acc: str) -> str:
    """The C function ``name`` ("exp", "log", "sqrt") of ``acc``.

    >>> math_fn("exp", "float"), math_fn("log", "double")
    ('expf', 'log')
    """
    return name + "f" if acc == "float" else name


class Rows:
    """``n`` rows of ``length`` elements, each row to one warp or one block of 256 threads.

    ``arrays`` is how many row-long arrays a thread would keep in registers: a row is cached
    when they fit in 16 registers a thread. The generated kernel iterates ``row``; its
    threads are ``tid`` in ``[0, gs)``; :meth:`loop` emits a loop over the thread's columns
    ``c`` (slot ``j`` when cached). ``rsum``/``rmax`` reduce over the row's threads.
    """

    def __init__(self, n: int, length: int, acc: str, arrays: int = 1) -> None:
        self.n, self.length, self.acc = n, length, acc
        # a warp for rows up to 256 (8 values a lane), else 256 or (rows > 4096) 512 threads;
        # at most 16 cached registers a thread keep ptxas well under 128 registers
        self.warp = length <= 256
        self.gs = 32 if self.warp else 256 if length <= 4096 else 512
        self.v = max(1, -(-length // self.gs))
        self.cached = self.v * arrays * (2 if acc == "double" else 1) <= 16
        self.idx = "int" if n * max(length, 1) < (1 << 31) - 1 else "long long"

    def helpers(self) -> str:
        """Typedef and row-wide reductions (``rmax`` propagates NaN, as numpy's max does)."""
        mx = "(b > a || b != b) ? b : a"
        if self.warp:
            red = """template <typename T> __device__ __forceinline__ T rsum(T v, T*) { return tdf_warp_sum(v); }
__device__ __forceinline__ acc_t rmax(acc_t v, acc_t*) {
  for (int o = 16; o > 0; o >>= 1) v = mx(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
"""
        else:
            red = """template <typename T> __device__ __forceinline__ T rsum(T v, T* sh) {
  return tdf_block_sum(v, sh);
}
__device__ __forceinline__ acc_t rmax(acc_t v, acc_t* sh) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int o = 16; o > 0; o >>= 1) v = mx(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads();  // sh may still be read by the previous reduction
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  v = sh[lane & (NW - 1)];  // every group of NW lanes holds all the warps' values
  for (int o = NW / 2; o > 0; o >>= 1) v = mx(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
"""
        nw = "" if self.warp else f"constexpr int NW = {self.gs // 32};  // warps a block\n"
        return (f"typedef {self.acc} acc_t;\n{nw}"
                f"__device__ __forceinline__ acc_t mx(acc_t a, acc_t b) {{ return {mx}; }}\n"
                + red)

    def kernel(self, name: str, params: tuple[list[str], list[str]],
               body: str) -> tuple[str, LaunchSpec]:
        """The kernel running ``body`` once per row (``row``, ``tid`` and ``sh`` in scope)."""
        if self.warp:
            head = ("  const int tid = threadIdx.x & 31;\n"
                    f"  for ({self.idx} row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);"
                    f" row < {self.n}; row += gridDim.x * (blockDim.x >> 5)) {{\n")
            per = min(8, self.n)
            launch = LaunchSpec(name, min(MAX_GRID, -(-self.n // per)), 32 * per, params[1])
        else:
            head = ("  const int tid = threadIdx.x;\n"
                    f"  for ({self.idx} row = blockIdx.x; row < {self.n}; row += gridDim.x) {{\n")
            launch = LaunchSpec(name, min(MAX_GRID, self.n), self.gs, params[1])
        shared = "  __shared__ acc_t sh[32];\n" if "sh)" in body else ""
        src = (f'extern "C" __global__ void {name}({", ".join(params[0])}) {{\n'
               + shared + head + body + "  }\n}\n")
        return src, launch

    def loop(self, stmt: str) -> str:
        """``stmt`` for each of this thread's columns ``c`` of the row."""
        if self.cached:
            return ("#pragma unroll\n"
                    f"    for (int j = 0; j < {self.v}; ++j) {{\n"
                    f"      const {self.idx} c = tid + j * {self.gs};\n"
                    f"      if (c < {self.length}) {{ {stmt} }}\n    }}\n")
        return (f"    for ({self.idx} c = tid; c < {self.length}; c += {self.gs}) {{ {stmt} }}\n")

    def cache(self, name: str, expr: str) -> str:
        """Read ``expr`` (of column ``c``) into registers once when the row is cached."""
        if not self.cached:
            return ""
        return f"    acc_t {name}[{self.v}];\n" + self.loop(f"{name}[j] = {expr};")

    def val(self, name: str, expr: str) -> str:
        """The cached value of column ``c``, or ``expr`` read again."""
        return f"{name}[j]" if self.cached else f"({expr})"

    def stats(self, x: str) -> str:
        """``m = max(x)`` and ``s = sum(exp(x - m))`` over the row, ``x`` a value of ``c``."""
        e = math_fn("exp", self.acc)
        if self.cached:
            return ("    acc_t m = -INFINITY;\n" + self.loop(f"m = mx(m, {x});")
                    + "    m = rmax(m, sh);\n    acc_t s = 0;\n"
                    + self.loop(f"s += {e}({x} - m);") + "    s = rsum(s, sh);\n")
        # online: rescale the running sum when the max grows; -inf adds nothing, NaN spreads
        return ("    acc_t m = -INFINITY, s = 0;\n"
                + self.loop(f"const acc_t x = {x}; if (x > m) {{ s = s * {e}(m - x) + 1; m = x; }}"
                            f" else if (x != -INFINITY) s += {e}(x - m);")
                + "    const acc_t mrow = rmax(m, sh);\n"
                f"    s = rsum(m == -INFINITY ? (acc_t)0 : s * {e}(m - mrow), sh);\n"
                # an infinite max makes x - max NaN in numpy: the whole row is NaN
                "    m = mrow;\n    if (m == INFINITY) s = NAN;\n")
