"""The shape of the code: no import cycles, no private names across modules, no huge modules.

Every import statement of every tdflow module counts, function-level and ``TYPE_CHECKING`` ones
included, so a cycle cannot hide inside a function. ``from pkg import mod`` is an edge to the
module ``pkg.mod``; ``from pkg import name`` an edge to ``pkg``. A failure names the modules of
the cycle (or the private name and both modules) so the fix is to move the shared piece down.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

from tdflow_modules import module_names

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 600


def _modules() -> dict[str, Path]:
    """Dotted name -> source file of every module of the installed packages."""
    mods: dict[str, Path] = {}
    for name in module_names():
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin, name
        mods[name] = Path(spec.origin)
    return mods


MODULES = _modules()


def _target(importer: str, path: Path, node: ast.ImportFrom) -> str | None:
    if not node.level:
        return node.module
    base = importer.split(".")
    if path.stem != "__init__":
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _known(name: str) -> str | None:
    """The tdflow module ``name`` is or lies in (``None``: not tdflow's)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _graph() -> tuple[dict[str, set[str]], list[tuple[str, str, str]]]:
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    private: list[tuple[str, str, str]] = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    t = _known(alias.name)
                    if t and t != name:
                        edges[name].add(t)
            elif isinstance(node, ast.ImportFrom):
                target = _target(name, path, node)
                if not target:
                    continue
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    if full in MODULES:
                        if full != name:
                            edges[name].add(full)
                        continue
                    t = _known(target)
                    if t and t != name:
                        edges[name].add(t)
                        if alias.name.startswith("_") and not alias.name.startswith("__"):
                            private.append((name, t, alias.name))
    return edges, private


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return found


def test_the_module_map_covers_the_packages():
    assert {"tdflow.core.errors", "tdflow.tdparser.evaluator", "tdflow.dialect.ir.parser",
            "tdflow.lowering.pass_manager", "tdflow.runtime.engine.threaded",
            "tdflow.runtime.kernels.softmax", "tdflow.lowering.cuda.softmax"} <= set(MODULES)


def test_no_import_cycles():
    edges, _ = _graph()
    cycles = _cycles(edges)
    assert not cycles, "import cycles (move the shared piece into a module below both):\n" + \
        "\n".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_private_name_is_imported_across_modules():
    _, private = _graph()
    assert not private, "\n".join(f"{m} imports {n} from {t}" for m, t, n in private)


def test_no_module_is_over_600_lines():
    long = {name: n for name, path in MODULES.items()
            if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by concern): {long}"


def test_the_layers_import_downwards():
    """core imports nothing of tdflow's; the front end only core; the lowering never the
    runtime (the runtime hands it a kernel table)."""
    edges, _ = _graph()
    below = {"tdflow.core": set(), "tdflow.tdparser": {"tdflow.core"},
             "tdflow.lowering": {"tdflow.core", "tdflow.tdparser", "tdflow.dialect",
                                 "tdflow.lowering"}}
    wrong = []
    for name, targets in edges.items():
        for layer, allowed in below.items():
            if name == layer or name.startswith(layer + "."):
                for t in targets:
                    if t.startswith("tdflow.") and t != "tdflow" and \
                            not any(t == a or t.startswith(a + ".") for a in allowed | {layer}):
                        wrong.append(f"{name} imports {t}")
    assert not wrong, "\n".join(sorted(wrong))
