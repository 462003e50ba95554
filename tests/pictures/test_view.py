"""``tdflow view``: the graph model, the page's escaping, the CLI, and the page in Chromium."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from pictures_browser import console_errors, png_ink, run_page
from tdflow.dialect.context import standard_context
from tdflow.dialect.ir import parse_module

import tdflow
from tdflow.cli import main
from tdflow.pictures.graph import program_graph
from tdflow.pictures.layout import LayoutError
from tdflow.pictures.page import check_svg
from tdflow.pictures.view import view_html

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="Graphviz's dot not installed (apt-get install graphviz)")


def _program_counts(module) -> tuple[int, int]:
    """(ops that are not returns, operand uses incl. returns') as the program text has them."""
    ops = uses = 0
    for f in module.funcs:
        for op in f.body:
            ops += op is not f.body.terminator
            uses += len(op.operands)
    return ops, uses


@pytest.mark.parametrize("name", ["mlp.mlir", "cnn.mlir", "gpt.mlir", "resnet.mlir"])
def test_graph_has_a_node_per_op_and_an_edge_per_use(name):
    path = EXAMPLES / name
    module = parse_module(path.read_text(), str(path))
    g = program_graph(module, standard_context())
    ops, uses = _program_counts(module)
    assert sum(n.kind == "op" for n in g.nodes) == ops
    assert len(g.edges) == uses
    assert sum(n.kind == "arg" for n in g.nodes) == sum(len(f.args) for f in module.funcs)
    ids = {n.id: n for n in g.nodes}
    for e in g.edges:  # every edge ends at an op or return, labelled with its value's type
        assert ids[e.dst].kind in ("op", "return") and re.fullmatch(r"[0-9x?*]*[a-z0-9]+", e.label)
    docs = [n.info["doc"] for n in g.nodes if n.kind == "op" and "doc" in n.info]
    assert docs and all(d["summary"] for d in docs)


def test_shared_argument_is_drawn_beside_each_use():
    text = ("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n" + "".join(
        f'  %{i} = "tdflow.broadcast_add"(%x, {"%x" if i == 0 else f"%{i - 1}"}) : '
        f"(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n" for i in range(5))
        + "  return %4 : tensor<4xf32>\n}\n")
    g = program_graph(parse_module(text, "f.mlir"))
    refs = [n for n in g.nodes if n.kind == "ref"]
    # %x has 6 uses (op 0 uses it twice); the first is drawn from its own node
    assert len(refs) == 5 and all(n.label == ["%x"] and n.info["ref"] == "n0" for n in refs)
    assert len(g.edges) == 11


def test_svg_check_refuses_active_content():
    with pytest.raises(LayoutError, match="script"):
        check_svg('<svg><script>alert(1)</script></svg>')
    with pytest.raises(LayoutError):
        check_svg('<svg><g onclick="alert(1)"></g></svg>')


def test_view_without_dot_is_one_line(monkeypatch, capsys):
    monkeypatch.setenv("TDFLOW_DOT", "no-such-dot-program")
    assert main(["view", str(EXAMPLES / "mlp.mlir"), "-o", "/dev/null"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "needs Graphviz's dot" in err and "apt-get install graphviz" in err


@needs_dot
def test_cli_writes_a_lowered_page(tmp_path, capsys):
    out = tmp_path / "cnn.html"
    assert main(["view", str(EXAMPLES / "cnn.mlir"), "--lowered", "-o", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    page = out.read_text()
    assert "http://" not in page.replace("http://www.w3.org", "")  # nothing to fetch
    assert '"kernel":"cpu.conv2d"' in page and "launch 0: cpu.conv2d" in page


HOSTILE_TD = """include "tdflow/Base.td"
def Evil_Dialect : Dialect { let name = "evil"; }
def Evil_Op : TDF_Op<"op", [NoMemoryEffect, SameOperandsAndResultShape,
                             SameOperandsAndResultType]> {
  let opDialect = Evil_Dialect;
  let summary = "<img src=x onerror='window.__pwned=1'>";
  let description = [{ </script><script>window.__pwned = 2</script> }];
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\\"a\\"">:$note);
}
"""
HOSTILE_MLIR = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "evil.op"(%x) {note = "</script><script>window.__pwned=3</script><b onmouseover=x>"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""

# The test's script: counts, a search, a click, and whether anything from the program ran.
HARNESS = """
var n = document.querySelectorAll("#graph g.node").length;
var ops = document.querySelectorAll("#graph g.node.op").length;
var e = document.querySelectorAll("#graph g.edge").length;
var input = document.getElementById("search");
input.value = SEARCH; input.dispatchEvent(new Event("input"));
var found = document.querySelectorAll("#graph g.match").length;
var count = document.getElementById("count").textContent;
var target = document.querySelector("#graph g.node.op[id='" + CLICK + "'] text");
target.dispatchEvent(new MouseEvent("click", {bubbles: true}));
report({nodes: n, ops: ops, edges: e, found: found, count: count,
        panel: document.getElementById("panel").textContent,
        ready: document.body.getAttribute("data-ready"), pwned: window.__pwned || null,
        injected: document.querySelectorAll("img, b, #graph script").length});
"""


def _harness(search: str, click: str) -> str:
    return HARNESS.replace("SEARCH", repr(search)).replace("CLICK", repr(click))


@needs_dot
def test_gpt_page_in_chromium(tmp_path):
    path = EXAMPLES / "gpt.mlir"
    module = parse_module(path.read_text(), str(path))
    context = standard_context()
    graph = program_graph(module, context)
    page = view_html(module, context, title="gpt.mlir")
    click = next(n for n in graph.nodes if n.info.get("title") == "tdflow.layer_norm")
    png = tmp_path / "gpt.png"
    report, log = run_page(page, _harness("%h0_attn_wq", click.id), tmp_path, screenshot=png)
    ops, uses = _program_counts(module)
    assert report["ready"] == "1" and report["errors"] == [] and console_errors(log) == []
    assert report["ops"] == ops and report["edges"] == uses
    assert report["nodes"] == len(graph.nodes)
    # the argument node and the edge of its one use
    assert report["found"] == 2 and report["count"] == "2 matches"
    panel = report["panel"]
    assert "tdflow.layer_norm" in panel and "epsilon" in panel  # its attributes
    assert "documentation (.td)" in panel and "layer normalization" in panel
    assert png_ink(png) > 0.02  # the screenshot shows a drawing, not a blank page


@needs_dot
def test_hostile_program_and_library_run_nothing(tmp_path):
    td = tmp_path / "evil.td"
    td.write_text(HOSTILE_TD)
    context = tdflow.load_ops(td)
    module = parse_module(HOSTILE_MLIR, "evil<script>.mlir")
    page = view_html(module, context, title="evil<script>.mlir")
    assert "<script>window" not in page and "<img" not in page
    node = next(n for n in program_graph(module, context).nodes if n.kind == "op")
    report, log = run_page(page, _harness("script", node.id), tmp_path)
    assert report["pwned"] is None and report["injected"] == 0
    assert report["errors"] == [] and console_errors(log) == []
    # the hostile text is shown, as text
    assert "window.__pwned=3" in report["panel"] and "onerror" in report["panel"]


@needs_dot
def test_onnx_model_page_has_onnx_ops_and_node_names(tmp_path, capsys):
    onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Relu", ["x"], ["h"], name="act1"),
             helper.make_node("Add", ["h", "x"], ["y"], name="residual")]
    graph = helper.make_graph(nodes, "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    model = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    out = tmp_path / "m.html"
    assert main(["view", str(model), "-o", str(out)]) == 0
    page = out.read_text()
    assert page.count('class="node op"') == 2 and page.count('class="edge"') == 4
    assert "onnx.Relu" in page and "act1" in page and "residual" in page  # node names as locs
    out_low = tmp_path / "low.html"
    assert main(["view", str(model), "--lowered", "-o", str(out_low)]) == 0
    assert "fused: relu → broadcast_add" in out_low.read_text()


def test_lowered_cudasim_view_carries_each_kernels_cuda_source():
    from tdflow.pictures.view import lowered_view

    path = EXAMPLES / "mlp.mlir"
    module, plans, codes = lowered_view(parse_module(path.read_text(), str(path)),
                                        standard_context(), "cudasim")
    g = program_graph(module, standard_context(), plans, codes)
    kernels = [n.info["kernel"] for n in g.nodes if "kernel" in n.info]
    assert len(kernels) == len(plans["mlp"].launches)
    assert all("__global__" in k["code"] for k in kernels)
    assert [k["launch"] for k in kernels] == list(range(len(kernels)))
