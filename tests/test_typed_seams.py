"""Seams are typed (issue 19 item 6): a parameter that holds a module, an operation, an op
definition, a dialect or a function says so instead of ``Any``, and every annotation names
something that exists.

The types come from ``if TYPE_CHECKING:`` imports where a runtime import would close an import
cycle (``tests/test_structure.py`` counts those imports too, so they follow the layer order:
lowering never imports the runtime, the dialect neither). Resolving the annotations here, with
the module's ``TYPE_CHECKING`` imports run, catches a misspelt or moved name."""

from __future__ import annotations

import ast
import importlib
import inspect
import typing
from pathlib import Path

import pytest
from tdflow_modules import module_names

#: Parameter names that stand for IR and dialect objects at the seams.
SEAM_NAMES = {"module", "op", "opdef", "dialect", "ctx", "context", "func", "ops"}

#: Where ``Any`` stays, and why.
UNTYPED = {
    # a CUDA driver module (a loaded cubin), not the IR's Module
    ("tdflow.runtime.backends.cuda", "_Loaded.__init__", "module"),
    ("tdflow.runtime.backends.gpu", "GpuBackend.launch_one", "module"),
    # the per-Context registry's file (issue 19 item 5), left to that change
    ("tdflow.runtime.kernels.registry", "register_generated", "opdef"),
}


def _functions(tree: ast.AST):
    """``(qualified name, node)`` of every function and method, nested ones included."""
    def walk(node: ast.AST, prefix: str):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield prefix + child.name, child
                yield from walk(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, prefix + child.name + ".")
    yield from walk(tree, "")


def _source(name: str) -> Path:
    return Path(importlib.import_module(name).__file__)


MODULES = module_names()


def test_no_seam_parameter_is_typed_any():
    untyped = []
    for name in MODULES:
        for qual, fn in _functions(ast.parse(_source(name).read_text())):
            for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
                if (a.arg in SEAM_NAMES and a.annotation is not None
                        and ast.unparse(a.annotation) in ("Any", "Any | None")
                        and (name, qual, a.arg) not in UNTYPED):
                    untyped.append(f"{name}.{qual}({a.arg}: {ast.unparse(a.annotation)})")
    assert not untyped, "\n".join(untyped)


def _type_checking_names(mod) -> dict:
    """The names the module imports under ``if TYPE_CHECKING:``, imported now, and the type
    aliases it writes there as strings."""
    tree = ast.parse(inspect.getsource(mod))
    names: dict = {}
    for node in tree.body:
        if not (isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"):
            continue
        for imp in node.body:
            if isinstance(imp, ast.Import):
                for a in imp.names:
                    names[a.asname or a.name.partition(".")[0]] = importlib.import_module(
                        a.name if a.asname else a.name.partition(".")[0])
            elif isinstance(imp, ast.ImportFrom):
                base = importlib.import_module(
                    "." * imp.level + (imp.module or ""), mod.__package__)
                for a in imp.names:
                    # a name the other module defines for type checkers only (an alias)
                    names[a.asname or a.name] = getattr(base, a.name, None) or \
                        _type_checking_names(base)[a.name]
            elif isinstance(imp, ast.AnnAssign) and isinstance(imp.target, ast.Name):
                names[imp.target.id] = typing.ForwardRef(imp.value.value)  # a string alias
    return names


TYPED = [n for n in MODULES if "if TYPE_CHECKING:" in _source(n).read_text()]


@pytest.mark.parametrize("name", TYPED)
def test_annotations_name_what_exists(name):
    mod = importlib.import_module(name)
    namespace = {**vars(mod), **_type_checking_names(mod)}
    checked = 0
    for qual, _ in _functions(ast.parse(inspect.getsource(mod))):
        obj = mod
        for part in qual.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                break
        obj = inspect.unwrap(obj) if callable(obj) else None
        if obj is None or getattr(obj, "__module__", None) != name:
            continue  # nested, or replaced by a decorator
        typing.get_type_hints(obj, globalns=namespace)
        checked += 1
    assert checked or not any(True for _ in _functions(ast.parse(inspect.getsource(mod))))
