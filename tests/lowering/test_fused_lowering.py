"""The fused op in lowering: its declared definition serves verification between passes, its
result type follows the expression (``i1`` for a predicate), it absorbs further ops, and a
library without the standard ops still gets it (``LoweringDialect``'s fallback)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from tdflow.dialect.dialect import Dialect
from tdflow.dialect.ir import parse_module, print_module, verify_module
from tdflow.dialect.ir.attrs import to_python
from tdflow.lowering.ir_access import FUSED_OP, LoweringDialect, lowering_ops
from tdflow.runtime.compiled import lower

import tdflow

FZ_OPS = '''include "tdflow/Base.td"

def Fz_Dialect : Dialect { let name = "fz"; }
class Fz_Op<string mnemonic, list<Trait> traits = []> : TDF_Op<mnemonic, traits> {
  let opDialect = Fz_Dialect;
}

def Fz_GreaterOp : Fz_Op<"greater", [NoMemoryEffect, Elementwise]> {
  let input = (ins TDF_Tensor:$x, TDF_Tensor:$y);
  let output = (outs TDF_Tensor:$z);
  let formula = [{ x > y }];
}

def Fz_ScaledOp : Fz_Op<"scaled", [NoMemoryEffect, Elementwise]> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "2.">:$scale);
  let formula = [{ x * scale - 1.0 }];
}

def Fz_TwoOp : Fz_Op<"two", [NoMemoryEffect, Elementwise]> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y, TDF_Tensor:$z);
  let formula = [{ y = x * 2.0; z = x - 1.0; }];
}

def Fz_BothOp : Fz_Op<"both", [NoMemoryEffect, Elementwise]> {
  let input = (ins TDF_Tensor:$a, TDF_Tensor:$b);
  let output = (outs TDF_Tensor:$c);
  let formula = [{ a && b }];
}
'''

# Two groups: exp (standard) -> scaled (user), f32; and greater, greater (user, i1) -> maximum
# (standard, on i1: "or"), whose fused result is i1 although every operand is f32.
MIXED = '''func.func @f(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> tensor<4x8xi1> {
  %0 = "tdflow.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "fz.scaled"(%0) {scale = 0.5 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "fz.greater"(%1, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %3 = "fz.greater"(%y, %x) : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %4 = "tdflow.broadcast_maximum"(%2, %3) : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  return %4 : tensor<4x8xi1>
}
'''
USER_ONLY = MIXED.replace('"tdflow.exp"', '"fz.scaled"').replace(
    '"tdflow.broadcast_maximum"', '"fz.both"')


@pytest.fixture(scope="module")
def td(tmp_path_factory):
    path = tmp_path_factory.mktemp("fz") / "fz.td"
    path.write_text(FZ_OPS)
    return path


def _fused(module):
    return [op for f in module for op in f.body if op.name == FUSED_OP]


def _want(x, y, first=np.exp, combine=np.logical_or):
    return combine(first(x) * np.float32(0.5) - 1 > y, y > x)


def _mixed_groups(module, last: str):
    f32, i1 = sorted(_fused(module), key=lambda op: str(op.results[0].type))
    assert str(f32.results[0].type) == "tensor<4x8xf32>"
    assert str(i1.results[0].type) == "tensor<4x8xi1>"
    assert list(to_python(i1.attributes["ops"])) == ["fz.greater", "fz.greater", last]
    return f32, i1


def _inputs():
    rng = np.random.default_rng(3)
    return (rng.standard_normal((4, 8)).astype(np.float32),
            rng.standard_normal(8).astype(np.float32))


def test_a_predicate_chain_fuses_into_an_i1_result_that_verifies_and_reinfers(td):
    lib = tdflow.load_ops(td)
    module = parse_module(MIXED, "mixed.mlir")
    result = lower(module, ops=lib, pipeline="infer-shapes,fuse-elementwise,infer-shapes")
    f32, fused = _mixed_groups(result.module, "tdflow.broadcast_maximum")
    assert list(to_python(f32.attributes["ops"])) == ["tdflow.exp", "fz.scaled"]
    assert to_python(fused.attributes["expr"]) == "max(gt(in0, in1), gt(in1, in2))"
    assert verify_module(result.module, lib) == []
    # the declared op's hooks give the same type the fusion declared
    assert lib.infer_result_types(FUSED_OP, fused.operand_types, fused.attributes) == [
        fused.results[0].type]


def test_the_fused_predicate_runs_like_numpy(td):
    lib = tdflow.load_ops(td)
    f = tdflow.compile(parse_module(MIXED, "mixed.mlir"), ops=lib)
    x, y = _inputs()
    got = np.asarray(f(x, y))
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, _want(x, y))
    assert [launch.kernel for launch in f.plan.launches] == ["cpu.fused_elementwise"] * 2


def test_a_fused_op_absorbs_more_ops():
    text = textwrap.dedent('''\
        func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
          %0 = "tdflow.fused_elementwise"(%x, %y) {expr = "add(exp(in0), in1)", ops = ["tdflow.exp", "tdflow.broadcast_add"]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
          %1 = "tdflow.relu"(%0) : (tensor<4xf32>) -> tensor<4xf32>
          %2 = "tdflow.fused_elementwise"(%1, %y) {expr = "mul(in0, in1)"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
          return %2 : tensor<4xf32>
        }
    ''')
    result = lower(parse_module(text, "t.mlir"), pipeline="fuse-elementwise")
    (fused,) = _fused(result.module)
    assert list(to_python(fused.attributes["ops"])) == ["tdflow.exp", "tdflow.broadcast_add",
                                                        "tdflow.relu"]
    assert "exp(in0)" in to_python(fused.attributes["expr"])
    assert len(fused.operands) == 2  # %y is read twice, passed once


def test_a_library_without_the_standard_ops_still_gets_the_fused_op(td):
    lib = tdflow.load_ops(td, std=False)
    assert FUSED_OP not in lib
    module = parse_module(USER_ONLY, "user.mlir")
    result = lower(module, ops=lib, pipeline="infer-shapes,fuse-elementwise,infer-shapes")
    _mixed_groups(result.module, "fz.both")
    wrapped = LoweringDialect(lib)
    assert wrapped.lookup(FUSED_OP) is lowering_ops().lookup(FUSED_OP)
    assert verify_module(result.module, wrapped) == []
    f = tdflow.compile(parse_module(USER_ONLY, "user.mlir"), ops=lib)
    x, y = _inputs()
    np.testing.assert_array_equal(np.asarray(f(x, y)),
                                  _want(x, y, lambda v: v * np.float32(0.5) - 1, np.logical_and))


def test_the_fallback_checks_like_the_declared_op():
    wrapped = LoweringDialect(Dialect([]))
    text = ('func.func @f(%x: tensor<4xf32>) {\n'
            '  %0 = "tdflow.fused_elementwise"(%x) {expr = "add(in0, in1)"} '
            ': (tensor<4xf32>) -> tensor<4xf32>\n  return\n}\n')
    errors = [d.message for d in verify_module(parse_module(text), wrapped)]
    assert len(errors) == 1 and "'expr' reads input 1 but only 1 operand(s)" in errors[0]
    assert wrapped.mutable_operands(parse_module(text)["f"].body.ops[0]) == ()


def test_the_declared_op_is_used_when_the_dialect_has_it():
    from tdflow.dialect import standard_dialect

    std = standard_dialect()
    wrapped = LoweringDialect(std)
    assert wrapped.lookup(FUSED_OP) is std.lookup(FUSED_OP)
    assert "fused_elementwise" in print_module(parse_module(
        'func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = "tdflow.fused_elementwise"'
        '(%x) {expr = "neg(in0)"} : (tensor<2xf32>) -> tensor<2xf32>\n'
        '  return %0 : tensor<2xf32>\n}\n'))


def test_a_long_chain_fuses_into_kernels_of_bounded_depth():
    """300 tanh in a row: fusion stops at MAX_FUSED_DEPTH, so no tree walk recurses too deep."""
    import numpy as np
    from tdflow.dialect.formula.expr import expr_depth
    from tdflow.lowering.passes.fuse_elementwise import MAX_FUSED_DEPTH

    import tdflow

    n = 300
    lines = ["func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {"]
    prev = "%x"
    for i in range(n):
        lines.append(f'  %{i} = "tdflow.tanh"({prev}) : (tensor<4xf32>) -> tensor<4xf32>')
        prev = f"%{i}"
    lines += [f"  return {prev} : tensor<4xf32>", "}"]
    f = tdflow.compile("\n".join(lines) + "\n")
    fused = [launch for launch in f.plan.launches if launch.op == "tdflow.fused_elementwise"]
    assert len(fused) >= 2
    assert all(expr_depth(launch.attrs["expr"]) <= MAX_FUSED_DEPTH for launch in fused)
    a = np.linspace(-2, 2, 4).astype(np.float32)
    want = a
    for _ in range(n):
        want = np.tanh(want)
    np.testing.assert_allclose(f(a), want, rtol=1e-6)


def test_a_deeply_nested_fused_expr_in_a_program_is_a_located_error():
    from tdflow.dialect.context import standard_context
    from tdflow.dialect.ir import parse_module, verify_module

    e = "in0"
    for _ in range(3000):
        e = f"neg({e})"
    text = ('func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n'
            f'  %0 = "tdflow.fused_elementwise"(%x) {{expr = "{e}"}} : '
            '(tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n')
    diags = verify_module(parse_module(text, "deep.mlir"), standard_context())
    (d,) = [d for d in diags if d.severity == "error"]
    assert (d.loc.line, d.loc.col) == (2, 3) and "nested deeper than 400" in d.message


TWO = """func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "tdflow.sigmoid"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2, %3 = "fz.two"(%1) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %4 = "tdflow.relu"(%2) : (tensor<4xf32>) -> tensor<4xf32>
  %5 = "tdflow.sigmoid"(%4) : (tensor<4xf32>) -> tensor<4xf32>
  return %5, %3 : tensor<4xf32>, tensor<4xf32>
}
"""


def test_a_two_result_formula_op_is_a_fusion_boundary(td):
    # As docs/adding-an-op.md says: the ops on each side fuse, the two-result op stays itself
    # (a fused op is one expression with one result), and the results are numpy's.
    lib = tdflow.load_ops(td)
    result = lower(parse_module(TWO, "two.mlir"), ops=lib,
                   pipeline="infer-shapes,fuse-elementwise")
    body = [op.name for f in result.module for op in f.body if op.name != "func.return"]
    assert body == [FUSED_OP, "fz.two", FUSED_OP]
    x = np.linspace(-2, 2, 4, dtype=np.float32)
    y, z = tdflow.compile(parse_module(TWO, "two.mlir"), ops=lib)(x)
    s = 1 / (1 + np.exp(-np.maximum(x, 0)))
    np.testing.assert_allclose(y, 1 / (1 + np.exp(-np.maximum(2 * s, 0))), rtol=1e-6)
    np.testing.assert_allclose(z, s - 1, rtol=1e-6)
