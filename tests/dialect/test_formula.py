"""The formula language (issue 8, part 3): grammar, located errors, checking against ops,
conversion to the expression IR, dtype admission, and hostile input.

The proof that moving the standard ops' math into ``ops.td`` changes nothing: each proposed
formula, checked against the real standard op, binds to the same tree as today's
``lowering/elementwise_ops.py`` and admits the same dtypes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from cpu_clock import cpu_clock
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tdflow.dialect import standard_dialect
from tdflow.dialect.formula import (
    MAX_DEPTH,
    check_code_field,
    check_formula,
    formula_dtypes,
    locate_code_field,
    parse_formula,
    result_dtypes,
)
from tdflow.dialect.formula.expr import Binary, Const, Input, bind
from tdflow.dialect.formula.types import infer_dtypes
from tdflow.dialect.opdef import AttrDef, OpDef, ValueDef
from tdflow.lowering.elementwise_cuda import CUDASIM_SHIM, render_cuda
from tdflow.lowering.elementwise_numpy import render_numpy
from tdflow.lowering.elementwise_ops import ELEMENTWISE_OPS
from tdflow.tdparser.errors import TdError

GOLDEN = Path(__file__).parent / "golden_formula"

# The formulas proposed for ops.td (planning note of issue 8), one per standard elementwise op.
STANDARD = {
    "relu": "max(x, 0)",
    "leaky_relu": "x > 0 ? x : x * alpha",
    "sigmoid": "sigmoid(x)",
    "tanh": "tanh(x)",
    "gelu": "0.5 * in * (1.0 + erf(in * rsqrt(2.0)))",
    "exp": "exp(x)",
    "log": "log(x)",
    "sqrt": "sqrt(x)",
    "negative": "-x",
    "square": "x * x",
    "reciprocal": "1.0 / x",
    "scalar_add": "in + (has_int_operand ? int_operand : float_operand)",
    "scalar_mul": "in * (has_int_operand ? int_operand : float_operand)",
    "scalar_pow": "pow(in, has_int_operand ? int_operand : float_operand)",
    "broadcast_add": "x + y",
    "broadcast_sub": "x - y",
    "broadcast_mul": "x * y",
    "broadcast_div": "x / y",
    "broadcast_maximum": "max(x, y)",
    "broadcast_equal": "x == y",
    "broadcast_not_equal": "x != y",
    "broadcast_less": "x < y",
    "broadcast_less_equal": "x <= y",
    "broadcast_greater": "x > y",
    "broadcast_greater_equal": "x >= y",
    "broadcast_minimum": "min(x, y)",
    "broadcast_pow": "pow(x, y)",
    "relu_grad": "y > 0 ? dy : 0",
    "leaky_relu_grad": "x > 0 ? dy : dy * alpha",
    "sigmoid_grad": "dy * y * (1.0 - y)",
    "tanh_grad": "dy * (1.0 - y * y)",
    "gelu_grad": "dy * (0.5 * (1.0 + erf(x * rsqrt(2.0)))"
                 " + x * rsqrt(2.0 * 3.141592653589793) * exp(-0.5 * x * x))",
    "dropout_grad": "dy * mask * scale",
}

# Attribute values each op is bound with ({} = the .td defaults).
TRIALS: dict[str, list[dict]] = {
    "leaky_relu": [{}, {"alpha": 0.2}, {"alpha": 1.0}, {"alpha": 1.5}],
    "leaky_relu_grad": [{}, {"alpha": 0.2}, {"alpha": -3.0}],
    "dropout_grad": [{}, {"scale": 2.0}, {"scale": 1.25}],
}
for _op in ("scalar_add", "scalar_mul", "scalar_pow"):
    # Today's definition refuses to bind with neither flag set; those cases are checked below.
    TRIALS[_op] = [{"has_int_operand": True, "int_operand": 3},
                   {"has_int_operand": True, "int_operand": -2},
                   {"has_float_operand": True, "float_operand": 0.5},
                   {"has_float_operand": True, "has_int_operand": False, "float_operand": 2.0}]


def _check(op_name: str, text: str, line: int = 1, col: int = 1):
    op = standard_dialect().lookup(op_name)
    return check_formula(parse_formula(text, file="ops.td", line=line, col=col), op)


# The elementwise ops added with the models (tdflow/ops/math.td); tested in test_math_ops.py.
MODEL_MATH = {"abs", "erf", "fast_gelu", "rsqrt", "scalar_div", "silu", "softplus", "where"}
# The elementwise ops ONNX needs (the elementwise and math families (ops/elementwise.td, ops/math.td)); tested in
# tests/runtime/test_elementwise_math_ops.py.
ONNX_MATH = {
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
    "floor", "ceil", "round", "sign", "isnan", "isinf", "softsign", "logical_not", "bitwise_not",
    "broadcast_logical_and", "broadcast_logical_or", "broadcast_logical_xor",
    "broadcast_bitwise_and", "broadcast_bitwise_or", "broadcast_bitwise_xor",
    "broadcast_bitwise_left_shift", "broadcast_bitwise_right_shift", "broadcast_fmod",
    "broadcast_floor_mod",
}


def test_every_standard_elementwise_op_has_a_formula():
    assert {f"tdflow.{m}" for m in set(STANDARD) | MODEL_MATH | ONNX_MATH} == set(ELEMENTWISE_OPS)


@pytest.mark.parametrize("mnemonic", sorted(STANDARD))
def test_standard_formula_binds_to_todays_tree(mnemonic):
    today = ELEMENTWISE_OPS[f"tdflow.{mnemonic}"]
    checked = _check(f"tdflow.{mnemonic}", STANDARD[mnemonic])
    assert checked.operands == today.inputs
    for attrs in TRIALS.get(mnemonic, [{}]):
        assert checked.bind(attrs) == today.bind(attrs), attrs


@pytest.mark.parametrize("mnemonic", sorted(STANDARD))
def test_standard_formula_admits_todays_dtypes(mnemonic):
    today = ELEMENTWISE_OPS[f"tdflow.{mnemonic}"]
    assert formula_dtypes(_check(f"tdflow.{mnemonic}", STANDARD[mnemonic])) == today.dtypes


def test_scalar_ops_bind_without_flags():
    # Today's scalar_* definitions raise when neither flag is set; a formula cannot raise, so
    # it reads float_operand (0.0 by default). Recorded here so the difference stays visible.
    with pytest.raises(ValueError):
        ELEMENTWISE_OPS["tdflow.scalar_add"].bind({})
    assert _check("tdflow.scalar_add", STANDARD["scalar_add"]).bind({}) == Input(0) + 0.0


def test_attribute_defaults_and_kinds_come_from_the_op():
    c = _check("tdflow.scalar_add", STANDARD["scalar_add"])
    # Only what the formula reads: has_float_operand is implied (today's table lists it too).
    assert dict(c.attr_defaults) == {"has_int_operand": False, "int_operand": 0,
                                     "float_operand": 0.0}
    assert dict(c.attr_kinds) == {"has_int_operand": "bool", "int_operand": "si64",
                                  "float_operand": "f64"}
    assert dict(_check("tdflow.leaky_relu", STANDARD["leaky_relu"]).attr_defaults) == dict(
        ELEMENTWISE_OPS["tdflow.leaky_relu"].attrs)
    assert _check("tdflow.relu", "max(x, 0)").attr_defaults == {}


@pytest.mark.parametrize("mnemonic, in_dtypes, expected", [
    ("relu", ["f16"], ("f16",)),
    ("relu", ["i32"], ("i32",)),
    ("broadcast_add", ["i32", "i64"], ("i64",)),
    ("broadcast_maximum", ["i1", "i1"], ("i1",)),
    ("dropout_grad", ["f16", "i1"], ("f16",)),
    ("relu_grad", ["f32", "f32"], ("f32",)),
])
def test_result_dtypes(mnemonic, in_dtypes, expected):
    assert result_dtypes(_check(f"tdflow.{mnemonic}", STANDARD[mnemonic]), in_dtypes) == expected


def test_result_dtype_of_a_predicate_and_a_cast():
    op = _fake(operands=("x",), results=("y",))
    assert result_dtypes(_checked(op, "x > 0 && x < 1"), ["f32"]) == ("i1",)
    assert result_dtypes(_checked(op, "f64(x) * 2"), ["f32"]) == ("f64",)


# ---- the language ----------------------------------------------------------------------------


def _fake(operands=("x",), results=("y",), attrs=(), variadic=(), optional=(),
          variadic_results=()) -> OpDef:
    def value(n, var, opt):
        return ValueDef(n, arity="variadic" if n in var else "optional" if n in opt else "single")

    return OpDef(
        "f", "t",
        operands=tuple(value(n, variadic, optional) for n in operands),
        results=tuple(value(n, variadic_results, ()) for n in results),
        attributes=tuple(AttrDef(n, k, "X", default=d, default_text=None if d is None else str(d))
                         for n, k, d in attrs))


def _checked(op, text, line=1, col=1):
    return check_formula(parse_formula(text, file="f.td", line=line, col=col), op)


@pytest.mark.parametrize("text, expected", [
    ("x + y * 2", "add(in0, mul(in1, 2))"),
    ("(x + y) * 2", "mul(add(in0, in1), 2)"),
    ("x - y - 1", "sub(sub(in0, in1), 1)"),
    ("x / y % 3", "mod(div(in0, in1), 3)"),
    ("-x * y", "mul(neg(in0), in1)"),
    ("-2 * x", "mul(-2, in0)"),
    ("- -x", "neg(neg(in0))"),
    ("+x", "in0"),
    ("!(x > y)", "not(gt(in0, in1))"),
    ("x < 1 || y > 2 && x != y", "or(lt(in0, 1), and(gt(in1, 2), ne(in0, in1)))"),
    ("x > 0 == y > 0", "eq(gt(in0, 0), gt(in1, 0))"),
    ("x > 0 ? y : x < 0 ? -y : 0", "where(gt(in0, 0), in1, where(lt(in0, 0), neg(in1), 0))"),
    ("x ? y ? 1 : 2 : 3", "where(in0, where(in1, 1, 2), 3)"),
    ("1e-3 * x + .5 + 2. + 3E2", "add(add(add(mul(0.001, in0), 0.5), 2.0), 300.0)"),
    ("min(x, y) + max(x, 1) + pow(x, 2)", "add(add(min(in0, in1), max(in0, 1)), pow(in0, 2))"),
    ("abs(floor(x)) + ceil(y)", "add(abs(floor(in0)), ceil(in1))"),
    ("exp(log(sqrt(rsqrt(tanh(erf(x))))))", "exp(log(sqrt(rsqrt(tanh(erf(in0))))))"),
    ("sigmoid(x)", "div(1.0, add(1.0, exp(neg(in0))))"),
    ("f16(x) + bf16(x) + f32(x) + f64(x)",
     "add(add(add(cast(in0, f16), cast(in0, bf16)), cast(in0, f32)), cast(in0, f64))"),
    ("i1(x) && bool(y) || i8(x) + i32(x) + i64(x) > 0",
     "or(and(cast(in0, i1), cast(in1, i1)), gt(add(add(cast(in0, i8), cast(in0, i32)), "
     "cast(in0, i64)), 0))"),
    ("x * 2; // a comment\n", "mul(in0, 2)"),
    ("// leading comment\nx", "in0"),
])
def test_expressions(text, expected):
    op = _fake(operands=("x", "y"))
    assert repr(_checked(op, text).expr) == expected


def test_multi_result_form_in_result_order():
    op = _fake(operands=("x",), results=("y", "mask"))
    c = _checked(op, "mask = x > 0;\n y = max(x, 0)")
    assert c.results == ("y", "mask")
    assert c.exprs == (Binary("max", Input(0), Const(0)), Binary("gt", Input(0), Const(0)))
    assert c.result("mask") == c.exprs[1]
    one = _checked(_fake(), "y = x * 2;")  # the statement form also serves one result
    assert one.expr == Input(0) * 2


def test_attributes_bind_with_defaults_and_values():
    op = _fake(attrs=(("alpha", "f32", 0.5), ("n", "si64", None), ("on", "bool", True)))
    c = _checked(op, "on ? x * alpha + n : x")
    assert c.bind({"n": 3}) == Input(0) * 0.5 + 3
    assert c.bind({"n": 3, "on": False}) == Input(0)
    with pytest.raises(KeyError, match="'n'"):
        c.bind({})  # no default and no value


# (formula text, expected error), the text starting at line 10, column 21 of "f.td".
PARSE_ERRORS = [
    ("x +* 2", "f.td:10:24: error: unexpected '*' in formula; expected a name, a number, "
               "'(', '-', '+' or '!'"),
    ("", "f.td:10:21: error: empty formula; expected an expression such as `x * 2`"),
    ("  // only a comment\n  ", "f.td:11:3: error: empty formula"),
    ("x $ y", "f.td:10:23: error: unexpected character '$' in formula"),
    ("(x + 1", "f.td:10:27: error: unexpected end of formula; expected"),
    ("x +\n   * 2", "f.td:11:4: error: unexpected '*' in formula"),
    ("x < y < 1", "f.td:10:27: error: unexpected '<' in formula"),
    ("x ? y", "f.td:10:26: error: unexpected end of formula; expected ':'"),
    ("y = x; 3", "f.td:10:28: error: unexpected '3' in formula; expected a name"),
    ("x = = y", "f.td:10:25: error: unexpected '='"),
    ("1e999 * x", "f.td:10:21: error: float literal 1e999 is out of range"),
    ("x + 99999999999999999999", "f.td:10:25: error: integer literal 99999999999999999999 is "
                                 "out of range (at most 2**63 - 1)"),
    ("x + 9223372036854775808", "f.td:10:25: error: integer literal"),
    ("x ** 2", "f.td:10:24: error: unexpected '*'"),
    ("exp(x,)", "f.td:10:27: error: unexpected ')'"),
    ("\tx\x00", "f.td:10:23: error: unexpected character '\\x00'"),
    ("x\n\n  y", "f.td:12:3: error: unexpected 'y'"),
]


@pytest.mark.parametrize("text, expected", PARSE_ERRORS)
def test_parse_errors_are_located_inside_the_code_block(text, expected):
    with pytest.raises(TdError) as e:
        parse_formula(text, file="f.td", line=10, col=21)
    assert str(e.value).startswith(expected), str(e.value)


def test_largest_integer_literal():
    assert _checked(_fake(), "x + 9223372036854775807").expr == Input(0) + 9223372036854775807


CHECK_ERRORS = [
    ("x * alpah", "f.td:10:25: error: unknown name 'alpah' in the formula of t.f; did you mean "
                  "'alpha'?"),
    ("z + 1", "f.td:10:21: error: unknown name 'z' in the formula of t.f"),
    ("expp(x)", "f.td:10:21: error: unknown function 'expp'; did you mean 'exp'? (known: exp,"),
    ("max(x)", "f.td:10:21: error: max() takes 2 arguments, got 1"),
    ("exp(x, x)", "f.td:10:21: error: exp() takes 1 argument, got 2"),
    ("sigmoid()", "f.td:10:21: error: sigmoid() takes 1 argument, got 0"),
    ("exp * x", "f.td:10:21: error: 'exp' is a function; call it: exp(...)"),
    ("x(1)", "f.td:10:21: error: 'x' is an operand of t.f, not a function"),
    ("x * fmt", "f.td:10:25: error: attribute 'fmt' of t.f is of kind str; a formula can use "
                "only bool, integer (si32, si64) and float (f32, f64) attributes"),
    ("x * dims", "f.td:10:25: error: attribute 'dims' of t.f is of kind shape"),
    ("x * ws", "f.td:10:25: error: attribute 'ws' of t.f is of kind f32_array"),
    ("x * dt", "f.td:10:25: error: attribute 'dt' of t.f is of kind dtype"),
    ("x * enum", "f.td:10:25: error: attribute 'enum' of t.f is of kind a kind tdflow does not"),
    ("alpha ? x : 0", "f.td:10:21: error: the condition of `?:` is a number, not a truth value"),
    ("x\n  + 1 ? x : 0", "f.td:10:21: error: the condition of `?:` is a number"),
    ("exp(x) ? x : 0", "f.td:10:21: error: the condition of `?:` is a number"),
    ("y * 2", "f.td:10:21: error: 'y' is a result of t.f; a formula reads only operands"),
]


def _rich_op() -> OpDef:
    return _fake(operands=("x",), attrs=(
        ("alpha", "f32", 0.0), ("on", "bool", False), ("fmt", "str", "NCHW"),
        ("dims", "shape", ()), ("ws", "f32_array", ()), ("dt", "dtype", "f32"),
        ("enum", "other", None)))


@pytest.mark.parametrize("text, expected", CHECK_ERRORS)
def test_check_errors_are_located_inside_the_code_block(text, expected):
    with pytest.raises(TdError) as e:
        _checked(_rich_op(), text, line=10, col=21)
    assert str(e.value).startswith(expected), str(e.value)


def test_conditions_that_may_be_truth_values_are_accepted():
    op = _rich_op()
    for text in ("x ? x : 0", "on ? x : 0", "x > 0 && on ? x : 0", "bool(x) ? x : 0",
                 "!alpha ? x : 0", "max(x > 0, on) ? x : 0", "(x > 0 ? on : x) ? x : 1"):
        _checked(op, text)


def test_every_error_is_reported_in_order():
    with pytest.raises(TdError) as e:
        _checked(_rich_op(), "foo +\n  exp(x, x) * fmt", line=3, col=5)
    assert [str(x) for x in e.value.all_errors()] == [
        "f.td:3:5: error: unknown name 'foo' in the formula of t.f",
        "f.td:4:3: error: exp() takes 1 argument, got 2",
        "f.td:4:15: error: attribute 'fmt' of t.f is of kind str; a formula can use only bool, "
        "integer (si32, si64) and float (f32, f64) attributes",
    ]


@pytest.mark.parametrize("op, text, expected", [
    (_fake(operands=("x", "xs"), variadic=("xs",)), "x + xs",
     "f.td:1:5: error: operand 'xs' of t.f is variadic; a formula reads only single operands"),
    (_fake(operands=("x", "b", "y"), optional=("b",)), "x + y",
     "f.td:1:5: error: operand 'y' comes after the optional operand 'b'"),
    (_fake(results=("y", "mask")), "x * 2",
     "f.td:1:1: error: t.f has 2 results (y, mask); write one statement per result: "
     "y = ...; mask = ...;"),
    (_fake(results=("y", "mask")), "y = x;\nmask = x > 0;\ny = x * 2;",
     "f.td:3:1: error: result 'y' is assigned twice (first at line 1, column 1)"),
    (_fake(results=("y", "mask")), "y = x;",
     "f.td:1:7: error: result 'mask' of t.f is not assigned; add `mask = ...;`"),
    (_fake(results=("y", "mask")), "y = x; msak = x > 0",
     "f.td:1:8: error: 'msak' is not a result of t.f (results: y, mask); did you mean 'mask'?"),
    (_fake(results=()), "x", "f.td:1:1: error: t.f has no results"),
    (_fake(results=("ys",), variadic_results=("ys",)), "x",
     "f.td:1:1: error: result 'ys' of t.f is variadic"),
])
def test_operand_and_result_rules(op, text, expected):
    with pytest.raises(TdError) as e:
        _checked(op, text)
    assert str(e.value).startswith(expected), str(e.value)


def test_optional_operand_after_the_used_ones_is_fine():
    op = _fake(operands=("x", "y", "b"), optional=("b",))
    assert _checked(op, "x + y").expr == Input(0) + Input(1)


@pytest.mark.parametrize("text, expected", [
    ("max(x, y)", "NUMERIC+i1"),
    ("x > y ? x : y", "NUMERIC+i1"),
    ("!(x < y) && x != y", "NUMERIC+i1"),
    ("x + y", "NUMERIC"),
    ("max(x, 0)", "NUMERIC"),
    ("x % y + x / 2", "NUMERIC"),
    ("x * n", "NUMERIC"),
    ("x * on", "NUMERIC"),
    ("f32(x) * 0.5", "NUMERIC"),  # the float literal meets a float value
    ("exp(f32(x))", "NUMERIC"),
    ("i32(x * 0.5)", "FLOATS"),
    ("x * 0.5", "FLOATS"),
    ("x * alpha", "FLOATS"),
    ("x > 0.5 ? x : y", "FLOATS"),
    ("exp(x)", "FLOATS"),
    ("floor(x)", "FLOATS"),
    ("on ? x * alpha : x", "NUMERIC"),  # attributes pick a branch that works on integers
    ("on ? x * alpha : x * 0.5", "FLOATS"),
    ("x > 0 ? x : x * alpha", "FLOATS"),  # decided per element: both branches run
    ("x * (on ? n : alpha)", "NUMERIC"),
    ("x * (alpha > 0.0 ? 1 : 2)", "NUMERIC"),  # static float math in a condition only
    ("x * rsqrt(2.0)", "FLOATS"),
    ("x * 3 - 1", "NUMERIC"),
])
def test_dtype_admission(text, expected):
    op = _fake(operands=("x", "y"), attrs=(("alpha", "f32", 0.1), ("n", "si32", 2),
                                           ("on", "bool", True)))
    want = {"FLOATS": {"f16", "bf16", "f32", "f64"}}
    want["NUMERIC"] = want["FLOATS"] | {"i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64"}
    want["NUMERIC+i1"] = want["NUMERIC"] | {"i1"}
    assert formula_dtypes(_checked(op, text)) == want[expected]


def test_multi_result_admission_needs_every_result():
    op = _fake(results=("y", "z"))
    assert "i32" not in formula_dtypes(_checked(op, "y = x; z = exp(x)"))
    assert "i1" not in formula_dtypes(_checked(op, "y = max(x, x); z = x + x"))


# ---- mod ---------------------------------------------------------------------------------


def test_mod_numpy_is_c_remainder():
    e = Input(0) % Input(1)
    a = np.array([7, -7, 7, -7, 5, np.iinfo(np.int32).min], np.int32)
    b = np.array([3, 3, -3, -3, 0, -1], np.int32)
    assert render_numpy(e, ["i32", "i32"])([a, b]).tolist() == [1, -1, 1, -1, 0, 0]
    f = render_numpy(e, ["f32", "f32"])([a[:5].astype(np.float32), b[:5].astype(np.float32)])
    assert f[:4].tolist() == [1.0, -1.0, 1.0, -1.0] and np.isnan(f[4])
    assert render_numpy(Input(0) % 2.5, ["f64"])([np.array([-7.0])]).tolist() == [-2.0]


def test_mod_cuda_text():
    assert render_cuda(Input(0) % Input(1), ["f32", "f32"]) == "fmodf(x0, x1)"
    assert render_cuda(Input(0) % 2, ["f64"]) == "fmod(x0, 2.0)"
    text = render_cuda(Input(0) % Input(1), ["i64", "i64"])
    assert "% b" in text and "b == 0" in text and text.endswith("(x0, x1))")


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ (cudasim's host compiler)")
def test_mod_cuda_integer_remainder_runs_on_cudasim_shim(tmp_path):
    body = render_cuda((Input(0) % Input(1)) % (Input(1) % Input(0) + 3), ["i32", "i32"])
    src = CUDASIM_SHIM + f"""
