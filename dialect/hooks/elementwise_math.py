"""Hooks of the ops in tdflow/ops/elementwise_math.td: trigonometric and hyperbolic functions,
rounding, sign, NaN and infinity tests, softsign, logic, bit operations and the remainders.

Each op declares OneFlow's four hooks (logical and physical tensor desc, data type, SBP). Their
math is a formula, so shapes and element types come from it
(:func:`tdflow.dialect.infer.formula_result_types`: numpy's broadcast, and the types the formula
admits and computes), the same rule the kernels follow; the binary ops also require equal
operand types, as OneFlow's ``broadcast_*`` ops do.

>>> from tdflow.dialect import standard_dialect
>>> from tdflow.dialect.types import TensorType as T
>>> d = standard_dialect()
>>> d.infer_result_types("tdflow.isnan", [T((2, 3), "f16")], {})
[TensorType(shape=(2, 3), dtype='i1')]
>>> d.infer_result_types("tdflow.broadcast_floor_mod", [T((4, 1), "i32"), T((3,), "i32")], {})
[TensorType(shape=(4, 3), dtype='i32')]
"""

from __future__ import annotations

from ..infer import formula_result_types
from .context import InferContext
from .elementwise import binary_sbp
from .registry import (
    get_sbp,
    infer_data_type,
    infer_logical_tensor_desc,
    infer_physical_tensor_desc,
)
from .sbp import first_rank, split_all
from .shape_util import require_same_dtype

TRIG = ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh")
UNARY = (*TRIG, "floor", "ceil", "round", "sign", "isnan", "isinf", "softsign", "logical_not",
         "bitwise_not")
BINARY = ("broadcast_logical_and", "broadcast_logical_or", "broadcast_logical_xor",
          "broadcast_bitwise_and", "broadcast_bitwise_or", "broadcast_bitwise_xor",
          "broadcast_bitwise_left_shift", "broadcast_bitwise_right_shift", "broadcast_fmod",
          "broadcast_floor_mod")
OPS = [f"tdflow.{n}" for n in (*UNARY, *BINARY)]


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


@infer_logical_tensor_desc(*OPS)
@infer_physical_tensor_desc(*OPS)
def tensor_desc(ctx: InferContext) -> None:
    _from_formula(ctx, shapes=True, dtypes=False)


@infer_data_type(*OPS)
def data_type(ctx: InferContext) -> None:
    _from_formula(ctx, shapes=False, dtypes=True)


@get_sbp(*(f"tdflow.{n}" for n in UNARY))
def unary_sbp(ctx: InferContext):
    return split_all(ctx, range(first_rank(ctx)))


# The binary ops split as the other broadcast_* ops do (none is linear: no P -> P).
get_sbp(*(f"tdflow.{n}" for n in BINARY))(binary_sbp)
