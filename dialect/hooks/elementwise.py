"""Hooks of the elementwise ops: unary math, scalar, broadcasting binary, bias_add and the
elementwise gradients. Each op gets its four OneFlow hooks (logical and physical tensor desc,
data type, SBP)."""

from __future__ import annotations

from .context import HookError, InferContext
from .registry import (
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_physical_tensor_desc,
)
from .sbp import first_rank, signature, split_all
from .shape_util import (
    broadcast_shapes,
    compatible,
    fmt,
    merge,
    normalize_axis,
    require_float,
    require_rank,
    require_same_dtype,
)

UNARY = {  # op -> (input, output, needs float)
    "relu": ("x", "y", False), "leaky_relu": ("x", "y", False), "sigmoid": ("x", "y", True),
    "tanh": ("x", "y", True), "gelu": ("in", "out", True), "exp": ("x", "y", True),
    "log": ("x", "y", True), "sqrt": ("x", "y", True), "negative": ("x", "y", False),
    "square": ("x", "y", False), "reciprocal": ("x", "y", True),
    "scalar_add": ("in", "out", False), "scalar_mul": ("in", "out", False),
    "scalar_pow": ("in", "out", False),
}
# Gradient ops: (forward value operand, gradient operand) -> dx; all elementwise.
GRADS = {
    "relu_grad": ("y", "dy", False), "leaky_relu_grad": ("x", "dy", False),
    "sigmoid_grad": ("y", "dy", True), "tanh_grad": ("y", "dy", True),
    "gelu_grad": ("x", "dy", True), "softmax_grad": ("y", "dy", True),
}
# Comparisons return i1 (bool), whatever their operands' (same) element type.
COMPARE = ("broadcast_equal", "broadcast_not_equal", "broadcast_less", "broadcast_less_equal",
           "broadcast_greater", "broadcast_greater_equal")
BINARY = ("broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div", "broadcast_maximum",
          "broadcast_minimum", "broadcast_pow", *COMPARE)


def _q(names) -> list[str]:
    return [f"tdflow.{n}" for n in names]


# -- unary and scalar -------------------------------------------------------------------------
@infer_logical_tensor_desc(*_q(UNARY))
@infer_physical_tensor_desc(*_q(UNARY))
def unary_tensor_desc(ctx: InferContext) -> None:
    src, dst, _ = UNARY[ctx.op.mnemonic]
    ctx.set_output_shape(dst, ctx.input_shape(src))


@infer_data_type(*_q(UNARY))
def unary_data_type(ctx: InferContext) -> None:
    src, dst, needs_float = UNARY[ctx.op.mnemonic]
    dtype = require_float(ctx, src) if needs_float else ctx.input_dtype(src)
    if ctx.op.mnemonic.startswith("scalar_"):
        has_int, has_float = ctx.attr("has_int_operand"), ctx.attr("has_float_operand")
        if has_int == has_float:
            raise HookError("exactly one of has_int_operand and has_float_operand must be true "
                            f"(got has_int_operand = {str(has_int).lower()}, has_float_operand = "
                            f"{str(has_float).lower()})", attr="has_float_operand")
    ctx.set_output_dtype(dst, dtype)


@get_sbp(*_q(UNARY))
def unary_sbp(ctx: InferContext):
    sigs = split_all(ctx, range(first_rank(ctx)))
    if ctx.op.mnemonic in ("negative", "scalar_mul"):  # linear: partial sums pass through
        sigs.append(signature(ctx, "P", "P"))
    return sigs


# -- elementwise gradients ----------------------------------------------------------------------
@infer_logical_tensor_desc(*_q(GRADS))
@infer_physical_tensor_desc(*_q(GRADS))
def grad_tensor_desc(ctx: InferContext) -> None:
    fwd, grad, _ = GRADS[ctx.op.mnemonic]
    a, b = ctx.input_shape(fwd), ctx.input_shape(grad)
    if not compatible(a, b):
        raise HookError(f"'{grad}' has shape {fmt(b)} but '{fwd}' has {fmt(a)}; they must match",
                        operand=grad)
    ctx.set_output_shape("dx", merge(b, a))


