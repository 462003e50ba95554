"""Hooks of the ops in tdflow/ops/index.td (issue 13): gather and unsorted_segment_sum_like,
embedding and embedding_grad, narrow and narrow_grad, expand, expand_dims, squeeze, tril,
fused_scale_tril, arange and one_hot; and the gradient rule of expand.

Shapes follow numpy: ``gather`` is ``numpy.take``, ``expand`` is ``numpy.broadcast_to``.

>>> gathered_shape((10, 4), (2, 3), 1)
(10, 2, 3)
>>> expanded_shape((3, 1), [2, -1, 4])
(2, 3, 4)
>>> arange_length(0, 10, 3), arange_length(5, 0, 1), arange_length(0.0, 1.0, 0.25)
(4, 0, 4)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..grad.core import Emitter, Forward, GradError, grad_rule
from .context import HookError, InferContext, InputArgModifier
from .registry import (
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_nd_sbp,
    infer_physical_tensor_desc,
    modify_input_arg,
)
from .sbp import blob, signature, split_all
from .shape_util import (
    FLOAT_DTYPES,
    INT_DTYPES,
    compatible,
    dx_like_dy,
    fmt,
    normalize_axes,
    normalize_axis,
    require_dy,
)

Shape = tuple[int | None, ...]

#: Element types an index operand may have (OneFlow's kernels take int32 and int64; tdflow's
#: kernels take every integer type of element_types.py).
INDEX_DTYPES = INT_DTYPES


def require_index(ctx: InferContext, name: str) -> None:
    """:class:`HookError` naming ``name`` unless it is an integer tensor."""
    dt = ctx.input_dtype(name)
    if dt not in INDEX_DTYPES:
        raise HookError(f"'{name}' must be an integer tensor ({', '.join(INDEX_DTYPES)}), got {dt}",
                        operand=name)


def split_dims(ctx: InferContext, shape: Shape | None, skip: Sequence[int] = ()) -> list:
    """``S(i)`` of every blob for each dim ``i`` of ``shape`` not in ``skip``."""
    return split_all(ctx, (i for i in range(len(shape or ())) if i not in skip))


def no_grad_inputs(*names: str):
    """A ``modify_input_arg`` hook: the named inputs take no gradient."""
    def hook(ctx: InferContext):
        return {n: InputArgModifier(requires_grad=False) for n in names}
    return hook


# -- gather and unsorted_segment_sum_like ---------------------------------------------------------
def gathered_shape(shape: Shape, indices: Shape, axis: int) -> Shape:
    """``numpy.take(x, i, axis).shape`` for ``x`` of ``shape`` and ``i`` of ``indices``
    (``axis`` already non-negative)."""
    return tuple(shape[:axis]) + tuple(indices) + tuple(shape[axis + 1:])


@infer_logical_tensor_desc("tdflow.gather")
@infer_physical_tensor_desc("tdflow.gather")
def gather_tensor_desc(ctx: InferContext) -> None:
    shape, idx = ctx.input_shape("in"), ctx.input_shape("indices")
    if shape is None or idx is None:
        ctx.set_output_shape("out", None)
        return
    if not shape:
        raise HookError("'in' is a scalar: gather needs at least one dim", operand="in")
    axis = normalize_axis(int(ctx.attr("axis")), len(shape))
    ctx.set_output_shape("out", gathered_shape(shape, idx, axis))


@infer_data_type("tdflow.gather")
def gather_data_type(ctx: InferContext) -> None:
    require_index(ctx, "indices")
    ctx.set_output_dtype("out", ctx.input_dtype("in"))


@get_sbp("tdflow.gather")
def gather_sbp(ctx: InferContext):
    """Splits of ``in`` along a dim other than ``axis`` survive (shifted past the index dims);
    a split of ``indices`` splits the output along the matching dim."""
    shape, idx = ctx.input_shape("in"), ctx.input_shape("indices")
    if shape is None or idx is None or not shape:
        return []
    axis = normalize_axis(int(ctx.attr("axis")), len(shape))
    sigs = []
    for i in range(len(shape)):
        if i != axis:
            o = i if i < axis else i + len(idx) - 1
            sigs.append(signature(ctx, {"in": f"S({i})", "indices": "B"}, f"S({o})"))
    for i in range(len(idx)):
        sigs.append(signature(ctx, {"in": "B", "indices": f"S({i})"}, f"S({axis + i})"))
    return sigs


modify_input_arg("tdflow.gather")(no_grad_inputs("indices"))


@infer_logical_tensor_desc("tdflow.unsorted_segment_sum_like")
@infer_physical_tensor_desc("tdflow.unsorted_segment_sum_like")
def unsorted_segment_sum_like_tensor_desc(ctx: InferContext) -> None:
    data, ids, like = (ctx.input_shape(n) for n in ("data", "segment_ids", "like"))
    if like is not None:
        if not like:
            raise HookError("'like' is a scalar: it needs at least one dim", operand="like")
        axis = normalize_axis(int(ctx.attr("axis")), len(like))
        if ids is not None and not compatible(data, gathered_shape(like, ids, axis)):
            raise HookError(f"'data' has shape {fmt(data)} but 'like' {fmt(like)} and "
                            f"'segment_ids' {fmt(ids)} need "
                            f"{fmt(gathered_shape(like, ids, axis))} along axis {axis}",
                            operand="data")
    ctx.set_output_shape("out", like)


@infer_data_type("tdflow.unsorted_segment_sum_like")
def unsorted_segment_sum_like_data_type(ctx: InferContext) -> None:
    require_index(ctx, "segment_ids")
    ctx.set_output_dtype("out", ctx.input_dtype("data"))


@get_sbp("tdflow.unsorted_segment_sum_like")
def unsorted_segment_sum_like_sbp(ctx: InferContext):
    """Splits of ``like`` along a dim other than ``axis`` (and of ``data`` at the matching
    dim) survive; partial sums of ``data`` stay partial."""
    like, ids = ctx.input_shape("like"), ctx.input_shape("segment_ids")
    if like is None or ids is None or not like:
        return []
    axis = normalize_axis(int(ctx.attr("axis")), len(like))
    sigs = []
    for i in range(len(like)):
        if i != axis:
            d = i if i < axis else i + len(ids) - 1
            sigs.append(signature(ctx, {"data": f"S({d})", "segment_ids": "B",
                                        "like": f"S({i})"}, f"S({i})"))
    sigs.append(signature(ctx, {"data": "P", "segment_ids": "B", "like": "B"}, "P"))
    return sigs


modify_input_arg("tdflow.unsorted_segment_sum_like")(no_grad_inputs("segment_ids", "like"))


# -- embedding and embedding_grad -----------------------------------------------------------------
def _table(ctx: InferContext) -> Shape | None:
    weight = ctx.input_shape("weight")
    if weight is not None and len(weight) != 2:
        raise HookError(f"'weight' must be a 2-D table [num_embeddings, dim], got {fmt(weight)}",
                        operand="weight")
    return weight


@infer_logical_tensor_desc("tdflow.embedding")
@infer_physical_tensor_desc("tdflow.embedding")
def embedding_tensor_desc(ctx: InferContext) -> None:
    weight, idx = _table(ctx), ctx.input_shape("indices")
    if weight is None or idx is None:
        ctx.set_output_shape("out", None)
        return
    ctx.set_output_shape("out", tuple(idx) + (weight[1],))


@infer_data_type("tdflow.embedding")
def embedding_data_type(ctx: InferContext) -> None:
    require_index(ctx, "indices")
    ctx.set_output_dtype("out", ctx.input_dtype("weight"))


@get_sbp("tdflow.embedding")
def embedding_sbp(ctx: InferContext):
    """A split of ``indices`` splits the output there; a split of the table's columns splits
    the output's last dim."""
    idx = ctx.input_shape("indices")
    if idx is None:
        return []
    sigs = [signature(ctx, {"weight": "B", "indices": f"S({i})"}, f"S({i})")
            for i in range(len(idx))]
    return sigs + [signature(ctx, {"weight": "S(1)", "indices": "B"}, f"S({len(idx)})")]


