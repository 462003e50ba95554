"""The interface ONNX lowering rules are written against: ``@rule``, :class:`Node`, :class:`Lowerer`.

A rule turns one ``onnx.*`` op into ``tdflow.*`` ops. It is written once and runs two ways: on
IR values, building the lowered program, and on constants, folding the op at import time (shape
arithmetic, weights transposed once): the :class:`Lowerer` hides which.

>>> @rule("ThresholdedReluExample")
... def thresholded(cx: Lowerer, n: Node) -> list:
...     x = n.input(0)
...     keep = cx.op("tdflow.broadcast_greater", [x, cx.scalar(n.attrs["alpha"], x)], {})
...     return [cx.op("tdflow.where", [keep, x, cx.scalar(0.0, x)], {})]
>>> rule_for("ThresholdedReluExample", 10) is thresholded
True
>>> del RULES["ThresholdedReluExample"]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from tdflow.core.errors import TdflowError
from tdflow.dialect.types import TensorType

__all__ = ["rule", "rule_for", "RULES", "Node", "Lowerer", "Const", "LoweringError",
           "NeedsValue", "Rule"]

Rule = Callable[["Lowerer", "Node"], Sequence[Any]]

#: op_type -> [(lowest since_version the rule handles, rule)], highest first
RULES: dict[str, list[tuple[int, Rule]]] = {}


def rule(*op_types: str, since: int = 1) -> Callable[[Rule], Rule]:
    """Register a rule for ``op_types`` at schema versions ``since`` and later (a rule for a
    later ``since`` of the same op wins for the versions it covers)."""

    def register(fn: Rule) -> Rule:
        for op_type in op_types:
            entries = RULES.setdefault(op_type, [])
            entries[:] = [e for e in entries if e[0] != since]
            entries.append((since, fn))
            entries.sort(key=lambda e: -e[0])
        return fn

    return register


def rule_for(op_type: str, version: int) -> Rule | None:
    """The rule lowering ``op_type`` at schema ``version``, or ``None``."""
    for since, fn in RULES.get(op_type, ()):
        if version >= since:
            return fn
    return None


class LoweringError(TdflowError):
    """An ONNX node that cannot be lowered; names the node, its op type and version."""

    def __init__(self, message: str, node: Node | None = None, loc: Any = None):
        self.node = node
        self.loc = loc
        where = f"node '{node.name}' ({node.op_type}, opset version {node.version}): " if node \
            else ""
        super().__init__(where + message)

    def render(self) -> str:
        loc = f"{self.loc}: " if self.loc is not None and str(self.loc) else ""
        return f"{loc}error: {self}"


class NeedsValue(LoweringError):
    """A rule needs the value of something computed from graph inputs (a shape, axes, pads):
    ``inputs`` names them, so a caller that has their values can specialise on them."""

    def __init__(self, message: str, node: Node, inputs: frozenset[str]):
        super().__init__(message, node)
        self.inputs = inputs


@dataclass(eq=False)
class Const:
    """A value known while lowering: its numpy array (and, once an IR op needs it, the
    ``tdflow.dense_constant`` that materialises it). ``dtype`` names the MLIR element type
    when the array's own is only how the CPU holds it (``bf16`` in float32)."""

    array: Any
    materialized: Any = None
    dtype: str | None = None

    @property
    def type(self) -> TensorType:
        from tdflow.dialect.types import dtype_from_numpy

        return TensorType(tuple(int(d) for d in self.array.shape),
                          self.dtype or dtype_from_numpy(self.array.dtype))


@dataclass
class Node:
    """One ONNX node as a rule sees it.

    ``inputs`` holds one entry per ONNX input (``None`` for an absent optional one; a variadic
    input's values in order); ``attrs`` every attribute of the op's schema by its ONNX name,
    the schema's default filled in and ``None`` for an absent optional one without default.
    """

    op_type: str
    version: int
    name: str
    inputs: list[Any]
    attrs: dict[str, Any]
    num_outputs: int
    output_types: list[TensorType | None] = field(default_factory=list)

    def input(self, i: int) -> Any:
        """Input ``i``; a located error when it is absent."""
        if i >= len(self.inputs) or self.inputs[i] is None:
            raise LoweringError(f"input {i} is required", self)
        return self.inputs[i]

    def has_input(self, i: int) -> bool:
        return i < len(self.inputs) and self.inputs[i] is not None


