"""ONNX's elementwise ops onto tdflow's: arithmetic, comparisons, activations, casts.

ONNX's binary ops broadcast as numpy does, as tdflow's ``broadcast_*`` ops do; activations
with parameters are compositions of ops with formulas, so the fuse-elementwise pass merges them
back into one kernel.
"""

from __future__ import annotations

from typing import Any

from tdflow.dialect.types import FLOAT_DTYPES

from ..extra import ONNX_DTYPES
from .api import Lowerer, Node, rule
from .common import cast, reshape

_BINARY = {
    "Add": "tdflow.broadcast_add", "Sub": "tdflow.broadcast_sub",
    "Mul": "tdflow.broadcast_mul", "Div": "tdflow.broadcast_div",
    "Equal": "tdflow.broadcast_equal", "Less": "tdflow.broadcast_less",
    "LessOrEqual": "tdflow.broadcast_less_equal", "Greater": "tdflow.broadcast_greater",
    "GreaterOrEqual": "tdflow.broadcast_greater_equal",
}

_UNARY = {
    "Relu": "tdflow.relu", "Sigmoid": "tdflow.sigmoid", "Tanh": "tdflow.tanh",
    "Exp": "tdflow.exp", "Log": "tdflow.log", "Sqrt": "tdflow.sqrt", "Neg": "tdflow.negative",
    "Abs": "tdflow.abs", "Reciprocal": "tdflow.reciprocal", "Erf": "tdflow.erf",
}


@rule(*_BINARY)
def binary(cx: Lowerer, n: Node) -> list:
    return [cx.op(_BINARY[n.op_type], [n.input(0), n.input(1)])]


@rule(*_UNARY)
def unary(cx: Lowerer, n: Node) -> list:
    return [cx.op(_UNARY[n.op_type], [n.input(0)])]