modify_input_arg("tdflow.embedding")(no_grad_inputs("indices"))


@infer_logical_tensor_desc("tdflow.embedding_grad")
@infer_physical_tensor_desc("tdflow.embedding_grad")
def embedding_grad_tensor_desc(ctx: InferContext) -> None:
    weight, idx, dy = _table(ctx), ctx.input_shape("indices"), ctx.input_shape("dy")
    if weight is not None and idx is not None and not compatible(dy, tuple(idx) + (weight[1],)):
        raise HookError(f"'dy' has shape {fmt(dy)} but 'indices' {fmt(idx)} and 'weight' "
                        f"{fmt(weight)} need {fmt(tuple(idx) + (weight[1],))}", operand="dy")
    ctx.set_output_shape("dx", weight)


@infer_data_type("tdflow.embedding_grad")
def embedding_grad_data_type(ctx: InferContext) -> None:
    require_index(ctx, "indices")
    ctx.set_output_dtype("dx", ctx.input_dtype("dy"))


@get_sbp("tdflow.embedding_grad")
def embedding_grad_sbp(ctx: InferContext):
    """Splitting the positions (``dy`` and ``indices`` alike) gives partial sums."""
    idx = ctx.input_shape("indices")
    if idx is None:
        return []
    sigs = [signature(ctx, {"dy": f"S({i})", "weight": "B", "indices": f"S({i})"}, "P")
            for i in range(len(idx))]
    return sigs + [signature(ctx, {"dy": f"S({len(idx)})", "weight": "S(1)",
                                   "indices": "B"}, "S(1)")]