#include <cstdio>
#include <climits>
int main() {{
  int32_t xs[] = {{7, -7, 5, INT_MIN, 0}}, ys[] = {{3, 3, 0, -1, 4}};
  for (int i = 0; i < 5; ++i) {{ int32_t x0 = xs[i], x1 = ys[i]; printf("%d ", {body}); }}
  return 0;
}}
"""
    cpp = tmp_path / "mod.cpp"
    cpp.write_text(src)
    exe = tmp_path / "mod"
    subprocess.run(["g++", "-std=c++17", "-O1", "-o", str(exe), str(cpp)], check=True,
                   capture_output=True, timeout=60)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True, timeout=10)
    a = np.array([7, -7, 5, np.iinfo(np.int32).min, 0], np.int32)
    b = np.array([3, 3, 0, -1, 4], np.int32)
    want = render_numpy((Input(0) % Input(1)) % (Input(1) % Input(0) + 3), ["i32", "i32"])([a, b])
    assert [int(v) for v in out.stdout.split()] == want.tolist()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_mod_cuda_compiles_for_sm_90(tmp_path):
    e = (Input(0) % Input(1)) % (Input(1) % Input(0) + 3)
    kernels = ["#include <cstdint>", "#include <cuda_fp16.h>"]
    for t, ct in (("i8", "int8_t"), ("i32", "int32_t"), ("i64", "int64_t"), ("f32", "float")):
        kernels.append(
            f'extern "C" __global__ void k_{t}(const {ct}* a, const {ct}* b, {ct}* out, int n) '
            f"{{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) {{ {ct} x0 = a[i], "
            f"x1 = b[i]; out[i] = {render_cuda(e, [t, t])}; }} }}")
    kernels.append(
        'extern "C" __global__ void k_h(const __half* a, __half* out, int n) { int i = threadIdx.x;'
        f" if (i < n) {{ __half x0 = a[i]; out[i] = {render_cuda(Input(0) % 2.5, ['f16'])}; }} }}")
    cu = tmp_path / "mod.cu"
    cu.write_text("\n".join(kernels) + "\n")
    subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "-o", str(tmp_path / "mod.cubin"), str(cu)],
                   check=True, capture_output=True, timeout=120)


# ---- depth, hostile input, speed ------------------------------------------------------------


def test_formula_at_the_depth_limit_binds_and_renders():
    n = (MAX_DEPTH - 1) // 4  # each sigmoid is 4 levels, x one more
    text = "sigmoid(" * n + "x" + ")" * n
    c = _checked(_fake(), text)
    e = bind(c.expr, {})
    infer_dtypes(e, ["f32"])
    assert render_numpy(e, ["f32"])([np.zeros(2, np.float32)]).shape == (2,)
    assert render_cuda(e, ["f16"]).startswith("__float2half(")
    chain = " + ".join(["x"] * MAX_DEPTH)  # MAX_DEPTH - 1 additions
    assert render_numpy(_checked(_fake(), chain).expr, ["f32"])([np.ones(1, np.float32)])[0] \
        == MAX_DEPTH


@pytest.mark.parametrize("text", [
    "-" * 10_000 + "x",
    "!" * 10_000 + "x",
    "exp(" * 10_000 + "x" + ")" * 10_000,
    " + ".join(["x"] * 10_000),
    "x ? " * 10_000 + "x" + " : x" * 10_000,
    "sigmoid(" * (MAX_DEPTH // 4 + 1) + "x" + ")" * (MAX_DEPTH // 4 + 1),
])
def test_deep_nesting_is_a_located_error(text):
    with cpu_clock() as clock, pytest.raises(TdError, match="nesting too deep") as e:
        parse_formula(text, file="f.td", line=4, col=9)
    assert e.value.line >= 4 and e.value.col >= 1
    assert clock.seconds < 2.0  # CPU seconds: a busy machine does not fail it


def test_deep_parentheses_only_group():
    text = "(" * 10_000 + "x" + ")" * 10_000
    assert _checked(_fake(), text).expr == Input(0)


def test_overlong_formula_is_refused():
    with pytest.raises(TdError, match="too long"):
        parse_formula("x+" * 60_000 + "x", file="f.td", line=1, col=1)


def test_long_flat_inputs_are_linear():
    # Long runs of one token class (digits, letters, spaces, comments) parse or fail fast.
    for text in ("1" * 50_000, "a" * 50_000, " " * 50_000 + "x", "//" + "/" * 50_000,
                 "1." + "0" * 50_000, ".5e" + "1" * 50_000, "x" + "," * 50_000):
        with cpu_clock() as clock:
            try:
                parse_formula(text, file="f.td", line=1, col=1)
            except TdError:
                pass
        assert clock.seconds < 1.0, text[:10]


TOKENS = ["x", "y", "alpha", "on", "fmt", "exp", "max", "sigmoid", "f32", "bool", "1", "2.5",
          "1e-3", ".5", "+", "-", "*", "/", "%", "!", "<", "<=", "==", "!=", "&&", "||", "?",
          ":", "(", ")", ",", "=", ";", "//", "\n", "$", "1e999", "[", "\"", "{"]


def _must_be_td_error(text: str) -> None:
    op = _rich_op()
    with cpu_clock() as clock:
        try:
            c = check_formula(parse_formula(text, file="f.td", line=7, col=13), op)
        except TdError as e:
            assert e.file == "f.td" and 7 <= e.line <= 7 + text.count("\n") + 1 and e.col >= 1
            for other in e.others:
                assert isinstance(other, TdError) and other.line >= 7
            e.render()
        else:
            formula_dtypes(c)
            c.bind({})
    assert clock.seconds < 1.0  # CPU seconds: a busy machine does not fail it


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_fuzz_random_text_gives_only_td_errors(text):
    _must_be_td_error(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_fuzz_random_bytes_gives_only_td_errors(data):
    _must_be_td_error(data.decode("utf-8", errors="replace"))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOKENS), max_size=60))
def test_fuzz_token_soup_gives_only_td_errors(tokens):
    _must_be_td_error(" ".join(tokens))


def test_parse_and_check_are_fast():
    _check("tdflow.gelu_grad", STANDARD["gelu_grad"])  # the parser is built by now
    with cpu_clock() as clock:
        for _ in range(5):
            for m, text in STANDARD.items():
                _check(f"tdflow.{m}", text)
    per_formula = clock.seconds / (5 * len(STANDARD))
    assert per_formula < 0.005, per_formula


# ---- .td files: golden errors located inside code blocks ------------------------------------


def _check_td(path: Path) -> tuple[list, list[TdError]]:
    """Load ``path`` as a user's op library does: formula errors surface from the loader."""
    from tdflow.dialect import load_dialect

    try:
        dialect = load_dialect(path, [str(path.parent)])
    except TdError as e:
        return [], e.all_errors()
    return [op.formula for op in dialect if op.formula is not None], []


