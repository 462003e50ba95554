"""The DRR reader over tdflow's own ops: patterns over the standard ops (`include
"tdflow/ops.td"`) and over a user's OneFlow-style library bind in the op's argument order
(operands, then attributes, as the ODS reader lists them), keep constants, constraints and
natives; pattern libraries load into a context (`Context.patterns`), a rules file that includes
the ops it rewrites adds no op twice; malformed patterns are every one reported, located."""

from __future__ import annotations

import pytest
from tdflow.dialect.context import load_ops, standard_context
from tdflow.dialect.dialect import include_dirs_for, load_records, standard_ops_path
from tdflow.dialect.ods import is_op_record
from tdflow.dialect.patterns import Bind, OpNode
from tdflow.dialect.patterns.reader import read_patterns
from tdflow.dialect.patterns.signatures import OpSignatures
from tdflow.tdparser.errors import TdError

MYLIB = """\
include "tdflow/Patterns.td"
def My_Dialect : Dialect { let name = "my"; }
class My_Op<string m, list<Trait> t = []> : TDF_Op<m, t> { let opDialect = My_Dialect; }
def My_ScaleOp : My_Op<"scale"> {
  let input = (ins TDF_Tensor:$x, Optional<TDF_Tensor>:$bias);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "1.">:$factor,
                   DefaultValuedAttr<BoolAttr, "false">:$inplace);
}
def My_NegOp : My_Op<"neg"> { let input = (ins TDF_Tensor:$x); let output = (outs TDF_Tensor:$y); }
def My_IsPositive : Constraint<CPred<"$0 > 0">, "a positive factor">;
def My_Fold : NativeCodeCall<"fold($0, $1)">;
def My_ScaleByOne : Pat<(My_ScaleOp $x, $b, ConstF32Attr<"1.0">, ConstBoolAttrFalse),
                        (replaceWithValue $x)>;
def My_NegScale : Pat<(My_NegOp (My_ScaleOp:$s $x, $b, F32Attr:$f, $i)),
                      (My_ScaleOp $x, $b, (My_Fold $f, $s), $i),
                      [(My_IsPositive $f)], [], (addBenefit 2)>;
"""


@pytest.fixture()
def mylib(tmp_path):
    path = tmp_path / "mylib.td"
    path.write_text(MYLIB)
    return path


def test_every_standard_op_binds_operands_then_attributes():
    """The signatures patterns use agree with the ODS reader on every standard op."""
    rk = load_records(standard_ops_path(), include_dirs_for())
    sigs = OpSignatures(rk)
    ctx = standard_context()
    checked = 0
    for rec in rk.defs.values():
        if not is_op_record(rec):
            continue
        sig = sigs.get(rec.name)
        op = ctx.lookup(sig.name)
        assert op is not None and op.record == rec.name
        assert [a.name for a in sig.args] == ([v.name for v in op.operands]
                                              + [a.name for a in op.attributes]), op.name
        assert [a.is_attr for a in sig.args] == [False] * len(op.operands) + [True] * len(
            op.attributes)
        assert [a.variadic for a in sig.args[:len(op.operands)]] == [
            v.is_variadic for v in op.operands]
        assert sig.results == tuple(v.name for v in op.results)
        checked += 1
    assert checked == len(ctx.ops)


def test_user_library_patterns(mylib):
    ctx = load_ops(mylib)
    mine = [p for p in ctx.patterns if p.root.startswith("my.")]
    assert [p.name for p in mine] == ["My_ScaleByOne", "My_NegScale"]
    by_one, neg_scale = mine
    scale = ctx.lookup("my.scale")
    names = tuple(v.name for v in scale.operands) + tuple(a.name for a in scale.attributes)
    assert names == ("x", "bias", "factor", "inplace")

    src = by_one.source
    assert (src.kind, src.op, src.arg_names) == ("op", "my.scale", names)
    assert src.args[:2] == (Bind("x", "any"), Bind("b", "any"))
    factor, inplace = src.args[2:]
    assert (factor.kind, factor.constraint, factor.value) == (
        "constant_attr", "F32Attr", ("F32Attr", "1.0"))
    assert (inplace.kind, inplace.constraint, inplace.value) == (
        "constant_attr", "ConstBoolAttrFalse", ("BoolAttr", "false"))
    assert by_one.results == (OpNode("replace_with_value", None, (Bind("x", "any"),)),)
    assert (by_one.benefit, by_one.generated_ops, by_one.natives) == (1, (), ())
    assert by_one.loc.line == 13 and by_one.loc.file.endswith("mylib.td")

    assert neg_scale.benefit == 2 + 2  # two ops matched, addBenefit 2
    assert neg_scale.matched_ops == ("my.neg", "my.scale")
    assert neg_scale.generated_ops == ("my.scale",)
    inner = neg_scale.source.args[0]
    assert (inner.op, inner.name, inner.arg_names) == ("my.scale", "s", names)
    assert inner.args[2] == Bind("f", "attr", "F32Attr", pred=inner.args[2].pred)
    built = neg_scale.results[0]
    assert (built.op, built.arg_names) == ("my.scale", names)
    fold = built.args[2]
    assert (fold.kind, fold.op, fold.expr) == ("native", "My_Fold", "fold($0, $1)")
    assert fold.args == (Bind("f", "any"), Bind("s", "any"))
    (c,) = neg_scale.constraints
    assert (c.record, c.args, c.kind, c.pred, c.summary) == (
        "My_IsPositive", ("f",), "cpred", "($0 > 0)", "a positive factor")
    assert neg_scale.natives == ("My_Fold", "My_IsPositive")


