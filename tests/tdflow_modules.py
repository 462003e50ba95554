"""Every module of the installed tdflow packages, for the tests that check each one."""

from __future__ import annotations

import importlib
import pkgutil

PACKAGES = ("tdflow", "tdflow.tdparser", "tdflow.dialect", "tdflow.lowering", "tdflow.runtime")


def module_names() -> list[str]:
    """Every tdflow module by dotted name, sorted; ``__main__`` (which runs the CLI) left out."""
    names: set[str] = set()
    for pkg in PACKAGES:
        mod = importlib.import_module(pkg)
        names.add(pkg)
        names.update(m.name for m in pkgutil.walk_packages(mod.__path__, pkg + "."))
    return sorted(n for n in names if not n.endswith("__main__"))
