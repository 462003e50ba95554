"""The examples in the IR modules' docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["__init__", "core", "attrs", "diagnostics", "builder", "equality", "rewriter",
           "lexer", "type_attr_parser", "parser", "printer", "verifier"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    mod = importlib.import_module("tdflow.dialect.ir" + ("" if name == "__init__" else f".{name}"))
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
