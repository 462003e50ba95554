"""The MLIR text parser: accepted forms, attribute values, errors with positions."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tdflow.dialect.ir import body_parser, print_module
from tdflow.dialect.ir.attrs import (
    UNIT,
    ArrayAttr,
    BoolAttr,
    DenseArrayAttr,
    DictAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    SymbolRefAttr,
    TypeAttr,
    to_python,
)
from tdflow.dialect.ir.diagnostics import DiagnosticError
from tdflow.dialect.ir.parser import parse_attribute, parse_module, parse_type
from tdflow.dialect.ir.verifier import verify_module
from tdflow.dialect.types import FunctionType, TensorType

T4 = TensorType((4,), "f32")

MLP = """
func.func @mlp(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %0 = "tdflow.matmul"(%x, %w) {transpose_b = false} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = "tdflow.bias_add"(%0, %b) {axis = 1 : si32} : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %2 = "tdflow.leaky_relu"(%1) {alpha = 0.2 : f32} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %2 : tensor<8x4xf32>
}
"""


def test_design_doc_example():
    m = parse_module(MLP, "mlp.mlir")
    f = m["mlp"]
    assert [a.name for a in f.args] == ["x", "w", "b"]
    assert [op.name for op in f.body] == ["tdflow.matmul", "tdflow.bias_add",
                                          "tdflow.leaky_relu", "func.return"]
    mm, ba, lr, ret = f.ops
    assert mm.operands == tuple(f.args[:2]) and ba.operands[0] is mm.result
    assert ba.attributes == {"axis": IntegerAttr(1, "si32")}
    assert lr.attributes["alpha"] == FloatAttr(0.2, "f32")
    assert ret.operands == (lr.result,) and f.result_types == [TensorType((8, 4), "f32")]
    assert (mm.loc.file, mm.loc.line, mm.loc.col) == ("mlp.mlir", 3, 3)
    assert not m.parse_diagnostics


@pytest.mark.parametrize("text", [
    MLP,
    "module {" + MLP + "}",
    "module @named attributes {tdflow.version = 1} {" + MLP + "}  // trailing",
])
def test_module_wrappers(text):
    assert parse_module(text)["mlp"].name == "mlp"


def test_generic_func_and_return():
    text = """
    "func.func"() <{function_type = (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>),
                    sym_name = "f", sym_visibility = "private"}> ({
    ^bb0(%arg0: tensor<4xf32>):
      %0 = "tdflow.relu"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
      "func.return"(%0, %arg0) : (tensor<4xf32>, tensor<4xf32>) -> ()
    }) : () -> ()
    """
    f = parse_module(text)["f"]
    assert f.visibility == "private" and f.result_types == [T4, T4]
    assert f.body.last.operands == (f.body.first.result, f.args[0])
    custom = parse_module(print_module(parse_module(text)))
    assert custom == parse_module(text)


def test_builtin_module_generic_form():
    text = '"builtin.module"() ({\n' + MLP + "}) : () -> ()"
    assert len(parse_module(text)) == 1


def test_func_forms_private_arg_attrs_attributes_and_multi_results():
    text = """
    func.func private @g(%a: tensor<4xf32> {tdflow.note = "w"}, %b: tensor<?x4xf32> loc("x":1:1))
        -> (tensor<4xf32>, tensor<*xf32>) attributes {inline} {
      %r:2 = "tdflow.split"(%a) : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>)
      %s, %t = "tdflow.pair"(%r#1) : (tensor<2xf32>) -> (tensor<4xf32>, tensor<*xf32>)
      return %s, %t : tensor<4xf32>, tensor<*xf32>
    }
    """
    m = parse_module(text)
    f = m["g"]
    assert f.visibility == "private"
    assert f.arg_attrs == [{"tdflow.note": StringAttr("w")}, {}]
    assert f.attributes == {"inline": UNIT}
    assert f.arg_types == [T4, TensorType((None, 4), "f32")]
    split, pair, ret = f.ops
    assert len(split.results) == 2 and pair.operands[0] is split.results[1]
    assert ret.operands == pair.results
    assert parse_module(print_module(m)) == m
    assert parse_module(print_module(m, generic=True)) == m


def test_properties_attributes_and_loc_trailer():
    text = """func.func @f(%x: tensor<4xf32>) {
      "t.op"(%x) <{a = 1 : i32}> {b = 2} : (tensor<4xf32>) -> () loc("model.py":12:5)
      return
    }"""
    op = parse_module(text)["f"].body.first
    assert op.attributes == {"a": IntegerAttr(1, "i32"), "b": IntegerAttr(2)}
    assert (op.loc.file, op.loc.line, op.loc.col) == ("model.py", 12, 5)


@pytest.mark.parametrize("text, expected", [
    ("true", BoolAttr(True)),
    ("false", BoolAttr(False)),
    ("1 : i1", BoolAttr(True)),
    ("3", IntegerAttr(3, "i64")),
    ("3 : i64", IntegerAttr(3, "i64")),
    ("-3 : si32", IntegerAttr(-3, "si32")),
    ("0x10 : ui8", IntegerAttr(16, "ui8")),
    ("7 : index", IntegerAttr(7, "index")),
    ("0.2", FloatAttr(0.2, "f64")),
    ("2.0e-01 : f32", FloatAttr(0.2, "f32")),
    ("2.000000e-01 : f32", FloatAttr(0.2, "f32")),
    ("1 : f32", FloatAttr(1.0, "f32")),
    ("-0.0 : f16", FloatAttr(-0.0, "f16")),
    ("0x7F800000 : f32", FloatAttr(math.inf, "f32")),
    ('"NCHW"', StringAttr("NCHW")),
    (r'"a\"b\\c\0Ad\n"', StringAttr('a"b\\c\nd\n')),
    ("[1, 0]", ArrayAttr((IntegerAttr(1), IntegerAttr(0)))),
    ("[]", ArrayAttr(())),
    ("[0.5, 1.0]", ArrayAttr((FloatAttr(0.5), FloatAttr(1.0)))),
    ("array<i64: 1, 0>", DenseArrayAttr("i64", (1, 0))),
    ("array<i32: 1, 0, 2>", DenseArrayAttr("i32", (1, 0, 2))),
    ("array<i64>", DenseArrayAttr("i64", ())),
    ("array<f32: 0.5, -1.0>", DenseArrayAttr("f32", (0.5, -1.0))),
    ("array<i1: true, false>", DenseArrayAttr("i1", (True, False))),
    ("f16", TypeAttr("f16")),
    ("i64", TypeAttr("i64")),
    ("tensor<4x?xf32>", TypeAttr(TensorType((4, None), "f32"))),
    ("(tensor<4xf32>) -> ()", TypeAttr(FunctionType((T4,), ()))),
    ("unit", UNIT),
    ("{a = 1, b}", DictAttr((("a", IntegerAttr(1)), ("b", UNIT)))),
    ("@main", SymbolRefAttr("main")),
    ("[[1], \"x\", f32]", ArrayAttr((ArrayAttr((IntegerAttr(1),)), StringAttr("x"),
                                      TypeAttr("f32")))),
])
def test_attribute_values(text, expected):
    got = parse_attribute(text)
    assert got == expected and hash(got) == hash(expected)
    assert parse_attribute(str(got)) == got  # exact printing


def test_attribute_python_values():
    assert to_python(parse_attribute("[1, 0]")) == (1, 0)
    assert to_python(parse_attribute("array<i64: 1, 0>")) == (1, 0)
    assert to_python(parse_attribute("0.2 : f32")) == pytest.approx(0.2)
    assert to_python(parse_attribute("{a = [true], b}")) == {"a": (True,), "b": True}


def test_float_rounding_to_type():
    a = parse_attribute("0.1 : f32")
    assert a.value != 0.1 and a == FloatAttr(0.1, "f32") and str(a) == "1.000000e-01 : f32"
    assert FloatAttr(math.nan, "f32") == parse_attribute(str(FloatAttr(math.nan, "f32")))
    assert FloatAttr(0.0) != FloatAttr(-0.0)


@pytest.mark.parametrize("text", ["tensor<4x?x8xf32>", "tensor<*xi64>", "f32", "bf16", "i1",
                                  "(tensor<4xf32>, f32) -> (tensor<4xf32>, i64)"])
def test_types(text):
    assert str(parse_type(text)) == text


def _error(text: str) -> tuple[str, int, int]:
    with pytest.raises(DiagnosticError) as ei:
        parse_module(text, "bad.mlir")
    d = ei.value.diagnostics[0]
    return d.message, d.loc.line, d.loc.col


@pytest.mark.parametrize("text, message, line, col", [
    ("func.func @f() {\n  %0 = \"t.a\"() : () -> tensor<4xf32>\n",
     "expected '}' closing the function body, found end of input", 3, 1),
    ("func.func @f() {\n  %0 = \"t.a\"( : () -> f32\n}", "expected an operand like '%0', found ':'",
     2, 15),
    ("func.func @f() {\n  %0 = \"t.a\"() {x = } : () -> f32\n}",
     "expected an attribute value", 2, 21),
    ("func.func @f() {\n  %0 = \"t.a\"() {x = 1, x = 2} : () -> f32\n}",
     "duplicate attribute 'x' in the attribute dictionary", 2, 24),
    ("func.func @f() {\n  %0 = \"t.a\"() : () -> tensor<4xq32>\n}",
     "unknown element type 'q32'", 2, 24),
    ("func.func @f() {\n  %0 = \"t.a\"() : () -> (f32, f32)\n}",
     "'t.a' defines 2 result(s) but 1 name(s) are bound to them", 2, 3),
    ("func.func @f(%x: f32) {\n  \"t.a\"(%x) : () -> ()\n}",
     "'t.a' has 1 operand(s) but its type lists 0 operand type(s)", 2, 15),
    ("func.func @f() {\n  %0 = tdflow.relu %x : f32\n}",
     "custom syntax for 'tdflow.relu' is not supported", 2, 8),
    ("func.func @f() {\n  %0 = \"t.a\"() {s = \"abc} : () -> f32\n}", "unterminated string", 2,
     21),
    ("func.func @f() {\n  %0 = \"t.a\"() {i = 300 : si8} : () -> f32\n}",
     "integer 300 is out of range for type 'si8'", 2, 21),
    ("func.func @f() {\n  %0 = \"t.a\"() {i = 1.5 : i32} : () -> f32\n}",
     "floating point literal 1.5 cannot have integer type 'i32'", 2, 21),
    ("func.func @f() {\n  return\n}\nfoo", "expected a function ('func.func @name(...) {...}'), "
     "found 'foo'", 4, 1),
    ("func.func f() {}", "expected a function name like '@main', found 'f'", 1, 11),
    ("func.func @f(%x: f32) -> {\n}", "expected a type", 1, 26),
    ("func.func @f() {\n  %0 = \"t.a\"() {v = dense_resource<b> : tensor<2xi32>} : () -> f32\n}",
     "dense_resource<b>: the file defines no blob 'b'", 2, 21),
    ("func.func @f() {\n  %0 = \"t.a\"() ({}) : () -> f32\n}",
     "'t.a': operations with regions are not supported", 2, 16),
    ("func.func @f() {\n  return %0 : f32, f32\n}", "'return' has 1 value(s) but 2 type(s)", 2,
     15),
])
def test_parse_errors_say_found_and_expected(text, message, line, col):
    msg, ln, c = _error(text)
    assert message in msg and (ln, c) == (line, col), (msg, ln, c)


def test_error_renders_source_line_and_caret():
    with pytest.raises(DiagnosticError) as ei:
        parse_module('func.func @f() {\n  %0 = "t.a"() {x = } : () -> f32\n}', "bad.mlir")
    assert ei.value.render().splitlines() == [
        "bad.mlir:2:21: error: expected an attribute value (true, 3, 0.5 : f32, \"text\", [..], "
        "array<i64: ..>, a type), found '}'",
        '  %0 = "t.a"() {x = } : () -> f32',
        "                    ^",
    ]


def test_fast_path_and_general_path_agree(monkeypatch):
    text = """func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "t.a"(%x, %y) <{p = [1, 2]}> {alpha = 0.2 : f32, s = "a}b", u} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %1:2 = "t.b"(%0) {d = array<i64: 1, 0>, t = f16} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
      "t.c"(%1#1, %1#0) : (tensor<4xf32>, tensor<4xf32>) -> ()  // comment
      %2 = "t.d"(%1#0) {n = {k = 1}} : (tensor<4xf32>) -> tensor<4xf32>
      return %2 : tensor<4xf32>
    }"""
    fast = parse_module(text)
    monkeypatch.setattr(body_parser, "_FAST_OP", __import__("re").compile(r"(?!)"))
    slow = parse_module(text)
    assert fast == slow
    assert [op.loc for op in fast.funcs[0].body] == [op.loc for op in slow.funcs[0].body]


def test_forward_reference_and_undefined_are_kept_for_the_verifier():
    text = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "t.a"(%1) : (tensor<4xf32>) -> tensor<4xf32>
      %1 = "t.b"(%x) : (tensor<4xf32>) -> tensor<4xf32>
      %2 = "t.c"(%nope) : (tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }"""
    f = parse_module(text)["f"]
    a, b, c, _ = f.ops
    assert a.operands[0] is b.result  # linked: the verifier reports the dominance error
    assert c.operands[0].owner is None and c.operands[0].name == "nope"


# -- robustness: any text gives a module or a DiagnosticError, never another exception -----------

_PIECES = ['%0', '%x', '%1:2', '#1', '=', '"tdflow.relu"', '"t.a"', "(", ")", "{", "}", "<{", "}>",
           ":", "->", ",", "tensor<4xf32>", "tensor<*xf32>", "tensor<4x", "f32", "i64", "[", "]",
           "array<i64: 1, 0>", "array<", "0.2", "-3", "0x7F", "true", '"s\\"', '"\\0A"', "alpha",
           "func.func", "@f", "return", "module", "loc(", '"a":1:2', "^bb0", "\n", " ", "//c\n",
           "unit", "dense<", "@", "%", "'"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
def test_random_token_soup_only_raises_diagnostics(text):
    try:
        parse_module(text)
    except DiagnosticError as exc:
        assert exc.render()


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(MLP) - 1), st.integers(0, len(MLP)), st.text(max_size=6))
def test_mutated_program_only_raises_diagnostics(i, j, insert):
    text = MLP[:i] + insert + MLP[max(i, j):]
    try:
        m = parse_module(text)
    except DiagnosticError as exc:
        assert exc.render()
    else:
        for d in verify_module(m):
            assert d.render()


def test_crlf_line_endings_and_argument_locations():
    text = MLP.replace("(%x: tensor<8x16xf32>,", '(%x: tensor<8x16xf32> loc("model.py":7:1),')
    m = parse_module(text.replace("\n", "\r\n"), "crlf.mlir")
    assert m == parse_module(MLP)
    f = m["mlp"]
    assert (f.ops[1].loc.line, f.ops[1].loc.col) == (4, 3)
    assert (f.args[0].loc.file, f.args[0].loc.line) == ("model.py", 7)
    with pytest.raises(DiagnosticError) as ei:
        parse_module("func.func @f() {\r\n  %0 = \"t.a\"() {x = } : () -> f32\r\n}\r\n", "c.mlir")
    assert ei.value.render().splitlines()[1] == '  %0 = "t.a"() {x = } : () -> f32'


def test_entry_block_label_in_custom_func():
    m = parse_module("func.func @f(%x: f32) -> f32 {\n^bb0:\n  return %x : f32\n}")
    assert m["f"].body.last.operands == (m["f"].args[0],)
    msg, ln, col = _error("func.func @f(%x: f32) {\n^bb0(%y: f32):\n  return\n}")
    assert "takes the function's arguments" in msg and (ln, col) == (2, 1)
