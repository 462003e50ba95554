"""Op-specific verification beyond the bad corpus: unknown dims refine, constraints on element
types, custom dialects, and the memo of instances already verified."""

from __future__ import annotations

from tdflow.dialect import load_dialect, standard_dialect
from tdflow.dialect.ir import verify_module
from tdflow.dialect.ir.parser import parse_module
from tdflow.dialect.types import TensorType

D = standard_dialect()


def errors(text: str, dialect=D) -> list[str]:
    return [d.message for d in verify_module(parse_module(text, "t.mlir"), dialect)]


def test_unknown_dims_and_unranked_results_are_refinable():
    text = '''func.func @f(%x: tensor<?x8xf32>, %w: tensor<8x4xf32>, %u: tensor<*xf32>) -> tensor<*xf32> {
  %0 = "tdflow.matmul"(%x, %w) : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  %1 = "tdflow.matmul"(%x, %w) : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<*xf32>
  %2 = "tdflow.matmul"(%x, %w) : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  %3 = "tdflow.relu"(%u) : (tensor<*xf32>) -> tensor<*xf32>
  %4 = "tdflow.reduce_sum"(%u) {axis = [0 : si32]} : (tensor<*xf32>) -> tensor<*xf32>
  %5 = "tdflow.reshape"(%u) {shape = [2, -1]} : (tensor<*xf32>) -> tensor<2x?xf32>
  return %3 : tensor<*xf32>
}
'''
    assert errors(text) == []


def test_unknown_dims_still_catch_real_conflicts():
    text = '''func.func @f(%x: tensor<?x8xf32>, %w: tensor<8x4xf32>) -> tensor<?x8xf32> {
  %0 = "tdflow.matmul"(%x, %w) : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x5xf32>
  return %x : tensor<?x8xf32>
}
'''
    assert errors(text) == ["'tdflow.matmul' op result #0 ('out') is declared tensor<?x5xf32> "
                            "but the operands give tensor<?x4xf32>"]


def test_property_form_and_defaults():
    text = '''func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.leaky_relu"(%x) <{alpha = 0.1 : f32}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "tdflow.leaky_relu"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "tdflow.leaky_relu"(%1) {alpha = 1} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "tdflow.transpose"(%2) {perm = array<i32: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %4 = "tdflow.cast"(%3) {dtype = f16} : (tensor<8x4xf32>) -> tensor<8x4xf16>
  return %2 : tensor<4x8xf32>
}
'''
    assert errors(text) == []


def test_element_type_constraints_of_custom_ops(tmp_path):
    td = tmp_path / "c.td"
    td.write_text('include "tdflow/Base.td"\n'
                  'def C_D : Dialect { let name = "c"; }\n'
                  'def C_HalfOp : Op<C_D, "half", [SameOperandsAndResultType]> {\n'
                  '  let arguments = (ins TDF_FloatTensor:$x);\n'
                  '  let results = (outs TDF_FloatTensor:$y);\n}\n')
    d = load_dialect(td)
    good = '''func.func @f(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "c.half"(%x) : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}
'''
    assert errors(good, d) == []
    bad = good.replace("f16", "i32")
    assert errors(bad, d) == [
        "'c.half' op operand 'x' must have element type f16 or bf16 or f32 or f64 "
        "(TDF_FloatTensor), got tensor<4xi32>",
        "'c.half' op result 'y' must have element type f16 or bf16 or f32 or f64 "
        "(TDF_FloatTensor), got tensor<4xi32>"]
    # MLIR-style op without hooks: SameOperandsAndResultType still infers the result type
    assert d.infer_result_types("c.half", [TensorType((2,), "f32")]) == [TensorType((2,), "f32")]


def test_memo_does_not_hide_errors():
    text = '''func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "tdflow.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "tdflow.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf16>
  %3 = "tdflow.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf32>
}
'''
    assert len(errors(text)) == 2
    assert len(errors(text)) == 2
