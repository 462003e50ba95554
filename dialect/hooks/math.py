"""Hooks of the math family (unary math functions, activations and their gradients):
shape, dtype and SBP of the formula ops.

>>> from tdflow.dialect import standard_dialect
>>> from tdflow.dialect.types import TensorType as T
>>> d = standard_dialect()
>>> d.infer_result_types("tdflow.isnan", [T((2, 3), "f16")], {})
[TensorType(shape=(2, 3), dtype='i1')]
>>> d.infer_result_types("tdflow.broadcast_floor_mod", [T((4, 1), "i32"), T((3,), "i32")], {})
[TensorType(shape=(4, 3), dtype='i32')]
"""

from __future__ import annotations

from tdflow.dialect.element_types import NUMERIC_DTYPES

from ..infer import formula_result_types
from ._sbp import first_rank, signature, split_all
from ._shape import (
    INT_DTYPES,
    compatible,
    fmt,
    merge,
    require_float,
    require_same_dtype,
    tdflow_names,
)
from .context import HookError, InferContext
from .elementwise import binary_sbp
from .registry import (
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_physical_tensor_desc,
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


# -- unary and scalar -------------------------------------------------------------------------
@infer_logical_tensor_desc(*tdflow_names(UNARY))
@infer_physical_tensor_desc(*tdflow_names(UNARY))
def unary_tensor_desc(ctx: InferContext) -> None:
    src, dst, _ = UNARY[ctx.op.mnemonic]
    ctx.set_output_shape(dst, ctx.input_shape(src))


@infer_data_type(*tdflow_names(UNARY))
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


@get_sbp(*tdflow_names(UNARY))
def unary_sbp(ctx: InferContext):
    sigs = split_all(ctx, range(first_rank(ctx)))
    if ctx.op.mnemonic in ("negative", "scalar_mul"):  # linear: partial sums pass through
        sigs.append(signature(ctx, "P", "P"))
    return sigs


# -- elementwise gradients ----------------------------------------------------------------------
@infer_logical_tensor_desc(*tdflow_names(GRADS))
@infer_physical_tensor_desc(*tdflow_names(GRADS))
def grad_tensor_desc(ctx: InferContext) -> None:
    fwd, grad, _ = GRADS[ctx.op.mnemonic]
    a, b = ctx.input_shape(fwd), ctx.input_shape(grad)
    if not compatible(a, b):
        raise HookError(f"'{grad}' has shape {fmt(b)} but '{fwd}' has {fmt(a)}; they must match",
                        operand=grad)
    ctx.set_output_shape("dx", merge(b, a))


@infer_data_type(*tdflow_names(GRADS))
def grad_data_type(ctx: InferContext) -> None:
    fwd, grad, needs_float = GRADS[ctx.op.mnemonic]
    dtype = require_same_dtype(ctx, fwd, grad)
    if needs_float:
        require_float(ctx, grad)
    ctx.set_output_dtype("dx", dtype)


@get_sbp(*tdflow_names(GRADS))
def grad_sbp(ctx: InferContext):
    rank = first_rank(ctx)
    if ctx.op.mnemonic == "softmax_grad":  # reduces over the last axis
        rank -= 1
    return split_all(ctx, range(max(rank, 0)))


TRIG = ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh")


ONNX_UNARY = (*TRIG, "floor", "ceil", "round", "sign", "isnan", "isinf", "softsign", "logical_not",
         "bitwise_not")


ONNX_BINARY = ("broadcast_logical_and", "broadcast_logical_or", "broadcast_logical_xor",
          "broadcast_bitwise_and", "broadcast_bitwise_or", "broadcast_bitwise_xor",
          "broadcast_bitwise_left_shift", "broadcast_bitwise_right_shift", "broadcast_fmod",
          "broadcast_floor_mod")


ONNX_OPS = [f"tdflow.{n}" for n in (*ONNX_UNARY, *ONNX_BINARY)]


def _from_formula(ctx: InferContext, shapes: bool, dtypes: bool) -> None:
    """Set the results' shapes and/or element types from the op's formula."""
    names = ctx.input_names()
    if len(names) == 2:
        require_same_dtype(ctx, names[0][0], names[1][0])
    types = formula_result_types(ctx.op, [ctx.input(n, i) for n, i in names], ctx.attrs)
    for (name, i), ty in zip(ctx.output_names(), types):
        if shapes:
            ctx.set_output_shape(name, ty.shape, i)
        if dtypes:
            ctx.set_output_dtype(name, ty.dtype, i)


@infer_logical_tensor_desc(*ONNX_OPS)
@infer_physical_tensor_desc(*ONNX_OPS)
def onnx_tensor_desc(ctx: InferContext) -> None:
    _from_formula(ctx, shapes=True, dtypes=False)


@infer_data_type(*ONNX_OPS)
def onnx_data_type(ctx: InferContext) -> None:
    _from_formula(ctx, shapes=False, dtypes=True)


@get_sbp(*(f"tdflow.{n}" for n in ONNX_UNARY))
def onnx_unary_sbp(ctx: InferContext):
    return split_all(ctx, range(first_rank(ctx)))


# The binary ops split as the other broadcast_* ops do (none is linear: no P -> P).
get_sbp(*(f"tdflow.{n}" for n in ONNX_BINARY))(binary_sbp)


MATH_UNARY = {  # op -> (input, output, needs float)
    "abs": ("x", "y", False), "rsqrt": ("x", "y", True), "erf": ("x", "y", True),
    "silu": ("in", "out", True), "fast_gelu": ("in", "out", True),
    "softplus": ("x", "y", True), "scalar_div": ("in", "out", False),
}


# Ops linear in their input: a partial sum passes through (OneFlow's P -> P signature).
LINEAR = frozenset({"scalar_div"})


def _qm(*names: str) -> list[str]:
    return [f"tdflow.{n}" for n in names]


# -- unary and scalar -------------------------------------------------------------------------
@infer_logical_tensor_desc(*_qm(*MATH_UNARY))
@infer_physical_tensor_desc(*_qm(*MATH_UNARY))
def math_unary_tensor_desc(ctx: InferContext) -> None:
    src, dst, _ = MATH_UNARY[ctx.op.mnemonic]
    ctx.set_output_shape(dst, ctx.input_shape(src))


@infer_data_type(*_qm(*MATH_UNARY))
def math_unary_data_type(ctx: InferContext) -> None:
    src, dst, needs_float = MATH_UNARY[ctx.op.mnemonic]
    dtype = require_float(ctx, src) if needs_float else ctx.input_dtype(src)
    if dtype == "i1" and not needs_float:
        raise HookError(f"'{src}' must be a number tensor ({', '.join(NUMERIC_DTYPES)}), got i1", operand=src)
    if ctx.op.mnemonic == "scalar_div":
        has_int, has_float = ctx.attr("has_int_operand"), ctx.attr("has_float_operand")
        if has_int == has_float:
            raise HookError("exactly one of has_int_operand and has_float_operand must be true "
                            f"(got has_int_operand = {str(has_int).lower()}, has_float_operand = "
                            f"{str(has_float).lower()})", attr="has_float_operand")
        if has_float and dtype in INT_DTYPES:
            raise HookError(f"an integer tensor ({dtype}) cannot be divided by a float scalar; "
                            f"cast it to a float type first", attr="float_operand")
    ctx.set_output_dtype(dst, dtype)


@get_sbp(*_qm(*MATH_UNARY))
def math_unary_sbp(ctx: InferContext):
    sigs = split_all(ctx, range(first_rank(ctx)))
    if ctx.op.mnemonic in LINEAR:
        sigs.append(signature(ctx, "P", "P"))
    return sigs
