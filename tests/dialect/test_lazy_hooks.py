"""The standard ops' hooks are imported family by family, when an op of the family is first
looked up (issue 23, start-up): the registry must answer exactly as if every family module had
been imported up front."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest
from tdflow.dialect.hooks.registry import HookRegistry


def _run(code: str) -> list[str]:
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.strip().splitlines()


# the family hook modules a subprocess has imported
FAMILIES = ("sorted(m.rsplit('.', 1)[1] for m in sys.modules "
            "if m.startswith('tdflow.dialect.hooks.') and m.rsplit('.', 1)[1] in "
            "__import__('tdflow.dialect.hooks.standard', fromlist=['x']).FAMILIES)")

ALL_HOOKS = ("sorted((op, kind, f'{fn.__module__}.{fn.__qualname__}') "
             "for (op, kind), fn in HOOKS.items())")


def test_the_standard_context_imports_no_family_until_an_op_is_looked_up():
    out = _run(f"""
import sys
from tdflow.dialect.context import standard_context
from tdflow.dialect.hooks.registry import HOOKS
ctx = standard_context()
print({FAMILIES})
print(sorted(ctx.hooks_of("tdflow.matmul")))
print({FAMILIES})
print(ctx.hooks_of("tdflow.relu"), {FAMILIES})   # math: a formula op, no module
""")
    assert out[0] == "[]"
    assert "infer_logical_tensor_desc" in out[1]
    assert out[2] == "['linalg']"
    assert out[3] == "{} ['linalg']"


def test_lazily_loaded_hooks_are_the_eagerly_registered_ones():
    lazy = _run(f"""
import sys
from tdflow.dialect.context import standard_context
from tdflow.dialect.hooks.registry import HOOKS
ctx = standard_context()
per_op = sorted((op.name, kind, f"{{fn.__module__}}.{{fn.__qualname__}}")
                for op in ctx for kind, fn in ctx.hooks_of(op.name).items())
print(per_op)
print({ALL_HOOKS})
""")
    eager = _run(f"""
from tdflow.dialect.hooks.standard import register_all
from tdflow.dialect.hooks.registry import HOOKS
register_all()
from tdflow.dialect.context import standard_context
standard_context()
print({ALL_HOOKS})
""")
    assert len(eager) == 1 and eager[0].count("tdflow.") > 300
    assert lazy[0] == lazy[1] == eager[0]


@pytest.fixture
def deferred(tmp_path, monkeypatch):
    """A registry deferring ``lazy.a`` and ``lazy.b`` to a module that registers both into it."""
    reg = HookRegistry()
    holder = types.ModuleType("lazy_holder")
    monkeypatch.setitem(sys.modules, "lazy_holder", holder)
    holder.reg, holder.imports = reg, 0
    (tmp_path / "lazy_family.py").write_text(
        "import lazy_holder\n"
        "lazy_holder.imports += 1\n"
        "def shape(ctx): pass\n"
        "lazy_holder.reg.register('lazy.a', 'infer_logical_tensor_desc', shape)\n"
        "lazy_holder.reg.register('lazy.b', 'infer_logical_tensor_desc', shape)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "lazy_family", raising=False)
    reg.defer({"lazy.a": "lazy_family", "lazy.b": "lazy_family"})
    yield reg, holder
    sys.modules.pop("lazy_family", None)


def test_a_deferred_module_is_imported_once_at_the_first_look_up(deferred):
    reg, holder = deferred
    assert holder.imports == 0 and "lazy_family" not in sys.modules
    assert reg.get("lazy.b", "infer_logical_tensor_desc").__name__ == "shape"
    assert holder.imports == 1
    assert sorted(reg.for_op("lazy.a")) == ["infer_logical_tensor_desc"]
    assert ("lazy.a", "infer_logical_tensor_desc") in reg and len(reg) == 2
    assert holder.imports == 1


def test_registering_over_a_deferred_op_still_finds_the_clash(deferred):
    reg, holder = deferred
    with pytest.raises(ValueError, match="already has a infer_logical_tensor_desc hook"):
        reg.register("lazy.a", "infer_logical_tensor_desc", len)
    assert holder.imports == 1


def test_a_module_that_fails_to_import_fails_every_look_up(deferred, tmp_path):
    reg, _ = deferred
    (tmp_path / "lazy_family.py").write_text("raise RuntimeError('broken hooks module')\n")
    for _ in range(2):  # never an op that silently has no hooks
        with pytest.raises(RuntimeError, match="broken hooks module"):
            reg.for_op("lazy.a")
        sys.modules.pop("lazy_family", None)


def test_which_ops_of_a_library_defer_to_a_family():
    from tdflow.dialect.context import standard_context
    from tdflow.dialect.hooks.standard import family_modules
    from tdflow.dialect.opdef import SourceLocation

    std = standard_context()
    modules = family_modules(std)
    assert modules["tdflow.conv2d"] == "tdflow.dialect.hooks.conv"
    assert "tdflow.exp" not in modules  # math: formula ops, no module
    elsewhere = SourceLocation("my_ops.td", 1, 1)
    mine = types.SimpleNamespace(name="my.twice", location=elsewhere)  # what it reads of OpDef
    assert family_modules([std["tdflow.matmul"], mine]) == {
        "tdflow.matmul": "tdflow.dialect.hooks.linalg"}
    # a tdflow op defined elsewhere may reuse any standard op's hooks: import them all
    mine = types.SimpleNamespace(name="tdflow.twice", location=elsewhere)
    assert family_modules([std["tdflow.matmul"], mine]) is None


def test_threads_looking_up_while_the_module_imports_all_see_its_hooks(deferred, tmp_path):
    import threading

    reg, holder = deferred
    source = (tmp_path / "lazy_family.py").read_text()
    # the import waits until every thread is looking up: the others must wait for it
    (tmp_path / "lazy_family.py").write_text(
        "import lazy_holder\nlazy_holder.started.set()\nlazy_holder.go.wait(10)\n" + source)
    holder.started, holder.go = threading.Event(), threading.Event()
    seen: list = []
    threads = [threading.Thread(target=lambda: seen.append(sorted(reg.for_op("lazy.b"))))
               for _ in range(4)]
    for t in threads:
        t.start()
    assert holder.started.wait(10)
    holder.go.set()
    for t in threads:
        t.join(10)
    assert seen == [["infer_logical_tensor_desc"]] * 4 and holder.imports == 1


def test_a_layered_registry_lists_its_own_and_the_deferred_base_hooks(deferred):
    from tdflow.dialect.hooks.registry import LayeredHookRegistry

    base, holder = deferred
    own = HookRegistry()
    own.register("lazy.c", "infer_data_type", len)
    layered = LayeredHookRegistry(own, base)
    assert sorted(op for (op, _), _ in layered.items()) == ["lazy.a", "lazy.b", "lazy.c"]
    assert len(layered) == 3 and holder.imports == 1
