"""ONNX ops that make a tensor from shapes and attributes only (EyeLike and the window
functions): computed when the model is compiled and kept as constants."""

from __future__ import annotations

import numpy as np

from tdflow.dialect.types import DTYPES

from .api import Lowerer, Node, rule
from .elementwise import onnx_dtype


@rule("EyeLike")
def eye_like(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    rows, cols = cx.shape_of(x)
    code = n.attrs.get("dtype")
    dt = onnx_dtype(cx, int(code)) if code is not None else cx.type_of(x).dtype
    return [cx.constant(np.eye(rows, cols, int(n.attrs.get("k") or 0), dtype=DTYPES[dt]))]


# window -> its cosine terms: w[n] = sum_k a_k cos(2 pi k n / N)
_WINDOWS = {"HannWindow": (0.5, -0.5), "HammingWindow": (25 / 46, -21 / 46),
            "BlackmanWindow": (0.42, -0.5, 0.08)}


@rule(*_WINDOWS)
def window(cx: Lowerer, n: Node) -> list:
    size = int(np.asarray(cx.need_const(n.input(0), "the window size")).reshape(()))
    periodic = bool(n.attrs.get("periodic", 1))
    denom = size if periodic else size - 1
    k = np.arange(size, dtype=np.float64)
    w = np.zeros(size, np.float64)
    for j, a in enumerate(_WINDOWS[n.op_type]):
        w += a * np.cos(2 * np.pi * j * k / max(denom, 1))
    dt = onnx_dtype(cx, int(n.attrs.get("output_datatype") or 1))
    return [cx.constant(w.astype(DTYPES[dt]), dtype=dt if dt == "bf16" else None)]
