"""Hooks of the shape and type ops: reshape, transpose, cat, cast, constant, ones_like,
reduce_sum_like and broadcast_like."""

from __future__ import annotations

from tdflow.dialect.element_types import INT_TYPES
from tdflow.dialect.types import TensorType

from .context import HookError, InferContext, InputArgModifier
from .reduce import reduced_shape
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
from .sbp import blob, signature, split_all
from .shape_util import (
    broadcast_shapes,
    compatible,
    fmt,
    merge,
    normalize_axes,
    normalize_axis,
    numel,
)


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
    if sorted(perm) != list(range(len(shape))):
        raise HookError(f"perm {list(perm)} is not a permutation of 0..{len(shape) - 1} for "
                        f"'input' of shape {fmt(shape)}", attr="perm")
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


# -- reduce_sum_like and broadcast_like -----------------------------------------------------------
@infer_logical_tensor_desc("tdflow.reduce_sum_like")
@infer_physical_tensor_desc("tdflow.reduce_sum_like")
def reduce_sum_like_tensor_desc(ctx: InferContext) -> None:
    x, like, axes = ctx.input_shape("x"), ctx.input_shape("like"), ctx.attr("axis")
    if x is not None and like is not None:
        if not axes:
            if not compatible(x, like):
                raise HookError(f"with an empty axis, 'x' {fmt(x)} and 'like' {fmt(like)} must "
                                f"have the same shape", operand="like")
        else:
            normalize_axes(axes, len(x))
            dropped, kept = reduced_shape(x, axes, False), reduced_shape(x, axes, True)
            if not (compatible(dropped, like) or compatible(kept, like)):
                raise HookError(f"summing 'x' {fmt(x)} over axis {list(axes)} gives {fmt(dropped)} "
                                f"(or {fmt(kept)} keeping dims), not 'like''s shape {fmt(like)}",
                                operand="like")
    ctx.set_output_shape("y", like)


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


@infer_data_type("tdflow.reduce_sum_like", "tdflow.broadcast_like")
def like_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("y", ctx.input_dtype("x"))


@get_sbp("tdflow.reduce_sum_like", "tdflow.broadcast_like")
def like_sbp(ctx: InferContext):
    """Axes where ``x`` and ``like`` agree split together. A reduced axis (``x`` full, ``like``
    1) split on ``x`` gives each rank a partial sum; a broadcast axis (``x`` 1, ``like`` full)
    is split on ``like`` and the result only. Both ops are linear in ``x``: P -> P."""
    like, x = ctx.input_shape("like"), ctx.input_shape("x")
    if like is None or x is None or len(like) != len(x):
        return []
    sigs = []
    reduce = ctx.op.mnemonic == "reduce_sum_like"
    for a, (dx, dl) in enumerate(zip(x, like)):
        if dx == dl:
            sigs.append(signature(ctx, f"S({a})", f"S({a})"))
        elif reduce and dl == 1:
            sigs.append(signature(ctx, {"x": f"S({a})", "like": "B"}, "P"))
        elif not reduce and dx == 1:
            sigs.append(signature(ctx, {"x": "B", "like": f"S({a})"}, f"S({a})"))
    sigs.append(signature(ctx, {"x": "P", "like": "B"}, "P"))
    return sigs


@modify_input_arg("tdflow.reduce_sum_like", "tdflow.broadcast_like")
def like_input_args(ctx: InferContext):
    """``like`` only lends its shape: no gradient flows into it."""
    return {"like": InputArgModifier(requires_grad=False)}
