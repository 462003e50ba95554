"""Each pass on IR text -> expected IR text."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from tdflow.dialect import standard_dialect
from tdflow.dialect.ir import parse_module, print_module
from tdflow.lowering.pass_manager import PassFailure, PassManager


def lower(text: str, pipeline: str, **kw):
    module = parse_module(textwrap.dedent(text), "t.mlir")
    kw.setdefault("dialect", standard_dialect())
    kw.setdefault("verify_each", True)
    result = PassManager.parse(pipeline, **kw).run(module)
    return print_module(result.module), result


def body(text: str) -> str:
    return textwrap.dedent(text).strip()


def test_infer_shapes_refines_unknown_results_through_a_worklist():
    out, result = lower("""
        func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>) -> tensor<*xf32> {
          %0 = "tdflow.relu"(%x) : (tensor<4x8xf32>) -> tensor<*xf32>
          %1 = "tdflow.matmul"(%0, %w) : (tensor<*xf32>, tensor<8x2xf32>) -> tensor<?x?xf32>
          %2 = "tdflow.exp"(%1) : (tensor<?x?xf32>) -> tensor<*xf32>
          return %2 : tensor<*xf32>
        }""", "infer-shapes")
    assert out.strip() == body("""
        func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>) -> tensor<4x2xf32> {
          %0 = "tdflow.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
          %1 = "tdflow.matmul"(%0, %w) : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
          %2 = "tdflow.exp"(%1) : (tensor<4x2xf32>) -> tensor<4x2xf32>
          return %2 : tensor<4x2xf32>
        }""")
    assert result.context.warnings == []


def test_infer_shapes_reports_unresolved_and_conflicts():
    _, result = lower("""
        func.func @f(%x: tensor<?x8xf32>) -> tensor<*xf32> {
          %0 = "tdflow.relu"(%x) : (tensor<?x8xf32>) -> tensor<*xf32>
          return %0 : tensor<*xf32>
        }""", "infer-shapes")
    msgs = [w.message for w in result.context.warnings]
    assert any("argument %x" in m for m in msgs)
    assert any("'tdflow.relu'" in m and "stays" in m for m in msgs)
    assert all(str(w.loc).startswith("t.mlir:") for w in result.context.warnings)
    with pytest.raises(PassFailure) as err:
        lower("""
            func.func @f(%x: tensor<4xf32>) -> tensor<5xf32> {
              %0 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<5xf32>
              return %0 : tensor<5xf32>
            }""", "infer-shapes")
    assert "declared tensor<5xf32>" in err.value.render()
    assert "t.mlir:3:" in err.value.render()


CANON_IN = """
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "tdflow.negative"(%x) : (tensor<4xf32>) -> tensor<4xf32>
      %1 = "tdflow.negative"(%0) : (tensor<4xf32>) -> tensor<4xf32>
      %2 = "tdflow.relu"(%1) : (tensor<4xf32>) -> tensor<4xf32>
      %3 = "tdflow.relu"(%2) : (tensor<4xf32>) -> tensor<4xf32>
      %4 = "tdflow.exp"(%3) : (tensor<4xf32>) -> tensor<4xf32>
      %5 = "tdflow.exp"(%3) : (tensor<4xf32>) -> tensor<4xf32>
      %6 = "tdflow.broadcast_add"(%4, %5) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %7 = "tdflow.tanh"(%6) : (tensor<4xf32>) -> tensor<4xf32>
      return %6 : tensor<4xf32>
    }"""


def test_canonicalize_traits_cse_dce():
    out, _ = lower(CANON_IN, "canonicalize")
    assert out.strip() == body("""
        func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
          %0 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
          %1 = "tdflow.exp"(%0) : (tensor<4xf32>) -> tensor<4xf32>
          %2 = "tdflow.broadcast_add"(%1, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
          return %2 : tensor<4xf32>
        }""")


def test_canonicalize_keeps_side_effects_and_distinct_attributes():
    text = """
        func.func @f(%w: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
          %0 = "tdflow.leaky_relu"(%g) {alpha = 0.1 : f32} : (tensor<4xf32>) -> tensor<4xf32>
          %1 = "tdflow.leaky_relu"(%g) {alpha = 0.2 : f32} : (tensor<4xf32>) -> tensor<4xf32>
          %2 = "tdflow.broadcast_add"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
          "tdflow.sgd_update"(%w, %2) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0>} : (tensor<4xf32>, tensor<4xf32>) -> ()
          "tdflow.unknown_thing"(%w) : (tensor<4xf32>) -> ()
          %3 = "tdflow.relu"(%g) : (tensor<4xf32>) -> tensor<4xf32>
          return %w : tensor<4xf32>
        }"""
    out, _ = lower(text, "canonicalize", verify_each=False)  # the unknown op does not verify
    assert '"tdflow.sgd_update"' in out and '"tdflow.unknown_thing"' in out
    assert out.count('"tdflow.leaky_relu"') == 2  # different alpha: not CSE'd
    assert '"tdflow.relu"' not in out  # dead and pure


def test_pipeline_verifies_between_passes_when_asked():
    with pytest.raises(PassFailure):
        lower("""
            func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
              %0 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
              return %0 : tensor<4xf32>
            }""", "canonicalize", dialect=BrokenVerifierDialect(standard_dialect()))


class BrokenVerifierDialect:
    def __init__(self, base):
        self.base = base

    def __getattr__(self, name):
        return getattr(self.base, name)

    def verify_operation(self, op, emit):
        emit("always wrong")


FUSE_IN = """
    func.func @f(%x: tensor<8x4xf32>, %b: tensor<4xf32>, %s: tensor<8x4xf32>) -> tensor<8x4xf32> {
      %0 = "tdflow.exp"(%b) : (tensor<4xf32>) -> tensor<4xf32>
      %1 = "tdflow.broadcast_mul"(%x, %0) : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
      %2 = "tdflow.tanh"(%1) : (tensor<8x4xf32>) -> tensor<8x4xf32>
      %3 = "tdflow.leaky_relu"(%2) {alpha = 0.5 : f32} : (tensor<8x4xf32>) -> tensor<8x4xf32>
      %4 = "tdflow.broadcast_add"(%3, %2) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
      %5 = "tdflow.relu"(%s) : (tensor<8x4xf32>) -> tensor<8x4xf32>
      %6 = "tdflow.broadcast_mul"(%4, %5) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
      %7 = "tdflow.matmul"(%6, %6) {transpose_b = true} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
      return %6 : tensor<8x4xf32>
    }"""


def test_fuse_elementwise_respects_broadcast_and_single_consumer():
    out, _ = lower(FUSE_IN, "fuse-elementwise")
    lines = [ln.strip() for ln in out.strip().splitlines()]
    # exp(%b) has a smaller shape than its consumer: it stays outside (computed once).
    assert lines[1].startswith('%0 = "tdflow.exp"(%b)')
    # tanh is used twice by the same chain (leaky_relu and add), both absorbed downstream;
    # mul/tanh/leaky_relu/add/relu/mul become one fused op.
    fused = [ln for ln in lines if "fused_elementwise" in ln]
    assert len(fused) == 1, fused
    for name in ("tanh", "leaky_relu", "broadcast_add", "relu", "broadcast_mul"):
        assert f'"tdflow.{name}"' in fused[0]
    assert fused[0].startswith('%1 = "tdflow.fused_elementwise"(%x, %0, %s)')
    assert ('ops = ["tdflow.broadcast_mul", "tdflow.tanh", "tdflow.leaky_relu", '
            '"tdflow.broadcast_add", "tdflow.relu", "tdflow.broadcast_mul"]') in fused[0]
    assert '"tdflow.matmul"' in out  # not elementwise: untouched


def test_fused_expression_round_trips_through_text():
    from tdflow.dialect.formula.text import parse_expr
    from tdflow.dialect.ir.attrs import to_python

    out, _ = lower(FUSE_IN, "fuse-elementwise")
    m = parse_module(out)
    (fused,) = [op for op in m["f"].body if op.name == "tdflow.fused_elementwise"]
    expr = parse_expr(to_python(fused.attributes["expr"]))
    assert repr(expr) == to_python(fused.attributes["expr"])


def test_constant_folding_runs_cpu_kernels():
    from tdflow.runtime.kernels.registry import kernel_table

    text = """
        func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
          %c = "tdflow.constant"() {dtype = f32, floating_value = -2.0 : f64, is_floating_value = true, shape = [2, 3]} : () -> tensor<2x3xf32>
          %0 = "tdflow.negative"(%c) : (tensor<2x3xf32>) -> tensor<2x3xf32>
          %1 = "tdflow.exp"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
          %2 = "tdflow.broadcast_mul"(%x, %1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
          return %2 : tensor<2x3xf32>
        }"""
    out, _ = lower(text, "canonicalize", kernel_table=kernel_table("cpu"))
    lines = [ln.strip() for ln in out.strip().splitlines()]
    assert len(lines) == 5, out  # func, constant, mul, return, }
    assert lines[1].startswith('%0 = "tdflow.constant"()')
    value = float(np.exp(np.float32(2.0)))
    assert f"floating_value = {value!r}" in lines[1] or "floating_value = 7.38905" in lines[1]
    assert lines[2].startswith('%1 = "tdflow.broadcast_mul"(%x, %0)')


def test_cse_does_not_merge_reads_around_an_in_place_update():
    # Two identical pure ops around sgd_update(%w, ...) read two different %w: merging them
    # returned the value before the update twice.
    import numpy as np

    import tdflow

    text = """func.func @f(%w: tensor<4xf32>, %x: tensor<4xf32>, %g: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "tdflow.broadcast_add"(%w, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "tdflow.sgd_update"(%w, %g) {learning_rate_val = 0.1 : f32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0>} : (tensor<4xf32>, tensor<4xf32>) -> ()
  %1 = "tdflow.broadcast_add"(%w, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}"""
    w, x, g = np.zeros(4, np.float32), np.zeros(4, np.float32), np.ones(4, np.float32)
    before, after = tdflow.compile(text)(w.copy(), x, g)
    np.testing.assert_array_equal(before, np.zeros(4, np.float32))
    np.testing.assert_allclose(after, np.full(4, -0.1, np.float32))
