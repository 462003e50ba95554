"""The context of ONNX programs: the standard ops plus the ``onnx`` dialect, whose inference hooks
(ONNX's own shape inference, :mod:`.infer`) come with it.

>>> from tdflow.dialect.types import TensorType
>>> infer_types("onnx.Transpose", {"data": [TensorType((2, 3, 4), "f32")]}, {"perm": [2, 0, 1]})
[TensorType(shape=(4, 2, 3), dtype='f32')]
"""

from __future__ import annotations

import functools
import os
from typing import Any

from tdflow.dialect.context import Context, load_ops
from tdflow.dialect.types import TensorType

from .infer import infer_op_types
from .schema import ONNX_TD

__all__ = ["onnx_context", "infer_types"]


@functools.lru_cache(maxsize=1)
def onnx_context() -> Context:
    """The standard ops plus the ``onnx`` dialect (with its inference hooks, which
    :func:`~tdflow.dialect.context.load_ops` gives every context it loads ``onnx.td`` into),
    loaded once.

    >>> onnx_context().lookup("onnx.Relu").name
    'onnx.Relu'
    """
    return load_ops(os.fspath(ONNX_TD))


def infer_types(op_name: str, inputs: dict[str, list[TensorType]], attrs: dict[str, Any],
                n_results: int | None = None) -> list[TensorType | None]:
    """:func:`.infer.infer_op_types` for the op named ``op_name`` in the onnx dialect."""
    return infer_op_types(onnx_context().lookup(op_name), inputs, attrs, n_results)
