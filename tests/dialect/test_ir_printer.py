"""The printer: MLIR spellings of floats, strings and attribute kinds, value naming, custom and
generic forms, locations."""

from __future__ import annotations

import math

import pytest
from tdflow.dialect.ir import Builder, FuncOp, Operation, parse_module, print_module
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
    format_float,
    print_attr_dict,
)
from tdflow.dialect.ir.printer import print_func, print_op
from tdflow.dialect.types import TensorType

T = TensorType((2, 3), "f32")


@pytest.mark.parametrize("value, type, text", [
    (0.2, "f32", "2.000000e-01"),
    (0.2, "f64", "2.000000e-01"),
    (1.0, "f16", "1.000000e+00"),
    (-0.0, "f32", "-0.000000e+00"),
    (0.123456789, "f64", "0.123456789"),  # 6 digits would lose precision: shortest exact form
    (1e-300, "f64", "1.000000e-300"),
    (3.0000001, "f64", "3.0000001"),
    (1 / 3, "f32", "0.3333333432674408"),
    (1e16 + 2, "f64", "1.0000000000000002e+16"),  # mantissa gets a '.', as MLIR requires
    (math.inf, "f32", "0x7F800000"),
    (-math.inf, "f64", "0xFFF0000000000000"),
    (math.nan, "f32", "0x7FC00000"),
    (math.inf, "f16", "0x7C00"),
    (math.inf, "bf16", "0x7F80"),
])
def test_float_spelling(value, type, text):
    assert format_float(value, type) == text


@pytest.mark.parametrize("attr, text", [
    (BoolAttr(True), "true"),
    (IntegerAttr(3), "3"),
    (IntegerAttr(3, "si32"), "3 : si32"),
    (IntegerAttr(-1, "i8"), "-1 : i8"),
    (FloatAttr(0.5), "5.000000e-01"),
    (FloatAttr(0.5, "f32"), "5.000000e-01 : f32"),
    (FloatAttr(math.inf), "0x7FF0000000000000 : f64"),
    (StringAttr("NCHW"), '"NCHW"'),
    (StringAttr('q"\\\n\t€'), r'"q\"\\\0A\09\E2\82\AC"'),
    (ArrayAttr((IntegerAttr(1), IntegerAttr(0))), "[1, 0]"),
    (DenseArrayAttr("i64", (1, 0)), "array<i64: 1, 0>"),
    (DenseArrayAttr("i32", ()), "array<i32>"),
    (DenseArrayAttr("f32", (0.5,)), "array<f32: 5.000000e-01>"),
    (DenseArrayAttr("i1", (True, False)), "array<i1: true, false>"),
    (TypeAttr("f16"), "f16"),
    (TypeAttr(T), "tensor<2x3xf32>"),
    (UNIT, "unit"),
    (DictAttr((("b", UNIT), ("a", IntegerAttr(1)))), "{a = 1, b}"),
    (SymbolRefAttr("main"), "@main"),
    (SymbolRefAttr("has space"), '@"has space"'),
])
def test_attribute_spelling(attr, text):
    assert str(attr) == text


def test_attr_dict_quotes_names_that_are_not_identifiers():
    assert print_attr_dict({"a.b": UNIT, "with space": IntegerAttr(1)}) == \
        '{a.b, "with space" = 1}'


def test_value_naming_keeps_good_argument_names():
    f = FuncOp("f", [T, T, T, T], [T], ["x", "0", None, "x"])  # numeric and duplicate: renamed
    a = f.body.append(Operation("t.pair", [f.args[0]], [T, T]))
    f.body.append(Operation("t.sink", [a.results[1], f.args[3]], []))
    f.body.append(Operation("func.return", [a.results[0]]))
    from tdflow.dialect.ir import Module

    text = print_module(Module([f]))
    assert text.splitlines() == [
        "func.func @f(%x: tensor<2x3xf32>, %arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>, "
        "%arg2: tensor<2x3xf32>) -> tensor<2x3xf32> {",
        '  %0:2 = "t.pair"(%x) : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)',
        '  "t.sink"(%0#1, %arg2) : (tensor<2x3xf32>, tensor<2x3xf32>) -> ()',
        "  return %0#0 : tensor<2x3xf32>",
        "}",
    ]


def test_generic_form_and_locations():
    m = parse_module("""func.func private @f(%x: tensor<2x3xf32> {tdflow.w}) -> (tensor<2x3xf32>, f32)
        attributes {inline} {
      %0 = "t.a"(%x) : (tensor<2x3xf32>) -> f32
      return %x, %0 : tensor<2x3xf32>, f32
    }""", "p.mlir")
    text = print_module(m, generic=True, locs=True)
    assert text.splitlines() == [
        '"func.func"() <{arg_attrs = [{tdflow.w}], function_type = (tensor<2x3xf32>) -> '
        '(tensor<2x3xf32>, f32), sym_name = "f", sym_visibility = "private"}> ({',
        "^bb0(%x: tensor<2x3xf32>):",
        '  %0 = "t.a"(%x) : (tensor<2x3xf32>) -> f32 loc("p.mlir":3:7)',
        '  "func.return"(%x, %0) : (tensor<2x3xf32>, f32) -> () loc("p.mlir":4:7)',
        '}) {inline} : () -> () loc("p.mlir":1:1)',
    ]
    back = parse_module(text)
    assert back == m and back["f"].body.first.loc.line == 3