def _golden_text(path: Path) -> str:
    checked, errors = _check_td(path)
    lines = []
    for c in checked:
        for name, expr in zip(c.results, c.exprs):
            lines.append(f"{c.op} {name} = {expr!r}")
        lines.append(f"{c.op} dtypes: {' '.join(sorted(formula_dtypes(c)))}")
    for e in errors:
        e.others = []
        lines.append(e.render())
    return "\n".join(lines).replace(str(path.parent) + os.sep, "") + "\n"


GOLDEN_TD = sorted(p for p in GOLDEN.glob("*.td") if p.name != "prelude.td")


@pytest.mark.parametrize("path", GOLDEN_TD, ids=lambda p: p.stem)
def test_golden_td(path):
    expected = path.with_suffix(".out" if path.stem == "good" else ".err")
    got = _golden_text(path)
    if os.environ.get("TDFLOW_UPDATE_GOLDEN"):
        expected.write_text(got)
    assert got == expected.read_text()


def test_golden_errors_sit_in_the_code_block():
    _, errors = _check_td(GOLDEN / "unknown_name.td")
    (e,) = errors
    line = (GOLDEN / "unknown_name.td").read_text().splitlines()[e.line - 1]
    assert e.line >= 5 and line[e.col - 1:].startswith("shfit")


def test_locate_code_field():
    src = 'class C { code formula = [{ a }]; }\ndef A : C {\n  let formula = [{ a }];\n}\n'
    assert locate_code_field(src, "formula", " a ", start_line=2) == (3, 19)
    assert locate_code_field(src, "formula", " a ", start_line=1) == (1, 28)
    assert locate_code_field(src, "formula", " b ", start_line=1) is None
    multi = "def A : C {\n  let formula = [{\n    y = x;\n  }];\n}\n"
    assert locate_code_field(multi, "formula", "\n    y = x;\n  ", start_line=1) == (2, 19)


def test_unlocatable_field_points_at_the_record():
    with pytest.raises(TdError) as e:
        check_code_field(" z ", _fake(), file="nowhere.td", record_line=12, source="")
    assert (e.value.line, e.value.col) == (12, 2)


# ---- docstring examples ----------------------------------------------------------------------


