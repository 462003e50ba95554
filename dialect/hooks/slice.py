"""Hooks and gradient rules of the slice family: slice, slice_grad, narrow, narrow_grad, pad,
tril, triu and fused_scale_tril.

The indices follow Python's and numpy's basic slicing: ``x[start:stop:step]`` per dim, a
negative ``start``/``stop`` counting from the end, out-of-range values clamped to the dim.
``step`` must be positive, as in OneFlow (whose ``slice`` hooks also insist on
``0 <= start <= stop``: its functional layer normalises indices first; tdflow's hooks
normalise them themselves, so program text may say ``-1``).

>>> slice_dim(-3, 1 << 62, 1, 8)
3
>>> slice_dim(1, 8, 3, 8), slice_dim(5, 2, 1, 8)
(3, 0)
>>> sliced_shape((4, 8), [0, -6], [4, 8], [2, 3])
(2, 2)
>>> padded_shape((2, 3), [0, 1], [2, 0])
(4, 4)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..grad.core import Emitter, Forward, GradError, grad_rule
from ._like import keep_data_type
from ._sbp import signature, split_all, split_dims
from ._shape import Shape, dx_like_dy, fmt, normalize_axis, require_dy
from .context import HookError, InferContext, InputArgModifier
from .registry import (
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_physical_tensor_desc,
    modify_input_arg,
)


# -- narrow and narrow_grad -----------------------------------------------------------------------
def narrow_bounds(shape: Shape, dim: int, start: int, length: int) -> tuple[int, int]:
    """``(dim, start)`` made non-negative for ``in`` of ``shape``; :class:`HookError` naming
    the attribute when the stretch leaves the dim."""
    if not shape:
        raise HookError("narrow needs a tensor with at least one dim", attr="dim")
    d = normalize_axis(int(dim), len(shape), attr="dim")
    if length < 0:
        raise HookError(f"length must be >= 0, got {length}", attr="length")
    size = shape[d]
    if size is None:
        return d, start
    s = start + size if start < 0 else start
    if not 0 <= s <= size:
        raise HookError(f"start {start} is out of range for dim {d} of size {size} "
                        f"(expected {-size} <= start <= {size})", attr="start")
    if s + length > size:
        raise HookError(f"start {start} + length {length} exceeds dim {d} of size {size}",
                        attr="length")
    return d, s


@infer_logical_tensor_desc("tdflow.narrow")
@infer_physical_tensor_desc("tdflow.narrow")
def narrow_tensor_desc(ctx: InferContext) -> None:
    shape = ctx.input_shape("in")
    if shape is None:
        ctx.set_output_shape("out", None)
        return
    d, _ = narrow_bounds(shape, ctx.attr("dim"), ctx.attr("start"), ctx.attr("length"))
    ctx.set_output_shape("out", shape[:d] + (int(ctx.attr("length")),) + shape[d + 1:])


@get_sbp("tdflow.narrow")
def narrow_sbp(ctx: InferContext):
    shape = ctx.input_shape("in")
    if shape is None or not shape:
        return []
    d = normalize_axis(int(ctx.attr("dim")), len(shape), attr="dim")
    return split_dims(ctx, shape, skip=(d,)) + [signature(ctx, "P", "P")]


@infer_logical_tensor_desc("tdflow.narrow_grad")
@infer_physical_tensor_desc("tdflow.narrow_grad")
def narrow_grad_tensor_desc(ctx: InferContext) -> None:
    like = ctx.input_shape("like")
    if like is not None:
        d, _ = narrow_bounds(like, ctx.attr("dim"), ctx.attr("start"), ctx.attr("length"))
        want = like[:d] + (int(ctx.attr("length")),) + like[d + 1:]
        require_dy(ctx, want, f"narrowing 'like' {fmt(like)}")
    ctx.set_output_shape("dx", like)


infer_data_type("tdflow.narrow_grad")(dx_like_dy)


@get_sbp("tdflow.narrow_grad")
def narrow_grad_sbp(ctx: InferContext):
    shape = ctx.input_shape("like")
    if shape is None or not shape:
        return []
    d = normalize_axis(int(ctx.attr("dim")), len(shape), attr="dim")
    return split_dims(ctx, shape, skip=(d,)) + [
        signature(ctx, {"dy": "P", "like": "B"}, "P")]


@modify_input_arg("tdflow.narrow_grad")
def narrow_grad_input_args(ctx: InferContext):
    """``like`` only lends its shape; ``dy`` keeps its gradient (``narrow`` of ``ddx``)."""
    return {"like": InputArgModifier(requires_grad=False)}


# -- tril and fused_scale_tril --------------------------------------------------------------------
@infer_logical_tensor_desc("tdflow.tril", "tdflow.fused_scale_tril")
@infer_physical_tensor_desc("tdflow.tril", "tdflow.fused_scale_tril")
def tril_tensor_desc(ctx: InferContext) -> None:
    shape = ctx.input_shape("in")
    if shape is not None and len(shape) < 2:
        raise HookError(f"'in' must have at least 2 dims (the matrix is the last two), got "
                        f"{fmt(shape)}", operand="in")
    ctx.set_output_shape("out", shape)


@get_sbp("tdflow.tril", "tdflow.fused_scale_tril")
def tril_sbp(ctx: InferContext):
    """Splits along the batch dims survive (the mask depends on the last two only)."""
    shape = ctx.input_shape("in")
    return split_dims(ctx, shape[:-2] if shape else ())


# -- triu -----------------------------------------------------------------------------------------
# The other triangle of tril: the same shape rule and the same splits (index.py's hooks).
infer_logical_tensor_desc("tdflow.triu")(tril_tensor_desc)


infer_physical_tensor_desc("tdflow.triu")(tril_tensor_desc)


get_sbp("tdflow.triu")(tril_sbp)


@infer_data_type("tdflow.triu")
def triu_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("out", ctx.input_dtype("in"))


# -- pad ------------------------------------------------------------------------------------------
def padded_shape(shape: Shape, before: Sequence[int], after: Sequence[int]) -> Shape:
    """``shape`` grown by ``before[d] + after[d]`` in each dim (pad's ``TDF_DimsAttr``\\ s
    have checked one non-negative entry per dim)."""
    return tuple(None if d is None else d + int(b) + int(a)
                 for d, b, a in zip(shape, before, after))


@infer_logical_tensor_desc("tdflow.pad")
@infer_physical_tensor_desc("tdflow.pad")
def pad_tensor_desc(ctx: InferContext) -> None:
    shape = ctx.input_shape("x")
    ctx.set_output_shape("y", None if shape is None else padded_shape(
        shape, list(ctx.attr("padding_before")), list(ctx.attr("padding_after"))))


@infer_data_type("tdflow.pad")
def pad_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("y", ctx.input_dtype("x"))


@get_sbp("tdflow.pad")
def pad_sbp(ctx: InferContext):
    """Splits along the dims that get no padding survive."""
    shape = ctx.input_shape("x")
    before, after = list(ctx.attr("padding_before")), list(ctx.attr("padding_after"))
    if not shape:  # known: one entry per dim (TDF_DimsAttr of x)
        return []
    return split_dims(ctx, shape, skip=[i for i in range(len(shape)) if before[i] or after[i]])


@grad_rule("tdflow.pad", saves=("x",))
def _pad(g: Emitter, fwd: Forward) -> dict[str, Any]:
    """``dy`` sliced back to ``x``'s extent."""
    x, dy = fwd.inputs["x"], fwd.douts["y"]
    shape = g.type_of(x).shape
    if shape is None or None in shape:
        raise GradError("the gradient of 'tdflow.pad' needs the shape of 'x'")
    before = [int(b) for b in fwd.attrs["padding_before"]]
    return {"x": g.op("tdflow.slice", [dy], {"start": before,
                                             "stop": [b + d for b, d in zip(before, shape)],
                                             "step": [1] * len(shape)})[0]}


