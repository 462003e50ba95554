"""The compile path's shortcuts (issue 23, item 7) change nothing but the time taken:
value_and_grad/sgd_step lower the gradient function alone, ``mutated_operands`` skips ops
without a ``modify_input_arg`` hook, ``lower(verified=True)`` skips the input's verification."""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.dialect.context import standard_context
from tdflow.dialect.ir import DiagnosticError, parse_module
from tdflow.lowering.ir_access import mutated_operands, with_lowering_ops
from tdflow.runtime.compiled import lower

import tdflow

PROG = """func.func @f(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>, %b: tensor<2xf32>) -> tensor<f32> {
  %0 = "tdflow.matmul"(%x, %w) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %1 = "tdflow.bias_add"(%0, %b) {axis = 1 : si32} : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %2 = "tdflow.gelu"(%1) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %3 = "tdflow.reduce_sum"(%2) {axis = [0 : si32, 1 : si32]} : (tensor<4x2xf32>) -> tensor<f32>
  return %3 : tensor<f32>
}"""


def _args(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in ((4, 3), (3, 2), (2,))]


def test_value_and_grad_lowers_the_gradient_function_alone_with_the_same_results():
    vg = tdflow.value_and_grad(PROG)
    assert [f.name for f in vg.program.lowering.module] == ["f_grad"]
    # the reference: the module as before, entry and gradient together, lowered for @f_grad
    from tdflow.lowering.passes.autodiff import differentiate

    m = parse_module(PROG, "<prog>")
    m.add(differentiate(standard_context(), m["f"]))
    both = tdflow.compile(m, entry="f_grad")
    assert [f.name for f in both.lowering.module] == ["f", "f_grad"]
    loss, grads = vg(*_args())
    ref = both(*_args(), np.ones((), np.float32))
    assert loss.tobytes() == ref[0].tobytes()
    assert [g.tobytes() for g in grads] == [r.tobytes() for r in ref[1:]]


def test_sgd_step_keeps_its_name_when_the_program_has_an_f_step_already():
    other = PROG.replace("@f(", "@f_step(")
    step = tdflow.sgd_step(PROG + "\n" + other, lr=0.1, entry="f")
    assert [f.name for f in step.program.lowering.module] == ["f_grad"]
    step = tdflow.sgd_step(PROG, lr=0.1)
    assert [f.name for f in step.program.lowering.module] == ["f_step"]
    x, w, b = _args()
    w0 = w.copy()
    step(x, w, b)
    assert not np.array_equal(w, w0)  # updated in place


def test_mutated_operands_agrees_with_the_dialect_on_every_op():
    ctx = with_lowering_ops(standard_context())
    text = PROG.replace("return %3 : tensor<f32>", (
        '"tdflow.sgd_update"(%w, %w) {learning_rate_val = 1.0e-01 : f32, operandSegmentSizes = '
        'array<i32: 1, 1, 0, 0, 0, 0>} : (tensor<3x2xf32>, tensor<3x2xf32>) -> ()\n'
        '  return %3 : tensor<f32>'))
    ops = list(parse_module(text, "<prog>")["f"].body)
    found = {op.name: mutated_operands(ctx, op) for op in ops}
    assert found["tdflow.sgd_update"] == (0,)
    for op in ops:
        assert found[op.name] == tuple(ctx.mutable_operands(op)), op.name


def test_the_input_is_still_verified_once():
    bad = PROG.replace("{axis = 1 : si32}", "{axis = 7 : si32}")
    with pytest.raises(DiagnosticError, match="axis 7 is out of range"):
        lower(parse_module(bad, "<prog>"))
    with pytest.raises(DiagnosticError, match="axis 7 is out of range"):
        tdflow.compile(bad)
    with pytest.raises(DiagnosticError, match="axis 7 is out of range"):
        tdflow.value_and_grad(bad)
