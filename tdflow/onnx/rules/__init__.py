"""ONNX lowering rules, one module per op family; importing this package registers them all.

Every module of the package is imported (the family modules need no list to be kept in step);
:mod:`tdflow.onnx.rules.api` is the interface they are written against.
"""

from __future__ import annotations

import importlib
import pkgutil

from .api import RULES, rule, rule_for

__all__ = ["RULES", "rule", "rule_for", "load_rules"]

_loaded: list[bool] = []


def load_rules() -> dict:
    """Import every rule module once; the registry, op_type -> rules."""
    if not _loaded:
        for m in sorted(m.name for m in pkgutil.iter_modules(__path__)):
            if m != "api" and not m.startswith("_"):
                importlib.import_module(f"{__name__}.{m}")
        _loaded.append(True)
    return RULES
