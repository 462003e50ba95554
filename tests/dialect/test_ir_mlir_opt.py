"""mlir-opt's output comes back in: what ``mlir-opt-19 --allow-unregistered-dialect`` prints from
our programs (``--mlir-print-debuginfo``, ``--mlir-print-op-generic``) parses to an equal module
whose operations carry the original locations; aliases, dense constants, dialect attributes,
named modules and result attributes round-trip through tdflow's own printer."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from tdflow.dialect.ir.attrs import DenseElementsAttr, OpaqueAttr
from tdflow.dialect.ir.diagnostics import DiagnosticError
from tdflow.dialect.ir.parser import parse_file, parse_module
from tdflow.dialect.ir.printer import print_module
from tdflow.dialect.ir.verifier import verify_module

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.mlir"))
MLIR_OPT = shutil.which("mlir-opt-19") or shutil.which("mlir-opt")


@pytest.mark.skipif(MLIR_OPT is None, reason="mlir-opt-19 is not installed")
@pytest.mark.parametrize("flags", [["--mlir-print-debuginfo"],
                                   ["--mlir-print-debuginfo", "--mlir-print-op-generic"]])
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_mlir_opt_output_parses_back_equal_with_locations(path, flags, tmp_path):
    out = subprocess.run([MLIR_OPT, "--allow-unregistered-dialect", *flags, path.name],
                         cwd=path.parent, capture_output=True, text=True, check=True).stdout
    assert "#loc" in out
    original = parse_file(path)
    back = parse_module(out, str(tmp_path / "out.mlir"))
    assert verify_module(back) == []
    assert back == original
    # The locations are the original program's, taken from the #loc aliases (MLIR places an
    # op at its name, tdflow at the start of the line: the lines agree).
    assert [(op.loc.file, op.loc.line) for op in back.walk()] == \
        [(path.name, op.loc.line) for op in original.walk()]
    assert back.funcs[0].body.arg_locs[0].line == original.funcs[0].body.arg_locs[0].line


PROGRAM = '''\
#map = affine_map<(d0) -> (d0)>
!t = tensor<2xf32>
module @m attributes {tdflow.version = 1 : i64} {
  func.func @f(%x: !t {tdflow.name = "x"}) -> (!t {tdflow.out = unit}) attributes {map = #map} {
    %0 = "t.const"() {value = dense<[1.5, 2.0]> : tensor<2xf32>, sbp = #sbp.parallel<[] -> [#sbp.B, #sbp.S<0>]>} : () -> !t loc(#loc1)
    %1 = "t.add"(%x, %0) {z = dense<0> : tensor<2x3xsi64>} : (!t, !t) -> !t loc(fused[#loc2, "x.mlir":9:9])
    return %1 : !t
  }
}
#loc1 = loc("x.mlir":5:7)
#loc2 = loc("x.mlir"(#loc1))
'''


def test_aliases_dense_dialect_attrs_and_result_attrs_round_trip():
    m = parse_module(PROGRAM, "p.mlir")
    assert verify_module(m) == []
    f = m["f"]
    const, add, _ = f.body.ops
    assert isinstance(const.attributes["value"], DenseElementsAttr)
    assert str(const.attributes["sbp"]) == "#sbp.parallel<[] -> [#sbp.B, #sbp.S<0>]>"
    assert isinstance(f.attributes["map"], OpaqueAttr)
    assert (m.name, f.res_attrs, f.arg_attrs[0]["tdflow.name"].value) == ("m", [{"tdflow.out": m["f"].res_attrs[0]["tdflow.out"]}], "x")
    assert str(const.loc) == "x.mlir:5:7" and str(add.loc) == "x.mlir:5:7"
    for generic in (False, True):
        text = print_module(m, generic=generic)
        assert parse_module(text) == m, text
    if MLIR_OPT is not None:  # what tdflow prints, mlir-opt reads, and its output comes back
        for generic in (False, True):
            out = subprocess.run([MLIR_OPT, "--allow-unregistered-dialect", "--mlir-print-debuginfo"],
                                 input=print_module(m, generic=generic), capture_output=True,
                                 text=True, check=True).stdout
            assert parse_module(out) == m, out


@pytest.mark.parametrize("text, message, line, col", [
    ('func.func @f() {\n  %0 = "scf.x"() ({\n  }) : () -> f32\n}',
     "'scf.x': operations with regions are not supported", 2, 18),
    ('func.func @f() {\n  %0 = "t.a"() {m = #map} : () -> f32\n}', "undefined attribute alias '#map'",
     2, 21),
    ('func.func @f() {\n  return loc(#nowhere)\n}', "undefined location alias '#nowhere'", 2, 10),
    ('func.func @f() {\n  %0 = "t.a"() {v = dense<[1, 2]> : tensor<3xi32>} : () -> f32\n}',
     "dense<...> has shape [2] but its type is tensor<3xi32>", 2, 21),
    ("func.func private @decl(tensor<2xf32>)\n", "function declarations without a body", 1, 25),
])
def test_refused_syntax_is_a_located_error(text, message, line, col):
    with pytest.raises(DiagnosticError) as ei:
        parse_module(text, "e.mlir")
    d = ei.value.diagnostics[0]
    assert message in d.message and (d.loc.line, d.loc.col) == (line, col), (d.message, d.loc)


# -- dense_resource constants and the {-# dialect_resources #-} section mlir-opt prints ---------

RESOURCES = '''\
module {
  func.func @weights() -> (tensor<4xf32>, tensor<2xi64>) {
    %0 = "t.const"() {value = dense_resource<w_0> : tensor<4xf32>} : () -> tensor<4xf32>
    %1 = "t.const"() {value = dense_resource<w_1> : tensor<2xi64>} : () -> tensor<2xi64>
    %2 = "t.const"() {value = dense_resource<w_0> : tensor<4xf32>} : () -> tensor<4xf32>
    return %0, %1 : tensor<4xf32>, tensor<2xi64>
  }
}

{-#
  dialect_resources: {
    builtin: {
      w_0: "0x040000000000803F000000400000404000008040",
      w_1: "0x08000000FFFFFFFFFFFFFFFF0200000000000000"
    }
  }
#-}
'''


def test_dense_resource_blobs_are_kept_decoded_and_printed_back():
    from tdflow.dialect.ir.attrs import DenseResourceAttr

    m = parse_module(RESOURCES, "r.mlir")
    assert verify_module(m) == []
    w0, w1, again = (op.attributes["value"] for op in m["weights"].body.ops[:3])
    assert isinstance(w0, DenseResourceAttr) and w0 == again
    assert (w0.value, w1.value) == ((1.0, 2.0, 3.0, 4.0), (-1, 2))
    assert str(w0.as_dense()) == ("dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, "
                                  "4.000000e+00]> : tensor<4xf32>")
    assert w1.blob == bytes.fromhex("FFFFFFFFFFFFFFFF0200000000000000")
    assert m.resources["w_1"] == "0x08000000FFFFFFFFFFFFFFFF0200000000000000"  # as written
    text = print_module(m)
    assert text.endswith(RESOURCES[RESOURCES.index("\n{-#"):]) and text.count("dialect_resources") == 1
    for generic in (False, True):
        assert parse_module(print_module(m, generic=generic)) == m
    other = parse_module(RESOURCES.replace("0000803F", "00008040", 1), "r.mlir")
    assert other != m  # a blob's data is part of the module


@pytest.mark.skipif(MLIR_OPT is None, reason="mlir-opt-19 is not installed")
@pytest.mark.parametrize("flags", [[], ["--mlir-print-op-generic"], ["--mlir-print-debuginfo"]])
def test_dense_resource_round_trips_through_mlir_opt(flags):
    m = parse_module(RESOURCES, "r.mlir")
    for text in (RESOURCES, print_module(m, generic=True)):
        out = subprocess.run([MLIR_OPT, "--allow-unregistered-dialect", *flags], input=text,
                             capture_output=True, text=True, check=True).stdout
        assert "dialect_resources" in out
        back = parse_module(out, "out.mlir")
        assert back == m and back.resources == m.resources


@pytest.mark.parametrize("old, new, message, line, col", [
    ('w_1: "0x08000000FFFFFFFFFFFFFFFF0200000000000000"', 'w_2: "0x0800000000000000"',
     "dense_resource<w_1>: the file defines no blob 'w_1' (add it to a '{-# dialect_resources: "
     "{ builtin: { w_1: \"0x04000000...\" } } #-}' section at the end of the file)", 4, 31),
    ("0x08000000FFFFFFFFFFFFFFFF0200000000000000", "0x08000000FFFFFFFFFFFFFFFF",
     "dense_resource<w_1> : tensor<2xi64> needs 16 bytes of data, but blob 'w_1' holds 8 (after "
     "its 4-byte alignment)", 4, 31),
    ("0x08000000FFFFFFFFFFFFFFFF0200000000000000", "0x080", "blob 'w_1': a blob holds an even "
     "number of hexadecimal digits after '0x'", 14, 12),
    ("0x08000000FFFFFFFFFFFFFFFF0200000000000000", "0x08", "blob 'w_1': a blob starts with its "
     "4-byte alignment", 14, 12),
    ('w_1: "0x08000000FFFFFFFFFFFFFFFF0200000000000000"', 'w_0: "0x04000000"',
     "resource 'w_0' is defined twice", 14, 7),
    ("    builtin: {", "    oneflow: {", "resources of dialect 'oneflow' are not supported", 12, 5),
    ("  dialect_resources: {", "  external_resources: {",
     "file metadata 'external_resources' is not supported", 11, 3),
    ("dense_resource<w_1> : tensor<2xi64>", "dense_resource<w_1> : tensor<?xi64>",
     "the type of a dense_resource<...> attribute is a static tensor type", 4, 53),
])
def test_dense_resource_errors_are_located(old, new, message, line, col):
    assert old in RESOURCES
    with pytest.raises(DiagnosticError) as ei:
        parse_module(RESOURCES.replace(old, new, 1), "r.mlir")
    d = ei.value.diagnostics[0]
    assert message in d.message and (d.loc.line, d.loc.col) == (line, col), (d.message, d.loc)
