"""Scatter-adds with atomics, ``out = zeros; out[o, ids[j], r] += data[o, j, r]``
(``embedding_grad``, ``unsorted_segment_sum_like``).

``atomicAdd`` goes straight into the result for f32, f64, i32 and i64 (zeroed first), into a
zeroed 32-bit scratch for f16, bf16 (float, as numpy accumulates halves in f32) and i8
(unsigned, wrapping as numpy's int8 sums do), then converted.

>>> code = scatter_add("t", TensorSpec((4, 3), "f16"), TensorSpec((4,), "i64"),
...                    TensorSpec((2, 3), "f16"), 0)
>>> [ln.kernel for ln in code.launches]
['zero_acc', 'scatter_add', 'finish']
"""

from __future__ import annotations

from tdflow.dialect.element_types import INT_TYPES

from ._layout import empty_code, exact_value, fill, index_type, loop, suffix
from ._lines import prod
from .code import CudaCodegenError, KernelCode, LaunchSpec, TensorSpec
from .common import ctype, launch_1d, load, store

# -- scatter-adds ---------------------------------------------------------------------------------
_DIV_HELPERS = """__device__ __forceinline__ float tdf_div(float a, float b) {
#ifdef __CUDACC__
  return __fdiv_rn(a, b);  // IEEE division even under --use_fast_math, as numpy divides
#else
  return a / b;
#endif
}
__device__ __forceinline__ double tdf_div(double a, double b) { return a / b; }
"""


def _zero_kernel(name: str, words: int, arg: str) -> tuple[str, LaunchSpec, int]:
    """A kernel zeroing scratch buffer ``arg`` of ``words`` 32-bit words (the contract does not
    promise zeroed scratch): its source, launch and byte size."""
    it = index_type(words)
    src = (f'extern "C" __global__ void {name}(unsigned* __restrict__ p) {{\n'
           f"  {loop('i', words, it)} p[i] = 0u; }}\n}}\n")
    grid, block = launch_1d(words)
    return src, LaunchSpec(name, grid, block, (arg,)), words * 4


def scatter_add(op: str, data: TensorSpec, ids: TensorSpec, out: TensorSpec, axis: int,
                skip: int | None = None, by_freq: bool = False) -> KernelCode:
    """``out = zeros; out[o, ids[j], r] += data[o, j, r]`` for ids in ``[0, n)`` other than
    ``skip``; with ``by_freq`` each ``data`` row is first divided by its id's count."""
    like = out.shape
    n, inner = like[axis], prod(like[axis + 1:])
    want = like[:axis] + ids.shape + like[axis + 1:]
    if data.shape != want:
        raise CudaCodegenError(f"{op}: data has shape {data.shape}, expected {want}")
    if out.numel == 0:
        return empty_code(op)
    dt = out.dtype
    if data.numel == 0 or n == 0:
        return fill(op, out, exact_value(0, dt))
    it = index_type(data, out)
    sfx = suffix(it)
    J = ids.numel
    # where to accumulate: the result itself where CUDA has the atomic, else 32-bit scratch
    direct = {"f32": "float", "f64": "double", "i32": "int", "i64": "unsigned long long",
              "ui32": "unsigned", "ui64": "unsigned long long"}
    acc = direct.get(dt) or ("float" if dt in ("f16", "bf16") else "unsigned")
    parts, launches, scratch = [_DIV_HELPERS], [], []
    target = "out0" if dt in direct else "tmp0"
    if dt not in direct:
        src, ln, nbytes = _zero_kernel("zero_acc", out.numel, "tmp0")
        parts.append(src)
        launches.append(ln)
        scratch.append(nbytes)
    ok = f"k >= 0 && k < {n}LL" + (f" && k != {skip}LL" if skip is not None else "")
    t, ti = ctype(data.dtype), ctype(ids.dtype)
    cnt = "tmp1" if scratch else "tmp0"
    if by_freq:
        src, ln, nbytes = _zero_kernel("zero_count", n, cnt)
        parts.append(src)
        launches.append(ln)
        scratch.append(nbytes)
        parts.append(f'extern "C" __global__ void count(const {ti}* __restrict__ ix, '
                     f"int* __restrict__ cnt) {{\n  {loop('j', J, index_type(J))}\n"
                     f"    const long long k = (long long)ix[j];\n"
                     f"    if (k >= 0 && k < {n}LL) atomicAdd(&cnt[k], 1);\n  }}\n}}\n")
        grid, block = launch_1d(J)
        launches.append(LaunchSpec("count", grid, block, ("in2" if op.endswith("grad") else "in1",
                                                          cnt)))
    j = f"(e / {inner}{sfx}) % {J}{sfx}" if inner > 1 else f"e % {J}{sfx}"
    value = load(data.dtype, "d[e]")
    if by_freq:  # numpy: dy / max(count, 1) in the accumulation type, rounded back to dy's
        wide = "double" if data.dtype == "f64" else "float"
        q = f"tdf_div(({wide}){value}, ({wide})(c < 1 ? 1 : c))"
        value = load(data.dtype, store(data.dtype, q)) if data.dtype in ("f16", "bf16") else q
    add = (f"atomicAdd(&a[slot], ({acc})({value}))" if acc != "unsigned long long" else
           f"atomicAdd(&a[slot], (unsigned long long)(long long)({value}))")
    params = [f"const {t}* __restrict__ d", f"const {ti}* __restrict__ ix", f"{acc}* a"]
    if by_freq:
        params.append("const int* __restrict__ cnt")
    parts.append(f"""extern "C" __global__ void scatter_add({", ".join(params)}) {{
  {loop('e', data.numel, it)}
    const long long k = (long long)ix[{j}];
    if ({ok}) {{
      const {it} slot = ((e / {J * inner}{sfx}) * {n}{sfx} + ({it})k) * {inner}{sfx} + e % {inner}{sfx};
      {"const int c = cnt[k];" if by_freq else ""}
      {add};
    }}
  }}
}}
""")
    ins_ = ("in0", "in2" if op.endswith("grad") else "in1")
    grid, block = launch_1d(data.numel)
    launches.append(LaunchSpec("scatter_add", grid, block,
                               ins_ + (target,) + ((cnt,) if by_freq else ())))
    if dt not in direct:
        # 8- and 16-bit integers wrap as numpy's sums do: the low bits of the 32-bit sum
        cv = (store(dt, "a[i]") if dt in ("f16", "bf16")
              else f"({ctype(dt)})({INT_TYPES[dt].c_unsigned})a[i]")
        parts.append(f'extern "C" __global__ void finish(const {acc}* __restrict__ a, '
                     f"{ctype(dt)}* __restrict__ y) {{\n  {loop('i', out.numel, index_type(out))}"
                     f" y[i] = {cv}; }}\n}}\n")
        grid, block = launch_1d(out.numel)
        launches.append(LaunchSpec("finish", grid, block, ("tmp0", "out0")))
    return KernelCode(op, "".join(parts), tuple(launches), tuple(scratch),
                      zero_outputs=(0,) if dt in direct else ())
