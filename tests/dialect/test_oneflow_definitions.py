"""Every standard op is defined exactly as OneFlow's OneFlowUserOps.td declares it: the same
mnemonic, operands and results (names, order, arity), attributes (names, kinds, defaults),
``has_*_fn`` flags and ``NoGrad``; the few deliberate differences are listed here with why.
Read from the shared corpus (skipped with the reason when it is absent)."""

from __future__ import annotations

import pytest
from tdflow.dialect.context import standard_context
from tdflow.dialect.opdef import HOOK_TO_FLAG
from test_ir_oneflow import oneflow  # noqa: F401 - the fixture, loaded once per module

# Ops tdflow adds that OneFlow does not have.
TDFLOW_ONLY = {
    **{f"boxing_{k}": "OneFlow boxes between SBPs in a graph pass with its own collective "
                      "kernels, not user ops; tdflow's infer-sbp inserts these"
       for k in ("all_reduce", "reduce_scatter", "all_gather", "all_to_all", "slice",
                 "to_partial")},
    "fused_elementwise": "created by the fuse-elementwise pass (LoweringOnly)",
    "matmul_bias": "created by the fuse-elementwise pass (LoweringOnly); OneFlow's "
                   "fused_matmul_bias has its own operand names and no transposes",
    "sparse_softmax_cross_entropy_with_grad": "created by the fuse-elementwise pass "
                                              "(LoweringOnly): the loss and its gradient in one "
                                              "launch",
    "dense_constant": "an element-wise constant (ONNX initializers); OneFlow keeps them as variables",
    "broadcast_bitwise_left_shift": "OneFlow has no shift op; ONNX's BitShift (LEFT) needs one",
    "broadcast_bitwise_right_shift": "OneFlow has no shift op; ONNX's BitShift (RIGHT) needs one",
    "dim_scatter_max": "ONNX's ScatterElements/ScatterND reduction 'max'; OneFlow's dim_scatter "
                       "family has update, add and mul only",
    "dim_scatter_min": "ONNX's ScatterElements/ScatterND reduction 'min'; OneFlow's dim_scatter "
                       "family has update, add and mul only",
}
# (op, aspect) -> why tdflow differs from OneFlow's record.
DIFFERENCES = {
    ("cast", "attrs"): "dtype is a type attribute (f16, i64) in tdflow, OneFlow's DataType enum",
    ("constant", "attrs"): "dtype as a type; complex_value, is_complex_value and nd_sbp are "
                           "omitted (no complex dtype, one device), as its description says",
    ("conv_data_grad", "NoGrad"): "second-order gradients are not defined: NoGrad says so",
    ("conv_filter_grad", "NoGrad"): "second-order gradients are not defined: NoGrad says so",
    ("max_pool_2d_grad", "NoGrad"): "second-order gradients are not defined: NoGrad says so",
    ("sparse_softmax_cross_entropy_grad", "NoGrad"): "second-order gradients are not defined",
    ("embedding_grad", "NoGrad"): "second-order gradients are not defined: NoGrad says so",
    ("cumprod_grad", "NoGrad"): "second-order gradients are not defined: NoGrad says so",
    ("arange", "attrs"): "dtype is a type attribute in tdflow, OneFlow's DataType enum",
    ("one_hot", "attrs"): "dtype is a type attribute in tdflow, OneFlow's DataType enum",
    **{(f"scalar_{k}", "flags"): "has_check_fn: exactly one of has_int_operand and "
                                 "has_float_operand, which the formula cannot say (OneFlow's "
                                 "functional layer sets them)"
       for k in ("add", "mul", "div", "pow")},
    ("where", "flags"): "has_check_fn instead of OneFlow's data type hook: the formula gives the "
                        "type; the check says the condition is bool or integer and x, y agree",
}


@pytest.fixture(scope="module")
def oneflow_ops(oneflow):  # noqa: F811 - the imported fixture, requested
    """OneFlow's ops by mnemonic (the context test_ir_oneflow.py loads, skipping likewise)."""
    return {op.mnemonic: op for op in oneflow.ops.values() if op.dialect == "oneflow"}


def _aspects(op) -> dict[str, object]:
    return {
        "operands": [(d.name, d.arity) for d in op.operands],
        "results": [(d.name, d.arity) for d in op.results],
        "attrs": sorted((a.name, a.kind, a.default_text) for a in op.attributes),
        # OneFlow declares its four user-op hooks on every op; a tdflow formula op has them
        # from its formula (Base.td's TDF_FormulaOp), not as has_*_fn bits
        "flags": sorted(set(op.hooks) | {HOOK_TO_FLAG[k] for k in op.formula_hooks}),
        "NoGrad": op.has_trait("NoGrad"),
    }


STANDARD = sorted(op.mnemonic for op in standard_context().ops.values())


@pytest.mark.parametrize("mnemonic", STANDARD)
def test_standard_op_is_defined_as_oneflow_does(oneflow_ops, mnemonic):
    if mnemonic in TDFLOW_ONLY:
        assert mnemonic not in oneflow_ops
        return
    assert mnemonic in oneflow_ops, f"OneFlow has no op '{mnemonic}'"
    ours = _aspects(standard_context().lookup(f"tdflow.{mnemonic}"))
    theirs = _aspects(oneflow_ops[mnemonic])
    for aspect, value in ours.items():
        if (mnemonic, aspect) in DIFFERENCES:
            assert value != theirs[aspect], f"{mnemonic}: {aspect} now agrees; drop the entry"
            continue
        assert value == theirs[aspect], f"{mnemonic}: {aspect} differs from OneFlow's"
