"""The elementwise ops of the standard library, each one scalar formula.

>>> d = ELEMENTWISE_OPS["tdflow.leaky_relu"]
>>> d.inputs, d.attrs
(('x',), {'alpha': 0.0})
>>> d.bind({"alpha": 0.2})
max(in0, mul(in0, 0.2))
>>> ELEMENTWISE_OPS["tdflow.scalar_add"].bind({"has_int_operand": True, "int_operand": 3})
add(in0, 3)

Attributes are bound when a kernel is built (:meth:`ElementwiseDef.bind`): missing ones take the
``ops.td`` default, and ops whose operand is chosen by flags (``scalar_*``) derive it first.
Formulas follow OneFlow's CPU/CUDA functors (``gelu`` in its erf form, ``dropout_grad`` as
``dy * mask * scale``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tdflow.lowering.elementwise import (
    Attr,
    Expr,
    Input,
    bind,
    erf,
    exp,
    log,
    maximum,
    minimum,
    sigmoid,
    sqrt,
    tanh,
    where,
)

FLOATS = frozenset({"f16", "bf16", "f32", "f64"})
INTS = frozenset({"i8", "i32", "i64"})
NUMERIC = FLOATS | INTS


@dataclass(frozen=True)
class ElementwiseDef:
    """An elementwise op: operand names, formula, attribute defaults and supported dtypes.

    ``dtypes`` constrains input 0; ``same_dtype_inputs`` lists the inputs that must share its
    type (the others, like ``dropout_grad``'s ``mask``, may differ). ``derive`` maps the
    op's attributes to the attributes the formula reads (for flag-selected operands).
    """

    name: str
    inputs: tuple[str, ...]
    expr: Expr
    attrs: Mapping[str, Any] = field(default_factory=dict)
    dtypes: frozenset[str] = FLOATS
    same_dtype_inputs: tuple[int, ...] | None = None
    derive: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
    summary: str = ""

    @property
    def arity(self) -> int:
        return len(self.inputs)

    @property
    def mnemonic(self) -> str:
        return self.name.split(".", 1)[-1]

    def filled(self, attrs: Mapping[str, Any]) -> dict[str, Any]:
        """``attrs`` with the defaults of the missing ones."""
        return {k: attrs.get(k, v) for k, v in self.attrs.items()}

    def bind(self, attrs: Mapping[str, Any] | None = None) -> Expr:
        """The formula with attribute values (defaults filled) substituted and folded."""
        values = self.filled(attrs or {})
        if self.derive is not None:
            values = {**values, **self.derive(values)}
        return bind(self.expr, values)

    def attr_key(self, attrs: Mapping[str, Any]) -> tuple[Any, ...]:
        """Hashable key of the attribute values the formula depends on (for kernel caches)."""
        return tuple(attrs.get(k, v) for k, v in self.attrs.items())


x, y = Input(0), Input(1)
_SQRT1_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _scalar_operand(op: str) -> Callable[[Mapping[str, Any]], Mapping[str, Any]]:
    def derive(attrs: Mapping[str, Any]) -> Mapping[str, Any]:
        if attrs.get("has_int_operand"):
            return {"operand": int(attrs.get("int_operand", 0))}
        if attrs.get("has_float_operand"):
            return {"operand": float(attrs.get("float_operand", 0.0))}
        raise ValueError(f"tdflow.{op}: set has_int_operand or has_float_operand (neither is "
                         f"true), as OneFlow requires")

    return derive


_SCALAR_ATTRS = {"has_int_operand": False, "has_float_operand": False, "int_operand": 0,
                 "float_operand": 0.0}


def _defs() -> list[ElementwiseDef]:
    d = ElementwiseDef
    operand = Attr("operand")
    alpha = Attr("alpha")
    return [
        d("tdflow.relu", ("x",), maximum(x, 0), dtypes=NUMERIC, summary="max(x, 0)"),
        # x > 0 ? x : alpha x, written as max(x, alpha x) for alpha <= 1 (min otherwise): the
        # condition on the attribute folds away at bind time, leaving two ufuncs / one fmaxf.
        d("tdflow.leaky_relu", ("x",),
          where(Attr("alpha") <= 1.0, maximum(x, x * alpha), minimum(x, x * alpha)),
          {"alpha": 0.0}, summary="x > 0 ? x : alpha * x"),
        d("tdflow.sigmoid", ("x",), sigmoid(x), summary="1 / (1 + exp(-x))"),
        d("tdflow.tanh", ("x",), tanh(x)),
        d("tdflow.gelu", ("in",), 0.5 * x * (1.0 + erf(x * _SQRT1_2)),
          summary="0.5 x (1 + erf(x / sqrt 2))"),
        d("tdflow.exp", ("x",), exp(x)),
        d("tdflow.log", ("x",), log(x)),
        d("tdflow.sqrt", ("x",), sqrt(x)),
        d("tdflow.negative", ("x",), -x, dtypes=NUMERIC),
        d("tdflow.square", ("x",), x * x, dtypes=NUMERIC),
        d("tdflow.reciprocal", ("x",), 1.0 / x),
        d("tdflow.scalar_add", ("in",), x + operand, _SCALAR_ATTRS, NUMERIC,
          derive=_scalar_operand("scalar_add")),
        d("tdflow.scalar_mul", ("in",), x * operand, _SCALAR_ATTRS, NUMERIC,
          derive=_scalar_operand("scalar_mul")),
        d("tdflow.scalar_pow", ("in",), x ** operand, _SCALAR_ATTRS, NUMERIC,
          derive=_scalar_operand("scalar_pow")),
        d("tdflow.broadcast_add", ("x", "y"), x + y, dtypes=NUMERIC, same_dtype_inputs=(1,)),
        d("tdflow.broadcast_sub", ("x", "y"), x - y, dtypes=NUMERIC, same_dtype_inputs=(1,)),
        d("tdflow.broadcast_mul", ("x", "y"), x * y, dtypes=NUMERIC, same_dtype_inputs=(1,)),
        d("tdflow.broadcast_div", ("x", "y"), x / y, dtypes=NUMERIC, same_dtype_inputs=(1,),
          summary="x / y (integer division truncates toward zero)"),
        d("tdflow.broadcast_maximum", ("x", "y"), maximum(x, y), dtypes=NUMERIC | {"i1"},
          same_dtype_inputs=(1,)),
        d("tdflow.relu_grad", ("y", "dy"), where(x > 0, y, 0), dtypes=NUMERIC,
          same_dtype_inputs=(1,), summary="y > 0 ? dy : 0"),
        d("tdflow.leaky_relu_grad", ("x", "dy"), where(x > 0, y, y * alpha), {"alpha": 0.0},
          same_dtype_inputs=(1,), summary="x > 0 ? dy : alpha * dy"),
        d("tdflow.sigmoid_grad", ("y", "dy"), y * x * (1.0 - x), same_dtype_inputs=(1,),
          summary="dy * y * (1 - y)"),
        d("tdflow.tanh_grad", ("y", "dy"), y * (1.0 - x * x), same_dtype_inputs=(1,),
          summary="dy * (1 - y^2)"),
        d("tdflow.gelu_grad", ("x", "dy"),
          y * (0.5 * (1.0 + erf(x * _SQRT1_2)) + x * _INV_SQRT_2PI * exp(-0.5 * x * x)),
          same_dtype_inputs=(1,), summary="dy * (Phi(x) + x phi(x))"),
        d("tdflow.dropout_grad", ("dy", "mask"), x * y * Attr("scale"), {"scale": 0.0},
          summary="dy * mask * scale (mask may be i1 or any number type)"),
    ]


ELEMENTWISE_OPS: dict[str, ElementwiseDef] = {e.name: e for e in _defs()}
