"""The examples in every tdflow module's docstrings run and give what they show.

One test per module, found by walking the packages (no hand-kept list to fall behind): a new
module's examples are checked the day it lands.
"""

from __future__ import annotations

import doctest
import importlib

import pytest
from tdflow_modules import module_names


@pytest.mark.parametrize("name", module_names())
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
