"""Constant folding of one op: a pure op whose operands are all ``tdflow.constant`` is run by its
CPU kernel and replaced by the (uniform) result constant.

Used by ``canonicalize`` (swept over a function) and the greedy pattern driver of
``apply-patterns`` (per op), so it sits below both passes.

>>> from tdflow.dialect.types import TensorType
>>> import numpy as np
>>> op = make_constant(np.full((2,), 3.0, np.float32), TensorType((2,), "f32"), None)
>>> op.name, constant_value(op).tolist()
('tdflow.constant', [3.0, 3.0])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tdflow.dialect.ir import Operation, Rewriter
from tdflow.dialect.ir.attrs import (
    ArrayAttr,
    BoolAttr,
    FloatAttr,
    IntegerAttr,
    TypeAttr,
    to_python,
)
from tdflow.dialect.types import FLOAT_DTYPES, TensorType

from .ir_access import is_pure
from .pass_manager import PassContext

if TYPE_CHECKING:  # numpy is imported where a constant is folded: `tdflow lower` of a
    import numpy as np  # program without constants needs none (start-up time)

#: The op that materialises constants (MLIR's ``materializeConstant``): one fill value.
CONSTANT_OP = "tdflow.constant"


def constant_value(op: Operation) -> np.ndarray | None:
    """The array a ``tdflow.constant`` op produces, or ``None`` if its type is not static."""
    import numpy as np

    t = op.results[0].type if op.results else None
    if not isinstance(t, TensorType) or not t.is_static:
        return None
    a = {k: to_python(v) for k, v in op.attributes.items()}
    value = a.get("floating_value", 0.0) if a.get("is_floating_value") else a.get(
        "integer_value", 0)
    return np.full(t.shape, value, dtype=t.np_dtype)


def make_constant(value: np.ndarray, t: TensorType, loc: Any) -> Operation | None:
    """A ``tdflow.constant`` op for a uniform ``value`` of type ``t``; ``None`` if not uniform."""
    import numpy as np

    flat = value.reshape(-1)
    if flat.size == 0:
        fill = 0
    else:
        fill = flat[0]
        if not (flat == fill).all() or (t.dtype in FLOAT_DTYPES and np.isnan(fill)):
            return None
    is_float = t.dtype in FLOAT_DTYPES
    attrs = {
        "dtype": TypeAttr(t.dtype),
        "shape": ArrayAttr(tuple(IntegerAttr(int(d), "i64") for d in t.shape)),
        "is_floating_value": BoolAttr(is_float),
        "floating_value": FloatAttr(float(fill) if is_float else 0.0, "f64"),
        "integer_value": IntegerAttr(0 if is_float else int(fill), "si64"),
    }
    return Operation(CONSTANT_OP, [], [t], attrs, loc)


def fold_op(op: Operation, context: PassContext, rw: Rewriter) -> bool:
    """Fold ``op`` when it is pure and its operands are all ``tdflow.constant``: run its CPU
    kernel and replace it by the (uniform) result constant. The greedy pattern driver uses it
    per op; ``canonicalize`` sweeps it over a function."""
    from .passes.select_kernels import run_for_folding

    if op.parent is None or op.name == CONSTANT_OP or not op.operands or not op.results:
        return False
    producers = []
    for v in op.operands:  # the common case, a non-constant operand, leaves at once
        p = v.op
        if p is None or p.name != CONSTANT_OP:
            return False
        producers.append(p)
    if not is_pure(context.dialect, op):
        return False
    types = op.result_types
    if not all(isinstance(t, TensorType) and t.is_static for t in types):
        return False
    inputs = [constant_value(p) for p in producers]  # type: ignore[arg-type]
    if any(a is None for a in inputs):
        return False
    outputs = run_for_folding(context, op, inputs)
    if outputs is None:
        return False
    import numpy as np

    news = [make_constant(np.asarray(o), t, op.loc) for o, t in zip(outputs, types)]
    if any(n is None for n in news):
        return False
    for n in news:
        rw.insert_before(op, n)  # type: ignore[arg-type]
    rw.replace_op(op, [n.results[0] for n in news])  # type: ignore[union-attr]
    return True
