"""The committed onnx dialect is what the generator makes from the installed onnx's schemas,
and it says what ONNX's schemas say (optional and variadic values, attribute defaults, type
constraints), checked through the dialect tdflow loads from it."""

from __future__ import annotations

import subprocess
import sys

import onnx
import pytest
from tdflow.dialect.ir import verify_module
from tdflow.dialect.ir.parser import parse_module

from tdflow.onnx import gen_td
from tdflow.onnx.importer import onnx_context


def test_committed_onnx_td_is_current():
    assert f"schemas of onnx {onnx.__version__}" in gen_td.DEFAULT_OUTPUT.read_text()[:400], \
        "onnx.td was generated from another onnx version: run python -m tdflow.onnx.gen_td"
    assert gen_td.generate() == gen_td.DEFAULT_OUTPUT.read_text()


def test_check_flag_reports_a_stale_file(tmp_path):
    stale = tmp_path / "onnx.td"
    stale.write_text("// old\n")
    cmd = [sys.executable, "-m", "tdflow.onnx.gen_td", "--check", "-o", str(stale)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 1 and "not current" in proc.stderr
    gen = subprocess.run(cmd[:3] + ["-o", str(stale)], capture_output=True, text=True)
    assert gen.returncode == 0
    assert subprocess.run(cmd, capture_output=True, text=True).returncode == 0


def test_every_default_domain_schema_version_is_an_op():
    ctx = onnx_context()
    schemas = [s for s in onnx.defs.get_all_schemas_with_history() if s.domain == ""]
    for s in schemas:
        newest = onnx.defs.get_schema(s.name, "").since_version
        name = s.name if s.since_version == newest else f"{s.name}V{s.since_version}"
        op = ctx.lookup(f"onnx.{name}")
        assert op is not None, name
        assert len(op.operands) == len(s.inputs) and len(op.results) == len(s.outputs), name
        assert {a.name for a in op.attributes} == set(s.attributes), name


@pytest.mark.parametrize("op, operand, arity", [
    ("onnx.Conv", "B", "optional"), ("onnx.Concat", "inputs", "variadic"),
    ("onnx.Conv", "X", "single"),
])
def test_operand_arity_follows_the_schema(op, operand, arity):
    d = next(o for o in onnx_context().lookup(op).operands if o.name == operand)
    assert {"optional": d.is_optional, "variadic": d.is_variadic, "single": d.is_single}[arity]


def test_attribute_defaults_and_kinds_follow_the_schema():
    conv = onnx_context().lookup("onnx.Conv")
    assert conv.attr("group").default == 1 and conv.attr("group").kind == "si64"
    assert conv.attr("auto_pad").default == "NOTSET"
    assert conv.attr("pads").optional and conv.attr("pads").kind == "si64_array"
    lrn = onnx_context().lookup("onnx.LRN")
    assert lrn.attr("alpha").default == pytest.approx(1e-4) and lrn.attr("size").required
    assert onnx_context().lookup("onnx.BatchNormalizationV1").results[1].name == "mean_out"


def _verify(text: str) -> list[str]:
    return [str(d) for d in verify_module(parse_module(text, "<t>"), onnx_context())]


def test_type_constraints_are_checked():
    ok = """func.func @f(%x: tensor<4xf32>) {
  %0 = "onnx.Sqrt"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
"""
    assert _verify(ok) == []
    bad = ok.replace("f32", "i64")
    diags = _verify(bad)
    assert diags and "f16 or f32 or f64 or bf16" in diags[0], diags


def test_older_versions_keep_their_own_signature():
    ctx = onnx_context()
    old, new = ctx.lookup("onnx.ReduceSumV11"), ctx.lookup("onnx.ReduceSum")
    assert old.attr("axes") is not None and len(old.operands) == 1
    assert new.attr("axes") is None and [o.name for o in new.operands] == ["data", "axes"]
