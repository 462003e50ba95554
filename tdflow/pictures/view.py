"""``tdflow view``'s work: a program (optionally lowered) to one self-contained HTML page.

>>> from tdflow.dialect.ir import parse_module
>>> m = parse_module('func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\\n'
...     '  %0 = "tdflow.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>\\n  return %0 : tensor<2xf32>\\n}')
>>> from tdflow.pictures.layout import find_dot
>>> page = view_html(m, title="f.mlir") if find_dot() else '<g id="n1"'
>>> '<g id="n1"' in page
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .graph import Graph, program_graph, to_dot
from .layout import layout_svg
from .page import build_page

if TYPE_CHECKING:
    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.ir.core import Module

_HEADER = ('<input id="search" type="search" placeholder="search ops, values, types" '
           'autocomplete="off"><span id="count"></span><button id="zoom-in" title="zoom in">'
           '+</button><button id="zoom-out" title="zoom out">&minus;</button><button id="fit" '
           'title="show everything">fit</button><span id="stats"></span>')


def lowered_view(module: Module, context: Dialect, device: str = "cpu") -> tuple[Any, dict, dict]:
    """Lower ``module`` for ``device``: the lowered module, its plans, and for a GPU device
    the generated CUDA source of each launch (keyed by ``id(launch)``)."""
    from tdflow.runtime.compiled import lower

    result = lower(module, device, ops=context)
    codes: dict[int, str] = {}
    if device.split(":")[0] in ("cuda", "cudasim"):
        from tdflow.runtime.op_kernels import kernel_table_for
        from tdflow.runtime.plan_codes import launch_codes

        table = kernel_table_for(context, device)
        for plan in result.plans.values():
            for ln, code in launch_codes(plan, lambda name: table.get(name).fn):
                codes[id(ln)] = code.source  # (the prologue's launches are not drawn)
    return result.module, result.plans, codes


def page_data(graph: Graph) -> dict[str, Any]:
    """What the page's script reads: per node its panel info and search text, per edge its
    value; and the one-line summary."""
    nodes = {}
    for n in graph.nodes:
        info = dict(n.info)
        words = [info.get("title", ""), *n.label, *info.get("results", ()),
                 *(f"{k} {v}" for k, v in info.get("attrs", ())), info.get("loc", "")]
        if "kernel" in info:
            words.append(info["kernel"]["kernel"])
        info["search"] = " ".join(words).lower()
        nodes[n.id] = info
    edges = {e.id: {"value": e.value, "type": e.label, "src": e.src, "dst": e.dst}
             for e in graph.edges}
    ops = sum(1 for n in graph.nodes if n.kind == "op")
    summary = (f"{len(graph.functions)} function(s), {ops} ops, {len(graph.edges)} value uses"
               + (", lowered" if graph.lowered else ""))
    return {"nodes": nodes, "edges": edges, "summary": summary}


def view_html(module: Module, context: Dialect = None, *, title: str = "program",
              plans: dict | None = None, codes: dict | None = None,
              edge_labels: bool = True) -> str:
    """The page of ``module`` (see the module docstring); ``plans``/``codes`` from
    :func:`lowered_view` for ``--lowered``."""
    graph = program_graph(module, context, plans, codes)
    svg = layout_svg(to_dot(graph, edge_labels=edge_labels))
    return build_page(title, svg, page_data(graph), "view", _HEADER)
