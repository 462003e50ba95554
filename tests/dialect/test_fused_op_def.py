"""``tdflow.fused_elementwise`` is declared in ``ops.td`` like every other op: its hooks check
the ``expr`` text and derive the result (broadcast shape, the expression's element type)."""

from __future__ import annotations

import re

import pytest
from tdflow.dialect import standard_dialect
from tdflow.dialect.ir import parse_module, verify_module
from tdflow.dialect.types import TensorType as T

FUSED = "tdflow.fused_elementwise"


def _verify(body: str, args: str = "%x: tensor<4x8xf32>, %s: tensor<8xf32>") -> list[str]:
    text = f"func.func @f({args}) {{\n{body}\n  return\n}}\n"
    return [d.message for d in verify_module(parse_module(text, "t.mlir"), standard_dialect())
            if d.severity == "error"]


def test_the_example_of_its_description_verifies():
    op = standard_dialect().lookup(FUSED)
    example = re.search(r"```mlir\n(.*?)\n```", op.description, re.S).group(1).strip()
    assert _verify("  " + example) == []


@pytest.mark.parametrize("expr, message", [
    ("frob(in0)", "malformed 'expr': unknown function 'frob'"),
    ("add(in0, in2)", "'expr' reads input 2 but only 2 operand(s) are given"),
    ("add(in0", "malformed 'expr': unexpected end of expression"),
])
def test_a_bad_expression_is_a_verify_error_at_the_op(expr, message):
    errors = _verify(f'  %y = "{FUSED}"(%x, %s) {{expr = "{expr}"}} '
                     f": (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>")
    assert len(errors) == 1 and message in errors[0], errors
    assert errors[0].startswith(f"'{FUSED}' op")


def test_expr_is_required_and_ops_optional():
    errors = _verify(f'  %y = "{FUSED}"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>')
    assert len(errors) == 1 and "requires attribute 'expr'" in errors[0]
    assert _verify(f'  %y = "{FUSED}"(%x) {{expr = "exp(in0)"}} '
                   f": (tensor<4x8xf32>) -> tensor<4x8xf32>") == []


def test_result_dtype_comes_from_the_expression_not_operand_0():
    d = standard_dialect()
    f32 = [T((4, 1), "f32"), T((8,), "f32")]
    assert d.infer_result_types(FUSED, f32, {"expr": "gt(in0, in1)"}) == [T((4, 8), "i1")]
    assert d.infer_result_types(FUSED, [T((2,), "i32")], {"expr": "exp(in0)"}) == [T((2,), "f32")]
    assert d.infer_result_types(FUSED, [T((2,), "f16")], {"expr": "mul(in0, 2.0)"}) == [
        T((2,), "f16")]
    assert d.infer_result_types(FUSED, [T((2,), "f32")], {"expr": "cast(in0, i64)"}) == [
        T((2,), "i64")]
    # a predicate declared f32 is caught by the verifier
    errors = _verify(f'  %y = "{FUSED}"(%x, %s) {{expr = "gt(in0, in1)"}} '
                     f": (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>")
    assert len(errors) == 1 and "its element type is i1" in errors[0], errors


def test_shapes_broadcast_with_unknown_dims_and_clashes_name_the_operand():
    d = standard_dialect()
    assert d.infer_result_types(FUSED, [T((None, 8), "f32"), T((8,), "f32")],
                                {"expr": "add(in0, in1)"}) == [T((None, 8), "f32")]
    assert d.infer_result_types(FUSED, [T(None, "f32"), T((8,), "f32")],
                                {"expr": "add(in0, in1)"}) == [T(None, "f32")]
    errors = _verify(f'  %y = "{FUSED}"(%x, %s) {{expr = "add(in0, in1)"}} '
                     f": (tensor<4x8xf32>, tensor<3xf32>) -> tensor<4x8xf32>",
                     "%x: tensor<4x8xf32>, %s: tensor<3xf32>")
    assert len(errors) == 1 and "do not broadcast" in errors[0]


def test_sbp_splits_each_output_axis_and_broadcasts_stretched_operands():
    sigs = [s.as_dict() for s in standard_dialect().sbp_signatures(
        FUSED, [T((4, 8), "f32"), T((8,), "f32"), T((4, 1), "f32")], {"expr": "in0"})]
    assert sigs == [
        {"inputs": {"in_0": "S(0)", "in_1": "B", "in_2": "S(0)"}, "outputs": {"out_0": "S(0)"}},
        {"inputs": {"in_0": "S(1)", "in_1": "S(0)", "in_2": "B"}, "outputs": {"out_0": "S(1)"}},
    ]


def test_it_is_not_a_formula_op_and_has_no_functional_form():
    from tdflow.lowering.elementwise_ops import ELEMENTWISE_OPS
    from tdflow.runtime import functional

    assert FUSED not in ELEMENTWISE_OPS
    assert "fused_elementwise" not in functional.functions
    assert not functional.has_functional_form(standard_dialect().lookup(FUSED))


