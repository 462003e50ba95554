"""The verifier's memo leaves float constants out of its key only where they cannot matter
(``dialect/verify_memo.py``): differential against verification with the memo off, and the
cases where a float's value does decide (a check hook, a select's condition)."""

from __future__ import annotations

import itertools

import pytest
from tdflow.dialect import op_verify, standard_dialect
from tdflow.dialect.context import load_ops
from tdflow.dialect.ir import verify_module
from tdflow.dialect.ir.parser import parse_module
from tdflow.dialect.verify_memo import float_blind_attrs, identity_key

FLOATS = ["0.5", "-0.0", "0.0", "0x7FC00000", "0x7F800000", "0xFF800000", "1.0e+38", "3"]
TYPES = ["tensor<4xf32>", "tensor<4xf64>", "tensor<4xi32>", "tensor<2x3xf16>"]
ARG = {t: f"a{i}" for i, t in enumerate(TYPES)}  # the argument of each type


def _ops() -> list[str]:
    """One op per line on ``%x`` of each type, with every float constant, the right and the
    wrong flags, and float types given and left out."""
    lines = []
    n = 0
    for t, c in itertools.product(TYPES, FLOATS):
        ft = " : f64" if c.startswith("0x7F") or c.startswith("0xFF") else ""
        for name in ("scalar_mul", "scalar_add", "scalar_div", "scalar_pow"):
            for flags in ("has_float_operand = true", "has_float_operand = true, "
                          "has_int_operand = true"):
                lines.append(f'%v{n} = "tdflow.{name}"(%{ARG[t]}) {{{flags}, float_operand = '
                             f'{c}{ft}}} : ({t}) -> {t}')
                n += 1
        for alpha_type in (" : f32", " : f64", ""):
            if c.startswith("0x") and alpha_type != " : f32":
                continue  # a hex float needs its own width
            lines.append(f'%v{n} = "tdflow.leaky_relu"(%{ARG[t]}) {{alpha = {c}{alpha_type}}}'
                         f' : ({t}) -> {t}')
            n += 1
    lines.append(f'%v{n} = "tdflow.leaky_relu"(%a0) {{alpha = "high"}} : (tensor<4xf32>) -> '
                 f'tensor<4xf32>')
    lines.append(f'%v{n + 1} = "tdflow.scalar_mul"(%a0) {{has_float_operand = true, '
                 f'float_operand = 0.5 : f32}} : (tensor<4xf32>) -> tensor<4xf64>')
    return lines


def _program(lines: list[str]) -> str:
    args = ", ".join(f"%{ARG[t]}: {t}" for t in TYPES)
    body = "\n".join("  " + s for s in lines)
    return f"func.func @f({args}) {{\n{body}\n  return\n}}\n"


def _diags(text: str, dialect) -> list[str]:
    return [str(d) for d in verify_module(parse_module(text, "m.mlir"), dialect)]


def test_memo_gives_what_verification_without_it_gives(monkeypatch):
    lines = _ops()
    for order in (lines, lines[::-1]):
        text = _program(order)
        with_memo = _diags(text, standard_dialect())
        with monkeypatch.context() as m:
            m.setattr(op_verify, "_remember", lambda *args: None)  # nothing kept: no hits
            fresh = _diags(text, standard_dialect())
        assert with_memo == fresh
        assert 10 < len(fresh) < len(lines)  # errors and valid ops both


def test_which_attributes_are_blind():
    d = standard_dialect()
    assert float_blind_attrs(d, "tdflow.leaky_relu") == {"alpha"}
    assert float_blind_attrs(d, "tdflow.scalar_div") == {"float_operand"}
    assert float_blind_attrs(d, "tdflow.relu") == frozenset()
    assert float_blind_attrs(d, "tdflow.dropout") == frozenset()  # its hook checks the rate


def _user_ops(tmp_path, formula: str, hook: str = ""):
    td = tmp_path / "u.td"
    td.write_text('include "tdflow/Base.td"\n'
                  'def U_Dialect : Dialect { let name = "u"; }\n'
                  'def U_PickOp : TDF_FormulaOp<"pick", [Elementwise]> {\n'
                  '  let opDialect = U_Dialect;\n'
                  '  let input = (ins TDF_Tensor:$x);\n'
                  '  let attrs = (ins DefaultValuedAttr<F64Attr, "0.">:$c);\n'
                  '  let output = (outs TDF_Tensor:$y);\n'
                  f'  let formula = [{{ {formula} }}];\n}}\n')
    hooks = []
    if hook:
        h = tmp_path / "u_hooks.py"
        h.write_text(hook)
        hooks.append(h)
    return load_ops(td, hooks=hooks, std=False)


