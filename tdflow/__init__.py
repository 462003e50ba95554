"""tdflow: define tensor operators once, in TableGen, and get everything else from them.

Importing this package is cheap and never touches CUDA: every heavy piece is imported on
first use.

>>> import tdflow
>>> tdflow.__version__
'0.1.0'
"""

from __future__ import annotations

__version__ = "0.1.0"

# Public names resolved lazily (PEP 562) so `import tdflow` and `tdflow --help` stay fast.
_LAZY = {
    "parse_file": ("tdflow.tdparser", "parse_file"),
    "to_json": ("tdflow.tdparser", "to_json"),
    "TdError": ("tdflow.tdparser", "TdError"),
    "TdflowError": ("tdflow.tdparser.errors", "TdflowError"),
    "load_ops": ("tdflow.runtime.library", "load_ops"),
    "compile": ("tdflow.runtime.compiled", "compile"),
    "load_module": ("tdflow.runtime.compiled", "load_module"),
    "parse_module": ("tdflow.dialect.ir", "parse_module"),
    "tensor": ("tdflow.runtime.tensor", "tensor"),
    "Tensor": ("tdflow.runtime.tensor", "Tensor"),
    "functional": ("tdflow.functional", None),  # None: the module itself
    "no_grad": ("tdflow.runtime.grad_mode", "no_grad"),
    "enable_grad": ("tdflow.runtime.grad_mode", "enable_grad"),
    "value_and_grad": ("tdflow.runtime.value_and_grad", "value_and_grad"),
    "sgd_step": ("tdflow.runtime.value_and_grad", "sgd_step"),
    "grad_rule": ("tdflow.dialect.grad", "grad_rule"),
    "GradError": ("tdflow.dialect.grad", "GradError"),
    "profile": ("tdflow.pictures.trace", "profile"),
    "native": ("tdflow.dialect.patterns.native", "native"),
}


def __getattr__(name: str):
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'tdflow' has no attribute {name!r}") from None
    import importlib

    mod = importlib.import_module(module)
    value = mod if attr is None else getattr(mod, attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + list(_LAZY))
