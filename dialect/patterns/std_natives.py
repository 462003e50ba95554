"""The Python natives of the standard library's rules (``tdflow/ops/canonical.td``).

Registered like a user's (``@native("Record")``); :func:`missing_natives` imports this module
so the standard rules never count as missing.

>>> from tdflow.dialect.types import TensorType
>>> class V:  # an IR value stand-in: only `.type` is read
...     def __init__(self, t): self.type = t
>>> same_type(V(TensorType((2,), "f32")), V(TensorType((2,), "f32")))
True
>>> inverse_perms((1, 2, 0), (2, 0, 1)), inverse_perms((1, 0, 2), (1, 2, 0))
(True, False)
"""

from __future__ import annotations

from typing import Any

from .native_registry import native


@native("TDF_SameType")
def same_type(a: Any, b: Any) -> bool:
    """``$0.getType() == $1.getType()``: the same shape and element type."""
    return a.type == b.type


@native("TDF_ConstantOfType")
def constant_of_type(c: Any, res: Any) -> Any:
    """``constant`` ``c``'s fill value as a new (detached) ``tdflow.constant`` of ``res``'s
    type: what ``broadcast_like`` of a constant produces, every element the same."""
    from tdflow.dialect.ir import Operation
    from tdflow.dialect.ir.attrs import ArrayAttr, IntegerAttr

    attrs = dict(c.op.attributes)
    attrs["shape"] = ArrayAttr(tuple(IntegerAttr(int(d), "i64") for d in res.type.shape))
    return Operation(c.op.name, [], [res.type], attrs, res.op.loc)


@native("TDF_InversePerms")
def inverse_perms(inner: Any, outer: Any) -> bool:
    """``transpose(transpose(x, inner), outer)`` is ``x``: result dim ``i`` is ``x``'s dim
    ``inner[outer[i]]``, so that must be ``i`` for every ``i``."""
    inner, outer = tuple(inner), tuple(outer)
    return len(inner) == len(outer) and all(
        0 <= o < len(inner) and inner[o] == i for i, o in enumerate(outer))