modify_input_arg("tdflow.embedding_grad")(no_grad_inputs("weight", "indices"))


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


# -- expand, expand_dims, squeeze -----------------------------------------------------------------
def expanded_shape(shape: Shape, expand_shape: Sequence[int]) -> Shape:
    """``numpy.broadcast_to``'s result for ``shape`` and ``expand_shape`` (a ``-1`` keeps the
    input's dim); :class:`HookError` naming ``expand_shape`` otherwise."""
    target = [int(d) for d in expand_shape]
    if len(shape) > len(target):
        raise HookError(f"expand_shape {target} has {len(target)} dims, fewer than 'in' "
                        f"{fmt(shape)}", attr="expand_shape")
    lead = len(target) - len(shape)
    out: list[int | None] = []
    for i, t in enumerate(target):
        src = shape[i - lead] if i >= lead else 1
        if t == -1:
            if i < lead:
                raise HookError(f"expand_shape {target}: -1 at dim {i}, a new leading dim, "
                                f"has no size to keep", attr="expand_shape")
            out.append(src)
        elif t < 0:
            raise HookError(f"expand_shape {target} has a negative dim {t}", attr="expand_shape")
        elif src is not None and src != 1 and src != t:
            raise HookError(f"cannot expand 'in' {fmt(shape)} to {target}: dim {i - lead} is "
                            f"{src}, expected 1 or {t}", attr="expand_shape")
        else:
            out.append(t)
    return tuple(out)


@infer_logical_tensor_desc("tdflow.expand")
@infer_physical_tensor_desc("tdflow.expand")
def expand_tensor_desc(ctx: InferContext) -> None:
    shape = ctx.input_shape("in")
    target = list(ctx.attr("expand_shape"))
    if shape is None:
        ctx.set_output_shape("out", tuple(None if d == -1 else int(d) for d in target))
        return
    ctx.set_output_shape("out", expanded_shape(shape, target))


@infer_data_type("tdflow.expand", "tdflow.expand_dims", "tdflow.squeeze", "tdflow.tril",
                 "tdflow.fused_scale_tril", "tdflow.narrow")
def keep_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("out", ctx.input_dtype("in"))


@get_sbp("tdflow.expand")
def expand_sbp(ctx: InferContext):
    """A split along a dim ``in`` has whole survives, shifted by the new leading dims."""
    shape = ctx.input_shape("in")
    if shape is None:
        return []
    lead = len(ctx.attr("expand_shape")) - len(shape)
    return [signature(ctx, f"S({i})", f"S({i + lead})") for i, d in enumerate(shape)
            if d != 1] + [signature(ctx, "P", "P")]


@grad_rule("tdflow.expand", saves=())
def _expand(g: Emitter, fwd: Forward) -> dict[str, Any]:
    """``dout`` summed over the dims that were broadcast (the new leading ones and those where
    ``in`` has size 1), then reshaped to ``in``'s shape: only shapes are read."""
    dout, x = fwd.douts["out"], fwd.inputs["in"]
    src, dst = g.type_of(x).shape, g.type_of(dout).shape
    if src is None or dst is None or None in src:
        raise GradError("the gradient of 'tdflow.expand' needs the shapes of 'in' and 'out'")
    lead = len(dst) - len(src)
    axes = list(range(lead)) + [lead + i for i, d in enumerate(src) if d == 1 and dst[lead + i] != 1]
    if axes:
        dout = g.op("tdflow.reduce_sum", [dout], {"axis": axes, "keepdims": True})[0]
    if tuple(g.type_of(dout).shape) != tuple(src):
        dout = g.op("tdflow.reshape", [dout], {"shape": list(src)})[0]
    return {"in": dout}


@infer_logical_tensor_desc("tdflow.expand_dims")
@infer_physical_tensor_desc("tdflow.expand_dims")
def expand_dims_tensor_desc(ctx: InferContext) -> None:
    shape = ctx.input_shape("in")
    if shape is None:
        ctx.set_output_shape("out", None)
        return
    axis = normalize_axis(int(ctx.attr("axis")), len(shape) + 1)
    ctx.set_output_shape("out", shape[:axis] + (1,) + shape[axis:])


@get_sbp("tdflow.expand_dims")
def expand_dims_sbp(ctx: InferContext):
    shape = ctx.input_shape("in")
    if shape is None:
        return []
    axis = normalize_axis(int(ctx.attr("axis")), len(shape) + 1)
    return [signature(ctx, f"S({i})", f"S({i if i < axis else i + 1})")
            for i in range(len(shape))] + [signature(ctx, "P", "P")]


