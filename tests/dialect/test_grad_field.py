"""The `grad` field: parsing, load-time checks with locations, and where gradients come from."""

from __future__ import annotations

import textwrap

import pytest
from tdflow.dialect.context import load_ops, standard_context
from tdflow.dialect.grad import GradError, gradient_of, gradient_report, needs_gradient
from tdflow.dialect.grad.parse import parse_grad
from tdflow.tdparser.errors import TdError

HEADER = 'include "tdflow/Base.td"\ndef U_Dialect : Dialect { let name = "u"; }\n'


def _lib(tmp_path, body: str):
    path = tmp_path / "u.td"
    path.write_text(HEADER + textwrap.dedent(body))
    return load_ops(path), path


def _op(grad: str, args: str = "TDF_Tensor:$x, TDF_Tensor:$w", extra: str = "") -> str:
    return f"""
    def U_FooOp : Op<U_Dialect, "foo", [NoMemoryEffect]> {{
      let grad = [{{ {grad} }}];
      let arguments = (ins {args}{extra});
      let results = (outs TDF_Tensor:$y);
    }}
    """


@pytest.mark.parametrize("text, where, message", [
    ("a: matmul(dout,, b)", (1, 16), "unexpected ','"),
    ("a: dy\n b: dy", (2, 2), "';' before the next entry"),
    ("a: f(x=1, y)", (1, 11), "positional argument follows a keyword"),
    ("a: p.q.r(y)", (1, 4), "only an op can be called"),
    ("", (1, 1), "empty grad field"),
    ("a: x; a: y", (1, 7), "two gradients for input 'a'"),
    ("a: " + "-" * 150 + "x", None, "nesting too deep"),
    # The formula grammar's literal ranges hold in grad fields too.
    ("a: dy * 1e999", (1, 9), "float literal 1e999 is out of range"),
    ("a: dy * 99999999999999999999", (1, 9), "integer literal 99999999999999999999 is out of range"),
])
def test_parse_errors_are_located(text, where, message):
    with pytest.raises(TdError, match=message) as e:
        parse_grad(text, file="ops.td", line=10, col=5)
    err = e.value
    assert err.file == "ops.td"
    if where is not None:
        line, col = where
        assert (err.line, err.col) == (10 + line - 1, (5 + col - 1) if line == 1 else col)


@pytest.mark.parametrize("grad, message", [
    ("z: dy", "'z' is not an input of 'u.foo'"),
    ("x: dyy", "unknown name 'dyy'.*did you mean 'dy'"),
    ("x: nosuch(dy)", "unknown op 'nosuch'"),
    ("x: matmul(dy, w, transpose_c=true)", "has no attribute or operand 'transpose_c'"),
    ("x: matmul(dy, w, w, w, w)", "takes 3 operand"),
    ("x: dy.size", "unknown field '.size'"),
])
def test_check_errors_are_located_in_the_field(tmp_path, grad, message):
    path = tmp_path / "u.td"
    with pytest.raises(TdError, match=message) as e:  # at load: load_ops checks grad fields
        _lib(tmp_path, _op(grad))
    # the error points inside the grad field's text, on the line of `let grad`
    line = (HEADER + textwrap.dedent(_op(grad))).split("\n").index(
        next(ln for ln in textwrap.dedent(_op(grad)).split("\n") if "let grad" in ln)) + 1
    assert e.value.file == str(path) and e.value.line == line
    assert e.value.col > len("  let grad = [{")


def test_integer_input_takes_no_gradient(tmp_path):
    with pytest.raises(TdError, match="input 'i' of 'u.foo' takes no gradient"):
        _lib(tmp_path, _op("i: dy", args="TDF_Tensor:$x, TDF_IntTensor:$i"))


def test_two_definitions_is_an_error(tmp_path):
    from tdflow.dialect.grad import grad_rule
    from tdflow.dialect.grad.core import _RULES

    ctx, _ = _lib(tmp_path, _op("x: dy"))
    grad_rule("u.foo")(lambda g, fwd: {})
    try:
        with pytest.raises(GradError, match="two gradient definitions"):
            gradient_of(ctx, ctx.lookup("u.foo"))
    finally:
        _RULES.pop("u.foo")


def test_sources_of_the_standard_library():
    ctx = standard_context()
    src = {n: gradient_of(ctx, ctx.lookup(f"tdflow.{n}")).source
           for n in ("tanh", "broadcast_mul", "matmul", "conv2d", "reduce_sum", "transpose",
                     "fused_elementwise", "softmax_grad")}
    assert src == {"tanh": "formula", "broadcast_mul": "formula", "matmul": "grad field",
                   "conv2d": "grad field", "reduce_sum": "rule", "transpose": "rule",
                   "fused_elementwise": "formula", "softmax_grad": "grad field"}
    assert gradient_of(ctx, ctx.lookup("tdflow.constant")) is None  # NoGrad
    assert not needs_gradient(ctx, ctx.lookup("tdflow.sgd_update"))


def test_every_standard_grad_field_checks():
    ctx = standard_context()
    counts, missing, errors = gradient_report(ctx, ctx.ops.values())
    assert errors == []
    assert counts["grad field"] >= 10 and counts["formula"] >= 25 and counts["rule"] >= 5
    assert [op.name for op in missing] == ["tdflow.cat"] or missing == []


def test_saves_only_what_the_definition_reads():
    ctx = standard_context()
    # d(x + y) needs neither input; d(x * y) needs both; softmax's gradient needs its output
    assert gradient_of(ctx, ctx.lookup("tdflow.broadcast_add")).saves({}) == frozenset()
    assert gradient_of(ctx, ctx.lookup("tdflow.broadcast_mul")).saves({}) == {"x", "y"}
    assert gradient_of(ctx, ctx.lookup("tdflow.softmax")).saves({}) == {"out"}
    assert gradient_of(ctx, ctx.lookup("tdflow.exp")).saves({}) == {"x"}


def test_a_bad_grad_field_is_a_load_error(tmp_path):
    path = tmp_path / "u.td"
    path.write_text(HEADER + textwrap.dedent(_op("x: dyy")))
    with pytest.raises(TdError, match="unknown name 'dyy'") as e:
        load_ops(path)
    assert e.value.file == str(path)
