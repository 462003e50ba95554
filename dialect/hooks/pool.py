"""Hooks and gradient rules of the pool family: max_pool_2d, avg_pool_2d and
adaptive_avg_pool2d, with their gradients. ``data_format`` is ``"channels_first"`` (NCHW) or
``"channels_last"`` (NHWC).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ._sbp import signature
from ._shape import (
    compatible,
    conv_out_dim,
    fmt,
    numel,
    require_dy,
    require_float,
    require_rank,
    require_same_dtype,
)
from ._window import channels_first, join_nchw, split_nchw, window_attrs
from .context import HookError, InferContext
from .registry import (
    compute_complexity,
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_physical_tensor_desc,
)

# -- max pooling ----------------------------------------------------------------------------------
POOL_NAMES = ("kernel_size", "stride", "dilation", "padding")


def _pool_out(ctx: InferContext, name: str = "x"):
    first = channels_first(ctx)
    k, s, d, p = window_attrs(ctx, POOL_NAMES)
    for i in range(2):
        if p[i] * 2 > k[i]:
            raise HookError(f"padding {list(p)} must be at most half the kernel size {list(k)}",
                            attr="padding")
    x = require_rank(ctx, name, 4)
    if x is None:
        return None
    n, c, hw = split_nchw(x, first)
    out_hw = []
    for i in range(2):
        o = conv_out_dim(hw[i], k[i], p[i], s[i], d[i], ctx.attr("ceil_mode"))
        if o is not None and o <= 0:
            raise HookError(f"the {k[i]}-wide pooling window does not fit spatial dim {i} of size "
                            f"{hw[i]} with padding {p[i]}", operand=name)
        out_hw.append(o)
    return join_nchw(n, c, out_hw, first)


@infer_logical_tensor_desc("tdflow.max_pool_2d")
@infer_physical_tensor_desc("tdflow.max_pool_2d")
def max_pool_tensor_desc(ctx: InferContext) -> None:
    out = _pool_out(ctx)
    ctx.set_output_shape("y", out)
    ctx.set_output_shape("indice", out)


@infer_data_type("tdflow.max_pool_2d")
def max_pool_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("y", ctx.input_dtype("x"))
    ctx.set_output_dtype("indice", "i64")


@infer_logical_tensor_desc("tdflow.max_pool_2d_grad")
@infer_physical_tensor_desc("tdflow.max_pool_2d_grad")
def max_pool_grad_tensor_desc(ctx: InferContext) -> None:
    out = _pool_out(ctx)
    for name in ("indice", "dy"):
        s = ctx.input_shape(name)
        if not compatible(s, out):
            raise HookError(f"'{name}' has shape {fmt(s)} but pooling 'x' "
                            f"{fmt(ctx.input_shape('x'))} gives {fmt(out)}", operand=name)
    ctx.set_output_shape("dx", ctx.input_shape("x"))


@infer_data_type("tdflow.max_pool_2d_grad")
def max_pool_grad_data_type(ctx: InferContext) -> None:
    if ctx.input_dtype("indice") not in ("i32", "i64"):
        raise HookError(f"'indice' must be an i64 (or i32) tensor, got {ctx.input_dtype('indice')}",
                        operand="indice")
    ctx.set_output_dtype("dx", require_same_dtype(ctx, "x", "dy"))


@get_sbp("tdflow.max_pool_2d", "tdflow.max_pool_2d_grad")
def pool_sbp(ctx: InferContext):
    """A 2-D pooling (or its gradient) splits by batch or by channel (NCHW or NHWC); train.py's
    average pools register it too."""
    ch = 1 if channels_first(ctx) else 3
    return [signature(ctx, "S(0)", "S(0)"), signature(ctx, f"S({ch})", f"S({ch})")]


def window_complexity(ctx: InferContext, out: tuple | None) -> float | None:
    """One operation per ``kernel_size`` window element per element of the pooled ``out``."""
    n = numel(out)
    k = tuple(ctx.attr("kernel_size"))
    return None if n is None else float(n * k[0] * k[1])


@compute_complexity("tdflow.max_pool_2d", "tdflow.max_pool_2d_grad")
def max_pool_complexity(ctx: InferContext) -> float | None:
    """One comparison per window element per output element."""
    return window_complexity(ctx, _pool_out(ctx))


# -- pooling --------------------------------------------------------------------------------------
def _pooled(ctx: InferContext, first: bool,
            spatial: Callable[[tuple], Sequence[Any]]) -> tuple | None:
    """``x`` (rank 4, checked; NCHW when ``first``, else NHWC) with its two spatial dims
    replaced by ``spatial(hw)``; ``None`` when ``x`` is unranked."""
    x = require_rank(ctx, "x", 4)
    if x is None:
        return None
    n, c, hw = (x[0], x[1], x[2:]) if first else (x[0], x[3], x[1:3])
    out = spatial(hw)
    return (n, c, *out) if first else (n, *out, c)


def avg_pool_out(ctx: InferContext) -> tuple | None:
    """avg_pool_2d's output shape from ``x`` and the attributes (checked)."""
    first = channels_first(ctx)
    # pairs the dialect normalized (TDF_PairAttr): two entries, kernel and stride >= 1
    k, s, p = (tuple(ctx.attr(n)) for n in ("kernel_size", "stride", "padding"))
    if any(pp * 2 > kk for pp, kk in zip(p, k)):
        raise HookError(f"padding {list(p)} must be at most half the kernel size {list(k)}",
                        attr="padding")
    if ctx.attr("divisor_override") < 0:
        raise HookError(f"divisor_override must be >= 0 (0: none), got "
                        f"{ctx.attr('divisor_override')}", attr="divisor_override")

    def spatial(hw: tuple) -> list:
        out = []
        for i in range(2):
            o = conv_out_dim(hw[i], k[i], p[i], s[i], 1, ctx.attr("ceil_mode"))
            if o is not None and o <= 0:
                raise HookError(f"the {k[i]}-wide pooling window does not fit spatial dim {i} "
                                f"of size {hw[i]} with padding {p[i]}", operand="x")
            out.append(o)
        return out

    return _pooled(ctx, first, spatial)


