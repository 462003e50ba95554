"""Helpers shared by the CPU kernels: outputs, optional operands, axes and accumulation types."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.dialect.element_types import FLOAT_DTYPES, INT_DTYPES

# The dtype sets kernels register with, from the one table of element types.
FLOATS = frozenset(FLOAT_DTYPES)
INTS = frozenset(INT_DTYPES)  # i8, i16, i32, i64, ui8, ui16, ui32, ui64
NUMERIC = FLOATS | INTS
ALL_DTYPES = NUMERIC | {"i1"}


def out_buffer(outs: Sequence[Any], i: int, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """``outs[i]`` when preallocated (its shape is checked), else a new array."""
    out = outs[i] if i < len(outs) else None
    if out is None:
        return np.empty(shape, dtype)
    if out.shape != tuple(shape):
        raise ValueError(f"preallocated output {i} has shape {out.shape}, expected {tuple(shape)}")
    return out


def store(outs: Sequence[Any], res: np.ndarray, dtype: Any) -> np.ndarray:
    """``res`` as output 0: copied into ``outs[0]`` when preallocated (cast on store), else a
    new C-contiguous array of ``dtype`` (``res`` may be a strided view, e.g. after a moveaxis)."""
    out = outs[0] if outs else None
    if out is None:
        return np.ascontiguousarray(res, dtype=dtype)
    np.copyto(out, res, casting="unsafe")
    return out


def operands(inputs: Sequence[Any], attrs: Mapping[str, Any], count: int) -> list[Any]:
    """``inputs`` as ``count`` positional operands, absent optional ones ``None``.

    Accepts the padded form (``[x, w, None, add]``), the trailing-omitted form (``[x, w]``) and,
    when ``attrs`` has MLIR's ``operandSegmentSizes``, the compact form (``[x, w, add]`` with
    ``operandSegmentSizes = [1, 1, 0, 1]``).
    """
    seg = attrs.get("operandSegmentSizes")
    if seg is not None and len(seg) == count and len(inputs) == sum(seg) and len(inputs) < count:
        it = iter(inputs)
        return [next(it) if n else None for n in seg]
    if len(inputs) > count:
        raise ValueError(f"expected at most {count} operands, got {len(inputs)}")
    return list(inputs) + [None] * (count - len(inputs))


def norm_axis(axis: int, ndim: int, what: str = "axis") -> int:
    """A non-negative axis; ``IndexError`` naming the bad value."""
    a = int(axis)
    if a < 0:
        a += ndim
    if not 0 <= a < max(ndim, 1):
        raise IndexError(f"{what} {axis} is out of range for a tensor of rank {ndim}")
    return a


def norm_axes(axes: Sequence[int], ndim: int) -> tuple[int, ...]:
    return tuple(sorted({norm_axis(a, ndim) for a in axes}))


def acc_dtype(dt: np.dtype) -> np.dtype:
    """Accumulation type: half types accumulate in f32, others in themselves."""
    return np.dtype(np.float32) if dt == np.float16 else dt


def settle(got: Sequence[Any], outs: Sequence[Any]) -> None:
    """Copy the results a kernel returned as new arrays into the buffers it was given (a
    kernel may write ``outs`` or return fresh arrays; callers always read ``outs``)."""
    for g, o in zip(got, outs):
        if g is not o and o is not None:
            np.copyto(o, g, casting="unsafe")
