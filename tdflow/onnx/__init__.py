"""ONNX models in: the ``onnx`` dialect (``onnx.td``, generated from ONNX's schemas), an
importer, the lowering of ``onnx.*`` to ``tdflow.*`` and an ``onnx.backend`` implementation.

``onnx`` is an optional extra (``pip install 'tdflow[onnx]'``): importing this package does not
need it; the functions that read models say so in one line when it is missing.

>>> import tdflow.onnx
>>> tdflow.onnx.ONNX_TD.name
'onnx.td'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .schema import ONNX_TD

if TYPE_CHECKING:
    from tdflow.dialect.ir.core import Module

__all__ = ["ONNX_TD", "import_model", "convert", "onnx_context"]


def import_model(model: Any, **kwargs: Any) -> Any:
    """The model (a ModelProto, a path or bytes) as a Module of ``onnx.*`` ops; see
    :func:`tdflow.onnx.importer.import_model`."""
    from .importer import import_model as _import

    return _import(model, **kwargs)


def convert(module: Module, **kwargs: Any) -> Any:
    """The module with its ``onnx.*`` ops lowered to ``tdflow.*``; see
    :func:`tdflow.onnx.convert.convert`."""
    from .convert import convert as _convert

    return _convert(module, **kwargs)


def onnx_context() -> Any:
    """The standard ops plus the ``onnx`` dialect."""
    from .context import onnx_context as _ctx

    return _ctx()
