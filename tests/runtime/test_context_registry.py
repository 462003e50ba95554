"""One registry per context (issue 19, item 5): what a hooks module given to
``load_ops(hooks=[...])`` registers — hooks, kernels, gradient rules, natives — serves the contexts
loaded with it and no other, so two contexts may give one op name different Python; formula
kernels are derived per context, so two libraries that define one op name with different formulas
each run their own."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from tdflow.dialect.hooks.registry import HOOKS
from tdflow.dialect.ir import parse_module
from tdflow.lowering.pass_manager import PassManager
from tdflow.runtime.kernels.registry import kernel_table
from tdflow.runtime.op_kernels import kernel_table_for

import tdflow

OPS = '''include "tdflow/Patterns.td"
include "tdflow/ops.td"
def Iso_Dialect : Dialect { let name = "iso"; }
def Iso_TwistOp : TDF_Op<"twist", [NoMemoryEffect]> {
  let opDialect = Iso_Dialect;
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let has_logical_tensor_desc_infer_fn = 1;
  let has_data_type_infer_fn = 1;
}
def Iso_ScaleOp : TDF_Op<"scale", [NoMemoryEffect, Elementwise]> {
  let opDialect = Iso_Dialect;
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "1.">:$alpha);
  let formula = [{ x * alpha }];
}
def Big : Constraint<CPred<"$0.getValueAsDouble() > 1">, "big">;
def DropBigScale : Pat<(Iso_ScaleOp $x, $a), (replaceWithValue $x), [(Big $a)]>;
'''

HOOKS_TEMPLATE = '''
import numpy as np
import tdflow
from tdflow.dialect.grad import grad_rule
from tdflow.dialect.hooks import infer_data_type, infer_logical_tensor_desc
from tdflow.runtime.kernels.registry import register_kernel

FACTOR = {factor}


@infer_logical_tensor_desc("iso.twist")
def shape(ctx):
    ctx.set_output_shape("y", ctx.input_shape("x"))


@infer_data_type("iso.twist")
def dtype(ctx):
    ctx.set_output_dtype("y", ctx.input_dtype("x"))


@register_kernel("iso.twist", device="cpu", dtypes=("f32", "f64"))
def twist(attrs, inputs, outs):
    return [np.multiply(inputs[0], FACTOR, out=outs[0])]


@grad_rule("iso.twist", saves=())
def twist_grad(g, fwd):
    return {{"x": g.op("tdflow.scalar_mul", [fwd.douts["y"]],
                      {{"has_float_operand": True, "float_operand": float(FACTOR)}})[0]}}


@tdflow.native("Big")
def big(a):
    return a > {threshold}
'''


def _library(tmp_path, name: str, factor: int, threshold: float, ops: str = OPS):
    d = tmp_path / name
    d.mkdir()
    (d / "iso.td").write_text(ops)
    (d / "iso_hooks.py").write_text(HOOKS_TEMPLATE.format(factor=factor, threshold=threshold))
    return tdflow.load_ops(d / "iso.td", hooks=[d / "iso_hooks.py"])


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    base = tmp_path_factory.mktemp("iso")
    return _library(base, "a", 2, 1.0), _library(base, "b", 3, 100.0)


PROGRAM = '''func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "iso.twist"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
'''


def test_each_context_runs_its_own_hooks_file_s_kernel(two):
    a, b = two
    x = np.arange(4, dtype=np.float32)
    for ctx, factor in ((a, 2), (b, 3)):
        eager = ctx.functional.twist(tdflow.tensor(x)).numpy()
        compiled = np.asarray(tdflow.compile(PROGRAM, ops=ctx)(x))
        np.testing.assert_array_equal(eager, x * factor)
        np.testing.assert_array_equal(compiled, x * factor)
    # neither context's kernels, hooks or rules reached the process-wide tables
    assert kernel_table("cpu").candidates("iso.twist") == []
    assert HOOKS.for_op("iso.twist") == {}
    from tdflow.dialect.grad.core import registered_rules

    assert "iso.twist" not in registered_rules()


def test_the_standard_context_does_not_see_a_library_s_hooks(two):
    from tdflow.dialect.context import standard_context

    std = standard_context()
    assert not std.hooks_of("iso.twist")
    assert "iso.twist" not in kernel_table_for(std, "cpu").ops()
    assert "iso.twist" in kernel_table_for(two[0], "cpu").ops()


def test_each_context_differentiates_with_its_own_rule(two):
    a, b = two
    x = np.arange(4, dtype=np.float64)
    for ctx, factor in ((a, 2), (b, 3)):
        t = tdflow.tensor(x, requires_grad=True)
        ctx.functional.twist(t).sum().backward()
        np.testing.assert_array_equal(t.grad.numpy(), np.full(4, float(factor)))


def test_each_context_applies_its_rules_with_its_own_natives(two):
    text = textwrap.dedent('''
        func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
          %0 = "iso.scale"(%x) {alpha = 5.0 : f32} : (tensor<3xf32>) -> tensor<3xf32>
          return %0 : tensor<3xf32>
        }''')
    fired = []
    for ctx in two:  # a's Big is "> 1" (drops the scale), b's "> 100" (keeps it)
        module = parse_module(text, "t.mlir")
        PassManager.parse("apply-patterns", dialect=ctx).run(module)
        fired.append([op.name for op in module.funcs[0].ops])
    assert fired == [["func.return"], ["iso.scale", "func.return"]]


def test_two_libraries_with_one_op_name_and_two_formulas(tmp_path):
    """Formula kernels are derived per context: the second library's ``iso.scale`` is not
    served by the first's kernel."""
    a = _library(tmp_path, "fa", 2, 1.0)
    b = _library(tmp_path, "fb", 2, 1.0, ops=OPS.replace("x * alpha", "x * alpha + 10"))
    x = np.arange(3, dtype=np.float32)
    prog = '''func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
      %0 = "iso.scale"(%x) {alpha = 0.5 : f32} : (tensor<3xf32>) -> tensor<3xf32>
      return %0 : tensor<3xf32>
    }'''
    for ctx, want in ((a, x * 0.5), (b, x * 0.5 + 10)):
        np.testing.assert_allclose(ctx.functional.scale(tdflow.tensor(x), alpha=0.5).numpy(), want)
        np.testing.assert_allclose(np.asarray(tdflow.compile(prog, ops=ctx, pipeline=(
            "infer-shapes,select-kernels{device=cpu},plan-memory"))(x)), want)
    assert kernel_table("cpu").candidates("iso.scale") == []


