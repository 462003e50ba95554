"""Programs as the commands read them: MLIR text, or an ONNX model (``.onnx``, or any file
that is a serialized ModelProto), and the context their ops need.

A program that uses ``onnx.*`` ops gets the ``onnx`` dialect added to its context, as
MLIR loads a dialect a program names; commands that lower or run it lower ``onnx.*`` to
``tdflow.*`` first (:func:`tdflow.onnx.convert.convert`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tdflow.dialect.context import Context
    from tdflow.dialect.ir.core import Module


def is_onnx_path(path: str) -> bool:
    """Whether ``path`` names an ONNX model (by its ``.onnx`` suffix)."""
    return path.lower().endswith(".onnx")


def load_onnx(path: str, lower: bool = False) -> Any:
    """The model at ``path`` ('-': stdin) as a Module of ``onnx.*`` ops, or lowered to
    ``tdflow.*`` ops with ``lower``."""
    from tdflow.core.files import read_input
    from tdflow.onnx.importer import import_model

    name = "<stdin>" if path == "-" else path
    module = import_model(read_input(path, "model"), source=name)
    if lower:
        from tdflow.onnx.convert import convert

        module = convert(module)
    return module


def uses_onnx(module: Module) -> bool:
    """Whether any function of ``module`` holds an ``onnx.*`` op (what
    :func:`tdflow.onnx.convert.has_onnx_ops` says, without importing the converter and its
    rules: a program of ``tdflow.*`` ops never needs them).

    >>> from tdflow.dialect.ir import parse_module
    >>> uses_onnx(parse_module('func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> { '
    ...                        'return %x : tensor<2xf32> }'))
    False
    """
    return any(op.name.startswith("onnx.") for f in module for op in f.body.ops)


def with_onnx(context: Context, module: Module) -> Any:
    """``context``, plus the onnx dialect when ``module`` uses ``onnx.*`` ops it lacks."""
    if not uses_onnx(module) or any(op.dialect == "onnx" for op in context.ops.values()):
        return context
    return _add_onnx(context)


def lowered(module: Module, context: Context) -> Any:
    """``module`` with its ``onnx.*`` ops lowered to ``tdflow.*`` (itself when it has none)."""
    if not uses_onnx(module):
        return module
    from tdflow.onnx.convert import convert

    return convert(module, with_onnx(context, module))


def onnx_context_for(context: Context, text: str) -> Any:
    """``context`` plus the onnx dialect when program ``text`` names an ``onnx.`` op."""
    if '"onnx.' not in text or any(op.dialect == "onnx" for op in context.ops.values()):
        return context
    return _add_onnx(context)


def _add_onnx(context: Context) -> Any:
    from tdflow.dialect.context import Context
    from tdflow.onnx.context import onnx_context

    onnx_lib = [lib for lib in onnx_context().libraries if lib.name == "onnx"]
    return Context([*context.libraries, *onnx_lib], standard=context.standard,
                   hook_modules=context.hook_modules)


def verify_onnx(path: str, context: Context, quiet: bool = False) -> int:
    """Import the model (its checks), verify it and lower it to ``tdflow.*`` (every op's
    shapes and dtypes inferred by tdflow's hooks); exit status."""
    from tdflow.commands.output import print_diagnostic
    from tdflow.core.errors import TdflowError
    from tdflow.dialect.ir import DiagnosticError, verify_module
    from tdflow.onnx.convert import convert

    try:
        module = load_onnx(path)
        ctx = _add_onnx(context)
        errors = [d for d in verify_module(module, ctx) if d.severity == "error"]
        if errors:
            raise DiagnosticError(errors)
        convert(module, ctx)
    except TdflowError as exc:
        print_diagnostic(exc.render())
        return 1
    if not quiet:
        n = sum(len(f.body) for f in module.funcs)
        print(f"{path}: verified and lowered ({n} operations)")
    return 0
