"""Hooks of ``slice`` and ``slice_grad`` (OneFlow's ops), and the gradient rule of ``cat``,
which is a slice of the output gradient per input.

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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..grad.core import Emitter, Forward, GradError, grad_rule
from .context import HookError, InferContext, InputArgModifier
from .registry import (
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_physical_tensor_desc,
    modify_input_arg,
)
from .sbp import signature, split_all
from .shape_util import dx_like_dy, normalize_axis, require_dy

#: A ``stop`` that clamps to the end of any dim (what ``x[a:]`` becomes).
TO_END = (1 << 63) - 1


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


# -- the gradient of cat --------------------------------------------------------------------------
@grad_rule("tdflow.cat", saves=())
def _cat(g: Emitter, fwd: Forward) -> dict[str, Any]:
    """Each input's gradient is its stretch of ``dout`` along ``axis``: only the inputs'
    shapes are read, so no input is kept alive for backward."""
    dout, xs = fwd.douts["out"], fwd.inputs["in"]
    dims = tuple(g.type_of(dout).shape)
    rank = len(dims)
    try:
        axis = normalize_axis(int(fwd.attrs["axis"]), rank)
    except HookError as e:
        raise GradError(f"the gradient of 'tdflow.cat': {e.message}") from None
    grads, offset = [], 0
    for i, x in enumerate(xs):
        n = g.type_of(x).shape[axis]
        if n is None:
            raise GradError(f"the gradient of 'tdflow.cat' needs the size of input {i} along "
                            f"axis {axis}, which is unknown")
        start, stop = [0] * rank, [TO_END if d is None else d for d in dims]
        start[axis], stop[axis] = offset, offset + n
        grads.append(g.op("tdflow.slice", [dout],
                          {"start": start, "stop": stop, "step": [1] * rank})[0])
        offset += n
    return {"in": tuple(grads)}
