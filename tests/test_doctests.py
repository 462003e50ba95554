"""The examples in every tdflow module's docstrings run and give what they show.

One test per module, found by walking the packages (no hand-kept list to fall behind): a new
module's examples are checked the day it lands.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

PACKAGES = ("tdflow", "tdflow.tdparser", "tdflow.dialect", "tdflow.lowering", "tdflow.runtime")


def _modules() -> list[str]:
    names: set[str] = set()
    for pkg in PACKAGES:
        mod = importlib.import_module(pkg)
        names.add(pkg)
        names.update(m.name for m in pkgutil.walk_packages(mod.__path__, pkg + "."))
    # __main__ runs the CLI when imported
    return sorted(n for n in names if not n.endswith("__main__"))


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