def test_default_valued_attributes_still_take_their_slot(tmp_path):
    """As in mlir-tblgen, a source dag names every argument, defaulted attributes included."""
    path = tmp_path / "r.td"
    path.write_text('include "tdflow/Patterns.td"\ninclude "tdflow/ops.td"\n'
                    "def Short : Pat<(TDF_LeakyReluOp $x), (TDF_ReluOp $x)>;\n")
    with pytest.raises(TdError) as info:
        load_ops(path)
    assert (info.value.line, info.value.message) == (
        3, "op 'tdflow.leaky_relu' argument number mismatch: 1 in pattern vs. 2 in definition")


def test_rules_file_over_the_standard_ops_adds_no_op(tmp_path):
    rules = tmp_path / "rules.td"
    rules.write_text('include "tdflow/Patterns.td"\ninclude "tdflow/ops.td"\n'
                     'def LeakyZero : Pat<(TDF_LeakyReluOp $x, ConstF32Attr<"0.0">), '
                     '(TDF_ReluOp $x)>;\n')
    std = standard_context()
    ctx = load_ops(rules)
    assert len(ctx.ops) == len(std.ops) and ctx.user_ops() == []
    # the standard library's own rules, reached again through the include, are there once
    assert ctx.patterns[:len(std.patterns)] == std.patterns
    assert [p.name for p in ctx.patterns[len(std.patterns):]] == ["LeakyZero"]
    p = ctx.patterns[-1]
    assert p.source.arg_names == ("x", "alpha") and p.generated_ops == ("tdflow.relu",)


def test_rules_file_over_a_user_library(tmp_path, mylib):
    rules = tmp_path / "rules.td"
    rules.write_text('include "mylib.td"\n'
                     "def Twice : Pat<(My_NegOp (My_NegOp $x)), (replaceWithValue $x)>;\n")
    ctx = load_ops(mylib, rules, include_dirs=[tmp_path])
    assert sorted(op.name for op in ctx.user_ops()) == ["my.neg", "my.scale"]
    names = [p.name for p in ctx.patterns if p.root.startswith("my.")]
    assert names == ["My_ScaleByOne", "My_NegScale", "Twice"]


BAD = """\
include "tdflow/Patterns.td"
include "tdflow/ops.td"
def NotAnOp;
def BadOp : Pat<(NotAnOp $x), (TDF_ReluOp $x)>;
def BadCount : Pat<(TDF_ReluOp $x, $y), (TDF_ReluOp $x)>;
def BadUnbound : Pat<(TDF_ReluOp $x), (TDF_ReluOp $z)>;
def BadTwice : Pat<(TDF_ReluOp:$x (TDF_ReluOp:$x $y)), (TDF_ReluOp $y)>;
def BadResults : Pattern<(TDF_ReluOp $x), []>;
def Good : Pat<(TDF_ReluOp (TDF_ReluOp $x)), (TDF_ReluOp $x)>;
def BadBenefit : Pat<(TDF_ReluOp $x), (TDF_ReluOp $x), [], [], (addBenefit)>;
"""


def test_every_malformed_pattern_reported_at_its_record(tmp_path):
    path = tmp_path / "bad.td"
    path.write_text(BAD)
    with pytest.raises(TdError) as info:
        load_ops(path)
    got = [(e.file, e.line, e.col, e.message) for e in info.value.all_errors()]
    f = str(path)
    assert got == [
        (f, 4, 5, "unknown op 'NotAnOp': it is not an op definition, a NativeCodeCall or a "
                  "DRR directive (replaceWithValue, location, returnType, either, variadic)"),
        (f, 5, 5, "op 'tdflow.relu' argument number mismatch: 2 in pattern vs. 1 in definition"),
        (f, 6, 5, "referencing unbound symbol 'z'"),
        (f, 7, 5, "symbol 'x' bound more than once"),
        (f, 8, 5, "not enough values generated to replace the matched op"),
        (f, 10, 5, "The 'addBenefit' takes and only takes one integer value"),
    ]


def test_a_value_bound_twice_in_the_source_is_an_equality_check(tmp_path):
    path = tmp_path / "eq.td"
    path.write_text('include "tdflow/Patterns.td"\ninclude "tdflow/ops.td"\n'
                    "def Eq : Pat<(TDF_BroadcastAddOp $x, $x), (TDF_ScalarMulOp $x, "
                    "ConstBoolAttrFalse, ConstBoolAttrTrue, ConstantAttr<SI64Attr, \"0\">, "
                    "ConstantAttr<F64Attr, \"2.0\">)>;\n")
    (p,) = [p for p in read_patterns(load_records(path, include_dirs_for())) if p.name == "Eq"]
    assert p.source.args == (Bind("x", "any"), Bind("x", "any"))
    assert [b.value for b in p.results[0].args[1:]] == [
        ("BoolAttr", "false"), ("BoolAttr", "true"), ("SI64Attr", "0"), ("F64Attr", "2.0")]


def test_llvm_isel_patterns_are_not_rewrite_rules():
    """LLVM's instruction selection has a `Pattern` class of its own: not DRR, not read."""
    from tdflow.tdparser import parse_string

    rk = parse_string("class Pattern<dag p, list<dag> r> { dag PatternToMatch = p; "
                      "list<dag> ResultInstrs = r; }\n"
                      "class Pat<dag p, dag r> : Pattern<p, [r]>;\n"
                      "def add; def ADDrr;\ndef : Pat<(add $a, $b), (ADDrr $a, $b)>;\n")
    assert len(rk.instances_of("Pattern")) == 1
    assert read_patterns(rk) == []
