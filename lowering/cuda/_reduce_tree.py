"""Reductions over axes as chains of (outer, reduced, inner) stages: :func:`reduce_code`, the
engine of ``reduce_sum``, ``reduce_max``, ``reduce_min``, ``reduce_prod`` and
``reduce_sum_like``.

The input's dims are collapsed into alternating runs of kept and reduced dims. Each reduced
run is one *stage* that views its source as ``(O, R, I)`` (outer, reduced, inner) and reduces
the middle; with several reduced runs the stages chain through scratch buffers (the last run
first), which is exact for these associative reductions. A stage picks its kernel from the
shape: one thread per output for short extents (R <= 16), a 32x8 tile whose threads walk
columns when the inner extent is wide (I >= 32, so loads coalesce), else one warp (R <= 2048)
or one 256-thread block per output. When a stage would launch too few blocks to fill an H200
and R is long, it runs in two passes: chunks of R reduce to partials ``(O, S, I)`` in scratch,
then a second stage reduces the S partials.

Accumulation as the numpy kernels: half types in float, f32 sums and products in double
(numpy's pairwise f32 sum is closer than a float sum of 10^5 terms), integers in unsigned 64
bits (the result wraps in its own type, as numpy's does); max/min propagate NaN and give
the type's lowest/highest value over an empty extent.

>>> code = reduce_code("max", TensorSpec((4, 6000), "f32"), (1,), TensorSpec((4,), "f32"))
>>> [ln.grid for ln in code.launches]        # 4 rows of 6000: two passes of 3 chunks
[(2, 1, 1), (1, 1, 1)]
"""

from __future__ import annotations

from collections.abc import Sequence

from .code import KernelCode, LaunchSpec, TensorSpec
from .common import INT_LIMITS, MAX_GRID, ctype, load, store

_INT_LIMITS = {"i1": ("0", "1"), **INT_LIMITS}


# max/min of an integer type accumulate in a C type holding every value (not 8-bit ones:
# warp shuffles move 32 and 64 bits).
_ORDER_ACC = {"i64": "long long", "ui32": "unsigned", "ui64": "unsigned long long"}


_SIZE = {"float": 4, "double": 8, "int": 4, "unsigned": 4, "long long": 8,
         "unsigned long long": 8}


THREAD_MAX, WARP_MAX = 16, 2048  # reduced extents served by a thread / a warp per output


SPLIT_MIN, CHUNK = 4096, 2048    # two passes from this extent on, chunks of about CHUNK


FEW_BLOCKS = 2 * 132             # fewer blocks than this leave H200 SMs idle


def acc_of(kind: str, dtype: str) -> str:
    """The C type ``kind`` ("sum", "prod", "max", "min") accumulates ``dtype`` in.

    >>> acc_of("sum", "f32"), acc_of("max", "f32"), acc_of("sum", "i8"), acc_of("min", "i1")
    ('double', 'float', 'unsigned long long', 'int')
    """
    if dtype in ("f16", "bf16"):
        return "float"
    if kind in ("sum", "prod"):
        return "double" if dtype in ("f32", "f64") else "unsigned long long"
    return {"f32": "float", "f64": "double", **_ORDER_ACC}.get(dtype, "int")


def _identity(kind: str, dtype: str) -> str:
    if kind == "sum":
        return "0"
    if kind == "prod":
        return "1"
    if dtype in _INT_LIMITS:
        return _INT_LIMITS[dtype][0 if kind == "max" else 1]
    return "(-INFINITY)" if kind == "max" else "INFINITY"


_COMBINE = {"sum": "a + b", "prod": "a * b",
            # b != b: a NaN wins, whichever side it is on (numpy's max/min propagate NaN)
            "max": "(b > a || b != b) ? b : a", "min": "(b < a || b != b) ? b : a"}


def _helpers(kind: str, acc: str) -> str:
    return f"""typedef {acc} acc_t;
__device__ __forceinline__ acc_t comb(acc_t a, acc_t b) {{ return {_COMBINE[kind]}; }}
__device__ __forceinline__ acc_t warp_red(acc_t v) {{
  for (int o = 16; o > 0; o >>= 1) v = comb(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}}
// every thread of the block calls it; `sh` is a __shared__ acc_t[32] of the caller
__device__ __forceinline__ acc_t block_red(acc_t v, acc_t* sh, acc_t ident) {{
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = warp_red(v);
  __syncthreads();  // sh may still be read by the previous row's call
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  return warp_red(lane < nw ? sh[lane] : ident);
}}
"""