def slice_bounds(start: int, stop: int, step: int, dim: int) -> tuple[int, int, int]:
    """``(start, stop, step)`` normalised against a dim of size ``dim`` (Python's
    ``slice.indices``): non-negative and clamped to ``[0, dim]``."""
    return slice(int(start), int(stop), int(step)).indices(dim)


def slice_dim(start: int, stop: int, step: int, dim: int | None) -> int | None:
    """How many elements ``range(dim)[start:stop:step]`` has (``None`` for an unknown dim)."""
    if dim is None:
        return None
    return len(range(*slice_bounds(start, stop, step, dim)))


def check_slice_attrs(start: Sequence[int], stop: Sequence[int], step: Sequence[int],
                      rank: int | None, what: str) -> None:
    """One entry per dim of ``what`` (``'x'``, or ``like_shape``), and positive steps;
    :class:`HookError` naming the attribute otherwise."""
    for name, vals in (("start", start), ("stop", stop), ("step", step)):
        if rank is not None and len(vals) != rank:
            raise HookError(f"{name} has {len(vals)} entries {list(vals)} but {what} has "
                            f"rank {rank}: give one {name} per dim", attr=name)
    for i, s in enumerate(step):
        if s <= 0:
            raise HookError(f"step[{i}] is {s}: slice supports only positive steps (as "
                            f"OneFlow's slice does)", attr="step")


