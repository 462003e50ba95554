"""Hooks of the linalg family: matmul and batch_matmul (transposes, alpha, optional
``_add_to_output``), and matmul_bias (matmul's product plus a last-axis ``bias``).
"""

from __future__ import annotations

from ._sbp import signature
from ._shape import compatible, fmt, numel, require_same_dtype, same_dim
from .context import HookError, InferContext
from .registry import (
    compute_complexity,
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_physical_tensor_desc,
)

OPS = ("tdflow.matmul", "tdflow.batch_matmul")
MATMUL_BIAS = "tdflow.matmul_bias"


def _mnk(ctx: InferContext):
    """(batch dims, m, n, k) from a and b with the transposes applied; unknown dims are None."""
    a, b = ctx.input_shape("a"), ctx.input_shape("b")
    batched = ctx.op.mnemonic == "batch_matmul"
    for name, shape in (("a", a), ("b", b)):
        if shape is None:
            continue
        if batched and len(shape) < 3:
            raise HookError(f"batch_matmul needs '{name}' of rank >= 3 (batch dims, rows, "
                            f"cols), got {fmt(shape)}", operand=name)
        if not batched and len(shape) != 2:
            raise HookError(f"matmul needs a 2-D '{name}', got {fmt(shape)} (rank {len(shape)}); "
                            f"use batch_matmul for batches", operand=name)
    if a is None and b is None:
        return None, None, None, None
    ta, tb = ctx.attr("transpose_a"), ctx.attr("transpose_b")
    batch = None
    if batched:
        if a is not None and b is not None:
            if len(a) != len(b):
                raise HookError(f"batch_matmul needs 'a' and 'b' of the same rank, got {fmt(a)} "
                                f"and {fmt(b)}", operand="b")
            for i, (x, y) in enumerate(zip(a[:-2], b[:-2])):
                if not same_dim(x, y):
                    raise HookError(f"batch dim {i} differs: 'a' {fmt(a)} vs 'b' {fmt(b)}",
                                    operand="b")
            batch = tuple(x if x is not None else y for x, y in zip(a[:-2], b[:-2]))
        else:
            batch = (a or b)[:-2]
    m = k_a = n = k_b = None
    if a is not None:
        m, k_a = (a[-1], a[-2]) if ta else (a[-2], a[-1])
    if b is not None:
        k_b, n = (b[-1], b[-2]) if tb else (b[-2], b[-1])
    if not same_dim(k_a, k_b):
        raise HookError(f"contraction dims differ: 'a' {fmt(a)}{' (transposed)' if ta else ''} "
                        f"has {k_a} columns but 'b' {fmt(b)}{' (transposed)' if tb else ''} has "
                        f"{k_b} rows", operand="b")
    return batch, m, n, k_a if k_a is not None else k_b


@infer_logical_tensor_desc(*OPS)
@infer_physical_tensor_desc(*OPS)
def matmul_tensor_desc(ctx: InferContext) -> None:
    batch, m, n, _ = _mnk(ctx)
    batched = ctx.op.mnemonic == "batch_matmul"
    if batched and batch is None:
        out = None
    else:
        out = (tuple(batch) if batched else ()) + (m, n)
    if ctx.has_input("_add_to_output"):
        add = ctx.input_shape("_add_to_output")
        if not compatible(add, out):
            raise HookError(f"'_add_to_output' has shape {fmt(add)} but the product has "
                            f"{fmt(out)}", operand="_add_to_output")
    ctx.set_output_shape("out", out)


@infer_data_type(*OPS)
def matmul_data_type(ctx: InferContext) -> None:
    dtype = require_same_dtype(ctx, "a", "b")
    if ctx.has_input("_add_to_output"):
        require_same_dtype(ctx, "a", "_add_to_output")
    ctx.set_output_dtype("out", dtype)


@get_sbp(*OPS)
def matmul_sbp(ctx: InferContext):
    a = ctx.input_shape("a")
    ta, tb = ctx.attr("transpose_a"), ctx.attr("transpose_b")
    rank = len(a) if a is not None else 2
    r, c = rank - 2, rank - 1  # row and column axes
    sigs = [signature(ctx, f"S({i})", f"S({i})") for i in range(rank - 2)]  # batch splits
    sigs.append(signature(ctx, {"a": f"S({c if ta else r})", "b": "B", "_add_to_output": f"S({r})"},
                          f"S({r})"))
    sigs.append(signature(ctx, {"a": "B", "b": f"S({r if tb else c})", "_add_to_output": f"S({c})"},
                          f"S({c})"))
    sigs.append(signature(ctx, {"a": f"S({r if ta else c})", "b": f"S({c if tb else r})",
                                "_add_to_output": "P"}, "P"))
    return sigs


@infer_logical_tensor_desc(MATMUL_BIAS)
@infer_physical_tensor_desc(MATMUL_BIAS)
def matmul_bias_tensor_desc(ctx: InferContext) -> None:
    _, m, n, _ = _mnk(ctx)
    bias = ctx.input_shape("bias")
    if bias is not None and (len(bias) != 1 or not same_dim(bias[0], n)):
        raise HookError(f"'bias' has shape {fmt(bias)} but the product has {n} columns",
                        operand="bias")
    ctx.set_output_shape("out", (m, n))


@infer_data_type(MATMUL_BIAS)
def matmul_bias_data_type(ctx: InferContext) -> None:
    require_same_dtype(ctx, "a", "bias")
    ctx.set_output_dtype("out", require_same_dtype(ctx, "a", "b"))


@get_sbp(MATMUL_BIAS)
def matmul_bias_sbp(ctx: InferContext):
    """Rows split with ``a`` (the bias whole), or columns split with ``b`` and the bias; no
    partial sum, which would add the bias once per part."""
    ta, tb = ctx.attr("transpose_a"), ctx.attr("transpose_b")
    return [signature(ctx, {"a": f"S({1 if ta else 0})", "b": "B", "bias": "B"}, "S(0)"),
            signature(ctx, {"a": "B", "b": f"S({0 if tb else 1})", "bias": "S(0)"}, "S(1)")]


@compute_complexity(*OPS, MATMUL_BIAS)
def matmul_complexity(ctx: InferContext) -> float | None:
    """FLOPs: 2*m*n*k per matrix product, times the batch size."""
    batch, m, n, k = _mnk(ctx)
    count = numel(tuple(batch) + (m, n, k)) if batch is not None else numel((m, n, k))
    return None if count is None else 2.0 * count
