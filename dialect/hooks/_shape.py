"""Shape arithmetic shared by the hooks, with unknown dims (``None``) and unranked shapes.

>>> broadcast_shapes((4, 1, 8), (3, 1))
(4, 3, 8)
>>> broadcast_shapes((None, 8), (4, 8))
(4, 8)
>>> normalize_axis(-1, 3)
2
>>> conv_out_dim(32, 3, 1, 1, 1)
32
"""

from __future__ import annotations

from collections.abc import Sequence

from tdflow.dialect.element_types import FLOAT_DTYPES as _FLOATS
from tdflow.dialect.element_types import INT_DTYPES as _INTS

from .context import HookError

Shape = tuple  # tuple[int | None, ...]


def broadcast_shapes(a: Shape | None, b: Shape | None, *, names=("x", "y")) -> Shape | None:
    """numpy's broadcasting of two shapes; ``None`` dims stay unknown unless the other is known
    and not 1. Raises :class:`HookError` naming the second operand when the shapes clash."""
    if a is None or b is None:
        return None
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + tuple(a)
    pb = (1,) * (n - len(b)) + tuple(b)
    out = []
    for i, (x, y) in enumerate(zip(pa, pb)):
        if x == y:
            out.append(x)
        elif x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None:
            out.append(y)
        elif y is None:
            out.append(x)
        else:
            raise HookError(f"shapes {fmt(a)} of '{names[0]}' and {fmt(b)} of '{names[1]}' do not "
                            f"broadcast: dim {i - n + len(b) if i >= n - len(b) else i} is {x} vs {y}",
                            operand=names[1])
    return tuple(out)


def normalize_axis(axis: int, rank: int, *, attr: str = "axis") -> int:
    """``axis`` in ``[-rank, rank)`` made non-negative; :class:`HookError` naming ``attr`` otherwise."""
    if not -rank <= axis < rank:
        raise HookError(f"{attr} {axis} is out of range for a rank-{rank} tensor "
                        f"(expected {-rank} <= {attr} < {rank})", attr=attr)
    return axis + rank if axis < 0 else axis


def normalize_axes(axes: Sequence[int], rank: int, *, attr: str = "axis") -> tuple[int, ...]:
    out = tuple(normalize_axis(a, rank, attr=attr) for a in axes)
    if len(set(out)) != len(out):
        raise HookError(f"{attr} {list(axes)} names a dimension twice", attr=attr)
    return out


def same_dim(a: int | None, b: int | None) -> bool:
    """Dims agree when equal or either is unknown."""
    return a is None or b is None or a == b


def compatible(a: Shape | None, b: Shape | None) -> bool:
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(same_dim(x, y) for x, y in zip(a, b))


def merge(a: Shape | None, b: Shape | None) -> Shape | None:
    """The more precise of two compatible shapes (unknown dims filled from the other)."""
    if a is None:
        return b
    if b is None:
        return a
    return tuple(x if x is not None else y for x, y in zip(a, b))


def numel(shape: Shape | None) -> int | None:
    if shape is None or any(d is None for d in shape):
        return None
    n = 1
    for d in shape:
        n *= d
    return n


def fmt(shape: Shape | None) -> str:
    """``(4, None)`` -> ``[4, ?]``; unranked -> ``[*]``."""
    if shape is None:
        return "[*]"
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def conv_out_dim(size: int | None, kernel: int, pad: int, stride: int, dilation: int,
                 ceil_mode: bool = False, *, pad_after: int | None = None) -> int | None:
    """Output size of a convolution/pooling window sweep along one dim (``None`` if unknown).

    ``ceil_mode`` rounds up as PyTorch/OneFlow pooling does, dropping a last window that would
    start in the right padding.
    """
    if size is None:
        return None
    pad_after = pad if pad_after is None else pad_after
    span = size + pad + pad_after - dilation * (kernel - 1) - 1
    if span < 0:
        return 0
    if ceil_mode:
        out = -(-span // stride) + 1
        if (out - 1) * stride >= size + pad:
            out -= 1
        return out
    return span // stride + 1


def require_rank(ctx, name: str, rank: int | tuple[int, ...], index: int = 0) -> tuple | None:
    """The shape of input ``name``; :class:`HookError` unless its rank is ``rank`` (or unranked)."""
    shape = ctx.input_shape(name, index)
    ranks = (rank,) if isinstance(rank, int) else rank
    if shape is not None and len(shape) not in ranks:
        want = " or ".join(str(r) for r in ranks)
        raise HookError(f"'{name}' must have rank {want}, got {fmt(shape)} (rank {len(shape)})",
                        operand=name)
    return shape


def require_same_dtype(ctx, a: str, b: str, ai: int = 0, bi: int = 0) -> str:
    da, db = ctx.input_dtype(a, ai), ctx.input_dtype(b, bi)
    if da != db:
        raise HookError(f"'{b}' has element type {db} but '{a}' has {da}; they must match",
                        operand=b)
    return da


FLOAT_DTYPES = _FLOATS


INT_DTYPES = _INTS  # i8 ... ui64 (element_types.py); i1 is not among them


def require_float(ctx, name: str, index: int = 0) -> str:
    dt = ctx.input_dtype(name, index)
    if dt not in FLOAT_DTYPES:
        raise HookError(f"'{name}' must be a floating-point tensor (f16, bf16, f32, f64), got {dt}",
                        operand=name)
    return dt


def dx_like_dy(ctx) -> None:
    """An ``infer_data_type`` hook for a gradient op whose ``dx`` has ``dy``'s element type
    (narrow_grad, slice_grad)."""
    ctx.set_output_dtype("dx", ctx.input_dtype("dy"))


def require_dy(ctx, want: Shape | None, source: str) -> None:
    """:class:`HookError` naming ``dy`` unless its shape is ``want``, the shape of the forward
    result that ``source`` describes (``"narrowing 'like' (2, 3)"``)."""
    dy = ctx.input_shape("dy")
    if not compatible(dy, want):
        raise HookError(f"'dy' has shape {fmt(dy)} but {source} gives {fmt(want)}", operand="dy")


def tdflow_names(names) -> list[str]:
    return [f"tdflow.{n}" for n in names]
