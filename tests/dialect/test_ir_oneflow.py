"""OneFlow's IR as OneFlow prints it, verified against OneFlow's own .td (the shared corpus):
``oneflow.job`` functions, several top-level modules, op_conf_attrs, si/ui element types,
rank-0 tensors, ``#sbp`` dialect attributes and the older ``operand_segment_sizes`` spelling.
Goldens are in ``golden_oneflow/``; broken variants must give located errors."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from tdflow.dialect.ir.core import JOB, RETURN
from tdflow.dialect.ir.diagnostics import DiagnosticError
from tdflow.dialect.ir.parser import parse_file, parse_module
from tdflow.dialect.ir.printer import print_module
from tdflow.dialect.ir.verifier import verify_module

import tdflow

GOLDEN = Path(__file__).parent / "golden_oneflow"
CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "oneflow"
MLIR_OPT = shutil.which("mlir-opt-19")


@pytest.fixture(scope="module")
def oneflow():
    if not (CORPUS / "top.td").exists():
        pytest.skip("the shared corpus (../shared/corpus/oneflow) is absent")
    llvm = shutil.which("llvm-config-19")
    inc = Path("/usr/lib/llvm-19/include")
    if llvm is not None:
        inc = Path(subprocess.run([llvm, "--includedir"], capture_output=True,
                                  text=True).stdout.strip())
    if not (inc / "mlir" / "IR" / "OpBase.td").exists():
        pytest.skip("MLIR's .td includes (libmlir-19-dev) are not installed")
    groups = sorted(set(re.findall(r"GET_ONEFLOW_\w+_OP_DEFINITIONS",
                                   (CORPUS / "OneFlow" / "OneFlowUserOps.td").read_text())))
    return tdflow.load_ops(CORPUS / "top.td", include_dirs=[inc, CORPUS],
                           defines=[g for g in groups if "_BASE_" not in g])


#: The attributes OneFlow writes on ops whose records do not declare them (MLIR keeps them as
#: discardable attributes): each golden's warnings name only these (`axis` on gelu, `parallel`
#: and `shape` on variable_ir, as OneFlow's fuse_forward_ops.mlir writes them).
DISCARDABLE = {"op_type_name", "output_lbns", "axis", "parallel", "shape"}


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.mlir")), ids=lambda p: p.name)
def test_golden_programs_verify_against_oneflow_td(oneflow, path):
    diags = verify_module(parse_file(path), oneflow)
    assert [str(d) for d in diags if d.severity != "warning"] == []
    for d in diags:  # a warning is an undeclared attribute, kept (issue 24, item 8)
        name = re.match(r"'oneflow\.\w+' op has no attribute '(\w+)'", d.message)
        assert name and name[1] in DISCARDABLE and d.message.endswith(
            "kept as a discardable attribute"), str(d)


@pytest.mark.parametrize("path, old, new, message, line", [
    ("relu_job.mlir", 'device_tag = "cpu", hierarchy = [1], op_name = "relu-0"',
     'hierarchy = [1], op_name = "relu-0"',
     "'oneflow.relu' op requires attribute 'device_tag' (string, StrAttr)", 4),
    ("relu_job.mlir", 'op_name = "relu-0"', "op_name = 3",
     "'oneflow.relu' op attribute 'op_name' expects", 4),
    ("conv_segments.mlir", "array<i32: 1, 1, 0, 0>", "array<i32: 1, 1, 1, 0>",
     "'oneflow.conv2d' op", 3),
])
def test_broken_variants_against_oneflow_td(oneflow, path, old, new, message, line):
    diags = verify_module(parse_module(_broken(path, old, new), path), oneflow)
    assert any(message in d.message and d.loc.line == line and d.loc.file == path
               and d.severity == "error" for d in diags), [str(d) for d in diags]


def test_a_misspelt_declared_attribute_warns_unless_strict(oneflow):
    """MLIR's rule: an undeclared name is a discardable attribute, not an error; tdflow warns
    with "did you mean", and --strict-attrs makes it an error. The declared op_name it was
    meant to be is then missing: a required attribute, so still an error."""
    text = _broken("relu_job.mlir", 'hierarchy = [1], op_name = "relu-0"',
                   'hierarchy = [1], op_nme = "relu-0"')
    for strict, severity in ((False, "warning"), (True, "error")):
        diags = verify_module(parse_module(text, "relu_job.mlir"), oneflow, strict_attrs=strict)
        typo = [d for d in diags if "'op_nme'" in d.message]
        assert [(d.severity, d.loc.line) for d in typo] == [(severity, 4)], [str(d) for d in diags]
        assert typo[0].message.startswith(
            "'oneflow.relu' op has no attribute 'op_nme'; did you mean 'op_name'? (attributes: ")
        assert any(d.severity == "error" and "requires attribute 'op_name'" in d.message
                   for d in diags)


@pytest.mark.parametrize("path, old, new, message", [
    # OneFlow's kInt64 is si64: an si32 index is not what max_pool_2d infers
    ("signed_indices.mlir", "tensor<2x4x10x10xsi64>)", "tensor<2x4x10x10xsi32>)",
     "'oneflow.max_pool_2d' op result #1 ('indice') is declared tensor<2x4x10x10xsi32> but its "
     "element type is i64"),
    # dropout's mask is OneFlow's kBool (i8 or i1), not a float
    ("fuse_patterns.mlir", "(tensor<3x7xf32>, tensor<3x7xi8>)\n", "(tensor<3x7xf32>, tensor<3x7xf32>)\n",
     "'oneflow.dropout' op result #1 ('mask') is declared tensor<3x7xf32> but its element type "
     "is i1"),
    # a served op's attributes are checked by the serving standard op's rules (TDF_PermAttr:
    # OneFlow's record says only si32 array)
    ("attention.mlir", "perm = [0 : si32, 2 : si32, 1 : si32, 3 : si32], scope_symbol_id = 40 "
     ": i64} : (tensor<2x12x4x16xf16>)", "perm = [0 : si32, 2 : si32, 2 : si32, 3 : si32], "
     "scope_symbol_id = 40 : i64} : (tensor<2x12x4x16xf16>)",
     "'oneflow.transpose' op perm [0, 2, 2, 3] is not a permutation of 0..3 for 'input' of "
     "shape [2, 12, 4, 16]"),
    # the served softmax's hooks run (a wrong shape is caught, no KeyError)
    ("attention.mlir", "-> tensor<2x4x12x5xf16>\n    %9", "-> tensor<2x4x12x6xf16>\n    %9",
     "'oneflow.softmax' op result #0 ('out') is declared tensor<2x4x12x6xf16> but the operands "
     "give tensor<2x4x12x5xf16>"),
    # OneFlow's own inference (conv_op.cpp) wants weight [filters, ...]: oneflow-opt, which
    # runs no inference, accepts the mismatch (its oneflow_to_tosa.mlir has one); tdflow not
    ("output_lbns.mlir", "filters = 8 : si32", "filters = 64 : si32",
     "'oneflow.conv2d' op 'weight' [8, 3, 3, 3] has 8 filters but filters = 64"),
    # an si32 index is an integer (OneFlow's kInt32); a float one is not
    ("signed_indices.mlir", "(tensor<6xf32>, tensor<6xsi32>) -> tensor<6xf32>",
     "(tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>",
     "'oneflow.dim_gather' op 'index' must be an integer tensor"),
])
def test_oneflow_element_types_are_checked_not_waved_through(oneflow, path, old, new, message):
    text = _broken(path, old, new)
    if "tensor<6xsi32>) -> tensor<6xf32>" in old:  # the index's producer too
        text = text.replace("(tensor<6xf32>) -> tensor<6xsi32>\n    %3", "(tensor<6xf32>) -> "
                            "tensor<6xf32>\n    %3")
    diags = [d for d in verify_module(parse_module(text, path), oneflow) if d.severity == "error"]
    assert any(message in d.message for d in diags), [str(d) for d in diags]


def test_discardable_attributes_are_kept_printed_and_round_trip():
    m = parse_file(GOLDEN / "op_type_name.mlir")
    casts = [op for op in m.walk() if op.name == "oneflow.cast"]
    assert [str(op.attributes["op_type_name"]) for op in casts] == ['"cast"'] * 3
    for generic in (False, True):
        text = print_module(m, generic=generic)
        assert text.count('op_type_name = "cast"') == 3
        assert parse_module(text) == m


def test_oneflow_programs_verify_on_the_command_line(oneflow, capsys):
    """`tdflow verify --ops top.td`: OneFlow's ops without Python hooks are verified by their
    ODS (exit 0, as oneflow-opt), with a note naming the unchecked results; the undeclared
    attributes are warnings, errors with --strict-attrs."""
    from tdflow.cli import main

    inc = Path("/usr/lib/llvm-19/include")
    llvm = shutil.which("llvm-config-19")
    if llvm is not None:
        inc = Path(subprocess.run([llvm, "--includedir"], capture_output=True,
                                  text=True).stdout.strip())
    groups = sorted(set(re.findall(r"GET_ONEFLOW_\w+_OP_DEFINITIONS",
                                   (CORPUS / "OneFlow" / "OneFlowUserOps.td").read_text())))
    args = ["verify", "--ops", str(CORPUS / "top.td"), "-I", str(inc), "-I", str(CORPUS)]
    for g in groups:
        if "_BASE_" not in g:
            args += ["-D", g]
    prog = str(GOLDEN / "op_type_name.mlir")
    assert main(args + [prog]) == 0
    out, err = capsys.readouterr()
    assert "verified" in out and " error: " not in err
    assert err.count("warning: 'oneflow.cast' op has no attribute 'op_type_name'") == 3
    assert "note: result types not checked, their ops have no infer_logical_tensor_desc hook: " \
           "%0 ('oneflow.cast', line 3)" in err
    assert "'oneflow.relu'" not in err.split("note:")[1]  # served: its results are checked
    assert main(args + ["--strict-attrs", prog]) == 1
    _, err = capsys.readouterr()
    assert "error: 'oneflow.cast' op has no attribute 'op_type_name'" in err


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.mlir")), ids=lambda p: p.name)
def test_golden_programs_verify_and_round_trip(path):
    m = parse_file(path)
    assert [str(d) for d in verify_module(m)] == []
    assert all(f.body.last.name == RETURN for f in m.funcs)
    for generic in (False, True):
        text = print_module(m, generic=generic)
        assert ("oneflow.return" in text) == any(f.kind == JOB for f in m.funcs)
        assert parse_module(text) == m, text
        if MLIR_OPT is not None and generic:  # the generic form needs no OneFlow dialect
            out = subprocess.run([MLIR_OPT, "--allow-unregistered-dialect",
                                  "--mlir-print-op-generic"],
                                 input=text, capture_output=True, text=True)
            assert out.returncode == 0, out.stderr
            assert parse_module(out.stdout) == m


def test_several_modules_types_and_sbp_are_kept():
    m = parse_file(GOLDEN / "relu_job.mlir")
    assert [f.name for f in m.funcs] == ["GraphToRun_1", "GraphToRun_2"]
    job = m["GraphToRun_1"]
    assert [str(t) for t in job.arg_types] == ["tensor<1x5xf32>", "tensor<si64>"]
    assert job.args[1].type.shape == () and job.args[1].type.np_dtype.name == "int64"
    assert m["GraphToRun_2"].args[0].type.np_dtype.name == "uint8"
    assert str(job.arg_attrs[0]["sbp"]) == "#sbp.parallel<[] -> [#sbp.B, #sbp.S<0>]>"


def _broken(path: str, old: str, new: str) -> str:
    text = (GOLDEN / path).read_text()
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize("path, old, new, message, line", [
    ("relu_job.mlir", "oneflow.return %0, %arg1 : tensor<1x5xf32>, tensor<si64>",
     "oneflow.return %0, %arg1 : tensor<1x5xf32>, tensor<i64>", "type mismatch", 5),
    ("relu_job.mlir", "-> (tensor<1x5xf32>, tensor<si64>)", "-> (tensor<1x5xf32>, tensor<i64>)",
     "type of return operand #1 (tensor<si64>) does not match", 5),
    ("conv_segments.mlir", "tensor<1x4x6x6xf32>\n  }", "tensor<1x4x6x6xf32>\n", "closing the module", 7),
])
def test_broken_variants_give_located_errors(path, old, new, message, line):
    text = _broken(path, old, new)
    try:
        diags = verify_module(parse_module(text, path))
    except DiagnosticError as exc:
        diags = exc.diagnostics
    assert any(message in d.message and d.loc.line == line and d.loc.file == path for d in diags), \
        [str(d) for d in diags]


def test_oneflow_return_outside_a_job_is_an_ordinary_op():
    m = parse_module('func.func @f(%x: tensor<f32>) -> tensor<f32> {\n'
                     '  "oneflow.return"(%x) : (tensor<f32>) -> ()\n}\n', "f.mlir")
    assert [str(d) for d in verify_module(m)] == [
        "f.mlir:2:3: error: function @f must end with 'return' (found 'oneflow.return')"]


# -- enum attributes (OneFlow_DataType is an I32EnumAttr: `dtype = 2 : i32`, or by name) --------

_DATA_TYPES = ("DT_InvalidDataType(0), DT_Char(1), DT_Float(2), DT_Double(3), DT_Int8(4), "
               "DT_Int32(5), DT_Int64(6), DT_UInt8(7), DT_OFRecord(8), DT_Float16(9), "
               "DT_TensorBuffer(10), DT_BFloat16(11), DT_Bool(12)")


def test_the_ods_reader_records_enum_cases(oneflow):
    dtype = oneflow.lookup("oneflow.cast").attr("dtype")
    assert (dtype.kind, dtype.constraint, dtype.enum.name, dtype.enum.type) == \
        ("enum", "OneFlow_DataType", "DataType", "i32")
    assert dtype.enum.listing() == _DATA_TYPES
    out = oneflow.lookup("oneflow.tensor_buffer_to_list_of_tensors_v2").attr("out_dtypes")
    assert (out.kind, out.enum) == ("enum_array", dtype.enum)
    # tdflow's own OneFlow_DataType (Base.td) is a type-valued attribute, as before
    assert tdflow.load_ops().lookup("tdflow.cast").attr("dtype").kind == "dtype"


@pytest.mark.parametrize("old, new, detail", [
    ("dtype = 3 : i32", "dtype = 99 : i32", f"got 99 : i32; expected one of {_DATA_TYPES}"),
    ('dtype = "DT_Float"', 'dtype = "DT_Flaot"', f"got 'DT_Flaot'; expected one of {_DATA_TYPES}"),
    ("dtype = 3 : si32", "dtype = 3 : i8", "got 3 : i8; an enum case is stored as i32: write 3 : i32"),
    ("dtype = 3 : si32", "dtype = f64", "got f64 (a type)"),
])
def test_bad_enum_values_are_located_and_list_the_cases(oneflow, old, new, detail):
    diags = verify_module(parse_module(_broken("cast_enum.mlir", old, new), "cast_enum.mlir"),
                          oneflow)
    line = 1 + next(i for i, s in enumerate(_broken("cast_enum.mlir", old, new).splitlines())
                    if new in s)
    expected = f"'oneflow.cast' op attribute 'dtype' expects a case of enum DataType " \
               f"(OneFlow_DataType), {detail}"
    assert [(d.message, d.loc.line) for d in diags] == [(expected, line)]


def test_bad_enum_array_element_is_reported(oneflow):
    text = _broken("cast_enum.mlir", 'out_dtypes = [2 : i32, "DT_Float"]',
                   'out_dtypes = [2 : i32, 13 : i32]')
    diags = verify_module(parse_module(text, "cast_enum.mlir"), oneflow)
    assert [d.message for d in diags] == [
        "'oneflow.tensor_buffer_to_list_of_tensors_v2' op attribute 'out_dtypes' expects array "
        f"of a case of enum DataType (DTArrayAttr), got 13 : i32; expected one of {_DATA_TYPES}"]


def test_enum_values_reach_hooks_as_the_integer_with_its_name(oneflow):
    seen = []

    def logical(ctx):
        seen.append(ctx.attr("dtype"))
        ctx.set_output_shape("out", ctx.input_shape("in"))

    def data_type(ctx):
        ctx.set_output_dtype("out", {2: "f32", 3: "f64"}[ctx.attr("dtype")])

    reg = oneflow.registry
    reg.register("oneflow.cast", "infer_logical_tensor_desc", logical, replace=True)
    reg.register("oneflow.cast", "infer_data_type", data_type, replace=True)
    try:
        diags = verify_module(parse_file(GOLDEN / "cast_enum.mlir"), oneflow)
        wrong = verify_module(parse_module(_broken(
            "cast_enum.mlir", "dtype = 3 : si32", "dtype = 2 : si32"), "c.mlir"), oneflow)
    finally:
        reg.unregister("oneflow.cast", "infer_logical_tensor_desc")
        reg.unregister("oneflow.cast", "infer_data_type")
    assert [str(d) for d in diags] == []
    assert [(int(c), c.name, c.enum) for c in seen[:3]] == [
        (3, "DT_Double", "DataType"), (2, "DT_Float", "DataType"), (3, "DT_Double", "DataType")]
    assert [d.message for d in wrong] == [
        "'oneflow.cast' op result #0 ('out') is declared tensor<2x3xf64> but its element type is "
        "f32 (inferred tensor<2x3xf32>)"]


def test_enum_attributes_print_back_as_written():
    m = parse_file(GOLDEN / "cast_enum.mlir")
    text = print_module(m)
    for written in ("dtype = 3 : i32", 'dtype = "DT_Float"', "dtype = 3 : si32",
                    'out_dtypes = [2 : i32, "DT_Float"]', "data_type = 2 : i32"):
        assert written in text


def test_a_bare_enum_keyword_is_a_located_error():
    text = _broken("cast_enum.mlir", 'dtype = "DT_Float"', "dtype = DT_Float")
    with pytest.raises(DiagnosticError) as ei:
        parse_module(text, "cast_enum.mlir")
    d = ei.value.diagnostics[0]
    assert (d.loc.line, d.loc.col) == (5, 82)
    assert "found 'DT_Float': a bare word is not one in MLIR's generic syntax (write an enum " \
           "case as its integer, like 2 : i32, or its name as a string, \"DT_Float\")" in d.message


# -- control edges (OneFlow_Op & co: ctrl_input = Variadic<AnyType>, ctrl_output = Optional) ----

def test_ctrl_inputs_and_outputs_are_read_apart_from_the_data_ones(oneflow):
    user = oneflow.lookup("oneflow.user")
    assert [(d.name, d.arity) for d in user.operands] == [("data_input", "variadic")]
    assert [(d.name, d.arity) for d in user.ctrl_operands] == [("ctrl_inputs", "variadic")]
    assert [(d.name, d.arity) for d in user.ctrl_results] == [("ctrl_output", "optional")]
    assert {"op_type_name", "input_sizes", "output_sizes"} <= {a.name for a in user.attributes}
    cast = oneflow.lookup("oneflow.cast")
    assert (cast.ctrl_operands, cast.ctrl_results) == ((), ())


def test_ctrl_values_are_not_data_for_hooks(oneflow):
    from tdflow.dialect.op_verify import data_values, operand_groups

    seen = []

    def logical(ctx):
        seen.append((ctx.input_names(), ctx.output_names()))
        ctx.set_output_shape("output", ctx.input_shape("input"))

    def data_type(ctx):
        ctx.set_output_dtype("output", ctx.input_dtype("input"))

    m = parse_file(GOLDEN / "ctrl_edges.mlir")
    out = [op for op in m.walk() if op.name == "oneflow.output"][0]
    opdef = oneflow.lookup("oneflow.output")
    assert operand_groups(opdef, out) == {"input": [out.operands[0]]}
    assert data_values(opdef, out) == ([out.operands[0]], [out.results[0]])
    reg = oneflow.registry
    reg.register("oneflow.output", "infer_logical_tensor_desc", logical, replace=True)
    reg.register("oneflow.output", "infer_data_type", data_type, replace=True)
    try:
        diags = verify_module(m, oneflow)
        wrong = verify_module(parse_module(_broken(
            "ctrl_edges.mlir", "(tensor<1x5xf32>, tensor<i1>) -> (tensor<1x5xf32>, tensor<i1>)\n"
            "    %1", "(tensor<1x5xf32>, tensor<i1>) -> (tensor<1x5xf64>, tensor<i1>)\n    %1"),
            "ctrl_edges.mlir"), oneflow)
        inferred = oneflow.infer_result_types(
            "oneflow.output", [out.operands[0].type, out.operands[1].type], out.attributes)
    finally:
        reg.unregister("oneflow.output", "infer_logical_tensor_desc")
        reg.unregister("oneflow.output", "infer_data_type")
    assert [str(d) for d in diags] == []
    assert seen[0] == ([("input", 0)], [("output", 0)])
    assert [str(t) for t in inferred] == ["tensor<1x5xf32>"]
    assert any("'oneflow.output' op result #0 ('output') is declared tensor<1x5xf64>" in d.message
               for d in wrong), [str(d) for d in wrong]


@pytest.mark.parametrize("old, new, message, line", [
    ("operand_segment_sizes = array<i32: 1, 1>", "operand_segment_sizes = array<i32: 2>",
     "'oneflow.user' op operandSegmentSizes has 1 entries but the op has 2 operand groups", 5),
    ("operand_segment_sizes = array<i32: 1, 1>", "operand_segment_sizes = array<i32: 1, 2>",
     "'oneflow.user' op operandSegmentSizes [1, 2] adds up to 3 but there are 2 operands "
     "(data_input..., ctrl_inputs...)", 5),
    ("result_segment_sizes = array<i32: 1, 1>, ", "",
     "'oneflow.user' op requires attribute 'resultSegmentSizes' (AttrSizedResultSegments): one "
     "size per result group (data_output..., ctrl_output?), e.g. array<i32: 0, 0>", 5),
    ("result_segment_sizes = array<i32: 1, 0>", "result_segment_sizes = array<i32: 1, 2>",
     "'oneflow.user' op resultSegmentSizes gives optional result 'ctrl_output' 2 values", 8),
    (("%output, %ctrl_output =", "-> (tensor<1x5xf32>, tensor<i1>)\n    %output_0"),
     ("%output, %ctrl_output, %extra =",
      "-> (tensor<1x5xf32>, tensor<i1>, tensor<i1>)\n    %output_0"),
     "'oneflow.input' op expects 1 to 2 results, got 3 (output, ctrl_output?)", 3),
])
def test_broken_ctrl_edges_are_located(oneflow, old, new, message, line):
    path = "ctrl_edges.mlir"
    text = (GOLDEN / path).read_text()
    for o, n in zip(*((old, new) if isinstance(old, tuple) else ((old,), (new,)))):
        assert o in text
        text = text.replace(o, n, 1)
    try:
        diags = verify_module(parse_module(text, path), oneflow)
    except DiagnosticError as exc:
        diags = exc.diagnostics
    assert any(message in d.message and d.loc.line == line for d in diags), \
        [str(d) for d in diags]
