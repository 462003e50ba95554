"""The examples in the docstrings of the engine and functional modules run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "tdflow.runtime.engine",
    "tdflow.runtime.threaded_engine",
    "tdflow.runtime.functional",
    "tdflow.runtime.eager",
    "tdflow.runtime.func_signature",
    "tdflow.runtime.functional_yaml",
    "tdflow.runtime.tensor_glue",
    "tdflow.runtime.library",
    "tdflow.runtime.kernels.registry",
    "tdflow.dialect.context",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