@infer_data_type(*_q(GRADS))
def grad_data_type(ctx: InferContext) -> None:
    fwd, grad, needs_float = GRADS[ctx.op.mnemonic]
    dtype = require_same_dtype(ctx, fwd, grad)
    if needs_float:
        require_float(ctx, grad)
    ctx.set_output_dtype("dx", dtype)


@get_sbp(*_q(GRADS))
def grad_sbp(ctx: InferContext):
    rank = first_rank(ctx)
    if ctx.op.mnemonic == "softmax_grad":  # reduces over the last axis
        rank -= 1
    return split_all(ctx, range(max(rank, 0)))


# -- broadcasting binary ------------------------------------------------------------------------
@infer_logical_tensor_desc(*_q(BINARY))
@infer_physical_tensor_desc(*_q(BINARY))
def binary_tensor_desc(ctx: InferContext) -> None:
    ctx.set_output_shape("z", broadcast_shapes(ctx.input_shape("x"), ctx.input_shape("y")))


@infer_data_type(*_q(BINARY))
def binary_data_type(ctx: InferContext) -> None:
    dtype = require_same_dtype(ctx, "x", "y")
    ctx.set_output_dtype("z", "i1" if ctx.op.mnemonic in COMPARE else dtype)


@get_sbp(*_q(BINARY))
def binary_sbp(ctx: InferContext):
    x, y = ctx.input_shape("x"), ctx.input_shape("y")
    if x is None or y is None:
        return []
    n = max(len(x), len(y))
    px, py = (1,) * (n - len(x)) + x, (1,) * (n - len(y)) + y
    sigs = []
    for axis in range(n):
        ins = {}
        for name, shape, padded in (("x", x, px), ("y", y, py)):
            own = axis - (n - len(shape))
            ins[name] = f"S({own})" if own >= 0 and padded[axis] != 1 else "B"
        sigs.append(signature(ctx, ins, f"S({axis})"))
    if ctx.op.mnemonic in ("broadcast_add", "broadcast_sub"):
        sigs.append(signature(ctx, "P", "P"))
    elif ctx.op.mnemonic in ("broadcast_mul", "broadcast_div"):
        sigs.append(signature(ctx, {"x": "P", "y": "B"}, "P"))
    return sigs


# -- bias_add -------------------------------------------------------------------------------------
@infer_logical_tensor_desc("tdflow.bias_add")
@infer_physical_tensor_desc("tdflow.bias_add")
def bias_add_tensor_desc(ctx: InferContext) -> None:
    a = ctx.input_shape("a")
    b = require_rank(ctx, "b", 1)
    if a is not None:
        axis = normalize_axis(ctx.attr("axis"), len(a))
        if b is not None and a[axis] is not None and b[0] is not None and a[axis] != b[0]:
            raise HookError(f"bias 'b' has {b[0]} elements but 'a' has {a[axis]} along axis "
                            f"{ctx.attr('axis')} (shape {fmt(a)})", operand="b")
    ctx.set_output_shape("out", a)


@infer_data_type("tdflow.bias_add")
def bias_add_data_type(ctx: InferContext) -> None:
    ctx.set_output_dtype("out", require_same_dtype(ctx, "a", "b"))


@get_sbp("tdflow.bias_add")
def bias_add_sbp(ctx: InferContext):
    a = ctx.input_shape("a")
    if a is None:
        return []
    axis = normalize_axis(ctx.attr("axis"), len(a))
    sigs = [signature(ctx, {"a": f"S({i})", "b": "B"}, f"S({i})") for i in range(len(a)) if i != axis]
    sigs.append(signature(ctx, {"a": f"S({axis})", "b": "S(0)"}, f"S({axis})"))
    return sigs
