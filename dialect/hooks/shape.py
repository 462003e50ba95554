"""Hooks and gradient rules of the shape family: reshape, transpose, cast, cat, expand,
expand_dims, squeeze, broadcast_like, constant, dense_constant, ones_like and arange.

Shapes follow numpy: ``expand`` is ``numpy.broadcast_to``.

>>> expanded_shape((3, 1), [2, -1, 4])
(2, 3, 4)
>>> arange_length(0, 10, 3), arange_length(5, 0, 1), arange_length(0.0, 1.0, 0.25)
(4, 0, 4)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from tdflow.dialect.element_types import INT_TYPES
from tdflow.dialect.types import TensorType

from ..grad.core import Emitter, Forward, GradError, grad_rule
from ._like import keep_data_type, like_data_type, like_input_args, like_sbp
from ._sbp import blob, signature, split_all
from ._shape import (
    FLOAT_DTYPES,
    Shape,
    broadcast_shapes,
    compatible,
    fmt,
    merge,
    normalize_axes,
    normalize_axis,
    numel,
)
from .context import HookError, InferContext
from .registry import (
    check_attr,
    enumerate_nd_sbp_signatures,
    get_sbp,
    infer_data_type,
    infer_device,
    infer_logical_tensor_desc,
    infer_nd_sbp,
    infer_physical_tensor_desc,
    modify_input_arg,
)


@grad_rule("tdflow.transpose", saves=())
def _transpose(g: Emitter, fwd: Forward) -> dict[str, Any]:
    perm = [int(p) for p in fwd.attrs["perm"]]
    rank = len(perm)
    perm = [p % rank for p in perm]
    inverse = [0] * rank
    for i, p in enumerate(perm):
        inverse[p] = i
    return {"input": g.op("tdflow.transpose", [fwd.douts["output"]], {"perm": inverse})[0]}


@grad_rule("tdflow.broadcast_like", saves=("x",), inputs=("x",))
def _broadcast_like(g: Emitter, fwd: Forward) -> dict[str, Any]:
    x, dy = fwd.inputs["x"], fwd.douts["y"]
    axes = fwd.attrs["broadcast_axes"]
    if not axes:  # numpy broadcasting: the driver sums the stretched dims back
        return {"x": dy}
    rank = len(g.type_of(dy).shape)
    return {"x": g.op("tdflow.reduce_sum_like", [dy, x],
                      {"axis": sorted(normalize_axes(list(axes), rank))})[0]}


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


infer_data_type("tdflow.expand", "tdflow.expand_dims", "tdflow.squeeze")(keep_data_type)


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


# -- reshape ------------------------------------------------------------------------------------
def reshape_target(in_shape, shape) -> tuple:
    """The reshape result: ``-1`` inferred from the element count (unknown if it cannot be)."""
    shape = tuple(shape)
    if sum(1 for d in shape if d == -1) > 1:
        raise HookError(f"shape {list(shape)} has more than one -1", attr="shape")
    for d in shape:
        if d < -1:
            raise HookError(f"shape {list(shape)} has a negative dim {d} (only -1 is allowed)",
                            attr="shape")
    known = numel(tuple(d for d in shape if d != -1))
    total = numel(in_shape)
    if -1 in shape:
        if total is None:
            return tuple(None if d == -1 else d for d in shape)
        if known == 0 or total % known:
            raise HookError(f"cannot reshape {fmt(in_shape)} ({total} elements) to {list(shape)}: "
                            f"{total} is not a multiple of {known}", attr="shape")
        return tuple(total // known if d == -1 else d for d in shape)
    if total is not None and total != known:
        raise HookError(f"cannot reshape {fmt(in_shape)} ({total} elements) to {list(shape)} "
                        f"({known} elements)", attr="shape")
    return shape


@infer_logical_tensor_desc("tdflow.reshape")
@infer_physical_tensor_desc("tdflow.reshape")
def reshape_tensor_desc(ctx: InferContext) -> None:
    ctx.set_output_shape("out", reshape_target(ctx.input_shape("in"), ctx.attr("shape")))


@infer_data_type("tdflow.reshape", "tdflow.transpose")
def passthrough_data_type(ctx: InferContext) -> None:
    src, dst = ("in", "out") if ctx.op.mnemonic == "reshape" else ("input", "output")
    ctx.set_output_dtype(dst, ctx.input_dtype(src))


def _reshape_sbp(ctx: InferContext):
    """Splits that survive the reshape: leading dims whose products agree on both sides."""
    src = ctx.input_shape("in")
    if src is None:
        return []
    dst = reshape_target(src, ctx.attr("shape"))
    sigs, i, j, pa, pb = [], 0, 0, 1, 1
    while i < len(src) and j < len(dst):
        if src[i] is None or dst[j] is None:
            break
        if pa == pb and src[i] == dst[j] and src[i] > 1:
            sigs.append(signature(ctx, f"S({i})", f"S({j})"))
        if pa * src[i] <= pb * dst[j]:
            pa *= src[i]
            i += 1
        else:
            pb *= dst[j]
            j += 1
    return sigs


get_sbp("tdflow.reshape")(_reshape_sbp)


@enumerate_nd_sbp_signatures("tdflow.reshape")
def reshape_nd_sbp(ctx: InferContext):
    """On a 1-D device hierarchy the N-D signatures are the 1-D ones."""
    return _reshape_sbp(ctx)


# -- transpose ----------------------------------------------------------------------------------
@infer_logical_tensor_desc("tdflow.transpose")
@infer_physical_tensor_desc("tdflow.transpose")
def transpose_tensor_desc(ctx: InferContext) -> None:
    shape, perm = ctx.input_shape("input"), tuple(ctx.attr("perm"))
    if shape is None:
        ctx.set_output_shape("output", None if not perm else (None,) * len(perm))
        return
    # TDF_PermAttr of input: a permutation of its dims, non-negative
    ctx.set_output_shape("output", tuple(shape[p] for p in perm))


@get_sbp("tdflow.transpose")
def transpose_sbp(ctx: InferContext):
    perm = tuple(ctx.attr("perm"))
    return [signature(ctx, f"S({p})", f"S({i})") for i, p in enumerate(perm)]


# -- cat ----------------------------------------------------------------------------------------
@check_attr("tdflow.cat")
def cat_check(ctx: InferContext) -> None:
    if ctx.attr("max_dim_size") < 0:
        raise HookError(f"max_dim_size must be >= 0, got {ctx.attr('max_dim_size')}",
                        attr="max_dim_size")


@infer_logical_tensor_desc("tdflow.cat")
@infer_physical_tensor_desc("tdflow.cat")
def cat_tensor_desc(ctx: InferContext) -> None:
    n = ctx.input_size("in")
    if n == 0:
        raise HookError("cat needs at least one input", operand="in")
    ranked = [(i, s) for i in range(n) if (s := ctx.input_shape("in", i)) is not None]
    if not ranked:
        ctx.set_output_shape("out", None)
        return
    i0, first = ranked[0]
    rank = len(first)
    axis = normalize_axis(ctx.attr("axis"), rank)
    out = list(first)
    total = 0
    for i in range(n):
        s = ctx.input_shape("in", i)
        if s is None:
            total = None
            continue
        if len(s) != rank:
            raise HookError(f"input {i} of cat has rank {len(s)} but input {i0} has rank {rank}",
                            operand="in")
        for d in range(rank):
            if d == axis:
                continue
            if out[d] is not None and s[d] is not None and out[d] != s[d]:
                raise HookError(f"input {i} of cat has shape {fmt(s)}; it must match "
                                f"{fmt(tuple(out))} in every dim but axis {axis}", operand="in")
            out[d] = out[d] if out[d] is not None else s[d]
        total = None if total is None or s[axis] is None else total + s[axis]
    max_dim = ctx.attr("max_dim_size")
    if max_dim > 0 and total is not None and total > max_dim:
        raise HookError(f"cat along axis {axis} gives {total} > max_dim_size = {max_dim}",
                        attr="max_dim_size")
    out[axis] = total
    ctx.set_output_shape("out", tuple(out))


@infer_data_type("tdflow.cat")
def cat_data_type(ctx: InferContext) -> None:
    dtypes = [t.dtype for t in ctx.inputs("in")]
    if not dtypes:
        raise HookError("cat needs at least one input", operand="in")
    for i, dt in enumerate(dtypes):
        if dt != dtypes[0]:
            raise HookError(f"input {i} of cat has element type {dt} but input 0 has "
                            f"{dtypes[0]}", operand="in")
    ctx.set_output_dtype("out", dtypes[0])


@get_sbp("tdflow.cat")
def cat_sbp(ctx: InferContext):
    shapes = [s for s in (t.shape for t in ctx.inputs("in")) if s is not None]
    if not shapes:
        return []
    axis = normalize_axis(ctx.attr("axis"), len(shapes[0]))
    return split_all(ctx, (i for i in range(len(shapes[0])) if i != axis))


# -- cast -----------------------------------------------------------------------------------------
@infer_logical_tensor_desc("tdflow.cast")
@infer_physical_tensor_desc("tdflow.cast")
def cast_tensor_desc(ctx: InferContext) -> None:
    ctx.set_output_shape("out", ctx.input_shape("in"))


@infer_data_type("tdflow.cast")
def cast_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("out", ctx.attr("dtype"))


@get_sbp("tdflow.cast")
def cast_sbp(ctx: InferContext):
    shape = ctx.input_shape("in")
    sigs = split_all(ctx, range(len(shape or ())))
    return sigs + [signature(ctx, "P", "P")]


@infer_device("tdflow.cast")
def cast_device(ctx: InferContext) -> str | None:
    """``pin_memory`` puts the result in page-locked host memory; otherwise it stays put."""
    return "cpu" if ctx.attr("pin_memory") else None


# -- constant and ones_like -----------------------------------------------------------------------
@infer_logical_tensor_desc("tdflow.constant")
@infer_physical_tensor_desc("tdflow.constant")
def constant_tensor_desc(ctx: InferContext) -> None:
    shape = tuple(ctx.attr("shape"))
    for d in shape:
        if d < 0:
            raise HookError(f"constant shape {list(shape)} has a negative dim", attr="shape")
    ctx.set_output_shape("out", shape)


@infer_data_type("tdflow.constant")
def constant_data_type(ctx: InferContext) -> None:
    dtype = ctx.attr("dtype")
    if ctx.attr("is_floating_value") and dtype not in ("f16", "bf16", "f32", "f64"):
        raise HookError(f"is_floating_value = true needs a floating-point dtype, got {dtype}; "
                        f"use integer_value for integer tensors", attr="dtype")
    if not ctx.attr("is_floating_value") and dtype in _INT_RANGES:
        lo, hi = _INT_RANGES[dtype]
        value = ctx.attr("integer_value")
        if not lo <= value <= hi:
            raise HookError(f"integer_value {value} does not fit {dtype} [{lo}, {hi}]",
                            attr="integer_value")
    ctx.set_output_dtype("out", dtype)


# The values each integer element type holds (a constant must fit its dtype when it is made,
# not fail later when the kernel fills the tensor).
_INT_RANGES = {"i1": (0, 1), "bool": (0, 1), **{n: t.range for n, t in INT_TYPES.items()}}


@infer_logical_tensor_desc("tdflow.dense_constant")
@infer_physical_tensor_desc("tdflow.dense_constant")
def dense_constant_tensor_desc(ctx: InferContext) -> None:
    """The result has the static shape of ``value``'s tensor type (whole on every device: its
    only signature is broadcast)."""
    t = getattr(ctx.attr("value"), "type", None)
    if not isinstance(t, TensorType) or not t.is_static:
        raise HookError(f"value must be a dense constant of a static tensor type, got "
                        f"{ctx.attr('value')}", attr="value")
    ctx.set_output_shape("out", t.shape)


@infer_data_type("tdflow.dense_constant")
def dense_constant_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("out", ctx.attr("value").type.dtype)


@get_sbp("tdflow.dense_constant")
def dense_constant_sbp(ctx: InferContext):
    """A constant is the same on every device."""
    return [signature(ctx, {}, "B")]


@infer_logical_tensor_desc("tdflow.ones_like")
@infer_physical_tensor_desc("tdflow.ones_like")
def ones_like_tensor_desc(ctx: InferContext) -> None:
    ctx.set_output_shape("out", ctx.input_shape("like"))


@infer_data_type("tdflow.ones_like")
def ones_like_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("out", ctx.input_dtype("like"))


@get_sbp("tdflow.constant", "tdflow.ones_like")
def source_sbp(ctx: InferContext):
    shape = None
    if ctx.op.mnemonic == "ones_like":
        shape = ctx.input_shape("like")
        return split_all(ctx, range(len(shape or ())))
    return [signature(ctx, {}, "B")]


@infer_nd_sbp("tdflow.constant", "tdflow.ones_like")
def source_nd_sbp(ctx: InferContext) -> dict[str, tuple[str, ...]]:
    """Generated values are the same everywhere: broadcast on a 1-D hierarchy."""
    return {blob("out"): ("B",)}


@infer_logical_tensor_desc("tdflow.broadcast_like")
@infer_physical_tensor_desc("tdflow.broadcast_like")
def broadcast_like_tensor_desc(ctx: InferContext) -> None:
    x, like, axes = ctx.input_shape("x"), ctx.input_shape("like"), ctx.attr("broadcast_axes")
    if x is not None and like is not None:
        if not axes:
            out = broadcast_shapes(x, like, names=("x", "like"))
            if not compatible(out, like):
                raise HookError(f"'x' {fmt(x)} does not broadcast to 'like' {fmt(like)}",
                                operand="x")
        else:
            norm = normalize_axes(axes, len(like), attr="broadcast_axes")
            rest = tuple(d for i, d in enumerate(like) if i not in norm)
            ones = tuple(1 if i in norm else d for i, d in enumerate(like))
            if not (compatible(x, rest) or compatible(x, ones)):
                raise HookError(f"'x' {fmt(x)} must have 'like''s shape {fmt(like)} without the "
                                f"broadcast axes {list(axes)}, i.e. {fmt(rest)}", operand="x")
    ctx.set_output_shape("y", merge(like, None))


infer_data_type("tdflow.broadcast_like")(like_data_type)
get_sbp("tdflow.broadcast_like")(like_sbp)
modify_input_arg("tdflow.broadcast_like")(like_input_args)


#: A ``stop`` that clamps to the end of any dim (what ``x[a:]`` becomes).
TO_END = (1 << 63) - 1


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
