"""The examples in the lowering modules' docstrings run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "tdflow.lowering.pass_manager", "tdflow.lowering.passes", "tdflow.lowering.memory",
    "tdflow.lowering.plan", "tdflow.lowering.fused_expr", "tdflow.lowering.ir_access",
    "tdflow.runtime.executor",
    "tdflow.runtime.compiled",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