def test_custom_form_with_private_arg_attrs_and_attributes():
    text = """func.func private @f(%x: tensor<2x3xf32> {tdflow.w}) -> tensor<2x3xf32> attributes {inline} {
  return %x : tensor<2x3xf32>
}
"""
    assert print_module(parse_module(text)) == text


def test_print_op_and_print_func_for_messages():
    b = Builder()
    with b.func("g", [T], arg_names=["in"]) as f:
        op = b.create("tdflow.leaky_relu", f.args, [T], {"alpha": FloatAttr(0.2, "f32")})
        b.ret(op.result)
    assert print_op(op) == ('%? = "tdflow.leaky_relu"(%in) {alpha = 2.000000e-01 : f32} : '
                            "(tensor<2x3xf32>) -> tensor<2x3xf32>")
    assert print_func(f).startswith("func.func @g(%in: tensor<2x3xf32>) -> tensor<2x3xf32> {")


def test_module_str_is_the_custom_form():
    m = parse_module('func.func @f() {\n  "t.a"() : () -> ()\n  return\n}\n')
    assert str(m) == print_module(m)


# One-result ops print on the body loop's inlined path, their " : (ins) -> out" cached by the
# ids of their types; the rest (function-typed results, several results, the terminator) on
# op_line. Expected texts: what the printer gave before that path (5ea662a), byte for byte.
_MIXED = '''func.func @f(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "tdflow.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = "tdflow.broadcast_add"(%0, %y) {axis = 1 : si32} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %2 = "tdflow.broadcast_add"(%1, %1) {axis = 2 : si32} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %3 = "my.\\\\op"() : () -> tensor<2xf32>
  %4 = "my.fn"() : () -> ((tensor<2xf32>) -> tensor<2xf32>)
  %5 = "my.fn"() : () -> ((tensor<2xf32>) -> tensor<2xf32>)
  %6:2 = "my.two"(%3) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  %7 = "my.unit"(%6#1) {flag} : (tensor<2xf32>) -> tensor<2xf32>
  return %7 : tensor<2xf32>
}
'''


@pytest.mark.parametrize("generic", [False, True])
def test_one_result_path_matches_the_general_one(generic):
    m = parse_module(_MIXED, "t.mlir")
    text = print_module(m, generic=generic)
    if not generic:
        assert text == _MIXED
    body = text.splitlines()[2 if generic else 1:-2]
    assert body == _MIXED.splitlines()[1:-2]
    with_locs = print_module(m, generic=generic, locs=True).splitlines()[2 if generic else 1:-2]
    assert with_locs == [f'{line} loc("t.mlir":{i + 2}:3)' for i, line in enumerate(body)]
    # the same signature again after a function-typed result: still printed in full
    assert body[5].endswith(': () -> ((tensor<2xf32>) -> tensor<2xf32>)')


def test_attribute_dicts_shared_or_not_print_as_each_op_holds_them():
    # The body loop caches an op's " {...}" by its (name, id(value)) pairs (one or two
    # entries): ops that share value objects, equal values in distinct objects, the same object
    # under another name or in another order, and three entries (not cached) each print their
    # own dictionary; print_attr_dict (no cache) is the reference.
    one, two = IntegerAttr(1, "si32"), IntegerAttr(2, "si32")
    dicts = [{"a": one}, {"a": one}, {"a": IntegerAttr(1, "si32")}, {"b": one}, {"a": two},
             {"a": one, "b": two}, {"b": two, "a": one}, {"a": one, "b": one},
             {"a": one, "b": two, "c": UNIT}, {"u": UNIT}, {"u": UNIT, "a": one},
             {"f": FloatAttr(0.5, "f32")}, {"f": FloatAttr(0.25, "f32")}, {"a": one}]
    f = FuncOp("f", [T], [])
    x = f.body.args[0]
    for d in dicts:
        f.body.append(Operation("t.op", [x], [T], d))
    f.body.append(Operation("func.return", []))
    lines = print_func(f).splitlines()[1:-2]
    assert lines == [f'  %{i} = "t.op"(%arg0) {print_attr_dict(d)} : (tensor<2x3xf32>) -> '
                     f'tensor<2x3xf32>' for i, d in enumerate(dicts)]
    # an attribute replaced on one op prints on that op only
    f.body.first.attributes["a"] = two
    lines = print_func(f).splitlines()[1:-2]
    assert lines[0].split(" {")[1].startswith("a = 2 : si32}")
    assert lines[1].split(" {")[1].startswith("a = 1 : si32}")
