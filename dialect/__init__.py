"""tdflow.dialect: op definitions read from TableGen, their hooks, verification and the IR.

>>> from tdflow.dialect import standard_dialect
>>> standard_dialect().lookup("tdflow.relu").operands[0].name
'x'

Heavy pieces load on first use, so ``import tdflow.dialect`` stays cheap.
"""

from __future__ import annotations

_LAZY = {
    "Dialect": "tdflow.dialect.dialect",
    "load_dialect": "tdflow.dialect.dialect",
    "standard_dialect": "tdflow.dialect.dialect",
    "standard_ops_path": "tdflow.dialect.dialect",
    "InferError": "tdflow.dialect.infer",
    "OpDef": "tdflow.dialect.opdef",
    "AttrDef": "tdflow.dialect.opdef",
    "ValueDef": "tdflow.dialect.opdef",
    "TraitDef": "tdflow.dialect.opdef",
    "TensorType": "tdflow.dialect.types",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'tdflow.dialect' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(mod), name)
    globals()[name] = value
    return value