class Lowerer:
    """What a rule builds with. ``emitter`` is a gradient :class:`Emitter` (graph mode builds
    IR, eager mode runs kernels on tensors); ``materialize`` turns a :class:`Const` into a value
    the emitter takes; ``provenance`` names the graph inputs a value was computed from."""

    def __init__(self, emitter: Any, materialize: Callable[[Const], Any],
                 provenance: Callable[[Any], frozenset[str]], node: Node | None = None,
                 eager: bool = False) -> None:
        self.emitter = emitter
        self._materialize = materialize
        self._provenance = provenance
        self.node = node
        self.eager = eager

    # -- building ---------------------------------------------------------------------------
    def _value(self, v: Any) -> Any:
        if isinstance(v, Const):
            return self._materialize(v)
        if isinstance(v, (list, tuple)):
            return [self._value(x) for x in v]
        return v

    def ops(self, name: str, operands: Sequence[Any], attrs: dict[str, Any] | None = None
            ) -> tuple:
        """Apply tdflow op ``name``; all its results."""
        return tuple(self.emitter.op(name, [self._value(v) for v in operands], dict(attrs or {})))

    def op(self, name: str, operands: Sequence[Any], attrs: dict[str, Any] | None = None) -> Any:
        """Apply tdflow op ``name``; its (first) result."""
        out = self.ops(name, operands, attrs)
        if not out:
            raise LoweringError(f"{name} has no result", self.node)
        return out[0]

    def constant(self, array: Any, dtype: str | None = None) -> Const:
        """A value holding ``array`` (a numpy array or anything ``numpy.asarray`` takes);
        ``dtype="bf16"`` for a float32 array that stands for bfloat16 values."""
        import numpy as np

        return Const(np.asarray(array), dtype=dtype)

    def scalar(self, value: float | int | bool, like: Any, dtype: str | None = None) -> Const:
        """A 0-d constant of ``like``'s element type (or ``dtype``), for broadcasting."""
        import numpy as np

        from tdflow.dialect.types import DTYPES

        dt = dtype or self.type_of(like).dtype
        return Const(np.array(value, DTYPES[dt]), dtype=dt if dt == "bf16" else None)

    # -- reading ----------------------------------------------------------------------------
    def type_of(self, v: Any) -> TensorType:
        """The value's tensor type (``shape`` entries ``None`` where unknown)."""
        if isinstance(v, Const):
            return v.type
        return self.emitter.type_of(v)

    def shape_of(self, v: Any) -> tuple[int, ...]:
        """The value's static shape; a located error when a dim is unknown."""
        t = self.type_of(v)
        if t.shape is None or any(d is None for d in t.shape):
            raise LoweringError(f"needs a static shape, got {t}", self.node)
        return tuple(t.shape)

    def const(self, v: Any) -> Any:
        """The numpy array of ``v`` when it is known while lowering, else ``None``."""
        if isinstance(v, Const):
            return v.array
        if self.eager and v is not None and hasattr(v, "numpy"):
            return v.numpy()
        return None

    def need_const(self, v: Any, what: str) -> Any:
        """The numpy array of ``v``; raises :class:`NeedsValue` naming the graph inputs it
        comes from when it is only known at run time."""
        arr = self.const(v)
        if arr is not None:
            return arr
        node = self.node
        raise NeedsValue(f"{what} must be known when the model is compiled", node,
                         self._provenance(v))

    def unsupported(self, why: str) -> NoReturn:
        """Raise a located error for this node: what it asks that tdflow cannot do."""
        raise LoweringError(why, self.node)