@rule("Pow")
def pow_(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    return [cx.op("tdflow.broadcast_pow", [x, cast(cx, n.input(1), cx.type_of(x).dtype)])]


def _fold_variadic(cx: Lowerer, n: Node, op: str) -> Any:
    vals = [v for v in n.inputs if v is not None]
    acc = vals[0]
    for v in vals[1:]:
        acc = cx.op(op, [acc, v])
    return acc


@rule("Max")
def max_(cx: Lowerer, n: Node) -> list:
    return [_fold_variadic(cx, n, "tdflow.broadcast_maximum")]


@rule("Min")
def min_(cx: Lowerer, n: Node) -> list:
    return [_fold_variadic(cx, n, "tdflow.broadcast_minimum")]


@rule("Sum")
def sum_(cx: Lowerer, n: Node) -> list:
    return [_fold_variadic(cx, n, "tdflow.broadcast_add")]


@rule("Mean")
def mean(cx: Lowerer, n: Node) -> list:
    total = _fold_variadic(cx, n, "tdflow.broadcast_add")
    k = sum(1 for v in n.inputs if v is not None)
    return [cx.op("tdflow.broadcast_div", [total, cx.scalar(k, total)])]


@rule("Where")
def where(cx: Lowerer, n: Node) -> list:
    return [cx.op("tdflow.where", [n.input(0), n.input(1), n.input(2)])]


@rule("Identity")
def identity(cx: Lowerer, n: Node) -> list:
    return [n.input(0)]


@rule("LeakyRelu")
def leaky_relu(cx: Lowerer, n: Node) -> list:
    return [cx.op("tdflow.leaky_relu", [n.input(0)], {"alpha": n.attrs["alpha"]})]


def _select_positive(cx: Lowerer, x: Any, neg: Any) -> Any:
    """``x > 0 ? x : neg``."""
    pos = cx.op("tdflow.broadcast_greater", [x, cx.scalar(0, x)])
    return cx.op("tdflow.where", [pos, x, neg])


def _expm1_scaled(cx: Lowerer, x: Any, alpha: float, inner: float = 1.0) -> Any:
    """``alpha * (exp(x * inner) - 1)``."""
    xi = x if inner == 1.0 else cx.op("tdflow.broadcast_mul", [x, cx.scalar(inner, x)])
    e = cx.op("tdflow.broadcast_sub", [cx.op("tdflow.exp", [xi]), cx.scalar(1, x)])
    return cx.op("tdflow.broadcast_mul", [e, cx.scalar(alpha, x)])


@rule("Elu")
def elu(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    return [_select_positive(cx, x, _expm1_scaled(cx, x, n.attrs["alpha"]))]


@rule("Celu")
def celu(cx: Lowerer, n: Node) -> list:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    x, alpha = n.input(0), n.attrs["alpha"]
    neg = cx.op("tdflow.broadcast_minimum", [_expm1_scaled(cx, x, alpha, 1.0 / alpha),
                                             cx.scalar(0, x)])
    return [cx.op("tdflow.broadcast_add", [cx.op("tdflow.relu", [x]), neg])]


@rule("Selu")
def selu(cx: Lowerer, n: Node) -> list:
    x, a, g = n.input(0), n.attrs["alpha"], n.attrs["gamma"]
    y = _select_positive(cx, x, _expm1_scaled(cx, x, a))
    return [cx.op("tdflow.broadcast_mul", [y, cx.scalar(g, x)])]


def _hard_sigmoid(cx: Lowerer, x: Any, alpha: float, beta: float) -> Any:
    """``max(0, min(1, alpha * x + beta))``."""
    y = cx.op("tdflow.broadcast_add", [cx.op("tdflow.broadcast_mul", [x, cx.scalar(alpha, x)]),
                                       cx.scalar(beta, x)])
    y = cx.op("tdflow.broadcast_minimum", [y, cx.scalar(1, x)])
    return cx.op("tdflow.broadcast_maximum", [y, cx.scalar(0, x)])


@rule("HardSigmoid")
def hard_sigmoid(cx: Lowerer, n: Node) -> list:
    return [_hard_sigmoid(cx, n.input(0), n.attrs["alpha"], n.attrs["beta"])]


@rule("HardSwish")
def hard_swish(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    return [cx.op("tdflow.broadcast_mul", [x, _hard_sigmoid(cx, x, 1 / 6, 0.5)])]


@rule("Softplus")
def softplus(cx: Lowerer, n: Node) -> list:
    """``log(exp(x) + 1)``, as tdflow's softplus computes it (with its overflow guard)."""
    return [cx.op("tdflow.softplus", [n.input(0)], {"beta": 1.0, "threshold": 20.0})]


@rule("Mish")
def mish(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    sp = cx.op("tdflow.softplus", [x], {"beta": 1.0, "threshold": 20.0})
    return [cx.op("tdflow.broadcast_mul", [x, cx.op("tdflow.tanh", [sp])])]


@rule("Swish")
def swish(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    alpha = n.attrs.get("alpha", 1.0)
    ax = x if alpha == 1.0 else cx.op("tdflow.broadcast_mul", [x, cx.scalar(alpha, x)])
    return [cx.op("tdflow.broadcast_mul", [x, cx.op("tdflow.sigmoid", [ax])])]


@rule("ThresholdedRelu")
def thresholded_relu(cx: Lowerer, n: Node) -> list:
    x = n.input(0)
    keep = cx.op("tdflow.broadcast_greater", [x, cx.scalar(n.attrs["alpha"], x)])
    return [cx.op("tdflow.where", [keep, x, cx.scalar(0, x)])]


@rule("PRelu")
def prelu(cx: Lowerer, n: Node) -> list:
    x, slope = n.input(0), n.input(1)
    xs, ss = cx.shape_of(x), cx.shape_of(slope)
    if n.version < 7 and len(ss) == 1 and len(xs) > 2 and ss[0] == xs[1] != xs[-1]:
        # before opset 7 a 1-D slope is one value per channel (axis 1)
        slope = reshape(cx, slope, [ss[0]] + [1] * (len(xs) - 2))
    return [_select_positive(cx, x, cx.op("tdflow.broadcast_mul", [x, slope]))]


@rule("Gelu")
def gelu(cx: Lowerer, n: Node) -> list:
    approx = n.attrs.get("approximate") or "none"
    op = {"none": "tdflow.gelu", "tanh": "tdflow.fast_gelu"}.get(approx)
    if op is None:
        cx.unsupported(f"approximate = '{approx}' (expected 'none' or 'tanh')")
    return [cx.op(op, [n.input(0)])]


@rule("Shrink")
def shrink(cx: Lowerer, n: Node) -> list:
    """``x < -lambd ? x + bias : x > lambd ? x - bias : 0``."""
    x, lambd, bias = n.input(0), n.attrs["lambd"], n.attrs["bias"]
    lo = cx.op("tdflow.broadcast_less", [x, cx.scalar(-lambd, x)])
    hi = cx.op("tdflow.broadcast_greater", [x, cx.scalar(lambd, x)])
    inner = cx.op("tdflow.where", [hi, cx.op("tdflow.broadcast_sub", [x, cx.scalar(bias, x)]),
                                   cx.scalar(0, x)])
    return [cx.op("tdflow.where", [lo, cx.op("tdflow.broadcast_add", [x, cx.scalar(bias, x)]),
                                   inner])]


@rule("Clip")
def clip(cx: Lowerer, n: Node) -> list:
    """``min(max(x, lo), hi)``; the bounds are attributes before opset 11, inputs after."""
    x = n.input(0)
    if n.version < 11:
        lo, hi = cx.scalar(n.attrs["min"], x), cx.scalar(n.attrs["max"], x)
    else:
        lo = n.inputs[1] if n.has_input(1) else None
        hi = n.inputs[2] if n.has_input(2) else None
    y = x
    if lo is not None:
        y = cx.op("tdflow.broadcast_maximum", [y, lo])
    if hi is not None:
        y = cx.op("tdflow.broadcast_minimum", [y, hi])
    return [y]


def onnx_dtype(cx: Lowerer, code: int) -> str:
    """The MLIR dtype of an ONNX data type code; a located error for ones tdflow lacks."""
    from ..extra import onnx_dtype_name

    dt = ONNX_DTYPES.get(int(code))
    if dt is None:
        cx.unsupported(f"element type {onnx_dtype_name(int(code))} has no tdflow dtype")
    return dt


@rule("Cast")
def cast_(cx: Lowerer, n: Node) -> list:
    return [cast(cx, n.input(0), onnx_dtype(cx, n.attrs["to"]))]


@rule("CastLike")
def cast_like(cx: Lowerer, n: Node) -> list:
    return [cast(cx, n.input(0), cx.type_of(n.input(1)).dtype)]


@rule("Dropout")
def dropout(cx: Lowerer, n: Node) -> list:
    """Inference mode (``training_mode`` absent or false, or a ratio of 0) is the identity,
    with an all-true mask; training with a ratio > 0 draws ONNX's unspecified random mask,
    which no two runtimes share, so it is refused."""
    x = n.input(0)
    training = False
    if n.version >= 12 and n.has_input(2):
        training = bool(cx.need_const(n.input(2), "training_mode").reshape(-1)[0])
    elif n.version < 7:
        training = not n.attrs.get("is_test", 0)
    ratio = n.attrs.get("ratio", 0.5) if n.version < 12 else 0.5
    if n.version >= 12 and n.has_input(1):
        ratio = float(cx.need_const(n.input(1), "ratio").reshape(-1)[0])
    if training and ratio != 0:
        cx.unsupported("training-mode dropout draws a random mask no other runtime shares")
    outs = [x]
    if n.num_outputs > 1:
        ones = cx.op("tdflow.ones_like", [x])
        outs.append(cast(cx, ones, "i1"))
    return outs


def is_float(cx: Lowerer, v: Any) -> bool:
    return cx.type_of(v).dtype in FLOAT_DTYPES
