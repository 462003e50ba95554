"""Ops with regions (``"scf.if"(%c) ({ ... }, { ... })``) are refused with a located error: tdflow
functions are one block of region-free operations. The error points at the region's ``(``,
names the op and says which ops do hold regions, from the parser and from ``tdflow verify``."""

from __future__ import annotations

import pytest
from tdflow.dialect.ir.diagnostics import DiagnosticError
from tdflow.dialect.ir.parser import parse_module

from tdflow.cli import main

REFUSED = ("operations with regions are not supported (tdflow functions are one block of "
           "region-free operations; only 'func.func', 'oneflow.job' and 'builtin.module' hold "
           "regions)")

SCF_IF = '''\
func.func @f(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "scf.if"(%c) ({
    "scf.yield"(%x) : (tensor<4xf32>) -> ()
  }, {
    "scf.yield"(%x) : (tensor<4xf32>) -> ()
  }) : (tensor<i1>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
'''


@pytest.mark.parametrize("text, op, line, col", [
    (SCF_IF, "scf.if", 2, 21),
    # properties before the region, attributes after it, an entry block label inside
    ('func.func @f(%c: tensor<i1>) {\n  "scf.if"(%c) <{a = 1}> ({\n  ^bb0:\n  }) {b = 2} : '
     '(tensor<i1>) -> ()\n  return\n}\n', "scf.if", 2, 26),
    # in a OneFlow job, after ops the fast path took
    ('oneflow.job @j(%x: tensor<f32>) -> tensor<f32> {\n  %0 = "t.a"(%x) : (tensor<f32>) -> '
     'tensor<f32>\n  %1 = "scf.execute_region"() ({\n    "scf.yield"(%0) : (tensor<f32>) -> ()\n'
     '  }) : () -> tensor<f32>\n  oneflow.return %1 : tensor<f32>\n}\n',
     "scf.execute_region", 3, 31),
])
def test_an_op_with_regions_is_a_located_error(text, op, line, col):
    with pytest.raises(DiagnosticError) as ei:
        parse_module(text, "r.mlir")
    (d,) = ei.value.diagnostics
    assert (d.message, d.loc.file, d.loc.line, d.loc.col) == (f"'{op}': {REFUSED}", "r.mlir",
                                                                line, col)


def test_tdflow_verify_reports_it_with_the_source_line(tmp_path, capsys, monkeypatch):
    (tmp_path / "r.mlir").write_text(SCF_IF)
    monkeypatch.chdir(tmp_path)
    try:
        status = main(["verify", "r.mlir"])
    except SystemExit as exc:
        status = exc.code
    err = capsys.readouterr().err
    assert status == 1 and "Traceback" not in err
    assert f"r.mlir:2:21: error: 'scf.if': {REFUSED}" in " ".join(err.split())
    assert '%0 = "scf.if"(%c) ({' in err
