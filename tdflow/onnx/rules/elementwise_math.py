"""ONNX's elementwise math onto tdflow's ops of ``the elementwise and math families (ops/elementwise.td, ops/math.td)``:
trigonometric and hyperbolic functions, rounding, sign, NaN and infinity tests, softsign,
logic, bit operations and ``Mod``.

Each ONNX op is one tdflow op (``IsInf`` with one sign detected is that op and a comparison);
ONNX's binary ops broadcast as numpy does, as tdflow's ``broadcast_*`` ops do.
"""

from __future__ import annotations

from .api import Lowerer, Node, rule

_UNARY = {
    "Sin": "tdflow.sin", "Cos": "tdflow.cos", "Tan": "tdflow.tan", "Asin": "tdflow.asin",
    "Acos": "tdflow.acos", "Atan": "tdflow.atan", "Sinh": "tdflow.sinh", "Cosh": "tdflow.cosh",
    "Asinh": "tdflow.asinh", "Acosh": "tdflow.acosh", "Atanh": "tdflow.atanh",
    "Floor": "tdflow.floor", "Ceil": "tdflow.ceil", "Round": "tdflow.round",
    "Sign": "tdflow.sign", "IsNaN": "tdflow.isnan", "Softsign": "tdflow.softsign",
    "Not": "tdflow.logical_not", "BitwiseNot": "tdflow.bitwise_not",
}

_BINARY = {
    "And": "tdflow.broadcast_logical_and", "Or": "tdflow.broadcast_logical_or",
    "Xor": "tdflow.broadcast_logical_xor", "BitwiseAnd": "tdflow.broadcast_bitwise_and",
    "BitwiseOr": "tdflow.broadcast_bitwise_or", "BitwiseXor": "tdflow.broadcast_bitwise_xor",
}


@rule(*_UNARY)
def unary(cx: Lowerer, n: Node) -> list:
    """``Sin(x)`` is ``tdflow.sin(x)``, and so on (:data:`_UNARY`)."""
    return [cx.op(_UNARY[n.op_type], [n.input(0)])]


@rule(*_BINARY)
def binary(cx: Lowerer, n: Node) -> list:
    """``And(a, b)`` is ``tdflow.broadcast_logical_and(a, b)``, and so on (:data:`_BINARY`)."""
    return [cx.op(_BINARY[n.op_type], [n.input(0), n.input(1)])]


@rule("Mod")
def mod(cx: Lowerer, n: Node) -> list:
    """``fmod = 1``: C's remainder (the dividend's sign); ``fmod = 0`` (the default): Python's
    (the divisor's sign), which ONNX defines for integers and tdflow computes for floats too."""
    op = "tdflow.broadcast_fmod" if n.attrs.get("fmod") else "tdflow.broadcast_floor_mod"
    return [cx.op(op, [n.input(0), n.input(1)])]


@rule("BitShift")
def bit_shift(cx: Lowerer, n: Node) -> list:
    """``direction`` ``"LEFT"`` or ``"RIGHT"``."""
    direction = n.attrs.get("direction")
    op = {"LEFT": "tdflow.broadcast_bitwise_left_shift",
          "RIGHT": "tdflow.broadcast_bitwise_right_shift"}.get(direction or "")
    if op is None:
        cx.unsupported(f"direction = {direction!r} (expected 'LEFT' or 'RIGHT')")
    return [cx.op(op, [n.input(0), n.input(1)])]


@rule("IsInf")
def is_inf(cx: Lowerer, n: Node) -> list:
    """``isinf(x)``, kept where ``x > 0`` when only ``detect_positive`` is set, where ``x < 0``
    when only ``detect_negative`` is (neither: all false)."""
    x = n.input(0)
    pos, neg = n.attrs.get("detect_positive", 1), n.attrs.get("detect_negative", 1)
    inf = cx.op("tdflow.isinf", [x])
    if pos and neg:
        return [inf]
    if pos or neg:
        side = cx.op("tdflow.broadcast_greater" if pos else "tdflow.broadcast_less",
                     [x, cx.scalar(0, x)])
    else:
        side = cx.scalar(False, inf)
    return [cx.op("tdflow.broadcast_logical_and", [inf, side])]
