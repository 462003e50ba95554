"""Helpers the rule modules share: axes, casts, reshapes and layout moves written once.

>>> norm_axes([-1, 0], 3)
[2, 0]
>>> broadcast_shape((2, 1, 4), (3, 1))
(2, 3, 4)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .api import Lowerer, LoweringError

FLOATS = ("f16", "bf16", "f32", "f64")


def norm_axis(axis: int, rank: int, cx: Lowerer | None = None) -> int:
    """``axis`` made non-negative; a located error when it is out of range."""
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < max(rank, 1):
        raise LoweringError(f"axis {axis} is out of range for rank {rank}",
                            cx.node if cx is not None else None)
    return a


def norm_axes(axes: Sequence[int], rank: int, cx: Lowerer | None = None) -> list[int]:
    return [norm_axis(int(a), rank, cx) for a in axes]


def broadcast_shape(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...]:
    """numpy's broadcast of two shapes."""
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise ValueError(f"shapes {a} and {b} do not broadcast")
        out.append(y if x == 1 else x)
    return tuple(out)


def cast(cx: Lowerer, x: Any, dtype: str) -> Any:
    """``x`` converted to ``dtype`` (no op when it already has it)."""
    if cx.type_of(x).dtype == dtype:
        return x
    return cx.op("tdflow.cast", [x], {"dtype": dtype})


def reshape(cx: Lowerer, x: Any, shape: Sequence[int]) -> Any:
    shape = [int(d) for d in shape]
    if list(cx.shape_of(x)) == shape:
        return x
    return cx.op("tdflow.reshape", [x], {"shape": shape})


def transpose(cx: Lowerer, x: Any, perm: Sequence[int]) -> Any:
    perm = [int(p) for p in perm]
    if perm == list(range(len(perm))):
        return x
    return cx.op("tdflow.transpose", [x], {"perm": perm})


def move_axis_last(cx: Lowerer, x: Any, axis: int) -> tuple[Any, list[int] | None]:
    """``x`` with ``axis`` moved last, and the permutation that undoes it (``None``: none)."""
    rank = len(cx.shape_of(x))
    if axis == rank - 1:
        return x, None
    perm = [d for d in range(rank) if d != axis] + [axis]
    inv = [perm.index(d) for d in range(rank)]
    return transpose(cx, x, perm), inv


def on_last_axis(cx: Lowerer, x: Any, axis: int, apply: Any) -> Any:
    """``apply(x')`` computed with ``axis`` moved last, moved back afterwards (for tdflow ops
    that work on the last axis: softmax, log_softmax)."""
    y, inv = move_axis_last(cx, x, axis)
    out = apply(y)
    return out if inv is None else transpose(cx, out, inv)


def unsqueeze(cx: Lowerer, x: Any, axes: Sequence[int]) -> Any:
    """``x`` with size-1 dims inserted at ``axes`` (of the result)."""
    shape = list(cx.shape_of(x))
    rank = len(shape) + len(axes)
    for a in sorted(norm_axes(axes, rank, cx)):
        shape.insert(a, 1)
    return reshape(cx, x, shape)


def binary(cx: Lowerer, name: str, a: Any, b: Any) -> Any:
    return cx.op(name, [a, b], {})


def static_ints(cx: Lowerer, v: Any, what: str) -> list[int]:
    """A shape-like input's integers (from a constant, or specialised on)."""
    return [int(i) for i in cx.need_const(v, what).reshape(-1)]
