"""Pieces every CUDA generator shares: C types, launch shapes, index arithmetic, the prelude.

>>> launch_1d(10)
((1, 1, 1), (32, 1, 1))
>>> launch_1d(1 << 20)[0]
(1056, 1, 1)
>>> strides((2, 3, 4))
(12, 4, 1)
>>> broadcast_index("i", (4, 2, 3), (4, 1, 3))
'((i / 6LL) * 3LL + (i % 3LL))'
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from tdflow.dialect.element_types import INT_TYPES
from tdflow.lowering.elementwise_cuda import C_TYPES

__all__ = ["C_TYPES", "INT_LIMITS", "c_int_literal", "ctype", "launch_1d", "strides", "broadcast_index", "prelude",
           "MAX_GRID", "is_float", "acc_type", "load", "store", "unravel"]

#: Blocks a grid-stride launch uses at most: 8 per SM of an H200 (132 SMs); each thread then
#: loops, which keeps launches cheap and lets the simulator run big tensors.
MAX_GRID = 132 * 8
FLOATS = ("f16", "bf16", "f32", "f64")


def c_int_literal(v: int) -> str:
    """A C literal of the integer ``v`` with a type that holds it; the most negative 32- and
    64-bit values have none, so they are expressions.

    >>> c_int_literal(-128), c_int_literal(-(1 << 63)), c_int_literal((1 << 64) - 1)
    ('(-128)', '(-9223372036854775807LL - 1)', '18446744073709551615ULL')
    """
    if v == -(1 << 63):
        return "(-9223372036854775807LL - 1)"
    if v == -(1 << 31):
        return "(-2147483647 - 1)"
    text = f"{v}ULL" if v >= 1 << 63 else f"{v}LL" if abs(v) >= 1 << 31 else str(v)
    return f"({text})" if v < 0 else text


#: (lowest, highest) of each integer dtype as C literals (max/min identities, pool padding).
INT_LIMITS = {n: (c_int_literal(t.range[0]), c_int_literal(t.range[1]))
              for n, t in INT_TYPES.items()}


def ctype(dtype: str) -> str:
    """The C type of an MLIR dtype: ``ctype("f32") == "float"``."""
    try:
        return C_TYPES[dtype]
    except KeyError:
        raise ValueError(f"dtype {dtype} has no CUDA C type") from None


def is_float(dtype: str) -> bool:
    return dtype in FLOATS


def acc_type(dtype: str) -> str:
    """The C type arithmetic on ``dtype`` runs in: half types compute in float."""
    if dtype in ("f16", "bf16", "f32"):
        return "float"
    if dtype == "f64":
        return "double"
    if dtype == "i1":
        return "int"
    return ctype(dtype)


def load(dtype: str, text: str) -> str:
    """``text`` (an lvalue of ``dtype``) widened to :func:`acc_type`."""
    if dtype == "f16":
        return f"__half2float({text})"
    if dtype == "bf16":
        return f"__bfloat162float({text})"
    return f"(({acc_type(dtype)})({text}))" if dtype == "i1" else text


def store(dtype: str, text: str) -> str:
    """An :func:`acc_type` value ``text`` narrowed to ``dtype`` for storing."""
    if dtype == "f16":
        return f"__float2half({text})"
    if dtype == "bf16":
        return f"__float2bfloat16({text})"
    return f"(({ctype(dtype)})({text}))"


def launch_1d(n: int, per_thread: int = 1, block: int = 256) -> tuple[tuple[int, int, int],
                                                                       tuple[int, int, int]]:
    """``(grid, block)`` of a grid-stride loop over ``n`` items, ``per_thread`` each."""
    work = max(1, -(-n // per_thread))
    if work < block:
        block = max(32, -(-work // 32) * 32)
    grid = min(MAX_GRID, max(1, -(-work // block)))
    return (grid, 1, 1), (block, 1, 1)


def strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major element strides of ``shape``."""
    out = []
    acc = 1
    for d in reversed(tuple(shape)):
        out.append(acc)
        acc *= d
    return tuple(reversed(out))


def unravel(index: str, shape: Sequence[int]) -> list[str]:
    """C expressions of each coordinate of flat ``index`` in ``shape`` (row-major)."""
    st = strides(shape)
    return [f"(({index} / {s}LL) % {d}LL)" if s > 1 else f"({index} % {d}LL)"
            for s, d in zip(st, shape)]


def broadcast_index(index: str, out_shape: Sequence[int], in_shape: Sequence[int]) -> str:
    """C expression of the element of an input of ``in_shape`` that numpy broadcasting pairs
    with flat output element ``index`` (trailing dimensions aligned; size-1 dims repeat)."""
    out_shape, in_shape = tuple(out_shape), tuple(in_shape)
    if in_shape == out_shape:
        return index
    n_in = 1
    for d in in_shape:
        n_in *= d
    if n_in == 1:
        return "0"
    pad = (1,) * (len(out_shape) - len(in_shape)) + in_shape
    in_st = strides(pad)
    out_st = strides(out_shape)
    terms = []
    # Merge runs of dims that are all kept: one division and modulo per run, not per dim.
    d = 0
    while d < len(out_shape):
        if pad[d] == 1:
            d += 1
            continue
        e = d
        while e + 1 < len(out_shape) and pad[e + 1] == out_shape[e + 1]:
            e += 1
        span = 1
        for k in range(d, e + 1):
            span *= out_shape[k]
        inner = out_st[e]
        coord = f"({index} % {span * inner}LL)" if d == 0 else f"(({index} / {inner}LL) % {span}LL)"
        if d == 0 and inner > 1:
            coord = f"({index} / {inner}LL)"
        elif d > 0 and inner == 1:
            coord = f"({index} % {span}LL)"
        stride = in_st[e]
        terms.append(coord if stride == 1 else f"{coord} * {stride}LL")
        d = e + 1
    return "(" + " + ".join(terms) + ")" if terms else "0"


_NVCC_HEADERS = """#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <mma.h>
#include <stdint.h>
#include <math.h>
"""


@cache
def device_header() -> str:
    """``tdf_device.h``: the ``__device__`` helpers generated kernels share (reductions, RNG)."""
    from importlib import resources  # here: ~4 ms of every CPU start-up otherwise

    return resources.files("tdflow.lowering.cuda").joinpath("tdf_device.h").read_text()


def prelude(target: str) -> str:
    """What precedes the generated kernels: CUDA's headers (``"nvcc"``) or the simulator's shim
    (``"sim"``, which defines the same names for g++), then :func:`device_header`."""
    if target == "nvcc":
        head = _NVCC_HEADERS
    elif target == "sim":
        # the shim, then its extensions (cudasim_wmma.h, ...) in name order
        from importlib import resources

        folder = resources.files("tdflow.lowering.cuda")
        names = sorted(p.name for p in folder.iterdir()
                       if p.name.startswith("cudasim_") and p.name.endswith(".h"))
        names.remove("cudasim_shim.h")
        head = "\n".join(folder.joinpath(n).read_text() for n in ["cudasim_shim.h", *names])
    else:
        raise ValueError(f"unknown prelude target {target!r} (nvcc or sim)")
    return head + "\n" + device_header()
