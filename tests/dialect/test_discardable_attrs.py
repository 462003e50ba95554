"""MLIR's rule for attributes an op does not declare, and served ops' hooks (issue 24, item 8).

An undeclared attribute is *discardable*: kept on the op, printed back, seen by passes; the
verifier warns (an error with ``strict_attrs``); hooks, kernels and memo keys never see it.
Declared attributes stay fully checked. A served op (same shape as a standard op) runs the
standard op's hooks as that op, so hooks that look themselves up by name work for it.
"""

from __future__ import annotations

import pytest
from tdflow.dialect import standard_dialect
from tdflow.dialect.ir.parser import parse_module
from tdflow.dialect.ir.printer import print_module
from tdflow.dialect.ir.verifier import verify_module
from tdflow.dialect.op_verify import declared_attributes, discardable_attributes
from tdflow.dialect.types import TensorType as T

import tdflow

PROG = """func.func @f(%x: tensor<4x8xf32>) -> tensor<?x8xf32> {
  %0 = "tdflow.leaky_relu"(%x) {alpha = 0.1 : f32, alhpa = 0.2 : f32, origin = "onnx:LeakyRelu_3"} : (tensor<4x8xf32>) -> tensor<?x8xf32>
  %1 = "tdflow.leaky_relu"(%0) {alpha = 0.1 : f32, alhpa = 0.2 : f32, origin = "onnx:LeakyRelu_3"} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
}
"""


def _summary(diags):
    return [(d.severity, d.loc.line, d.message.split(" (")[0]) for d in diags]


def test_undeclared_attributes_warn_on_every_instance_and_strict_makes_errors():
    d = standard_dialect()
    want = [(line, "'tdflow.leaky_relu' op has no attribute 'alhpa'; did you mean 'alpha'?")
            for line in (2, 3)]
    for _ in range(2):  # the second time the ops are memoized as valid: still warned
        diags = verify_module(parse_module(PROG, "p.mlir"), d)
        assert [(s, line, m) for s, line, m in _summary(diags) if "alhpa" in m] == \
            [("warning", *w) for w in want]
        assert {d.severity for d in diags} == {"warning"} and len(diags) == 4
    strict = verify_module(parse_module(PROG, "p.mlir"), d, strict_attrs=True)
    assert [s for s, _, _ in _summary(strict)] == ["error"] * 4


def test_declared_attributes_stay_fully_checked():
    text = PROG.replace("alpha = 0.1 : f32, alhpa", 'alpha = "high", alhpa', 1)
    diags = verify_module(parse_module(text, "p.mlir"), standard_dialect())
    errors = [str(d) for d in diags if d.severity == "error"]
    assert len(errors) == 1 and "p.mlir:2:3: error: 'tdflow.leaky_relu' op attribute 'alpha' " \
                                "expects" in errors[0], errors


def test_hooks_and_memo_keys_see_the_declared_attributes_only():
    d = standard_dialect()
    op = d.lookup("tdflow.leaky_relu")
    attrs = {"alpha": 0.1, "origin": "x", "alhpa": 0.2}
    assert discardable_attributes(op, attrs) == ["origin", "alhpa"]
    assert declared_attributes(op, attrs) == {"alpha": 0.1}
    # an undeclared name given straight to inference is still refused (a Python caller's typo)
    with pytest.raises(ValueError, match="unknown attribute 'alhpa'"):
        d.infer_result_types("tdflow.leaky_relu", [T((2,), "f32")], {"alhpa": 0.2})


def test_discardable_attributes_are_printed_back_and_survive_passes():
    from tdflow.lowering.pass_manager import PassManager

    d = standard_dialect()
    m = parse_module(PROG, "p.mlir")
    text = print_module(m)
    assert text.count('origin = "onnx:LeakyRelu_3"') == 2 and parse_module(text) == m
    PassManager.parse("infer-shapes", dialect=d).run(m)  # hooks get the declared ones only
    ops = list(m.walk())
    assert [str(r.type) for op in ops[:2] for r in op.results] == ["tensor<4x8xf32>"] * 2
    assert all(str(op.attributes["origin"]) == '"onnx:LeakyRelu_3"' for op in ops[:2])


SERVED = """include "tdflow/Base.td"
def Sv_Dialect : Dialect { let name = "sv"; }
class Sv_Op<string mnemonic> : Op<Sv_Dialect, mnemonic, [NoMemoryEffect]> {
  dag input = (ins TDF_Tensor:$in);
  bit has_logical_tensor_desc_infer_fn = 1;
  bit has_data_type_infer_fn = 1;
  bit has_get_sbp_fn = 1;
}
def Sv_SoftmaxOp : Sv_Op<"softmax"> { dag output = (outs TDF_Tensor:$out); }
def Sv_LogSoftmaxOp : Sv_Op<"log_softmax"> { dag output = (outs TDF_Tensor:$prob); }
"""


def test_served_ops_run_the_standard_hooks_as_the_standard_op(tmp_path):
    """tdflow.softmax's hooks find their result by the op's name: a served op used to fail
    with KeyError: 'oneflow.softmax'. They now see the standard op (same operands, results
    and attributes), for inference and for every other hook (get_sbp)."""
    td = tmp_path / "sv.td"
    td.write_text(SERVED)
    ctx = tdflow.load_ops(td)
    assert ctx.served_by == {"sv.softmax": "tdflow.softmax", "sv.log_softmax": "tdflow.log_softmax"}
    assert ctx.hook_op("sv.softmax").name == "tdflow.softmax"
    x = T((3, 7), "f32")
    for mine, std in ctx.served_by.items():
        assert ctx.infer_result_types(mine, [x]) == ctx.infer_result_types(std, [x]) == [x]
        assert [str(s) for s in ctx.sbp_signatures(mine, [x])] == \
            [str(s) for s in ctx.sbp_signatures(std, [x])]
    with pytest.raises(ValueError, match="'sv.softmax': softmax needs a tensor of rank >= 1"):
        ctx.infer_result_types("sv.softmax", [T((), "f32")])  # errors name the program's op
    prog = ('func.func @f(%x: tensor<3x7xf32>) -> tensor<3x7xf32> {\n'
            '  %0 = "sv.softmax"(%x) {origin = "mine"} : (tensor<3x7xf32>) -> tensor<3x7xf32>\n'
            '  return %0 : tensor<3x7xf32>\n}\n')
    diags = verify_module(parse_module(prog, "s.mlir"), ctx)
    assert [d.severity for d in diags] == ["warning"]
    wrong = verify_module(parse_module(prog.replace("-> tensor<3x7xf32>\n  return",
                                                    "-> tensor<3x8xf32>\n  return"), "s.mlir"), ctx)
    assert any(d.severity == "error" and "'sv.softmax' op result #0 ('out') is declared "
               "tensor<3x8xf32>" in d.message for d in wrong), [str(d) for d in wrong]
