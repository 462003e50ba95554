"""Op libraries at run time: a user's own dialect loaded next to the standard ops, its ops
called eagerly through ``lib.functional`` and compiled in programs mixing dialects."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from tdflow.tdparser.errors import TdError

import tdflow

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "oneflow"

MY_OPS = '''include "tdflow/Base.td"

def Rt_Dialect : Dialect { let name = "rtlib"; }
class Rt_Op<string mnemonic, list<Trait> traits = []> : TDF_Op<mnemonic, traits> {
  let opDialect = Rt_Dialect;
}

def Rt_ScaleShiftOp : Rt_Op<"scale_shift", [NoMemoryEffect]> {
  let summary = "y = x * scale + shift";
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "1.">:$scale, DefaultValuedAttr<F32Attr, "0.">:$shift);
  let has_logical_tensor_desc_infer_fn = 1;
  let has_data_type_infer_fn = 1;
}

// Same shape as the standard relu, no hooks of its own: served by tdflow.relu.
def Rt_ReluOp : Rt_Op<"relu", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
}

// No kernel anywhere.
def Rt_NoKernelOp : Rt_Op<"no_kernel", [NoMemoryEffect, SameOperandsAndResultType]> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
}
'''

MY_HOOKS = '''
import numpy as np
from tdflow.dialect.hooks import infer_data_type, infer_logical_tensor_desc
from tdflow.runtime.kernels.registry import register_kernel


@infer_logical_tensor_desc("rtlib.scale_shift")
def scale_shift_shape(ctx):
    ctx.set_output_shape("y", ctx.input_shape("x"))


@infer_data_type("rtlib.scale_shift")
def scale_shift_dtype(ctx):
    ctx.set_output_dtype("y", ctx.input_dtype("x"))


@register_kernel("rtlib.scale_shift", device="cpu", dtypes=("f32", "f64"), inplace={0: 0})
def scale_shift_cpu(attrs, inputs, outs):
    y = np.multiply(inputs[0], attrs["scale"], out=outs[0])
    return [np.add(y, attrs["shift"], out=y)]
'''

PROGRAM = '''func.func @f(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>) -> tensor<4x2xf32> {
  %0 = "tdflow.matmul"(%x, %w) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %1 = "rtlib.scale_shift"(%0) {scale = 2.0 : f32, shift = 1.0 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %2 = "rtlib.relu"(%1) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %3 = "tdflow.sigmoid"(%2) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %3 : tensor<4x2xf32>
}
'''


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("rtlib")
    (d / "my_ops.td").write_text(MY_OPS)
    (d / "my_hooks.py").write_text(MY_HOOKS)
    (d / "prog.mlir").write_text(PROGRAM)
    return d


@pytest.fixture(scope="module")
def lib(files):
    return tdflow.load_ops(files / "my_ops.td", hooks=[files / "my_hooks.py"])


def _reference(x, w):
    return 1 / (1 + np.exp(-np.maximum((x @ w) * 2 + 1, 0)))


def _inputs():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((4, 3)).astype(np.float32),
            rng.standard_normal((3, 2)).astype(np.float32))


def test_the_library_holds_the_standard_and_the_user_ops(lib):
    assert [op.name for op in lib.user_ops()] == ["rtlib.scale_shift", "rtlib.relu",
                                                 "rtlib.no_kernel"]
    assert "tdflow.matmul" in lib and lib.lookup("rtlib.scale_shift").attr("scale").default == 1.0
    assert lib.served_by == {"rtlib.relu": "tdflow.relu"}
    assert lib.check_contract() is None  # the hooks file registered both declared hooks


def test_eager_calls_through_lib_functional_match_numpy(lib):
    x, w = _inputs()
    F = lib.functional
    y = F.scale_shift(tdflow.tensor(x), scale=3.0, shift=-1.0)
    np.testing.assert_allclose(y.numpy(), x * 3 - 1, rtol=1e-6)
    # the bare name `relu` is the standard function; the user's op is reached qualified
    assert F.relu is tdflow.functional.relu
    np.testing.assert_array_equal(F.rtlib.relu(tdflow.tensor(x)).numpy(), np.maximum(x, 0))
    assert F.rtlib.scale_shift is F.scale_shift
    with pytest.raises(TypeError, match='scale_shift\\(\\): argument "x" must be Tensor'):
        F.scale_shift(3)


def test_a_program_mixing_dialects_compiles_and_matches_numpy(lib, files):
    x, w = _inputs()
    f = tdflow.compile(str(files / "prog.mlir"), ops=lib)
    np.testing.assert_allclose(f(x, w), _reference(x, w), rtol=1e-5)
    plan = f.plan
    kernels = [launch.kernel for launch in plan.launches]
    assert "cpu.rtlib.scale_shift" in kernels
    # rtlib.relu is served by tdflow.relu, formula included: it fuses with the sigmoid
    fused = [launch for launch in plan.launches if launch.op == "tdflow.fused_elementwise"]
    assert len(fused) == 1 and "max(" in str(fused[0].attrs) and "exp(" in str(fused[0].attrs)


def test_without_the_library_the_user_op_is_unknown(files):
    from tdflow.dialect.ir import DiagnosticError

    with pytest.raises(DiagnosticError, match="unknown operation 'rtlib.scale_shift'"):
        tdflow.compile(str(files / "prog.mlir"))


def test_an_op_with_no_kernel_names_it(lib):
    from tdflow.runtime.eager import EagerError

    with pytest.raises(EagerError, match="rtlib.no_kernel"):
        lib.functional.no_kernel(tdflow.tensor([1.0]))


def test_loading_again_is_idempotent(files, lib):
    again = tdflow.load_ops(files / "my_ops.td", hooks=[files / "my_hooks.py"])
    x, _ = _inputs()
    np.testing.assert_allclose(again.functional.scale_shift(tdflow.tensor(x), scale=2.0).numpy(),
                               x * 2, rtol=1e-6)
    from tdflow.runtime.kernels.registry import kernel_table
    from tdflow.runtime.op_kernels import kernel_table_for

    for ctx in (lib, again):  # one kernel per context, however often the hooks were loaded
        assert [k.name for k in kernel_table_for(ctx, "cpu").candidates("rtlib.scale_shift")] \
            == ["cpu.rtlib.scale_shift"]
    # the hooks file's kernel is the contexts', not the process's (issue 19, item 5)
    assert kernel_table("cpu").candidates("rtlib.scale_shift") == []


def test_without_the_standard_ops(files):
    alone = tdflow.load_ops(files / "my_ops.td", hooks=[files / "my_hooks.py"], std=False)
    assert "tdflow.matmul" not in alone and alone.served_by == {}
    with pytest.raises(AttributeError, match="no op or function named 'matmul'"):
        alone.functional.matmul  # noqa: B018
    # without the standard library its `relu` is the user's (and has no hooks or kernel)
    assert alone.functional.relu is alone.functional.rtlib.relu


def test_an_op_defined_twice_names_both(tmp_path, files):
    dup = tmp_path / "dup.td"
    dup.write_text(MY_OPS)
    with pytest.raises(TdError, match=r"op 'rtlib.scale_shift' is defined twice: by "
                                      r"Rt_ScaleShiftOp \(.*my_ops.td:8:5\) and by "
                                      r"Rt_ScaleShiftOp") as info:
        tdflow.load_ops(files / "my_ops.td", dup)
    assert info.value.file.endswith("dup.td") and info.value.line == 8


def test_the_same_mnemonic_in_two_dialects_must_be_qualified(tmp_path, files):
    other = tmp_path / "other.td"
    other.write_text(MY_OPS.replace('"rtlib"', '"otherlib"').replace("Rt_", "Ot_"))
    both = tdflow.load_ops(files / "my_ops.td", other, hooks=[files / "my_hooks.py"])
    with pytest.raises(AttributeError, match="names ops of several dialects; use one of "
                                             "functional.rtlib.scale_shift, "
                                             "functional.otherlib.scale_shift"):
        both.functional.scale_shift  # noqa: B018
    assert both.functional.rtlib.scale_shift is not None


def _oneflow_defines() -> list[str]:
    text = (CORPUS / "OneFlow" / "OneFlowUserOps.td").read_text()
    return sorted({g for g in re.findall(r"GET_ONEFLOW_\w+_OP_DEFINITIONS", text)
                   if "_BASE_" not in g})


def test_oneflow_ops_are_served_by_the_standard_ops(files):
    from tdflow.tdparser.llvm_tools import find_llvm_tool

    if not CORPUS.is_dir():
        pytest.skip(f"OneFlow corpus not found at {CORPUS}")
    mlir_include = Path("/usr/lib/llvm-19/include")
    if find_llvm_tool("llvm-tblgen") is None or not (mlir_include / "mlir" / "IR").is_dir():
        pytest.skip("MLIR 19's include files (Debian libmlir-19-dev) are not installed")
    lib = tdflow.load_ops(CORPUS / "top.td", files / "my_ops.td",
                          include_dirs=[mlir_include, CORPUS], defines=_oneflow_defines(),
                          hooks=[files / "my_hooks.py"])
    assert lib.served_by["oneflow.relu"] == "tdflow.relu"
    assert lib.served_by["oneflow.matmul"] == "tdflow.matmul"
    assert len([n for n in lib.served_by if n.startswith("oneflow.")]) >= 45
    x, w = _inputs()
    y = lib.functional.oneflow.relu(tdflow.tensor(x))
    np.testing.assert_array_equal(y.numpy(), np.maximum(x, 0))
    # OneFlow's op_conf_attrs are required on its ops, as OneFlow_BaseOp declares them
    prog = PROGRAM.replace('"tdflow.matmul"(%x, %w)', '"oneflow.matmul"(%x, %w) {op_name = '
                           '"mm-0", device_tag = "cpu", device_name = ["@0:0"]}')
    path = files / "of.mlir"
    path.write_text(prog)
    f = tdflow.compile(str(path), ops=lib)
    np.testing.assert_allclose(f(x, w), _reference(x, w), rtol=1e-5)


# ---- formula-only ops: no Python at all -------------------------------------------------------

FORMULA_OPS = '''include "tdflow/Base.td"

def Yzh_Dialect : Dialect { let name = "yzh"; }
class Yzh_Op<string mnemonic, list<Trait> traits = []> : TDF_Op<mnemonic, traits> {
  let opDialect = Yzh_Dialect;
}

def Yzh_LeakyReluYzhOp : Yzh_Op<"leaky_relu_yzh", [NoMemoryEffect, Elementwise]> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "0.">:$alpha);
  let formula = [{ x > 0 ? x : x * alpha }];
}

def Yzh_SoftClipOp : Yzh_Op<"soft_clip", [NoMemoryEffect, Elementwise]> {
  let input = (ins TDF_Tensor:$x, TDF_Tensor:$limit);
  let output = (outs TDF_Tensor:$y);
  let formula = [{ limit * tanh(x / limit) }];
}

def Yzh_IsBigOp : Yzh_Op<"is_big", [NoMemoryEffect, Elementwise]> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "10">:$limit);
  let formula = [{ x > limit }];
}
'''

FORMULA_PROGRAM = '''func.func @f(%x: tensor<64x32xf32>, %w: tensor<32x16xf32>, %l: tensor<16xf32>) -> tensor<64x16xf32> {
  %0 = "tdflow.matmul"(%x, %w) : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  %1 = "yzh.leaky_relu_yzh"(%0) {alpha = 0.1 : f32} : (tensor<64x16xf32>) -> tensor<64x16xf32>
  %2 = "tdflow.sigmoid"(%1) : (tensor<64x16xf32>) -> tensor<64x16xf32>
  %3 = "yzh.soft_clip"(%2, %l) : (tensor<64x16xf32>, tensor<16xf32>) -> tensor<64x16xf32>
  return %3 : tensor<64x16xf32>
}
'''


@pytest.fixture(scope="module")
def formula_lib(tmp_path_factory):
    d = tmp_path_factory.mktemp("yzh")
    (d / "yzh.td").write_text(FORMULA_OPS)
    (d / "prog.mlir").write_text(FORMULA_PROGRAM)
    return d, tdflow.load_ops(d / "yzh.td")


def test_formula_ops_fuse_with_standard_ops_and_match_numpy(formula_lib):
    d, lib = formula_lib
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 32)).astype(np.float32)
    w = rng.standard_normal((32, 16)).astype(np.float32)
    lim = rng.uniform(0.5, 2.0, 16).astype(np.float32)
    f = tdflow.compile(str(d / "prog.mlir"), ops=lib)
    a = x @ w
    a = 1 / (1 + np.exp(-np.where(a > 0, a, a * np.float32(0.1))))
    np.testing.assert_allclose(f(x, w, lim), lim * np.tanh(a / lim), rtol=1e-5, atol=1e-6)
    # the two user ops and the standard sigmoid became one kernel
    fused = [launch for launch in f.plan.launches if launch.op == "tdflow.fused_elementwise"]
    assert [launch.kernel for launch in f.plan.launches] == ["cpu.matmul",
                                                            "cpu.fused_elementwise"]
    # the user's `x > 0 ? x : x * alpha` runs as max(x, x * alpha), one ufunc
    assert "tanh(" in str(fused[0].attrs) and "max(in0, mul(in0, 0.1" in str(fused[0].attrs)


def test_formula_ops_run_eagerly_with_derived_inference(formula_lib):
    _, lib = formula_lib
    F = lib.functional
    x = np.linspace(-3, 3, 12, dtype=np.float64).reshape(3, 4)
    np.testing.assert_allclose(F.leaky_relu_yzh(tdflow.tensor(x), alpha=0.2).numpy(),
                               np.where(x > 0, x, 0.2 * x))
    # shapes broadcast as numpy's do; the dtype follows the formula
    y = F.soft_clip(tdflow.tensor(x), tdflow.tensor(np.array([2.0])))
    assert y.shape == (3, 4) and y.dtype == "f64"
    np.testing.assert_allclose(y.numpy(), 2 * np.tanh(x / 2))
    big = F.is_big(tdflow.tensor(np.array([3, 30, 11], np.int32)))
    assert big.dtype == "i1" and big.numpy().tolist() == [False, True, True]


def test_formula_dtype_admission_is_checked_at_the_call(formula_lib):
    from tdflow.runtime.eager import EagerError

    _, lib = formula_lib
    with pytest.raises(EagerError, match="operand 'x' has element type i32; the formula admits "
                                         "f16|bf16|f32|f64"):
        lib.functional.soft_clip(tdflow.tensor(np.ones(2, np.int32)),
                                 tdflow.tensor(np.ones(2, np.int32)))


def test_formula_shapes_that_do_not_broadcast_name_the_op(formula_lib):
    from tdflow.runtime.eager import EagerError

    _, lib = formula_lib
    with pytest.raises(EagerError, match=r"yzh.soft_clip.*do not broadcast"):
        lib.functional.soft_clip(tdflow.tensor(np.ones((2, 3))), tdflow.tensor(np.ones(4)))


def test_a_formula_error_is_located_inside_the_code_block(tmp_path):
    bad = tmp_path / "bad.td"
    bad.write_text(FORMULA_OPS.replace("x * alpha }", "x * alhpa }"))
    with pytest.raises(TdError) as info:
        tdflow.load_ops(bad)
    e = info.value
    line = bad.read_text().splitlines()[e.line - 1]
    assert line[e.col - 1:].startswith("alhpa") and "did you mean 'alpha'" in e.message


def test_a_formula_needs_the_elementwise_trait(tmp_path):
    bad = tmp_path / "bad.td"
    bad.write_text(FORMULA_OPS.replace('"is_big", [NoMemoryEffect, Elementwise]',
                                       '"is_big", [NoMemoryEffect]'))
    with pytest.raises(TdError, match="has a formula but not the Elementwise trait"):
        tdflow.load_ops(bad)


# ---- signatures in .td --------------------------------------------------------------------------

SIGNED = '''include "tdflow/Base.td"

def Sg_Dialect : Dialect { let name = "sg"; }
def Sg_AffineOp : Op<Sg_Dialect, "affine", [NoMemoryEffect, Elementwise]> {
  let arguments = (ins TDF_Tensor:$x, DefaultValuedAttr<F32Attr, "1.">:$scale,
                       DefaultValuedAttr<F32Attr, "0.">:$shift);
  let results = (outs TDF_Tensor:$y);
  let formula = [{ x * scale + shift }];
  let signature = [{
    Tensor (Tensor x, Float scale, *, Float shift=0.0)
    Tensor (Tensor x) => Affine
  }];
}
'''


def test_signature_fields_dispatch_first_match(tmp_path):
    src = tmp_path / "sg.td"
    src.write_text(SIGNED)
    F = tdflow.load_ops(src).functional
    x = np.array([1.0, -2.0], np.float32)
    np.testing.assert_allclose(F.affine(tdflow.tensor(x), 3.0, shift=1.0).numpy(), x * 3 + 1)
    np.testing.assert_allclose(F.affine(tdflow.tensor(x)).numpy(), x)  # the second signature
    assert [str(s) for s in F.affine.signatures] == [
        "Tensor (Tensor x, Float scale, *, Float shift=0.0)", "Tensor (Tensor x)"]
    with pytest.raises(TypeError, match=r"(?s)affine\(\): received an invalid combination of "
                                        r"arguments.*\*0: Tensor \(Tensor x, Float scale"):
        F.affine(tdflow.tensor(x), 1.0, 2.0)  # shift is keyword-only


@pytest.mark.parametrize("bad, message", [
    ("Tensor (Tensor x, Flaot scale)", "unknown parameter type 'Flaot'"),
    ("Tensor (Tensor x, Float bias)", "parameter 'bias' of .* is not an attribute of sg.affine"),
])
def test_a_bad_signature_is_a_located_load_error(tmp_path, bad, message):
    src = tmp_path / "sg.td"
    src.write_text(SIGNED.replace("Tensor (Tensor x) => Affine", bad))
    with pytest.raises(TdError, match=message) as info:
        tdflow.load_ops(src)
    e = info.value
    line = src.read_text().splitlines()[e.line - 1]
    assert e.file == str(src) and line[e.col - 1:].startswith(bad)


# ---- a formula with several results ------------------------------------------------------------

MULTI = '''include "tdflow/Base.td"
def Mr_Dialect : Dialect { let name = "mr"; }
def Mr_ReluMaskOp : Op<Mr_Dialect, "relu_mask", [NoMemoryEffect, Elementwise]> {
  let arguments = (ins TDF_Tensor:$x, DefaultValuedAttr<F32Attr, "0.">:$threshold);
  let results = (outs TDF_Tensor:$y, TDF_Tensor:$mask);
  let formula = [{
    y = x > threshold ? x : 0;
    mask = x > threshold;   // a predicate: an i1 result
  }];
}
'''

MULTI_PROGRAM = '''func.func @f(%x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xi1>) {
  %y, %m = "mr.relu_mask"(%x) {threshold = 0.5 : f32} : (tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xi1>)
  %z = "tdflow.tanh"(%y) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %z, %m : tensor<3x4xf32>, tensor<3x4xi1>
}
'''


def test_a_formula_with_several_results(tmp_path):
    (tmp_path / "mr.td").write_text(MULTI)
    lib = tdflow.load_ops(tmp_path / "mr.td")
    x = np.linspace(-1, 2, 12, dtype=np.float32).reshape(3, 4)
    y, mask = lib.functional.relu_mask(tdflow.tensor(x), threshold=0.5)
    assert mask.dtype == "i1" and y.dtype == "f32"
    np.testing.assert_array_equal(y.numpy(), np.where(x > 0.5, x, 0))
    np.testing.assert_array_equal(mask.numpy(), x > 0.5)
    (tmp_path / "p.mlir").write_text(MULTI_PROGRAM)
    z, m = tdflow.compile(str(tmp_path / "p.mlir"), ops=lib)(x)
    np.testing.assert_allclose(z, np.tanh(np.where(x > 0.5, x, 0)), rtol=1e-6)
    np.testing.assert_array_equal(m, x > 0.5)


def test_verify_checks_a_formula_ops_declared_result_type(formula_lib):
    from tdflow.dialect.ir import parse_module, verify_module

    _, lib = formula_lib
    text = ('func.func @f(%x: tensor<3xi32>) -> tensor<3xf32> {\n'
            '  %0 = "yzh.is_big"(%x) : (tensor<3xi32>) -> tensor<3xf32>\n'
            '  return %0 : tensor<3xf32>\n}\n')
    (d,) = [d for d in verify_module(parse_module(text, "p.mlir"), lib) if d.severity == "error"]
    assert d.loc.line == 2 and "declared tensor<3xf32> but its element type" in d.message


def test_the_standard_library_loaded_again_is_the_standard_library(tmp_path):
    # `tdflow verify --ops ops.td` in a checkout next to a non-editable install read the same
    # definitions from two paths and failed with "defined twice" by the same record.
    from tdflow.dialect.dialect import standard_ops_path

    copy = tmp_path / "ops.td"
    copy.write_bytes(standard_ops_path().read_bytes())
    ctx = tdflow.load_ops(copy)
    from tdflow.dialect.context import standard_context

    std = standard_context()
    assert ctx["tdflow.relu"] is std["tdflow.relu"] and len(ctx) == len(std)
    # an edited copy is another definition of the same op: still an error, naming both
    # (relu's def is in the math family's file: an edited copy of it, found first)
    from tdflow.dialect.dialect import INCLUDE_DIR

    family = INCLUDE_DIR / "tdflow" / "ops" / "math.td"
    edited = tmp_path / "tdflow" / "ops" / "math.td"
    edited.parent.mkdir(parents=True)
    edited.write_text(family.read_text().replace("rectified linear unit", "changed"))
    with pytest.raises(TdError, match=r"op 'tdflow.relu' is defined twice: by TDF_ReluOp"):
        tdflow.load_ops(copy, include_dirs=[tmp_path])