def adaptive_out(ctx: InferContext) -> tuple | None:
    """adaptive_avg_pool2d's output shape (one ``output_size`` entry: square)."""
    first = channels_first(ctx)
    size = [int(e) for e in ctx.attr("output_size")]
    if len(size) == 1:
        size = size * 2
    if len(size) != 2 or any(e < 1 for e in size):
        raise HookError(f"output_size must be 1 or 2 entries >= 1, got "
                        f"{list(ctx.attr('output_size'))}", attr="output_size")
    return _pooled(ctx, first, lambda _: size)


POOL = {"tdflow.avg_pool_2d": avg_pool_out, "tdflow.adaptive_avg_pool2d": adaptive_out}


POOL_GRAD = {"tdflow.avg_pool_2d_grad": avg_pool_out,
             "tdflow.adaptive_avg_pool2d_grad": adaptive_out}


@infer_logical_tensor_desc(*POOL)
@infer_physical_tensor_desc(*POOL)
def pool_tensor_desc(ctx: InferContext) -> None:
    ctx.set_output_shape("y", POOL[ctx.op.name](ctx))


@infer_data_type(*POOL)
def pool_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("y", require_float(ctx, "x"))


@infer_logical_tensor_desc(*POOL_GRAD)
@infer_physical_tensor_desc(*POOL_GRAD)
def pool_grad_tensor_desc(ctx: InferContext) -> None:
    require_dy(ctx, POOL_GRAD[ctx.op.name](ctx), f"pooling 'x' {fmt(ctx.input_shape('x'))}")
    ctx.set_output_shape("dx", ctx.input_shape("x"))


@infer_data_type(*POOL_GRAD)
def pool_grad_data_type(ctx: InferContext) -> None:
    require_float(ctx, "x")
    ctx.set_output_dtype("dx", require_same_dtype(ctx, "x", "dy"))


get_sbp(*POOL, *POOL_GRAD)(pool_sbp)  # max_pool_2d's: split by batch or by channel


@compute_complexity("tdflow.avg_pool_2d", "tdflow.avg_pool_2d_grad")
def avg_pool_complexity(ctx: InferContext) -> float | None:
    """One addition per window element per output element."""
    return window_complexity(ctx, avg_pool_out(ctx))
