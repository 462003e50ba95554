"""The optional ``onnx`` package, imported only when an ONNX feature is used.

>>> require_onnx().__name__
'onnx'
"""

from __future__ import annotations

from types import ModuleType

from tdflow.core.errors import TdflowError

__all__ = ["require_onnx", "OnnxMissing", "ONNX_DTYPES", "onnx_dtype_name"]


class OnnxMissing(TdflowError):
    """The ``onnx`` extra is not installed."""

    def render(self) -> str:
        return f"error: {self}"


def require_onnx() -> ModuleType:
    """The ``onnx`` module; :class:`OnnxMissing` (one clear line) when it is not installed."""
    try:
        import onnx
    except ImportError as exc:
        raise OnnxMissing(f"the onnx extra is not installed ({exc.msg}): "
                          f"pip install 'tdflow[onnx]'") from None
    return onnx


#: ONNX ``TensorProto.DataType`` -> MLIR element type; the others have no tdflow dtype.
ONNX_DTYPES: dict[int, str] = {
    1: "f32", 2: "ui8", 3: "i8", 4: "ui16", 5: "i16", 6: "i32", 7: "i64", 9: "i1", 10: "f16",
    11: "f64", 12: "ui32", 13: "ui64", 16: "bf16",
}


def onnx_dtype_name(code: int) -> str:
    """ONNX's name of a data type code (``1`` -> ``FLOAT``), for messages."""
    onnx = require_onnx()
    try:
        return onnx.TensorProto.DataType.Name(code)
    except ValueError:
        return f"data type {code}"
