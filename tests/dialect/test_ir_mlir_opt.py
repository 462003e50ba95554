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
