"""``apply-patterns`` and ``canonicalize`` applying DRR rules: every rewrite keeps the results.

Each program is run on the CPU before the rewrite (a pipeline without any rewriting pass) and
after it, and both are compared with numpy. The user rules live in a small library written
here (``ut`` dialect, formula ops so the runtime derives their kernels) with Python natives in
a hooks module.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from tdflow.dialect.context import standard_context
from tdflow.dialect.ir import parse_module, print_module
from tdflow.lowering.pass_manager import PassManager
from tdflow.runtime.kernels.registry import kernel_table

import tdflow

PLAIN = "infer-shapes,select-kernels{device=cpu},plan-memory"  # nothing rewritten

UT_OPS = r'''
include "tdflow/Patterns.td"
include "tdflow/ops.td"

def Ut_Dialect : Dialect { let name = "ut"; }
class Ut_Op<string mnemonic, list<Trait> traits = []> : TDF_Op<mnemonic, traits> {
  let opDialect = Ut_Dialect;
}
def Ut_ScaleOp : Ut_Op<"scale", [NoMemoryEffect, Elementwise]> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "2.">:$alpha);
  let formula = [{ x * alpha }];
}
def Ut_ShiftOp : Ut_Op<"shift", [NoMemoryEffect, Elementwise]> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "0.">:$beta);
  let formula = [{ x + beta }];
}
def Ut_FmaOp : Ut_Op<"fma", [NoMemoryEffect, Elementwise]> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins F32Attr:$alpha, F32Attr:$beta);
  let formula = [{ x * alpha + beta }];
}
def Ut_Fma2Op : Ut_Op<"fma2", [NoMemoryEffect, Elementwise]> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins F32Attr:$alpha, F32Attr:$beta);
  let formula = [{ x * alpha + beta }];
}

// natives: Python functions in ut_hooks.py under these names
def MulF : NativeCodeCall<"$0.getValueAsDouble() * $1.getValueAsDouble()">;
def AddOneF : NativeCodeCall<"$0.getValueAsDouble() + 1.0">;
def PositiveF : Constraint<CPred<"$0.getValueAsDouble() > 0">, "a positive float">;

// scale(scale(x, a), b) -> scale(x, a * b): a NativeCodeCall giving an attribute
def ScaleScale : Pat<(Ut_ScaleOp (Ut_ScaleOp $x, $a), $b), (Ut_ScaleOp $x, (MulF $a, $b))>;
// shift by 0 -> x: an absent beta matches as its default
def ShiftZero : Pat<(Ut_ShiftOp $x, ConstantAttr<F32Attr, "0.0">), (replaceWithValue $x)>;
// x + scale(x, a) -> scale(x, a + 1), either operand order; $x bound twice means "the same"
def AddSelfScale : Pat<(TDF_BroadcastAddOp (either $x, (Ut_ScaleOp $x, $a))),
                       (Ut_ScaleOp $x, (AddOneF $a))>;
// relu(scale(x, a)) -> scale(relu(x), a) when a > 0: a Python constraint and a type constraint
def F32Tensor : TensorOf<[F32]>;  // as MLIR's CommonTypeConstraints.td names it
def ReluOfScale : Pat<(TDF_ReluOp (Ut_ScaleOp F32Tensor:$x, $a)),
                      (Ut_ScaleOp (TDF_ReluOp $x), $a), [(PositiveF $a)]>;
// shift(scale(x)): both rules match; the one with the higher benefit wins
def FuseLow : Pat<(Ut_ShiftOp (Ut_ScaleOp $x, $a), $b), (Ut_FmaOp $x, $a, $b)>;
def FuseHigh : Pat<(Ut_ShiftOp (Ut_ScaleOp $x, $a), $b), (Ut_Fma2Op $x, $a, $b), [], [],
                   (addBenefit 1)>;
'''

UT_HOOKS = '''
import tdflow


@tdflow.native("MulF")
def mul_f(a, b):
    return a * b


@tdflow.native("AddOneF")
def add_one_f(a):
    return a + 1.0


@tdflow.native("PositiveF")
def positive_f(a):
    return a > 0
'''


@pytest.fixture(scope="module")
def ut(tmp_path_factory):
    d = tmp_path_factory.mktemp("ut")
    (d / "ut_ops.td").write_text(UT_OPS)
    (d / "ut_hooks.py").write_text(UT_HOOKS)
    return tdflow.load_ops(d / "ut_ops.td", hooks=[d / "ut_hooks.py"])


def rewrite(text: str, ctx, pipeline: str = "apply-patterns"):
    module = parse_module(textwrap.dedent(text), "t.mlir")
    result = PassManager.parse(pipeline, dialect=ctx, kernel_table=kernel_table("cpu")).run(module)
    return module, result


def run_both(text: str, ctx, pipeline: str = "apply-patterns", seed: int = 0):
    """(outputs before, outputs after, rewritten module, pass manager run)."""
    text = textwrap.dedent(text)
    module = parse_module(text, "t.mlir")
    args = [np.random.default_rng(seed + i).standard_normal(a.type.shape).astype(a.type.np_dtype)
            for i, a in enumerate(module.funcs[0].args)]
    before = tdflow.compile(text, ops=ctx, pipeline=PLAIN)(*args)
    pm = PassManager.parse(pipeline, dialect=ctx, kernel_table=kernel_table("cpu"))
    pm.run(module)
    after = tdflow.compile(print_module(module), ops=ctx, pipeline=PLAIN)(*args)
    return args, before, after, module, pm


def names(module) -> list[str]:
    return [op.name for op in module.funcs[0].ops]


def fired_names(pm) -> list[str]:
    return [f.pattern for p in pm.passes for f in getattr(p, "fired", [])]


# -- the standard rules (tdflow/ops/canonical.td) through canonicalize ----------------------------

STD_PROGRAM = """
    func.func @f(%x: tensor<4x6xf32>) -> tensor<6x4xf32> {
      %0 = "tdflow.negative"(%x) : (tensor<4x6xf32>) -> tensor<4x6xf32>
      %1 = "tdflow.negative"(%0) : (tensor<4x6xf32>) -> tensor<4x6xf32>
      %2 = "tdflow.reshape"(%1) {shape = [24]} : (tensor<4x6xf32>) -> tensor<24xf32>
      %3 = "tdflow.reshape"(%2) {shape = [6, 4]} : (tensor<24xf32>) -> tensor<6x4xf32>
      %4 = "tdflow.transpose"(%3) {perm = [1 : si32, 0 : si32]} : (tensor<6x4xf32>) -> tensor<4x6xf32>
      %5 = "tdflow.transpose"(%4) {perm = [1 : si32, 0 : si32]} : (tensor<4x6xf32>) -> tensor<6x4xf32>
      %6 = "tdflow.cast"(%5) {dtype = f32} : (tensor<6x4xf32>) -> tensor<6x4xf32>
      %7 = "tdflow.scalar_mul"(%6) {has_float_operand = true, float_operand = 1.0 : f64} : (tensor<6x4xf32>) -> tensor<6x4xf32>
      %c = "tdflow.constant"() {dtype = f32, floating_value = 1.0 : f64, is_floating_value = true, shape = [6, 4]} : () -> tensor<6x4xf32>
      %8 = "tdflow.broadcast_mul"(%c, %7) : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
      %9 = "tdflow.exp"(%8) : (tensor<6x4xf32>) -> tensor<6x4xf32>
      return %9 : tensor<6x4xf32>
    }"""


@pytest.mark.parametrize("pipeline", ["canonicalize", "apply-patterns"])
def test_standard_rules_rewrite_and_keep_results(pipeline):
    (x,), before, after, module, pm = run_both(STD_PROGRAM, standard_context(), pipeline)
    np.testing.assert_allclose(before, np.exp(x.reshape(6, 4)), rtol=1e-6)
    np.testing.assert_array_equal(after, before)
    assert names(module) == ["tdflow.reshape", "tdflow.exp", "func.return"]
    assert fired_names(pm) == ["TDF_NegativeNegative", "TDF_ReshapeReshape",
                               "TDF_TransposeTranspose", "TDF_RedundantCast",
                               "TDF_ScalarMulByOneF", "TDF_MulByOnes"]


def test_standard_rules_leave_what_they_must():
    text = """
        func.func @f(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
          %0 = "tdflow.transpose"(%x) {perm = [1 : si32, 0 : si32]} : (tensor<4x6xf32>) -> tensor<6x4xf32>
          %1 = "tdflow.reshape"(%0) {shape = [4, 6]} : (tensor<6x4xf32>) -> tensor<4x6xf32>
          %2 = "tdflow.scalar_mul"(%1) {has_float_operand = true, float_operand = 3.0 : f64} : (tensor<4x6xf32>) -> tensor<4x6xf32>
          %3 = "tdflow.cast"(%2) {dtype = f64} : (tensor<4x6xf32>) -> tensor<4x6xf64>
          %4 = "tdflow.cast"(%3) {dtype = f32} : (tensor<4x6xf64>) -> tensor<4x6xf32>
          %5 = "tdflow.scalar_add"(%4) {has_float_operand = true, float_operand = 0.0 : f64} : (tensor<4x6xf32>) -> tensor<4x6xf32>
          return %5 : tensor<4x6xf32>
        }"""
    (x,), before, after, module, pm = run_both(text, standard_context(), "canonicalize")
    np.testing.assert_array_equal(after, before)
    # a transpose then a reshape is not a no-op; a cast that changes the type stays; a float
    # x + 0.0 is not x (it turns -0.0 into +0.0)
    assert names(module) == ["tdflow.transpose", "tdflow.reshape", "tdflow.scalar_mul",
                             "tdflow.cast", "tdflow.cast", "tdflow.scalar_add", "func.return"]
    assert fired_names(pm) == []


def test_greedy_fixpoint_through_chains():
    negs = "\n".join(f'  %n{i + 1} = "tdflow.negative"(%n{i}) : (tensor<3xf32>) -> tensor<3xf32>'
                     for i in range(7))
    text = ("func.func @f(%n0: tensor<3xf32>) -> tensor<3xf32> {\n" + negs +
            "\n  return %n7 : tensor<3xf32>\n}")
    (x,), before, after, module, pm = run_both(text, standard_context())
    np.testing.assert_array_equal(after, -x)
    np.testing.assert_array_equal(before, after)
    assert names(module) == ["tdflow.negative", "func.return"]
    assert fired_names(pm).count("TDF_NegativeNegative") == 3
    # reshape(reshape(reshape(x))) -> one reshape; then it is redundant and goes too
    text = """
        func.func @f(%x: tensor<2x6xf32>) -> tensor<2x6xf32> {
          %0 = "tdflow.reshape"(%x) {shape = [12]} : (tensor<2x6xf32>) -> tensor<12xf32>
          %1 = "tdflow.reshape"(%0) {shape = [3, 4]} : (tensor<12xf32>) -> tensor<3x4xf32>
          %2 = "tdflow.reshape"(%1) {shape = [2, -1]} : (tensor<3x4xf32>) -> tensor<2x6xf32>
          return %2 : tensor<2x6xf32>
        }"""
    (x,), before, after, module, pm = run_both(text, standard_context())
    np.testing.assert_array_equal(after, x)
    assert names(module) == ["func.return"]
    assert "TDF_RedundantReshape" in fired_names(pm)


def test_only_rules_rewrite_an_op_with_rules():
    """negative has a rule, so its Involution trait no longer rewrites it; reciprocal has none,
    so its trait still does."""
    from tdflow.lowering.passes.canonicalize import standard_patterns

    roots = standard_patterns(standard_context()).roots()
    assert "tdflow.negative" in roots and "tdflow.reciprocal" not in roots
    text = """
        func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
          %0 = "tdflow.reciprocal"(%x) : (tensor<3xf32>) -> tensor<3xf32>
          %1 = "tdflow.reciprocal"(%0) : (tensor<3xf32>) -> tensor<3xf32>
          %2 = "tdflow.negative"(%1) : (tensor<3xf32>) -> tensor<3xf32>
          %3 = "tdflow.negative"(%2) : (tensor<3xf32>) -> tensor<3xf32>
          return %3 : tensor<3xf32>
        }"""
    (x,), before, after, module, pm = run_both(text, standard_context(), "canonicalize")
    np.testing.assert_allclose(after, before, rtol=1e-6)
    assert names(module) == ["func.return"]
    assert fired_names(pm) == ["TDF_NegativeNegative"]  # the reciprocals went by their trait


# -- a user's rules over a user dialect ---------------------------------------------------------

def test_native_call_gives_an_attribute(ut):
    text = """
        func.func @f(%x: tensor<5xf32>) -> tensor<5xf32> {
          %0 = "ut.scale"(%x) {alpha = 3.0 : f32} : (tensor<5xf32>) -> tensor<5xf32>
          %1 = "ut.scale"(%0) : (tensor<5xf32>) -> tensor<5xf32>
          return %1 : tensor<5xf32>
        }"""
    (x,), before, after, module, pm = run_both(text, ut)
    np.testing.assert_allclose(before, x * 6, rtol=1e-6)
    np.testing.assert_allclose(after, before, rtol=1e-6)
    assert names(module) == ["ut.scale", "func.return"]
    assert module.funcs[0].ops[0].attributes["alpha"].value == 6.0  # 3 * the default 2
    assert fired_names(pm) == ["ScaleScale"]


def test_default_attribute_matches_as_its_default(ut):
    text = """
        func.func @f(%x: tensor<5xf32>) -> tensor<5xf32> {
          %0 = "ut.shift"(%x) : (tensor<5xf32>) -> tensor<5xf32>
          %1 = "ut.shift"(%0) {beta = 0.5 : f32} : (tensor<5xf32>) -> tensor<5xf32>
          %2 = "ut.shift"(%1) {beta = 0.0 : f32} : (tensor<5xf32>) -> tensor<5xf32>
          return %2 : tensor<5xf32>
        }"""
    (x,), before, after, module, pm = run_both(text, ut)
    np.testing.assert_allclose(after, x + 0.5, rtol=1e-6)
    np.testing.assert_array_equal(after, before)
    assert names(module) == ["ut.shift", "func.return"]
    assert fired_names(pm) == ["ShiftZero", "ShiftZero"]


def test_either_and_a_name_bound_twice(ut):
    text = """
        func.func @f(%x: tensor<5xf32>, %y: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) {
          %s = "ut.scale"(%x) {alpha = 3.0 : f32} : (tensor<5xf32>) -> tensor<5xf32>
          %a = "tdflow.broadcast_add"(%s, %x) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
          %b = "tdflow.broadcast_add"(%x, %s) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
          %c = "tdflow.broadcast_add"(%y, %s) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
          return %a, %b, %c : tensor<5xf32>, tensor<5xf32>, tensor<5xf32>
        }"""
    (x, y), before, after, module, pm = run_both(text, ut)
    for b, a in zip(before, after):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(after[0], x * 4, rtol=1e-6)
    assert fired_names(pm) == ["AddSelfScale", "AddSelfScale"]  # not %c: %y is not %x
    assert names(module).count("tdflow.broadcast_add") == 1


def test_native_constraint_and_type_constraint(ut):
    text = """
        func.func @f(%x: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>) {
          %0 = "ut.scale"(%x) {alpha = 2.0 : f32} : (tensor<5xf32>) -> tensor<5xf32>
          %1 = "tdflow.relu"(%0) : (tensor<5xf32>) -> tensor<5xf32>
          %2 = "ut.scale"(%x) {alpha = -1.0 : f32} : (tensor<5xf32>) -> tensor<5xf32>
          %3 = "tdflow.relu"(%2) : (tensor<5xf32>) -> tensor<5xf32>
          return %1, %3 : tensor<5xf32>, tensor<5xf32>
        }"""
    (x,), before, after, module, pm = run_both(text, ut)
    for b, a in zip(before, after):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert fired_names(pm) == ["ReluOfScale"]  # alpha = -1 fails PositiveF
    ops = module.funcs[0].ops
    assert [op.name for op in ops[:2]] == ["tdflow.relu", "ut.scale"]
    assert ops[1].operands[0] is ops[0].results[0]
    # an f64 tensor fails F32Tensor: nothing fires
    (x,), before, after, module, pm = run_both(text.replace("xf32>", "xf64>"), ut)
    assert fired_names(pm) == []
    assert names(module)[:4] == ["ut.scale", "tdflow.relu", "ut.scale", "tdflow.relu"]


def test_benefit_orders_the_patterns(ut):
    text = """
        func.func @f(%x: tensor<5xf32>) -> tensor<5xf32> {
          %0 = "ut.scale"(%x) {alpha = 3.0 : f32} : (tensor<5xf32>) -> tensor<5xf32>
          %1 = "ut.shift"(%0) {beta = 1.0 : f32} : (tensor<5xf32>) -> tensor<5xf32>
          return %1 : tensor<5xf32>
        }"""
    (x,), before, after, module, pm = run_both(text, ut)
    np.testing.assert_allclose(after, x * 3 + 1, rtol=1e-6)
    np.testing.assert_allclose(after, before, rtol=1e-6)
    benefits = {p.name: p.benefit for p in ut.patterns}
    assert benefits["FuseHigh"] == benefits["FuseLow"] + 1
    assert names(module) == ["ut.fma2", "func.return"]  # FuseHigh, defined second, wins
    assert fired_names(pm) == ["FuseHigh"]


def test_print_ir_after_all_names_pattern_and_location(ut):
    import io

    text = textwrap.dedent("""
        func.func @f(%x: tensor<5xf32>) -> tensor<5xf32> {
          %0 = "ut.shift"(%x) : (tensor<5xf32>) -> tensor<5xf32>
          return %0 : tensor<5xf32>
        }""")
    out = io.StringIO()
    PassManager.parse("apply-patterns", dialect=ut, print_ir_after_all=True,
                      stream=out).run(parse_module(text, "t.mlir"))
    assert "IR Dump After ApplyPatternsPass (apply-patterns)" in out.getvalue()
    assert "// pattern 'ShiftZero' fired on 'ut.shift' at t.mlir:3:3" in out.getvalue()


LOOP_OPS = r'''
include "tdflow/Patterns.td"
include "tdflow/Base.td"
def Lp_Dialect : Dialect { let name = "lp"; }
class Lp_Op<string mnemonic, list<Trait> traits = []> : TDF_Op<mnemonic, traits> {
  let opDialect = Lp_Dialect;
}
def Lp_AOp : Lp_Op<"a", [NoMemoryEffect, Elementwise]> {
  let input = (ins TDF_Tensor:$x); let output = (outs TDF_Tensor:$y); let formula = [{ x + 1 }];
}
def Lp_BOp : Lp_Op<"b", [NoMemoryEffect, Elementwise]> {
  let input = (ins TDF_Tensor:$x); let output = (outs TDF_Tensor:$y); let formula = [{ x + 1 }];
}
// two rules undoing each other never reach a fixpoint
def AToB : Pat<(Lp_AOp $x), (Lp_BOp $x)>;
def BToA : Pat<(Lp_BOp $x), (Lp_AOp $x)>;
'''


def test_iteration_cap_is_reported(tmp_path):
    (tmp_path / "loop.td").write_text(LOOP_OPS)
    ctx = tdflow.load_ops(tmp_path / "loop.td")
    text = """
        func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
          %0 = "lp.a"(%x) : (tensor<3xf32>) -> tensor<3xf32>
          return %0 : tensor<3xf32>
        }"""
    (x,), before, after, module, pm = run_both(text, ctx, "apply-patterns{max-iterations=3}")
    np.testing.assert_array_equal(after, before)
    module, result = rewrite(text, ctx, "apply-patterns{max-iterations=3}")
    msgs = [w.message for w in result.context.warnings]
    assert len(msgs) == 1 and "did not reach a fixpoint in @f after 3 iterations" in msgs[0]


def test_a_missing_native_is_an_error_naming_the_pattern(tmp_path):
    from tdflow.lowering.pass_manager import PassFailure

    (tmp_path / "m.td").write_text(r'''
include "tdflow/Patterns.td"
include "tdflow/ops.td"
def NoSuchPython : Constraint<CPred<"$0.isSplat()">, "a splat">;
def NeedsIt : Pat<(TDF_ExpOp $x), (replaceWithValue $x), [(NoSuchPython $x)]>;
''')
    ctx = tdflow.load_ops(tmp_path / "m.td")
    text = """
            func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
              %0 = "tdflow.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
              return %0 : tensor<3xf32>
            }"""
    with pytest.raises(PassFailure) as err:
        rewrite(text, ctx)
    shown = err.value.render()
    assert "m.td:5:5: error: pattern 'NeedsIt' needs a Python function for 'NoSuchPython'" in shown
    assert "--hooks" in shown
    # with the native registered (as a hooks module would), the rule applies
    from tdflow.dialect.patterns.native import NATIVES

    NATIVES.register("NoSuchPython", lambda v: v.type.shape == (3,))
    try:
        module, _ = rewrite(text, ctx)
    finally:
        NATIVES.unregister("NoSuchPython")
    assert names(module) == ["func.return"]



MORE_RULES = r'''
include "tdflow/Patterns.td"
include "tdflow/ops.td"
def MoreDoubled : NativeCodeCall<"doubled($0)">;

// x + x -> x * 2: two result dags, the first named ($d) and used by the last, which replaces
def AddSelf : Pattern<(TDF_BroadcastAddOp $x, $x),
                      [(TDF_ScalarMulOp:$d $x, ConstBoolAttrFalse, ConstBoolAttrTrue,
                                        ConstantAttr<SI64Attr, "0">, ConstantAttr<F64Attr, "2.0">),
                       (replaceWithValue $d)]>;
// sin(-x) -> -sin(x), the inner op typed by returnType
def SinOfNegative : Pat<(TDF_SinOp (TDF_NegativeOp $x)),
                        (TDF_NegativeOp (TDF_SinOp $x, (returnType $x)))>;
// square(x) -> a value a Python native builds (a detached op, inserted before the square)
def SquareByNative : Pat<(TDF_SquareOp $x), (MoreDoubled $x)>;
'''


def test_named_results_return_type_and_a_native_building_ops(tmp_path):
    from tdflow.dialect.ir import Operation
    from tdflow.dialect.patterns.native import NATIVES

    (tmp_path / "more.td").write_text(MORE_RULES)
    ctx = tdflow.load_ops(tmp_path / "more.td")

    def doubled(x):  # square(x) == x * x: a broadcast_mul the rule's result becomes
        return Operation("tdflow.broadcast_mul", [x, x], [x.type]).results[0]

    NATIVES.register("MoreDoubled", doubled)
    try:
        text = """
            func.func @f(%x: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) {
              %0 = "tdflow.broadcast_add"(%x, %x) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
              %1 = "tdflow.negative"(%x) : (tensor<5xf32>) -> tensor<5xf32>
              %2 = "tdflow.sin"(%1) : (tensor<5xf32>) -> tensor<5xf32>
              %3 = "tdflow.square"(%x) : (tensor<5xf32>) -> tensor<5xf32>
              return %0, %2, %3 : tensor<5xf32>, tensor<5xf32>, tensor<5xf32>
            }"""
        (x,), before, after, module, pm = run_both(text, ctx, "apply-patterns")
    finally:
        NATIVES.unregister("MoreDoubled")
    for b, a in zip(before, after):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(after[2], x * x, rtol=1e-6)
    assert sorted(fired_names(pm)) == ["AddSelf", "SinOfNegative", "SquareByNative"]
    sin = next(op for op in module.funcs[0].ops if op.name == "tdflow.sin")
    assert sin.operands[0] is module.funcs[0].args[0]
    assert "tdflow.square" not in names(module) and "tdflow.broadcast_mul" in names(module)
    assert "tdflow.scalar_mul" in names(module) and "tdflow.broadcast_add" not in names(module)


def test_a_rule_that_matches_its_own_output_is_bounded(tmp_path):
    """exp(sin(x)) -> exp(sin(-(-x))): the new exp matches again at once and the standard rule
    undoes the negatives; the driver stops (at most 8 rewrites per op of the program per sweep,
    max-iterations sweeps) and warns, the results unchanged."""
    (tmp_path / "grow.td").write_text(r'''
include "tdflow/Patterns.td"
include "tdflow/ops.td"
def Grow : Pat<(TDF_ExpOp (TDF_SinOp $x)),
               (TDF_ExpOp (TDF_SinOp (TDF_NegativeOp (TDF_NegativeOp $x))))>;
''')
    ctx = tdflow.load_ops(tmp_path / "grow.td")
    text = """
        func.func @f(%x: tensor<5xf32>) -> tensor<5xf32> {
          %0 = "tdflow.sin"(%x) : (tensor<5xf32>) -> tensor<5xf32>
          %1 = "tdflow.exp"(%0) : (tensor<5xf32>) -> tensor<5xf32>
          return %1 : tensor<5xf32>
        }"""
    (x,), before, after, module, pm = run_both(text, ctx, "apply-patterns{max-iterations=2}")
    np.testing.assert_allclose(after, before, rtol=1e-6)
    assert len(fired_names(pm)) <= 2 * (8 * 3 + 64)
    module, result = rewrite(text, ctx, "apply-patterns{max-iterations=2}")
    assert any("did not reach a fixpoint" in w.message for w in result.context.warnings)


def test_mlir_style_arguments_bind_in_declaration_order(tmp_path):
    """An MLIR op's `arguments` interleave attributes and operands: the rule's slots follow
    them (alpha, x, beta). axpb(alpha=0, beta=1) must not match the identity rule, which it
    would if the slots were taken as operands first."""
    (tmp_path / "mi.td").write_text(r'''
include "tdflow/Patterns.td"
include "tdflow/Base.td"
def Mi_Dialect : Dialect { let name = "mi"; }
def Mi_AxpbOp : Op<Mi_Dialect, "axpb", [NoMemoryEffect, Elementwise]> {
  let arguments = (ins F32Attr:$alpha, TDF_Tensor:$x, F32Attr:$beta);
  let results = (outs TDF_Tensor:$y);
  let formula = [{ x * alpha + beta }];
}
def AxpbIdentity : Pat<(Mi_AxpbOp ConstantAttr<F32Attr, "1.0">, $x, ConstantAttr<F32Attr, "0.0">),
                       (replaceWithValue $x)>;
''')
    ctx = tdflow.load_ops(tmp_path / "mi.td")
    (p,) = [p for p in ctx.patterns if p.name == "AxpbIdentity"]
    assert p.source.arg_names == ("alpha", "x", "beta")
    text = """
        func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
          %0 = "mi.axpb"(%x) {alpha = 1.0 : f32, beta = 0.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
          %1 = "mi.axpb"(%x) {alpha = 0.0 : f32, beta = 1.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
          return %0, %1 : tensor<4xf32>, tensor<4xf32>
        }"""
    (x,), before, after, module, pm = run_both(text, ctx)
    for b, a in zip(before, after):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(after[1], np.ones(4, np.float32))
    assert fired_names(pm) == ["AxpbIdentity"] and names(module) == ["mi.axpb", "func.return"]
