"""What the ``onnx`` dialect is made of, below the importer, the lowering and the inference hooks:
where its ``.td`` is, which ONNX schema version an op's name means, and the tensor type of an
ONNX ``TypeProto``.

>>> op_version("ReduceSumV13"), ONNX_TD.name
(('ReduceSum', 13), 'onnx.td')
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tdflow.dialect.types import TensorType

from .extra import ONNX_DTYPES

__all__ = ["ONNX_TD", "op_version", "tensor_type"]

#: The generated ``onnx`` dialect (committed next to this module).
ONNX_TD = Path(__file__).with_name("onnx.td")

_VERSIONED = re.compile(r"^(.*?)V(\d+)$")
_LATEST = 10**6


def op_version(mnemonic: str) -> tuple[str, int]:
    """``("ReduceSum", 13)`` for ``ReduceSumV13``; the newest schema's version for a bare
    name (``_LATEST`` when onnx is not installed)."""
    m = _VERSIONED.match(mnemonic)
    if m:
        return m.group(1), int(m.group(2))
    try:
        import onnx

        return mnemonic, onnx.defs.get_schema(mnemonic, "").since_version
    except Exception:  # noqa: BLE001 - onnx absent, or an op it does not know
        return mnemonic, _LATEST


def tensor_type(tp: Any) -> TensorType | None:
    """The tensor type of an ONNX ``TypeProto``, or ``None`` (not a tensor, or a dtype tdflow
    does not have)."""
    if tp is None or tp.WhichOneof("value") != "tensor_type":
        return None
    tt = tp.tensor_type
    dtype = ONNX_DTYPES.get(tt.elem_type)
    if dtype is None:
        return None
    if not tt.HasField("shape"):
        return TensorType(None, dtype)
    dims = tuple(d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim)
    return TensorType(dims, dtype)
