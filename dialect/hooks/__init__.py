"""Python hooks of ops, keyed by (op, kind) and registered by decorator (OneFlow's names in
snake_case). See :mod:`.registry` for the decorators, :mod:`.context` for what hooks receive.

>>> from tdflow.dialect.hooks import infer_data_type, InferContext
>>> @infer_data_type("mydialect.twice")          # doctest: +SKIP
... def _(ctx: InferContext):
...     ctx.set_output_dtype("y", ctx.input_dtype("x"))

The standard op library's hooks live in the sibling modules and are registered by importing
:mod:`.standard` (``standard_dialect()`` does it).
"""

from .context import HookError, InferContext, InputArgModifier, SbpSignature
from .registry import (
    HOOKS,
    HookRegistry,
    check_attr,
    compute_complexity,
    dump_nd_sbp_signature_for_op_conf,
    enumerate_nd_sbp_signatures,
    float_values_unread,
    get_nd_sbp,
    get_sbp,
    hook,
    infer_data_type,
    infer_device,
    infer_logical_tensor_desc,
    infer_nd_sbp,
    infer_output_blob_time_shape,
    infer_physical_tensor_desc,
    infer_sbp_signature,
    modify_input_arg,
    modify_output_arg,
    qualify,
)

__all__ = [
    "HOOKS", "HookError", "HookRegistry", "InferContext", "InputArgModifier", "SbpSignature",
    "check_attr", "compute_complexity", "dump_nd_sbp_signature_for_op_conf",
    "enumerate_nd_sbp_signatures", "float_values_unread", "get_nd_sbp", "get_sbp", "hook", "infer_data_type",
    "infer_device", "infer_logical_tensor_desc", "infer_nd_sbp", "infer_output_blob_time_shape",
    "infer_physical_tensor_desc", "infer_sbp_signature", "modify_input_arg", "modify_output_arg",
    "qualify",
]