def sliced_shape(shape: Sequence[int | None], start: Sequence[int], stop: Sequence[int],
                 step: Sequence[int]) -> tuple[int | None, ...]:
    """The shape of ``x[start:stop:step, ...]`` for ``x`` of ``shape`` (attributes checked)."""
    return tuple(slice_dim(a, b, c, d) for a, b, c, d in zip(start, stop, step, shape))


def _attrs(ctx: InferContext) -> tuple[list[int], list[int], list[int]]:
    return ([int(v) for v in ctx.attr("start")], [int(v) for v in ctx.attr("stop")],
            [int(v) for v in ctx.attr("step")])


def _full_dims(shape: Sequence[int | None] | None, start, stop, step) -> list[int]:
    """Dims the slice takes whole (a split along them survives it)."""
    if shape is None or len(shape) != len(start):
        return []
    return [i for i, d in enumerate(shape)
            if d is not None and slice_bounds(start[i], stop[i], step[i], d) == (0, d, 1)]


# -- slice ----------------------------------------------------------------------------------------
@infer_logical_tensor_desc("tdflow.slice")
@infer_physical_tensor_desc("tdflow.slice")
def slice_tensor_desc(ctx: InferContext) -> None:
    start, stop, step = _attrs(ctx)
    shape = ctx.input_shape("x")
    check_slice_attrs(start, stop, step, None if shape is None else len(shape), "'x'")
    if shape is None:
        ctx.set_output_shape("y", (None,) * len(start))
        return
    ctx.set_output_shape("y", sliced_shape(shape, start, stop, step))


@infer_data_type("tdflow.slice")
def slice_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("y", ctx.input_dtype("x"))


@get_sbp("tdflow.slice")
def slice_sbp(ctx: InferContext):
    """A split along a dim taken whole survives; partial sums stay partial (slicing is
    linear)."""
    start, stop, step = _attrs(ctx)
    full = _full_dims(ctx.input_shape("x"), start, stop, step)
    return split_all(ctx, full) + [signature(ctx, "P", "P")]


# -- slice_grad -----------------------------------------------------------------------------------
@infer_logical_tensor_desc("tdflow.slice_grad")
@infer_physical_tensor_desc("tdflow.slice_grad")
def slice_grad_tensor_desc(ctx: InferContext) -> None:
    like = tuple(int(d) for d in ctx.attr("like_shape"))
    for d in like:
        if d < 0:
            raise HookError(f"like_shape {list(like)} has a negative dim", attr="like_shape")
    start, stop, step = _attrs(ctx)
    check_slice_attrs(start, stop, step, len(like), "like_shape")
    require_dy(ctx, sliced_shape(like, start, stop, step), f"slicing like_shape {list(like)}")
    ctx.set_output_shape("dx", like)


infer_data_type("tdflow.slice_grad")(dx_like_dy)


@get_sbp("tdflow.slice_grad")
def slice_grad_sbp(ctx: InferContext):
    start, stop, step = _attrs(ctx)
    like = tuple(int(d) for d in ctx.attr("like_shape"))
    full = _full_dims(like, start, stop, step)
    return split_all(ctx, full) + [signature(ctx, "P", "P")]


@modify_input_arg("tdflow.slice_grad")
def slice_grad_input_args(ctx: InferContext):
    """``dy`` is read, never written. OneFlow also marks it ``requires_grad=False``, as it
    registers no gradient for ``slice_grad``; tdflow's ``slice_grad`` has one (its ``grad``
    field: a slice of ``ddx``), so ``dy`` keeps its gradient and slicing differentiates
    twice."""
    return {"dy": InputArgModifier(is_mutable=False, requires_grad=True)}


# narrow, tril and fused_scale_tril keep their input's dtype, as expand does.
infer_data_type("tdflow.narrow", "tdflow.tril", "tdflow.fused_scale_tril")(keep_data_type)