def test_an_edited_hooks_file_serves_contexts_loaded_after_the_edit(tmp_path):
    d = tmp_path / "ed"
    d.mkdir()
    (d / "iso.td").write_text(OPS)
    hooks = d / "iso_hooks.py"
    hooks.write_text(HOOKS_TEMPLATE.format(factor=4, threshold=1.0))
    old = tdflow.load_ops(d / "iso.td", hooks=[hooks])
    hooks.write_text(HOOKS_TEMPLATE.format(factor=5, threshold=1.0))
    new = tdflow.load_ops(d / "iso.td", hooks=[hooks])
    x = np.ones(4, dtype=np.float32)
    assert new.functional.twist(tdflow.tensor(x)).numpy().tolist() == [5.0] * 4
    # a context keeps what its hooks declared when it was loaded
    assert old.functional.twist(tdflow.tensor(x)).numpy().tolist() == [4.0] * 4


def test_a_hooks_file_that_clashes_with_a_process_wide_hook_is_a_load_error(tmp_path):
    from tdflow.dialect.hooks import infer_data_type

    @infer_data_type("iso.twist")
    def ambient_dtype(ctx):  # registered process-wide, as a hand-imported module would
        ctx.set_output_dtype("y", ctx.input_dtype("x"))

    try:
        with pytest.raises(ValueError, match="already has a infer_data_type hook"):
            _library(tmp_path, "clash", 2, 1.0)
    finally:
        HOOKS.unregister("iso.twist", "infer_data_type")
