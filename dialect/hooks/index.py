"""Hooks and gradient rules of the index family (gather and scatter): gather, gather_nd,
embedding, embedding_grad, one_hot, dim_gather, the dim_scatter ops, scatter_nd_like,
tensor_scatter_nd_update/add and unsorted_segment_sum_like.

Shapes follow numpy: ``gather`` is ``numpy.take``.

>>> gathered_shape((10, 4), (2, 3), 1)
(10, 2, 3)
"""

from __future__ import annotations

from ._sbp import signature, split_dims
from ._shape import INT_DTYPES, Shape, compatible, fmt, normalize_axis
from .context import HookError, InferContext, InputArgModifier
from .registry import (
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_physical_tensor_desc,
    modify_input_arg,
)

#: Element types an index operand may have (OneFlow's kernels take int32 and int64; tdflow's
#: kernels take every integer type of element_types.py).
INDEX_DTYPES = INT_DTYPES


def require_index(ctx: InferContext, name: str) -> None:
    """:class:`HookError` naming ``name`` unless it is an integer tensor."""
    dt = ctx.input_dtype(name)
    if dt not in INDEX_DTYPES:
        raise HookError(f"'{name}' must be an integer tensor ({', '.join(INDEX_DTYPES)}), got {dt}",
                        operand=name)


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


SCATTERS = ("tdflow.dim_scatter_update", "tdflow.dim_scatter_add", "tdflow.dim_scatter_mul",
            "tdflow.dim_scatter_max", "tdflow.dim_scatter_min")


# -- dim_gather and the dim_scatter family --------------------------------------------------------
def _check_index(ctx: InferContext, data: str, index: str, dim: int) -> None:
    """``index`` must have ``data``'s rank and be no larger in any dim but ``dim``."""
    shape, idx = ctx.input_shape(data), ctx.input_shape(index)
    if shape is None or idx is None:
        return
    if len(idx) != len(shape):
        raise HookError(f"'{index}' has shape {fmt(idx)}, of rank {len(idx)}; '{data}' "
                        f"{fmt(shape)} has rank {len(shape)} and they must agree", operand=index)
    for i, (a, b) in enumerate(zip(idx, shape)):
        if i != dim and a is not None and b is not None and a > b:
            raise HookError(f"'{index}' {fmt(idx)} is larger than '{data}' {fmt(shape)} in dim "
                            f"{i} (only dim {dim}, the indexed one, may be)", operand=index)


def _dim(ctx: InferContext, data: str) -> int | None:
    shape = ctx.input_shape(data)
    if shape is None:
        return None
    if not shape:
        raise HookError(f"'{data}' is a scalar: the op indexes along one of its dims",
                        operand=data)
    return normalize_axis(int(ctx.attr("dim")), len(shape), attr="dim")


@infer_logical_tensor_desc("tdflow.dim_gather")
@infer_physical_tensor_desc("tdflow.dim_gather")
def dim_gather_tensor_desc(ctx: InferContext) -> None:
    d = _dim(ctx, "input")
    if d is not None:
        _check_index(ctx, "input", "index", d)
    ctx.set_output_shape("output", ctx.input_shape("index"))


@infer_data_type("tdflow.dim_gather")
def dim_gather_data_type(ctx: InferContext) -> None:
    require_index(ctx, "index")
    ctx.set_output_dtype("output", ctx.input_dtype("input"))


@infer_logical_tensor_desc("tdflow.dim_scatter_add_like", *SCATTERS)
@infer_physical_tensor_desc("tdflow.dim_scatter_add_like", *SCATTERS)
def dim_scatter_tensor_desc(ctx: InferContext) -> None:
    data = "like" if ctx.op_name.endswith("_like") else "input"
    d = _dim(ctx, data)
    idx, src = ctx.input_shape("index"), ctx.input_shape("src")
    if idx is not None and src is not None and tuple(idx) != tuple(src):
        raise HookError(f"'src' has shape {fmt(src)} but 'index' {fmt(idx)}: they must agree",
                        operand="src")
    if d is not None:
        _check_index(ctx, data, "index", d)
    ctx.set_output_shape("output", ctx.input_shape(data))


