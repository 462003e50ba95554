"""The ODS reader: default literals, OneFlow- and MLIR-style op records, traits, the standard
ops.td against ops-spec, and (oracle) MLIR's ArithOps.td and a OneFlow-style file against the
op records llvm-tblgen reports."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest
from tdflow.dialect.attr_kinds import DefaultError, parse_default
from tdflow.dialect.dialect import INCLUDE_DIR, load_dialect, standard_dialect, standard_ops_path
from tdflow.tdparser import TdError

ROOT = Path(__file__).resolve().parents[2]
ONEFLOW_LIKE = ROOT / "tests" / "tdparser" / "data" / "oneflow_like"


@pytest.mark.parametrize("kind,text,value", [
    ("f32", "0.", 0.0), ("f32", "1e-08", 1e-08), ("f64", "1.", 1.0), ("f32", "-2.5f", -2.5),
    ("f64", ".5", 0.5), ("f32", "3", 3.0), ("bool", "false", False), ("bool", "true", True),
    ("bool", "0", False), ("bool", "1", True), ("bool", "0.", False), ("bool", "2.5f", True),
    ("si64", "0.", 0), ("si32", "-3.0", -3), ("si64", "1e3", 1000),
    ("si64", "-1", -1), ("si32", "0", 0), ("si64", "0x10", 16), ("si64", "7LL", 7),
    ("str", '"NCHW"', "NCHW"), ("str", '""', ""), ("str", '"a\\"b"', 'a"b'),
    ("si32_array", "{1, -2}", (1, -2)), ("si32_array", "{}", ()), ("shape", "{2, 3}", (2, 3)),
    ("f32_array", "{0.5, 1.}", (0.5, 1.0)), ("str_array", '{"a", "b,c"}', ("a", "b,c")),
    ("dtype", "::oneflow::DataType::kFloat", "f32"), ("dtype", "kInt64", "i64"),
    ("dtype", "f16", "f16"), ("other", "::mlir::arith::FastMathFlags::none",
                              "::mlir::arith::FastMathFlags::none"),
    ("f32", "3.4028235e38", 3.4028235e38), ("f64", "1e39", 1e39), ("f32", "INFINITY", math.inf),
    ("f64", "-std::numeric_limits<double>::infinity()", -math.inf),
])
def test_default_literals(kind, text, value):
    assert parse_default(kind, text) == value


@pytest.mark.parametrize("kind,text", [
    ("f32", "zero"), ("f32", "1e"), ("bool", "yes"), ("si32", "1.5"), ("si32", "3000000000"),
    ("si32", "3e9"),
    # out of the type's range, and what C++ does not spell (issue 24)
    ("f32", "1e999"), ("f32", "3.5e38"), ("f64", "1e999"), ("f32", "nan"), ("f32", "inf"),
    ("str", "NCHW"), ("str", '"unterminated'), ("si32_array", "1, 2"), ("dtype", "kComplex"),
])
def test_bad_default_literals(kind, text):
    with pytest.raises(DefaultError):
        parse_default(kind, text)


def write(tmp_path: Path, text: str, name: str = "t.td") -> Path:
    p = tmp_path / name
    p.write_text('include "tdflow/Base.td"\n' + text)
    return p


def test_bad_default_is_a_load_error_at_the_op(tmp_path):
    p = write(tmp_path, '''
def TDF_AOp : TDF_Op<"a"> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "zero">:$alpha);
}
''')
    with pytest.raises(TdError) as info:
        load_dialect(p)
    err = info.value
    assert err.line == 3 and Path(err.file).name == "t.td"
    assert "alpha" in err.message and "'zero'" in err.message and "floating-point" in err.message


def test_oneflow_style_ops(tmp_path):
    p = write(tmp_path, '''
def OneFlow_LeakyReluOp : OneFlow_BaseOp<"leaky_relu", [NoMemoryEffect, DeclareOpInterfaceMethods<UserOpCompatibleInterface>]> {
  let input = (ins OneFlow_Tensor:$x);
  let output = (outs OneFlow_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "0.">:$alpha, OptionalAttr<SI32ArrayAttr>:$axes,
                   DefaultValuedStrAttr<StrAttr, "NCHW">:$data_format, SI64Attr:$depth);
  let has_logical_tensor_desc_infer_fn = 1;
  let has_check_fn = 1;
}
def OneFlow_ConcatOp : OneFlow_BaseOp<"concat"> {
  let input = (ins Variadic<OneFlow_Tensor>:$in, Optional<TensorOf<[F32, F64]>>:$scale);
  let output = (outs OneFlow_Tensor:$out);
  // OneFlow's own records also carry MLIR's fields; input/output/attrs win over them.
  let arguments = (ins TDF_Tensor:$ignored, BoolAttr:$ignored_attr);
  let results = (outs);
}
''')
    d = load_dialect(p)
    assert [op.name for op in d] == ["tdflow.leaky_relu", "tdflow.concat"]
    op = d.lookup("tdflow.leaky_relu")
    assert [(a.name, a.kind, a.default, a.required, a.optional) for a in op.attributes] == [
        ("alpha", "f32", 0.0, False, False), ("axes", "si32_array", None, False, True),
        ("data_format", "str", "NCHW", False, False), ("depth", "si64", None, True, False)]
    assert op.attr("alpha").default_text == "0."
    assert [str(t) for t in op.traits] == ["NoMemoryEffect", "UserOpCompatible"]
    assert op.hooks == ("has_check_fn", "has_logical_tensor_desc_infer_fn")
    assert op.hook_kinds == ("check_attr", "infer_logical_tensor_desc")
    assert op.record == "OneFlow_LeakyReluOp" and op.location.line == 3
    cat = d.lookup("tdflow.concat")
    assert [(o.name, o.arity, o.dtypes) for o in cat.operands] == [
        ("in", "variadic", None), ("scale", "optional", ("f32", "f64"))]
    assert [r.name for r in cat.results] == ["out"] and cat.attributes == ()


def test_mlir_style_ops(tmp_path):
    p = write(tmp_path, '''
def My_Dialect : Dialect { let name = "my"; }
def My_AddOp : Op<My_Dialect, "add", [Pure, Commutative, ParamNativeOpTrait<"HasParent", "FuncOp, ModuleOp">]> {
  let summary = "add";
  let description = [{
    Adds.
  }];
  let arguments = (ins TDF_FloatTensor:$lhs, DefaultValuedAttr<BoolAttr, "false">:$fast,
                       TDF_Tensor:$rhs, OptionalAttr<F64Attr>:$scale);
  let results = (outs TDF_Tensor:$sum);
}
''')
    op = load_dialect(p).lookup("my.add")
    assert op.dialect == "my" and op.mnemonic == "add" and op.summary == "add"
    assert op.description == "Adds."
    assert [(o.name, o.dtypes) for o in op.operands] == [
        ("lhs", ("f16", "bf16", "f32", "f64")), ("rhs", None)]
    assert [a.name for a in op.attributes] == ["fast", "scale"]
    assert [str(t) for t in op.traits] == [
        "Pure", "AlwaysSpeculatable", "NoMemoryEffect", "Commutative", "HasParent<FuncOp, ModuleOp>"]
    assert op.pure and op.hooks == ()


def test_standard_ops_path_and_symlink():
    path = standard_ops_path()
    assert path.is_file() and path.name == "ops.td"
    assert (ROOT / "tdflow" / "ops.td").resolve() == (ROOT / "ops.td").resolve()
    assert (INCLUDE_DIR / "tdflow" / "Base.td").is_file()


# op -> (operands, results, attributes with defaults (None: required), extra flags)
SPEC = {
    "relu": ("x", "y", {}, ()),
    "leaky_relu": ("x", "y", {"alpha": 0.0}, ()),
    "gelu": ("in", "out", {}, ()),
    "scalar_pow": ("in", "out", {"has_int_operand": False, "has_float_operand": False,
                                 "int_operand": 0, "float_operand": 0.0}, ()),
    "bias_add": ("a b", "out", {"axis": 0}, ()),
    "matmul": ("a b _add_to_output?", "out",
               {"transpose_a": False, "transpose_b": False, "alpha": 1.0}, ("compute_complexity",)),
    "reduce_sum": ("input_tensor", "output_tensor", {"axis": None, "keepdims": False}, ()),
    "softmax": ("in", "out", {}, ("compute_complexity",)),
    "log_softmax": ("in", "prob", {}, ()),
    "sparse_softmax_cross_entropy": ("prediction label", "prob out", {"depth": 0},
                                     ("modify_input_arg",)),
    "reshape": ("in", "out", {"shape": None}, ("enumerate_nd_sbp_signatures",)),
    "transpose": ("input", "output", {"perm": None}, ()),
    "cat": ("in*", "out", {"axis": 0, "max_dim_size": 0}, ("check_attr",)),
    "cast": ("in", "out", {"dtype": None, "pin_memory": False}, ("infer_device",)),
    "constant": ("UserSourceOpTickInput?", "out",
                 {"floating_value": 0.0, "integer_value": 0, "is_floating_value": False,
                  "dtype": None, "shape": None}, ("infer_nd_sbp",)),
    "reduce_sum_like": ("x like", "y", {"axis": None}, ("modify_input_arg",)),
    "conv2d": ("in weight bias? _add_to_output?", "out",
               {"filters": 0, "padding_before": None, "data_format": None, "kernel_size": None,
                "strides": None, "dilation_rate": None, "groups": 1, "tuning_cache": ""},
               ("check_attr", "compute_complexity")),
    "max_pool_2d": ("x", "y indice", {"padding": None, "data_format": None, "kernel_size": None,
                                      "stride": None, "dilation": None, "return_indices": False,
                                      "ceil_mode": False}, ("compute_complexity",)),
    "dropout": ("in _add_to_output?", "out mask", {"rate": 0.0, "seed": 0}, ("check_attr",)),
    "dropout_grad": ("dy mask", "dx", {"scale": 0.0}, ("check_attr",)),
    "conv_data_grad": ("dy filter x_like _add_to_output?", "dx",
                       {"num_spatial_dims": 0, "padding_before": None, "data_format": None,
                        "kernel_size": None, "strides": None, "dilation_rate": None, "groups": 0},
                       ("check_attr", "compute_complexity")),
    "sparse_softmax_cross_entropy_grad": ("label dy prob", "prediction_diff", {"depth": 0}, ()),
    "sgd_update": ("model model_diff model_copy? learning_rate? scale_by_tensor? skip_if?", "",
                   {"learning_rate_val": 0.0, "learning_rate_scale": 1.0, "scale": 1.0, "l1": 0.0,
                    "l2": 0.0, "weight_decay": 0.0}, ("modify_input_arg",)),
    "fused_elementwise": ("in*", "out", {"expr": None, "ops": None}, ("check_attr",)),
}
ALL_OPS = """relu leaky_relu sigmoid tanh gelu exp log sqrt negative square reciprocal scalar_add scalar_mul
scalar_pow broadcast_add broadcast_sub broadcast_mul broadcast_div broadcast_maximum
broadcast_equal broadcast_not_equal broadcast_less broadcast_less_equal broadcast_greater
broadcast_greater_equal broadcast_minimum broadcast_pow bias_add matmul matmul_bias batch_matmul reduce_sum
reduce_max softmax log_softmax sparse_softmax_cross_entropy reshape transpose cat slice
slice_grad cast constant dense_constant ones_like reduce_sum_like broadcast_like conv2d max_pool_2d dropout
relu_grad leaky_relu_grad sigmoid_grad tanh_grad gelu_grad softmax_grad dropout_grad
conv_data_grad conv_filter_grad max_pool_2d_grad sparse_softmax_cross_entropy_grad sgd_update
sparse_softmax_cross_entropy_with_grad
fused_elementwise abs rsqrt erf silu fast_gelu softplus scalar_div where add_n
sin cos tan asin acos atan sinh cosh asinh acosh atanh floor ceil round sign isnan isinf softsign
logical_not bitwise_not broadcast_logical_and broadcast_logical_or broadcast_logical_xor
broadcast_bitwise_and broadcast_bitwise_or broadcast_bitwise_xor broadcast_bitwise_left_shift
broadcast_bitwise_right_shift broadcast_fmod broadcast_floor_mod layer_norm
normalization group_norm gather unsorted_segment_sum_like embedding embedding_grad narrow
narrow_grad expand expand_dims squeeze tril fused_scale_tril arange one_hot argmax top_k cumsum
cumprod cumprod_grad dim_gather dim_scatter_add_like dim_scatter_update dim_scatter_add
dim_scatter_mul dim_scatter_max dim_scatter_min gather_nd scatter_nd_like tensor_scatter_nd_update
tensor_scatter_nd_add triu pad reduce_min
reduce_prod avg_pool_2d avg_pool_2d_grad adaptive_avg_pool2d adaptive_avg_pool2d_grad
softmax_cross_entropy softmax_cross_entropy_grad adam_update boxing_all_reduce
boxing_reduce_scatter boxing_all_gather boxing_all_to_all boxing_slice boxing_to_partial""".split()
BASE_HOOKS = ("infer_logical_tensor_desc", "infer_physical_tensor_desc", "get_sbp", "infer_data_type")


def _sig(defs) -> str:
    return " ".join(d.name + ("?" if d.is_optional else "*" if d.is_variadic else "") for d in defs)


def test_standard_dialect_has_every_spec_op():
    d = standard_dialect()
    # every spec op, and no other (the order follows the family files ops.td includes)
    assert sorted(op.mnemonic for op in d) == sorted(ALL_OPS)
    for op in d:
        assert all(op.provides(k) for k in BASE_HOOKS), op.name
        assert op.summary and "```mlir" in op.description, op.name


@pytest.mark.parametrize("mnemonic", sorted(SPEC))
def test_standard_ops_match_spec(mnemonic):
    operands, results, attrs, extra = SPEC[mnemonic]
    op = standard_dialect().lookup(f"tdflow.{mnemonic}")
    assert _sig(op.operands) == operands
    assert _sig(op.results) == results
    assert {a.name: (None if a.required else a.default) for a in op.attributes} == attrs
    # the hooks beyond OneFlow's four; a scalar op's check_attr says what its formula cannot
    # (exactly one of has_int_operand and has_float_operand)
    scalar = {"check_attr"} if mnemonic.startswith("scalar_") else set()
    assert set(op.hook_kinds) - set(BASE_HOOKS) == set(extra) | scalar


def test_standard_traits():
    d = standard_dialect()
    elementwise = {op.mnemonic for op in d if op.has_trait("Elementwise")}
    assert {"relu", "exp", "scalar_add", "broadcast_add", "broadcast_maximum", "relu_grad",
            "gelu_grad", "dropout_grad"} <= elementwise
    assert not {"matmul", "softmax", "reduce_sum", "bias_add", "softmax_grad"} & elementwise
    assert d.lookup("tdflow.relu").trait_names >= {"Idempotent", "SameOperandsAndResultType"}
    assert d.lookup("tdflow.negative").has_trait("Involution")
    assert d.lookup("tdflow.conv2d").has_trait("AttrSizedOperandSegments")
    assert d.lookup("tdflow.cast").has_trait("SupportNonContiguous")
    assert d.lookup("tdflow.constant").has_trait("NoGrad")
    sgd = d.lookup("tdflow.sgd_update")
    assert not sgd.pure and sgd.has_trait("NoGrad")
    fused = d.lookup("tdflow.fused_elementwise")  # made by fuse-elementwise, declared like the rest
    assert fused.pure and fused.trait_names >= {"Elementwise", "LoweringOnly"}
    assert fused.formula is None  # its math is its `expr` attribute


# -- the LLVM oracle ------------------------------------------------------------------------
def _tblgen_json(tool: str, path: Path, includes, defines=()) -> dict:
    cmd = [tool, "--dump-json", str(path)] + [f"-I{d}" for d in includes]
    cmd += [f"-D{d}" for d in defines]
    return json.loads(subprocess.run(cmd, capture_output=True, check=True, text=True).stdout)


def _arg_names(dag: dict) -> list[str]:
    return [name for _, name in dag["args"]]


@pytest.mark.oracle
def test_arith_ops_load_as_a_dialect(llvm_tblgen, mlir_include):
    arith = mlir_include / "mlir" / "Dialect" / "Arith" / "IR" / "ArithOps.td"
    d = load_dialect(arith, [mlir_include])
    doc = _tblgen_json(llvm_tblgen, arith, [mlir_include])
    ops = {k: v for k, v in doc.items() if not k.startswith("!") and "Op" in v["!superclasses"]}
    assert len(ops) == 49 and len(d) == 49
    assert {op.record for op in d} == set(ops)
    for op in d:
        rec = ops[op.record]
        assert op.name == "arith." + rec["opName"]
        args = _arg_names(rec["arguments"])
        assert [o.name for o in op.operands] + [a.name for a in op.attributes] != []
        assert sorted([o.name for o in op.operands] + [a.name for a in op.attributes]) == sorted(args)
        assert [r.name for r in op.results] == _arg_names(rec["results"])
        assert op.summary == rec["summary"].strip()
    addi = d.lookup("arith.addi")
    assert addi.attr("overflowFlags").kind == "other"
    assert addi.attr("overflowFlags").default == "::mlir::arith::IntegerOverflowFlags::none"
    assert {"Commutative", "Pure", "NoMemoryEffect", "Elementwise"} <= addi.trait_names
    assert d.lookup("arith.cmpi").attr("predicate").required


@pytest.mark.oracle
def test_oneflow_like_file_loads_with_all_its_ops(llvm_tblgen):
    main = ONEFLOW_LIKE / "OneFlowLikeUserOps.td"
    groups = ("ACTIVATION", "MATH", "NN", "REDUCE", "LOSS", "DATA")
    defines = [f"GET_ONEFLOW_{g}_OP_DEFINITIONS" for g in groups]
    d = load_dialect(main, [ONEFLOW_LIKE], defines)
    doc = _tblgen_json(llvm_tblgen, main, [ONEFLOW_LIKE], defines)
    ops = {k: v for k, v in doc.items()
           if not k.startswith("!") and "OneFlow_BaseOp" in v["!superclasses"]}
    assert len(d) == len(ops) == 53
    for op in d:
        rec = ops[op.record]
        assert [o.name for o in op.operands] == _arg_names(rec["input"])
        assert [r.name for r in op.results] == _arg_names(rec["output"])
        assert [a.name for a in op.attributes] == _arg_names(rec["attrs"])
        assert set(op.hooks) == {k for k, v in rec.items() if k.startswith("has_") and v == 1}


@pytest.mark.oracle
def test_standard_dialect_same_from_llvm_records(llvm_tblgen, monkeypatch):
    """The records of tdflow's front end and llvm-tblgen's give identical op definitions."""
    ours = load_dialect(standard_ops_path())
    monkeypatch.setenv("TDFLOW_DIALECT_LLVM_TBLGEN", "1")
    theirs = load_dialect(standard_ops_path())
    assert len(ours) == len(theirs) == len(ALL_OPS)
    for op in ours:
        other = theirs.lookup(op.name)
        for field in ("operands", "results", "attributes", "traits", "hooks", "summary",
                      "description"):
            assert getattr(op, field) == getattr(other, field), (op.name, field)


def test_duplicate_op_names_are_a_load_error(tmp_path):
    p = write(tmp_path, '''
def TDF_AOp : TDF_Op<"a"> { let input = (ins TDF_Tensor:$x); }
def TDF_BOp : TDF_Op<"a"> { let input = (ins TDF_Tensor:$x); }
''')
    with pytest.raises(TdError, match="op 'tdflow.a' is defined twice: by TDF_AOp") as info:
        load_dialect(p)
    assert info.value.line == 4


def test_oneflow_like_file_without_the_oracle():
    groups = ("ACTIVATION", "MATH", "NN", "REDUCE", "LOSS", "DATA")
    d = load_dialect(ONEFLOW_LIKE / "OneFlowLikeUserOps.td", [ONEFLOW_LIKE],
                     [f"GET_ONEFLOW_{g}_OP_DEFINITIONS" for g in groups])
    assert len(d) == 53 and d.name == "oneflow"
    assert [op.record for op in d if not (op.operands or op.results)] == ["OneFlow_IdentityBufferOp"]
    assert d.lookup("oneflow.conv2d").has_trait("AttrSizedOperandSegments")


def test_oneflow_definitions_paste_unchanged(tmp_path):
    """A definition written exactly as OneFlowUserOps.td writes it loads on tdflow's Base.td."""
    p = write(tmp_path, r'''
def OneFlow_Conv2DOp : OneFlow_BaseOp<"conv2d", [NoSideEffect, AttrSizedOperandSegments, DeclareOpInterfaceMethods<UserOpCompatibleInterface>]> {
  let summary = "OneFlow convolution operation";
  let input = (ins
    OneFlow_Tensor:$in,
    OneFlow_Tensor:$weight,
    Optional<OneFlow_Tensor>:$bias,
    Optional<OneFlow_Tensor>:$_add_to_output
  );
  let output = (outs
    OneFlow_Tensor:$out
  );
  let attrs = (ins
    DefaultValuedAttr<SI32Attr, "0">:$filters,
    SI32ArrayAttr:$padding_before,
    StrAttr:$data_format,
    SI32ArrayAttr:$kernel_size,
    SI32ArrayAttr:$strides,
    SI32ArrayAttr:$dilation_rate,
    DefaultValuedAttr<SI32Attr, "1">:$groups,
    DefaultValuedAttr<StrAttr, "\"\"">:$tuning_cache
  );
  let trait_attrs = (ins
    I32ElementsAttr:$operand_segment_sizes
  );
  let has_check_fn = 1;
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_compute_complexity_fn = 1;
}
''')
    d = load_dialect(p)
    ours = standard_dialect().lookup("tdflow.conv2d")
    op = d.lookup("tdflow.conv2d")
    def shape(defs):
        return [(v.name, v.arity) for v in defs]

    assert shape(op.operands) == shape(ours.operands) and shape(op.results) == shape(ours.results)
    assert op.attributes == ours.attributes and op.hooks == ours.hooks
    assert d.contract_problems() == []  # the standard conv2d hooks serve it


def test_numeric_bool_default_and_anonymous_attr_constraint(tmp_path):
    # C++ converts a number to bool and a whole-valued floating literal to an integer (MLIR compiles
    # DefaultValuedAttr<BoolAttr, "0."> as false and DefaultValuedAttr<SI64Attr, "0."> as 0);
    # an attribute whose constraint is an anonymous record is named by its summary.
    p = write(tmp_path, '''
def TDF_BOp : TDF_Op<"b"> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<BoolAttr, "0.">:$off,
                   DefaultValuedAttr<BoolAttr, "1">:$on,
                   DefaultValuedAttr<SI64Attr, "0.">:$count,
                   Attr<CPred<"true">, "any attribute at all">:$anything);
}
''')
    op = load_dialect(p).lookup("tdflow.b")
    off, on, count, anything = op.attributes
    assert (off.kind, off.default, on.default) == ("bool", False, True)
    assert (count.kind, count.default) == ("si64", 0)
    assert anything.constraint == "any attribute at all"