class _Stage:
    """Reduce ``(O, R, I) -> (O, S, I)`` over chunks of ``ch`` (S = 1: the whole extent)."""

    def __init__(self, o: int, r: int, i: int, s: int = 1) -> None:
        self.o, self.r, self.i, self.s = o, r, i, s
        self.ch = -(-r // s) if r else 0
        self.rows = o * s * i

    def variant(self) -> str:
        if self.ch <= THREAD_MAX:
            return "thread"
        if self.i >= 32:
            return "column"
        return "warp" if self.ch <= WARP_MAX else "block"

    def blocks(self) -> int:
        v = self.variant()
        if v == "thread":
            return -(-self.rows // 256)
        if v == "warp":
            return -(-self.rows // 8)
        if v == "column":
            return self.o * self.s * -(-self.i // 32)
        return self.rows


def _plan(o: int, r: int, i: int) -> list[_Stage]:
    """One stage, or two when few blocks would reduce a long extent."""
    one = _Stage(o, r, i)
    if r < SPLIT_MIN or one.blocks() >= FEW_BLOCKS:
        return [one]
    s = min(-(-r // CHUNK), max(2, MAX_GRID // max(1, one.blocks())))
    first = _Stage(o, r, i, s)
    first = _Stage(o, r, i, -(-r // first.ch))  # no empty chunk
    return [first, _Stage(o, first.s, i)]


def _kernel(name: str, st: _Stage, src_t: str, ld: str, dst_t: str, sto: str,
            ident: str, idx: str) -> tuple[str, tuple[int, int, int], tuple[int, int, int]]:
    """Source, grid and block of one stage: ``ld``/``sto`` format a load of ``{}`` / a store."""
    r, i, s, ch = st.r, st.i, st.s, st.ch
    head = (f'extern "C" __global__ void {name}(const {src_t}* __restrict__ src, '
            f"{dst_t}* __restrict__ dst) {{\n")
    # row q of (O, S, I): o = q / (S*I), s = (q / I) % S, i = q % I
    where = (f"    const {idx} o = q / {s * i}, s = (q / {i}) % {s}, i = q % {i};\n"
             f"    const {idx} r0 = s * {ch}, r1 = r0 + {ch} < {r} ? r0 + {ch} : {r};\n"
             f"    const {src_t}* p = src + o * {r * i} + i;\n")
    acc = ld.format(f"p[(long long)r * {i}]")
    v = st.variant()
    if v == "thread":
        body = (f"  for ({idx} q = blockIdx.x * blockDim.x + threadIdx.x; q < {st.rows}; "
                f"q += gridDim.x * blockDim.x) {{\n{where}"
                f"    acc_t a = {ident};\n"
                f"    for ({idx} r = r0; r < r1; ++r) a = comb(a, {acc});\n"
                f"    dst[q] = {sto.format('a')};\n  }}\n")
        grid, block = min(MAX_GRID, st.blocks()), (max(32, min(256, -(-st.rows // 32) * 32)),)
    elif v in ("warp", "block"):
        warp = v == "warp"
        lane, step, per = ("(threadIdx.x & 31)", "32", "(blockDim.x >> 5)") if warp else (
            "threadIdx.x", "blockDim.x", "1")
        first = f"blockIdx.x * {per} + (threadIdx.x >> 5)" if warp else "blockIdx.x"
        red = "warp_red(a)" if warp else f"block_red(a, sh, {ident})"
        body = ("" if warp else "  __shared__ acc_t sh[32];\n") + (
            f"  for ({idx} q = {first}; q < {st.rows}; q += gridDim.x * {per}) {{\n{where}"
            f"    acc_t a = {ident};\n"
            "#pragma unroll 4\n"
            f"    for ({idx} r = r0 + {lane}; r < r1; r += {step}) a = comb(a, {acc});\n"
            f"    a = {red};\n"
            f"    if ({lane} == 0) dst[q] = {sto.format('a')};\n  }}\n")
        grid, block = min(MAX_GRID, st.blocks()), (256,)
    else:  # column: 32 columns x 8 slices of R per block; loads along i coalesce
        tiles_i = -(-i // 32)
        body = (
            "  __shared__ acc_t sh[8][33];\n"
            "  const int tx = threadIdx.x, ty = threadIdx.y;\n"
            f"  for ({idx} t = blockIdx.x; t < {st.blocks()}; t += gridDim.x) {{\n"
            f"    const {idx} os = t / {tiles_i}, o = os / {s}, s = os % {s};\n"
            f"    const {idx} i = (t % {tiles_i}) * 32 + tx;\n"
            f"    const {idx} r0 = s * {ch}, r1 = r0 + {ch} < {r} ? r0 + {ch} : {r};\n"
            f"    acc_t a = {ident};\n"
            f"    if (i < {i}) {{\n"
            f"      const {src_t}* p = src + o * {r * i} + i;\n"
            "#pragma unroll 4\n"
            f"      for ({idx} r = r0 + ty; r < r1; r += 8) a = comb(a, {acc});\n"
            "    }\n"
            "    sh[ty][tx] = a;\n"
            "    __syncthreads();\n"
            f"    if (ty == 0 && i < {i}) {{\n"
            "      for (int k = 1; k < 8; ++k) a = comb(a, sh[k][tx]);\n"
            f"      dst[os * {i} + i] = {sto.format('a')};\n"
            "    }\n"
            "    __syncthreads();  // sh is rewritten by the next tile\n  }\n")
        grid, block = min(MAX_GRID, st.blocks()), (32, 8)
    return head + body + "}\n", (max(1, grid), 1, 1), tuple(block) + (1,) * (3 - len(block))


def _runs(shape: Sequence[int], axes: set[int]) -> list[list]:
    """Collapsed ``[size, reduced]`` runs of ``shape`` (size-1 dims dropped)."""
    return _merge([[n, d in axes] for d, n in enumerate(shape) if n != 1])


def reduce_code(kind: str, x: TensorSpec, axes: Sequence[int], out: TensorSpec,
                op: str = "") -> KernelCode:
    """Kernels reducing ``x`` over ``axes`` (normalised, non-negative) into ``out`` with the
    ``kind`` reduction ("sum", "prod", "max", "min"); ``out`` has the kept dims' elements.

    >>> code = reduce_code("sum", TensorSpec((3, 5, 40), "f32"), (0, 2), TensorSpec((5,), "f32"))
    >>> [ln.args for ln in code.launches], code.scratch   # axis 2 into scratch, then axis 0
    ([('in0', 'tmp0'), ('tmp0', 'out0')], (120,))
    """
    acc = acc_of(kind, x.dtype)
    ident = f"(acc_t){_identity(kind, x.dtype)}"
    runs = _runs(x.shape, set(axes))
    if not any(red for _, red in runs):
        runs = [[x.numel, False], [1, True]]  # nothing reduced: a copy (R = 1)
    idx = "int" if x.numel < (1 << 31) - 1 else "long long"
    src, src_t = "in0", ctype(x.dtype)
    ld = f"(acc_t)({load(x.dtype, '{}')})"
    parts, launches, scratch = [_helpers(kind, acc)], [], []
    if out.numel == 0:
        return KernelCode(op, parts[0], (), ())
    while True:
        k = max(j for j, (_, red) in enumerate(runs) if red)
        r, o, i = runs[k][0], _prod(runs[:k]), _prod(runs[k + 1:])
        runs = _merge(runs[:k] + runs[k + 1:])
        final = not any(red for _, red in runs)
        stages = _plan(o, r, i)
        for n, st in enumerate(stages):
            if final and n == len(stages) - 1:
                dst, dst_t, sto = "out0", ctype(out.dtype), store(out.dtype, "{}")
            else:
                dst, dst_t, sto = f"tmp{len(scratch)}", "acc_t", "{}"
                scratch.append(max(1, st.rows) * _SIZE[acc])
            name = f"reduce{len(launches)}"
            text, grid, block = _kernel(name, st, src_t, ld, dst_t, sto, ident, idx)
            parts.append(text)
            launches.append(LaunchSpec(name, grid, block, (src, dst)))
            src, src_t, ld = dst, "acc_t", "{}"
        if final:
            return KernelCode(op, "\n".join(parts), tuple(launches), tuple(scratch))


def _prod(runs: Sequence[list]) -> int:
    n = 1
    for size, _ in runs:
        n *= size
    return n


def _merge(runs: Sequence[list]) -> list[list]:
    out: list[list] = []
    for n, red in runs:
        if out and out[-1][1] == red:
            out[-1][0] *= n
        else:
            out.append([n, red])
    return out