def _pick(cs: list[str], result: str) -> str:
    lines = [f'%{i} = "u.pick"(%x) {{c = {c}}} : (tensor<4xf32>) -> {result}'
             for i, c in enumerate(cs)]
    return _program_x(lines)


def _program_x(lines: list[str]) -> str:
    body = "\n".join("  " + s for s in lines)
    return f"func.func @f(%x: tensor<4xf32>) {{\n{body}\n  return\n}}\n"


def test_a_float_that_picks_the_result_type_stays_in_the_key(tmp_path):
    lib = _user_ops(tmp_path, "c > 1.0 ? x > c : x + c")
    assert float_blind_attrs(lib, "u.pick") == frozenset()
    diags = _diags(_pick(["2.0", "0.5"], "tensor<4xi1>"), lib)
    assert len(diags) == 1 and "m.mlir:3:" in diags[0]


@pytest.mark.parametrize("marked", [False, True])
def test_a_check_hook_is_trusted_only_when_marked(tmp_path, marked):
    hook = ("from tdflow.dialect.hooks import check_attr, float_values_unread\n\n"
            "@check_attr('u.pick')\n"
            + ("@float_values_unread\n" if marked else "")
            + "def positive(ctx):\n"
            "    if not ctx.attr('c') > 0:\n"
            "        ctx.fail('c must be positive', attr='c')\n")
    lib = _user_ops(tmp_path, "x * c", hook)
    assert float_blind_attrs(lib, "u.pick") == ({"c"} if marked else frozenset())
    diags = _diags(_pick(["2.0", "-1.0", "3.0", "-2.0"], "tensor<4xf32>"), lib)
    if not marked:
        assert [d.split(": error")[0] for d in diags] == ["m.mlir:3:3", "m.mlir:5:3"]
        assert all("c must be positive" in d for d in diags)
    else:  # the (false) promise is what makes the memo skip them: the marker is what decides
        assert diags == []


@pytest.mark.parametrize("marked", [False, True])
def test_an_op_without_formula_is_blind_only_with_marked_hooks(tmp_path, marked):
    td = tmp_path / "v.td"
    td.write_text('include "tdflow/Base.td"\n'
                  'def V_Dialect : Dialect { let name = "v"; }\n'
                  'def V_ScaleOp : TDF_Op<"scale", [NoMemoryEffect]> {\n'
                  '  let opDialect = V_Dialect;\n'
                  '  let input = (ins TDF_Tensor:$x);\n'
                  '  let output = (outs TDF_Tensor:$y);\n'
                  '  let attrs = (ins DefaultValuedAttr<F32Attr, "0.">:$alpha);\n'
                  '  let has_logical_tensor_desc_infer_fn = 1;\n}\n')
    hooks = tmp_path / "v_hooks.py"
    hooks.write_text("from tdflow.dialect.hooks import float_values_unread, "
                     "infer_logical_tensor_desc\n\n"
                     "@infer_logical_tensor_desc('v.scale')\n"
                     + ("@float_values_unread\n" if marked else "")
                     + "def shape(ctx):\n"
                     "    if ctx.attr('alpha') > 1:\n"
                     "        ctx.fail('alpha above 1', attr='alpha')\n"
                     "    ctx.set_output('y', ctx.input('x'))\n")
    lib = load_ops(td, hooks=[hooks], std=False)
    assert float_blind_attrs(lib, "v.scale") == ({"alpha"} if marked else frozenset())
    lines = [f'%{i} = "v.scale"(%x) {{alpha = {a} : f32}} : (tensor<4xf32>) -> tensor<4xf32>'
             for i, a in enumerate(["0.5", "2.0", "0.25", "3.0"])]
    diags = _diags(_program_x(lines), lib)
    # unmarked: every op's own value is checked; marked: the (false) promise lets the memo skip
    assert len(diags) == (0 if marked else 2)


def test_the_inlined_identity_key_is_identity_keys():
    """verify_operation builds identity_key's tuple itself (a call less per op): every op
    found valid, blind floats, integers and no attributes alike, is under identity_key's key."""
    d = standard_dialect()
    module = parse_module(_program(_ops()), "m.mlir")
    diags = verify_module(module, d)
    failed = {id(x.loc) for x in diags}
    checked = 0
    for op in module.funcs[0].body:
        if op.name == "func.return" or id(op.loc) in failed:
            continue
        declared, blind = d.op_info(op.name).memo_plan[:2]
        attrs = {k: v for k, v in op.attributes.items() if k in declared}
        assert identity_key(op.name, op, attrs, blind) in d._verified
        checked += 1
    assert checked > 50
