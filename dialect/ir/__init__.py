"""tdflow.dialect.ir: the IR (``Module``/``FuncOp``/``Block``/``Operation``/``Value``), its MLIR
text form (parser, printer), the structural verifier and the builder.

>>> from tdflow.dialect.ir import parse_module, print_module
>>> m = parse_module('''
... func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
...   %0 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
...   return %0 : tensor<4xf32>
... }''')
>>> print(print_module(m, generic=True), end="")
"func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "f"}> ({
^bb0(%x: tensor<4xf32>):
  %0 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  "func.return"(%0) : (tensor<4xf32>) -> ()
}) : () -> ()
"""

from __future__ import annotations

from tdflow.dialect.ir.core import (
    RETURN,
    UNKNOWN_LOC,
    Block,
    FuncOp,
    Location,
    Module,
    Operation,
    Value,
    plug_module_services,
)
from tdflow.dialect.ir.diagnostics import Diagnostic, DiagnosticError
from tdflow.dialect.ir.equality import module_diff, module_equal
from tdflow.dialect.ir.rewriter import Rewriter

__all__ = [
    "RETURN", "UNKNOWN_LOC", "Block", "FuncOp", "Location", "Module", "Operation", "Rewriter",
    "Value", "module_diff", "module_equal", "Diagnostic", "DiagnosticError", "Builder",
    "parse_module", "parse_file", "print_module", "verify_module", "parse_and_verify",
    "parse_type", "parse_attribute", "print_op",
]



def _print_module(module: Module) -> str:
    """``print_module(module)``, the printer loaded on first use."""
    from tdflow.dialect.ir.printer import print_module

    return print_module(module)


plug_module_services(_print_module, module_equal)

# Parser, printer, verifier and builder load on first use (keeps `import` cheap).
_LAZY = {
    "Builder": "tdflow.dialect.ir.builder",
    "parse_module": "tdflow.dialect.ir.parser",
    "parse_file": "tdflow.dialect.ir.parser",
    "parse_type": "tdflow.dialect.ir.type_attr_parser",
    "parse_attribute": "tdflow.dialect.ir.type_attr_parser",
    "print_op": "tdflow.dialect.ir.printer",
    "print_module": "tdflow.dialect.ir.printer",
    "verify_module": "tdflow.dialect.ir.verifier",
    "parse_and_verify": "tdflow.dialect.ir.verifier",
}


def __getattr__(name: str):
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'tdflow.dialect.ir' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(mod), name)
    globals()[name] = value
    return value
