"""What hooks receive and return: :class:`InferContext` (OneFlow's ``user_op::InferContext``),
SBP signatures as data, input-arg modifiers, and :class:`HookError`.

A hook reads input tensor descs and typed attributes, and sets output descs::

    @infer_logical_tensor_desc("tdflow.leaky_relu")
    def _(ctx):
        ctx.set_output_shape("y", ctx.input_shape("x"))

    @check_attr("tdflow.dropout")
    def _(ctx):
        if not 0.0 <= ctx.attr("rate") < 1.0:
            ctx.fail("rate must be in [0, 1)", attr="rate")

Shapes are tuples whose dims may be ``None`` (unknown, ``?``); a shape of ``None`` is an
unranked tensor (``tensor<*xf32>``). Hooks propagate unknowns rather than failing on them.
"""

from __future__ import annotations

from typing import Any

from tdflow.core.errors import TdflowError
from tdflow.core.valueclass import value_class

from ..opdef import OpDef
from ..types import TensorType

_UNSET = object()


class HookError(TdflowError, ValueError):
    """A hook's verdict that the op is ill-formed; names the attribute or operand at fault."""

    def __init__(self, message: str, *, attr: str | None = None, operand: str | None = None):
        super().__init__(message)
        self.message = message
        self.attr = attr
        self.operand = operand


class InferContext:
    """Input descs, attributes and output descs of one op instance, for its hooks.

    ``inputs`` maps operand name to the list of its tensor types (empty for an absent optional,
    several for a variadic); ``attrs`` holds every attribute as a typed Python value with
    defaults filled in.
    """

    __slots__ = ("op", "attrs", "_inputs", "_outputs")

    def __init__(self, op: OpDef, inputs: dict[str, list[TensorType]], attrs: dict[str, Any],
                 output_counts: dict[str, int] | None = None) -> None:
        self.op = op
        self.attrs = attrs
        self._inputs = inputs
        self._outputs: dict[str, list[list[Any]]] = {
            r.name: [[_UNSET, _UNSET] for _ in range((output_counts or {}).get(r.name, 1))]
            for r in op.results
        }

    # -- attributes ----------------------------------------------------------------------
    def attr(self, name: str) -> Any:
        """The typed value of attribute ``name`` (its default when absent)."""
        try:
            return self.attrs[name]
        except KeyError:
            raise HookError(f"'{self.op.name}' has no attribute '{name}'") from None

    @property
    def op_name(self) -> str:
        return self.op.name

    # -- inputs --------------------------------------------------------------------------
    def input(self, name: str, index: int = 0) -> TensorType:
        """The tensor type of operand ``name`` (``index`` within a variadic)."""
        try:
            return self._inputs[name][index]
        except (KeyError, IndexError):
            raise HookError(f"'{self.op.name}' has no input {name}[{index}]",
                            operand=name) from None

    def input_shape(self, name: str, index: int = 0) -> tuple[int | None, ...] | None:
        return self.input(name, index).shape

    def input_dtype(self, name: str, index: int = 0) -> str:
        return self.input(name, index).dtype

    def has_input(self, name: str, index: int = 0) -> bool:
        vals = self._inputs.get(name)
        return vals is not None and index < len(vals)

    def input_size(self, name: str) -> int:
        return len(self._inputs.get(name, ()))

    def inputs(self, name: str) -> list[TensorType]:
        return self._inputs.get(name, [])

    def input_names(self) -> list[tuple[str, int]]:
        """``(name, index)`` of every present input, in operand order (OneFlow's ``inputs()``)."""
        return [(o.name, i) for o in self.op.operands for i in range(len(self._inputs.get(o.name, ())))]

    def output_names(self) -> list[tuple[str, int]]:
        return [(r.name, i) for r in self.op.results for i in range(len(self._outputs[r.name]))]

    # -- outputs -------------------------------------------------------------------------
    def _slot(self, name: str, index: int) -> list[Any]:
        try:
            return self._outputs[name][index]
        except (KeyError, IndexError):
            raise HookError(f"'{self.op.name}' has no output {name}[{index}]") from None

    def set_output_shape(self, name: str, shape, index: int = 0) -> None:
        """Set output ``name``'s shape: a tuple of dims (``None`` = unknown) or ``None`` (unranked)."""
        self._slot(name, index)[0] = None if shape is None else tuple(shape)

    def set_output_dtype(self, name: str, dtype: str, index: int = 0) -> None:
        self._slot(name, index)[1] = dtype

    def set_output(self, name: str, ty: TensorType, index: int = 0) -> None:
        slot = self._slot(name, index)
        slot[0], slot[1] = ty.shape, ty.dtype

    def output_shape(self, name: str, index: int = 0):
        v = self._slot(name, index)[0]
        if v is _UNSET:
            raise HookError(f"output {name}[{index}] of '{self.op.name}' has no shape yet")
        return v

    def output_dtype(self, name: str, index: int = 0) -> str:
        v = self._slot(name, index)[1]
        if v is _UNSET:
            raise HookError(f"output {name}[{index}] of '{self.op.name}' has no dtype yet")
        return v

    def output_types(self) -> list[TensorType]:
        """The inferred result types in result order; an unset shape or dtype is an error."""
        out = []
        for r in self.op.results:
            for i, (shape, dtype) in enumerate(self._outputs[r.name]):
                if shape is _UNSET or dtype is _UNSET:
                    what = "shape" if shape is _UNSET else "dtype"
                    raise HookError(f"the hooks of '{self.op.name}' did not set the {what} of "
                                    f"output '{r.name}'[{i}]")
                out.append(TensorType(shape, dtype))
        return out

    # -- errors --------------------------------------------------------------------------
    def fail(self, message: str, *, attr: str | None = None, operand: str | None = None):
        """Raise :class:`HookError`; the verifier reports it at the op, naming ``attr``/``operand``."""
        raise HookError(message, attr=attr, operand=operand)


@value_class(frozen=True, slots=True)
class SbpSignature:
    """One SBP signature: a parallel distribution for every input and output blob.

    Blobs are named OneFlow's way (``x_0``); values are ``"S(axis)"`` (split), ``"B"``
    (broadcast) or ``"P"`` (partial sum).

    >>> SbpSignature.make({"x_0": "S(0)"}, {"y_0": "S(0)"}).outputs
    (('y_0', 'S(0)'),)
    """

    inputs: tuple[tuple[str, str], ...]
    outputs: tuple[tuple[str, str], ...]

    @classmethod
    def make(cls, inputs: dict[str, str], outputs: dict[str, str]) -> SbpSignature:
        return cls(tuple(inputs.items()), tuple(outputs.items()))

    def as_dict(self) -> dict[str, dict[str, str]]:
        return {"inputs": dict(self.inputs), "outputs": dict(self.outputs)}


@value_class(frozen=True, slots=True)
class InputArgModifier:
    """OneFlow's ``InputArgModifier``: ``is_mutable`` (written in place), ``requires_grad``."""

    is_mutable: bool = False
    requires_grad: bool = True
