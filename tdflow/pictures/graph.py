"""A program as a graph to draw: nodes (function arguments, ops, returns) and edges (one per
use of a value), each with what the viewer's side panel shows.

Data only: :func:`program_graph` reads a :class:`~tdflow.dialect.ir.Module` (and, lowered, the
plans of its functions); :func:`to_dot` writes it for Graphviz; the page is built elsewhere.
An edge is an operand slot, so a program's edge count is the sum of its ops' (and returns')
operand counts; a value used twice gives two edges.

A function argument used by several ops, or a value used by more than :data:`MAX_FAN_OUT`
ops, is drawn again (a small ``ref`` node) beside each use after the first, as Netron draws
weights beside their ops: one node wired to hundreds of ops far apart makes ``dot``'s layout
quadratic (a shared weight in a 1,000-op stack takes minutes) and the picture unreadable.

>>> from tdflow.dialect.ir import parse_module
>>> m = parse_module('func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\\n'
...     '  %0 = "tdflow.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>\\n  return %0 : tensor<2xf32>\\n}')
>>> g = program_graph(m)
>>> [n.kind for n in g.nodes], [e.label for e in g.edges]
(['arg', 'op', 'return'], ['2xf32', '2xf32'])
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.ir.core import Module
    from tdflow.dialect.opdef import OpDef
    from tdflow.lowering.plan import ExecutablePlan, Launch

#: Fill colours of the dialects people meet most; others get one from their name's hash.
DIALECT_COLOURS = {"tdflow": "#cfe3ff", "onnx": "#ffe2c6", "oneflow": "#d9f2d0",
                   "func": "#eeeeee", "arg": "#fff6bf"}
_PALETTE = ("#f3d1f4", "#d0f0ef", "#f9e0d9", "#e4e0fb", "#e8f5c8", "#fbd9e5")


def dialect_colour(dialect: str) -> str:
    """The fill colour of ``dialect``'s nodes (stable across runs).

    >>> dialect_colour("tdflow")
    '#cfe3ff'
    """
    known = DIALECT_COLOURS.get(dialect)
    if known is not None:
        return known
    return _PALETTE[hashlib.sha1(dialect.encode()).digest()[0] % len(_PALETTE)]


#: Graphs with more nodes than this get the faster layout settings of :func:`to_dot`.
BIG_GRAPH = 300

#: Uses of one op result drawn from the op itself; further uses get ``ref`` nodes.
MAX_FAN_OUT = 6


@dataclass
class Node:
    id: str
    kind: str  # "arg", "op", "return", or "ref" (a value drawn again beside a use)
    label: list[str]
    dialect: str
    cluster: str  # the function it belongs to
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class Edge:
    id: str
    src: str
    dst: str
    label: str  # the value's type, compact (8x16xf32)
    value: str  # the value's name (%3, %x)


@dataclass
class Graph:
    nodes: list[Node]
    edges: list[Edge]
    functions: list[str]
    lowered: bool = False


def _compact(t: Any) -> str:
    text = str(t)
    return text[len("tensor<"):-1] if text.startswith("tensor<") and text.endswith(">") else text


def _short(text: str, n: int = 48) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 1] + "…"


def _doc_of(opdef: OpDef | None) -> dict[str, Any] | None:
    if opdef is None:
        return None
    from tdflow.dialect.docgen import op_facts

    facts = op_facts(opdef)
    keep = ("record", "summary", "description", "formula", "gradient", "traits", "location")
    return {k: facts[k] for k in keep if facts[k]}


def _launches_by_op(plan: ExecutablePlan) -> dict[tuple[str, str], list[Any]]:
    """The plan's launches keyed by (op name, location), in order: how a lowered op finds
    the kernel launch made for it."""
    found: dict[tuple[str, str], list[Any]] = {}
    for i, ln in enumerate(plan.launches):
        found.setdefault((ln.op, str(ln.loc)), []).append((i, ln))
    return found


def _kernel_info(index: int, ln: Launch, code: str | None) -> dict[str, Any]:
    info: dict[str, Any] = {
        "launch": index, "kernel": ln.kernel,
        "inputs": ", ".join(f"buf{b}" for b in ln.inputs if b is not None),
        "outputs": ", ".join(f"buf{b}" for b in ln.outputs),
    }
    if ln.in_place:
        info["in_place"] = ", ".join(f"out{o}<-in{i}" for o, i in ln.in_place)
    if code:
        info["code"] = code
    return info


def program_graph(module: Module, context: Dialect | None = None, plans: dict[str, Any] | None = None,
                  codes: dict[int, str] | None = None) -> Graph:
    """The graph of every function of ``module``; ``context`` gives op docs, ``plans`` (name ->
    ExecutablePlan, for a lowered module) each op's kernel launch; ``codes`` maps ``id(launch)``
    to its generated source. See the module docstring."""
    from tdflow.dialect.ir.printer import value_names

    ops_of = getattr(context, "ops", {}) if context is not None else {}
    nodes: list[Node] = []
    edges: list[Edge] = []
    functions = []
    for func in module.funcs:
        functions.append(func.name)
        names = value_names(func)
        producer: dict[Any, str] = {}
        for a in func.args:
            nid = f"n{len(nodes)}"
            producer[a] = nid
            nodes.append(Node(nid, "arg", [names[a], _compact(a.type)], "arg", func.name,
                              {"title": f"argument {names[a]} of @{func.name}",
                               "type": str(a.type), "loc": str(a.loc)}))
        launches = _launches_by_op(plans[func.name]) if plans and func.name in plans else {}
        wired: dict[Any, int] = {}  # value -> uses drawn from its own node so far
        for op in func.body:
            nid = f"n{len(nodes)}"
            is_return = op.name in ("func.return", "return", "oneflow.return")
            dialect = op.name.split(".", 1)[0] if "." in op.name else "func"
            opdef = ops_of.get(op.name)
            results = [names[r] for r in op.results]
            label = [op.name if is_return else op.name.split(".", 1)[-1]]
            if results:
                label[0] = f"{', '.join(results)} = {label[0]}"
            if opdef is not None and opdef.summary:
                label.append(_short(opdef.summary))
            info: dict[str, Any] = {
                "title": op.name, "loc": str(op.loc),
                "operands": [f"{names.get(v, '%?')}: {v.type}" for v in op.operands],
                "results": [f"{names[r]}: {r.type}" for r in op.results],
                "attrs": [[k, str(v)] for k, v in op.attributes.items()],
            }
            doc = _doc_of(opdef)
            if doc:
                info["doc"] = doc
            fused = op.attributes.get("ops")
            if fused is not None and op.name.endswith("fused_elementwise"):
                group = [str(getattr(x, "value", x)).strip('"') for x in getattr(fused, "value", ())]
                if group:
                    info["fused"] = group
                    label.append("fused: " + " → ".join(g.split(".", 1)[-1] for g in group))
            queue = launches.get((op.name, str(op.loc)))
            if queue:
                index, ln = queue.pop(0)
                info["kernel"] = _kernel_info(index, ln, (codes or {}).get(id(ln)))
                label.append(f"launch {index}: {ln.kernel}")
            nodes.append(Node(nid, "return" if is_return else "op", label, dialect, func.name,
                              info))
            for v in op.operands:
                src = producer.get(v)
                if src is None:
                    continue  # an undefined value (the verifier reports it)
                drawn = wired.get(v, 0)
                wired[v] = drawn + 1
                limit = 1 if v.is_block_arg else MAX_FAN_OUT
                if drawn >= limit and len(v.users) > 1:  # see the module docstring
                    owner = nodes[int(src[1:])]
                    src = f"n{len(nodes)}"
                    nodes.append(Node(src, "ref", [names.get(v, "%?")], owner.dialect,
                                      func.name, {**owner.info, "title": owner.info["title"]
                                                  + " (drawn again beside this use)",
                                                  "ref": owner.id}))
                edges.append(Edge(f"e{len(edges)}", src, nid, _compact(v.type),
                                  names.get(v, "%?")))
            for r in op.results:
                producer[r] = nid
    return Graph(nodes, edges, functions, lowered=plans is not None)


def _dot_string(text: str) -> str:
    """A DOT quoted string: backslashes and quotes escaped, newlines as DOT's ``\\n``."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def to_dot(graph: Graph, edge_labels: bool = True) -> str:
    """The graph in Graphviz's DOT language, top to bottom, one cluster per function.

    Node and edge ``id``s become the SVG elements' ids, which the page's script looks up.
    """
    big = len(graph.nodes) > BIG_GRAPH
    # A big graph trades a little layout quality for time (1,000 ops: 9 s -> under 2 s):
    # network simplex stops after one pass, and edge labels become xlabels, placed after
    # the layout instead of as nodes of their own that double the ranks.
    tuning = ", nslimit=1, nslimit1=1, forcelabels=true" if big else ""
    label_key = "xlabel" if big else "label"
    out = ["digraph program {", '  graph [rankdir=TB, nodesep=0.25, ranksep=0.35, '
           f'fontname="Helvetica", fontsize=11{tuning}];',
           '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10, '
           'margin="0.12,0.04", height=0.3, penwidth=0.8];',
           '  edge [fontname="Helvetica", fontsize=8, arrowsize=0.6, color="#555555", '
           'fontcolor="#555555"];']
    by_func: dict[str, list[Node]] = {}
    for n in graph.nodes:
        by_func.setdefault(n.cluster, []).append(n)
    for i, fname in enumerate(graph.functions):
        out.append(f"  subgraph cluster_{i} {{")
        out.append(f"    label={_dot_string('@' + fname)}; style=dashed; color=\"#999999\";")
        for n in by_func.get(fname, []):
            label = "\\n".join(_dot_string(line)[1:-1] for line in n.label)
            shape = {"arg": "ellipse", "return": "octagon", "ref": "note"}.get(n.kind, "box")
            extra = ', style="dashed,filled", fontsize=8, height=0.2' if n.kind == "ref" else ""
            out.append(f'    {n.id} [id="{n.id}", class="{n.kind}", label="{label}", '
                       f'shape={shape}, fillcolor="{dialect_colour(n.dialect)}"{extra}];')
        out.append("  }")
    for e in graph.edges:
        label = f", {label_key}={_dot_string(e.label)}" if edge_labels else ""
        out.append(f'  {e.src} -> {e.dst} [id="{e.id}"{label}];')
    out.append("}")
    return "\n".join(out) + "\n"