def squeezed_axes(shape: Shape, axes: Sequence[int]) -> tuple[int, ...]:
    """``axes`` made non-negative; :class:`HookError` naming ``axes`` for a dim that is not 1."""
    norm = normalize_axes([int(a) for a in axes], len(shape), attr="axes")
    for a in norm:
        if shape[a] is not None and shape[a] != 1:
            raise HookError(f"axes {list(axes)}: dim {a} of 'in' {fmt(shape)} has size "
                            f"{shape[a]}, only dims of size 1 can be squeezed", attr="axes")
    return norm


@infer_logical_tensor_desc("tdflow.squeeze")
@infer_physical_tensor_desc("tdflow.squeeze")
def squeeze_tensor_desc(ctx: InferContext) -> None:
    shape = ctx.input_shape("in")
    if shape is None:
        ctx.set_output_shape("out", None)
        return
    axes = squeezed_axes(shape, ctx.attr("axes"))
    ctx.set_output_shape("out", tuple(d for i, d in enumerate(shape) if i not in axes))


@get_sbp("tdflow.squeeze")
def squeeze_sbp(ctx: InferContext):
    shape = ctx.input_shape("in")
    if shape is None:
        return []
    axes = squeezed_axes(shape, ctx.attr("axes"))
    kept = [i for i in range(len(shape)) if i not in axes]
    return [signature(ctx, f"S({i})", f"S({j})") for j, i in enumerate(kept)] + [
        signature(ctx, "P", "P")]


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


# -- arange ---------------------------------------------------------------------------------------
def arange_length(start: float, limit: float, delta: float) -> int:
    """``len(numpy.arange(start, limit, delta))``; ``delta`` is not 0."""
    return max(0, math.ceil((limit - start) / delta))


def arange_range(attrs: Any, dtype: str) -> tuple[Any, Any, Any]:
    """``(start, limit, delta)`` of the attribute family ``dtype`` reads (an attribute lookup
    ``attrs(name)``); :class:`HookError` when ``delta`` is 0 or the range runs backwards."""
    kind = "float" if dtype in FLOAT_DTYPES else "integer"
    conv = float if kind == "float" else int
    start, delta, limit = (conv(attrs(f"{kind}_{k}")) for k in ("start", "delta", "limit"))
    if delta == 0:
        raise HookError(f"{kind}_delta is 0: arange needs a nonzero step (for dtype {dtype} "
                        f"it reads {kind}_start, {kind}_delta and {kind}_limit)",
                        attr=f"{kind}_delta")
    if (limit - start) * delta < 0:
        raise HookError(f"{kind}_delta {delta} runs away from {kind}_limit {limit} "
                        f"(from {kind}_start {start})", attr=f"{kind}_delta")
    return start, limit, delta


@infer_logical_tensor_desc("tdflow.arange")
@infer_physical_tensor_desc("tdflow.arange")
def arange_tensor_desc(ctx: InferContext) -> None:
    start, limit, delta = arange_range(ctx.attr, ctx.attr("dtype"))
    ctx.set_output_shape("out", (arange_length(start, limit, delta),))


@infer_data_type("tdflow.arange")
def arange_data_type(ctx: InferContext) -> None:
    dtype = ctx.attr("dtype")
    if dtype == "i1":
        raise HookError("arange cannot make an i1 (boolean) tensor", attr="dtype")
    ctx.set_output_dtype("out", dtype)


@get_sbp("tdflow.arange")
def arange_sbp(ctx: InferContext):
    return [signature(ctx, {}, "B")]


@infer_nd_sbp("tdflow.arange")
def arange_nd_sbp(ctx: InferContext) -> dict[str, tuple[str, ...]]:
    """``nd_sbp`` when given (one entry per hierarchy dim), else broadcast on a 1-D one."""
    given = tuple(str(s) for s in ctx.attr("nd_sbp"))
    return {blob("out"): given or ("B",)}


# -- one_hot --------------------------------------------------------------------------------------
@infer_logical_tensor_desc("tdflow.one_hot")
@infer_physical_tensor_desc("tdflow.one_hot")
def one_hot_tensor_desc(ctx: InferContext) -> None:
    depth = int(ctx.attr("depth"))
    if depth <= 0:
        raise HookError(f"depth must be positive, got {depth}", attr="depth")
    idx = ctx.input_shape("indices")
    ctx.set_output_shape("out", None if idx is None else tuple(idx) + (depth,))


@infer_data_type("tdflow.one_hot")
def one_hot_data_type(ctx: InferContext) -> None:
    require_index(ctx, "indices")
    ctx.set_output_dtype("out", ctx.attr("dtype"))


@get_sbp("tdflow.one_hot")
def one_hot_sbp(ctx: InferContext):
    return split_dims(ctx, ctx.input_shape("indices"))


modify_input_arg("tdflow.one_hot")(no_grad_inputs("indices"))