def scatter_data_type(ctx: InferContext, index: str, data: str, src: str, out: str) -> None:
    """A scatter's result has the element type of what it writes (``src``), which must be the
    data's (a ``_like`` op has no data operand to compare); its indices are integers."""
    require_index(ctx, index)
    written = ctx.input_dtype(src)
    if not ctx.op_name.endswith("_like") and ctx.input_dtype(data) != written:
        raise HookError(f"'{src}' is {written} but '{data}' {ctx.input_dtype(data)}: they "
                        f"must agree", operand=src)
    ctx.set_output_dtype(out, written)


@infer_data_type("tdflow.dim_scatter_add_like", *SCATTERS)
def dim_scatter_data_type(ctx: InferContext) -> None:
    scatter_data_type(ctx, "index", "input", "src", "output")


@get_sbp("tdflow.dim_gather", "tdflow.dim_scatter_add_like", *SCATTERS)
def dim_index_sbp(ctx: InferContext):
    """Broadcast everything: a split of the data along another dim would need ``index`` split
    alike and no larger, which the hook cannot promise."""
    return [signature(ctx, "B", "B")]


modify_input_arg("tdflow.dim_gather")(no_grad_inputs("index"))


modify_input_arg("tdflow.dim_scatter_add_like")(no_grad_inputs("like", "index"))


for _op in SCATTERS:
    modify_input_arg(_op)(no_grad_inputs("index"))


# -- gather_nd, scatter_nd_like, tensor_scatter_nd_update/add -------------------------------------
ND_SCATTERS = ("tdflow.tensor_scatter_nd_update", "tdflow.tensor_scatter_nd_add")


def gathered_nd_shape(data: Shape, indices: Shape) -> Shape | None:
    """``indices.shape[:-1] + data.shape[k:]`` for tuples of length ``k = indices.shape[-1]``
    (``None`` while ``k`` is unknown); :class:`HookError` naming ``indices`` when the tuples
    do not fit.

    >>> gathered_nd_shape((4, 5, 3), (6, 2))
    (6, 3)
    """
    if not indices:
        raise HookError("'indices' is a scalar: its last dim holds the index tuples",
                        operand="indices")
    k = indices[-1]
    if k is None:
        return None
    if k > len(data):
        raise HookError(f"'indices' {fmt(indices)} holds tuples of {k} indices, but the data "
                        f"{fmt(data)} has only {len(data)} dims", operand="indices")
    return tuple(indices[:-1]) + tuple(data[k:])


@infer_logical_tensor_desc("tdflow.gather_nd")
@infer_physical_tensor_desc("tdflow.gather_nd")
def gather_nd_tensor_desc(ctx: InferContext) -> None:
    data, idx = ctx.input_shape("params"), ctx.input_shape("indices")
    ctx.set_output_shape("out", None if data is None or idx is None
                         else gathered_nd_shape(data, idx))


@infer_data_type("tdflow.gather_nd")
def gather_nd_data_type(ctx: InferContext) -> None:
    require_index(ctx, "indices")
    ctx.set_output_dtype("out", ctx.input_dtype("params"))


@infer_logical_tensor_desc("tdflow.scatter_nd_like", *ND_SCATTERS)
@infer_physical_tensor_desc("tdflow.scatter_nd_like", *ND_SCATTERS)
def scatter_nd_tensor_desc(ctx: InferContext) -> None:
    data_name = "like" if ctx.op_name.endswith("_like") else "params"
    data, idx, upd = (ctx.input_shape(n) for n in (data_name, "indices", "updates"))
    if data is not None and idx is not None and upd is not None:
        want = gathered_nd_shape(data, idx)
        if want is not None and not compatible(upd, want):
            raise HookError(f"'updates' has shape {fmt(upd)}, but 'indices' {fmt(idx)} into "
                            f"{fmt(data)} need {fmt(want)}", operand="updates")
    ctx.set_output_shape("out", data)


@infer_data_type("tdflow.scatter_nd_like", *ND_SCATTERS)
def scatter_nd_data_type(ctx: InferContext) -> None:
    scatter_data_type(ctx, "indices", "params", "updates", "out")


@get_sbp("tdflow.gather_nd", "tdflow.scatter_nd_like", *ND_SCATTERS)
def nd_index_sbp(ctx: InferContext):
    """Broadcast everything (as for the dim_* ops)."""
    return [signature(ctx, "B", "B")]


modify_input_arg("tdflow.gather_nd")(no_grad_inputs("indices"))


for _op in ND_SCATTERS:
    modify_input_arg(_op)(no_grad_inputs("indices"))
