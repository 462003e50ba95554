"""Hooks of the ops in tdflow/ops/indexing.td: argmax, top_k, cumsum, cumprod, cumprod_grad,
dim_gather, the dim_scatter family, gather_nd, scatter_nd_like, tensor_scatter_nd_update/add,
triu and pad; and the gradient rules of cumsum and pad.

>>> padded_shape((2, 3), [0, 1], [2, 0])
(4, 4)
>>> top_k_shape((4, 10), 3), top_k_shape((2, 2), 5)
((4, 3), (2, 2))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..grad.core import Emitter, Forward, GradError, grad_rule
from .context import HookError, InferContext
from .index import no_grad_inputs, require_index, split_dims, tril_sbp, tril_tensor_desc
from .registry import (
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_physical_tensor_desc,
    modify_input_arg,
)
from .sbp import signature
from .shape_util import compatible, fmt, normalize_axis

Shape = tuple[int | None, ...]

SCATTERS = ("tdflow.dim_scatter_update", "tdflow.dim_scatter_add", "tdflow.dim_scatter_mul",
            "tdflow.dim_scatter_max", "tdflow.dim_scatter_min")


# -- argmax and top_k -----------------------------------------------------------------------------
def _last_dim(ctx: InferContext) -> Shape | None:
    shape = ctx.input_shape("in")
    if shape is not None and not shape:
        raise HookError("'in' is a scalar: the op works along its last dim", operand="in")
    return shape


def top_k_shape(shape: Shape, k: int) -> Shape:
    """The result shape of ``top_k``: the last dim cut to ``min(k, n)``."""
    n = shape[-1]
    return tuple(shape[:-1]) + ((None if n is None else min(k, n)),)


@infer_logical_tensor_desc("tdflow.argmax")
@infer_physical_tensor_desc("tdflow.argmax")
def argmax_tensor_desc(ctx: InferContext) -> None:
    shape = _last_dim(ctx)
    ctx.set_output_shape("out", None if shape is None else tuple(shape[:-1]))


@infer_logical_tensor_desc("tdflow.top_k")
@infer_physical_tensor_desc("tdflow.top_k")
def top_k_tensor_desc(ctx: InferContext) -> None:
    k = int(ctx.attr("k"))
    if k < 0:
        raise HookError(f"k must be >= 0, got {k}", attr="k")
    shape = _last_dim(ctx)
    ctx.set_output_shape("out", None if shape is None else top_k_shape(shape, k))


@infer_data_type("tdflow.argmax", "tdflow.top_k")
def positions_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("out", "i64")


@get_sbp("tdflow.argmax", "tdflow.top_k")
def last_dim_sbp(ctx: InferContext):
    """Splits along every dim but the last (the one reduced) survive."""
    shape = ctx.input_shape("in")
    return split_dims(ctx, shape[:-1] if shape else ())


# -- cumsum, cumprod, cumprod_grad ----------------------------------------------------------------
@infer_logical_tensor_desc("tdflow.cumsum", "tdflow.cumprod")
@infer_physical_tensor_desc("tdflow.cumsum", "tdflow.cumprod")
def scan_tensor_desc(ctx: InferContext) -> None:
    shape = ctx.input_shape("x")
    if shape is not None:
        normalize_axis(int(ctx.attr("dim")), max(len(shape), 1), attr="dim")
    ctx.set_output_shape("y", shape)


@infer_data_type("tdflow.cumsum", "tdflow.cumprod")
def scan_data_type(ctx: InferContext) -> None:
    dt = ctx.input_dtype("x")
    if dt == "i1":
        raise HookError("'x' is a boolean tensor: a running sum or product needs numbers",
                        operand="x")
    ctx.set_output_dtype("y", dt)


@infer_logical_tensor_desc("tdflow.cumprod_grad")
@infer_physical_tensor_desc("tdflow.cumprod_grad")
def cumprod_grad_tensor_desc(ctx: InferContext) -> None:
    shape = ctx.input_shape("input")
    for name in ("dy", "output"):
        other = ctx.input_shape(name)
        if shape is not None and other is not None and tuple(other) != tuple(shape):
            raise HookError(f"'{name}' has shape {fmt(other)}, 'input' {fmt(shape)}: they must "
                            f"agree", operand=name)
    ctx.set_output_shape("dx", shape)


@infer_data_type("tdflow.cumprod_grad")
def cumprod_grad_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("dx", ctx.input_dtype("dy"))


@get_sbp("tdflow.cumsum", "tdflow.cumprod", "tdflow.cumprod_grad")
def scan_sbp(ctx: InferContext):
    """Splits along every dim but the scanned one survive."""
    name = "input" if ctx.op_name.endswith("_grad") else "x"
    shape = ctx.input_shape(name)
    if not shape:
        return []
    d = normalize_axis(int(ctx.attr("dim")), len(shape), attr="dim")
    return split_dims(ctx, shape, skip=(d,))


@grad_rule("tdflow.cumsum", saves=())
def _cumsum(g: Emitter, fwd: Forward) -> dict[str, Any]:
    """The running sum of ``dy`` from the far end: ``sum(dy) - cumsum(dy) + dy``."""
    dy = fwd.douts["y"]
    shape = g.type_of(dy).shape
    if shape is None:
        raise GradError("the gradient of 'tdflow.cumsum' needs the rank of 'y'")
    dim = int(fwd.attrs["dim"]) % max(len(shape), 1)
    run = g.op("tdflow.cumsum", [dy], {"dim": dim})[0]
    total = g.op("tdflow.reduce_sum", [dy], {"axis": [dim], "keepdims": True})[0]
    total = g.op("tdflow.broadcast_like", [total, dy], {"broadcast_axes": []})[0]
    return {"x": g.op("tdflow.fused_elementwise", [[total, run, dy]],
                      {"expr": "add(sub(in0, in1), in2)"})[0]}


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
    """``shape`` grown by ``before[d] + after[d]`` in each dim; :class:`HookError` naming the
    attribute when an entry is missing or negative."""
    for name, pads in (("padding_before", before), ("padding_after", after)):
        if len(pads) != len(shape):
            raise HookError(f"{name} has {len(pads)} entries, 'x' {fmt(shape)} has "
                            f"{len(shape)} dims", attr=name)
        if any(int(p) < 0 for p in pads):
            raise HookError(f"{name} {list(pads)} has a negative entry (crop with slice)",
                            attr=name)
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
    if not shape or len(before) != len(shape) or len(after) != len(shape):
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
