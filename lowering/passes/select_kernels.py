"""``select-kernels{device=cpu}``: choose one kernel per op from the handed-in kernel table.

The runtime hands its kernel table to the pass manager (``kernel_table=``); lowering never
imports the runtime. Each op's candidates are asked, in registration order, whether they match
the op's device, operand/result dtypes and attributes (OneFlow's ``SetIsMatchedHob``); the first
match wins. No match is an error at the op that lists every candidate and why it was refused.

The choice is recorded in ``context.kernels`` (op -> :class:`KernelChoice`) for ``plan-memory``;
the IR is not changed (``--print-ir-after=select-kernels`` lists the choices as comments).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tdflow.dialect.attr_normalize import complete_attrs
from tdflow.dialect.ir import RETURN
from tdflow.dialect.ir.attrs import DenseElementsAttr, DenseResourceAttr, to_python
from tdflow.dialect.op_verify import operand_groups
from tdflow.dialect.opdef import OpDef
from tdflow.dialect.types import TensorType

from tdflow.core.valueclass import value_class

from ..ir_access import diagnostic, is_pure, op_attributes, op_def
from ..pass_manager import Pass, PassContext, PassFailure

if TYPE_CHECKING:
    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.ir.core import Module, Operation

    from ..ir_access import LoweringDialect


@value_class(frozen=True)
class KernelChoice:
    """The kernel chosen for one op.

    ``in_place``: ``(output, input)`` pairs the kernel may write over; ``hoistable``: the op may
    run once when the plan is loaded if none of its inputs depends on an argument.
    """

    kernel: str
    in_place: tuple[tuple[int, int], ...] = ()
    hoistable: bool = True


class SelectKernelsPass(Pass):
    name = "select-kernels"
    summary = "choose a kernel per op from the runtime's kernel table (device, dtypes, attrs)"
    options = {"device": "cpu"}

    def run(self, module: Module, context: PassContext) -> None:
        table = context.kernel_table
        device = self.option("device")
        context.device = device
        if table is None:
            raise PassFailure(self.name, [diagnostic(
                "no kernel table: the runtime hands one in (PassManager(..., kernel_table=...)); "
                "`tdflow.compile` and `tdflow lower` do this for you")])
        errors = []
        for func in module:
            for op in func.body:
                if op.name == RETURN:
                    continue
                found = choose(table, op, device, context.dialect)
                if isinstance(found, KernelChoice):
                    context.kernels[op] = found
                else:
                    errors.append(found)
        if errors:
            raise PassFailure(self.name, errors)

    def annotate(self, module: Module, context: PassContext) -> str:
        lines = []
        for func in module:
            for op in func.body:
                choice = context.kernels.get(op)
                if choice is not None:
                    extra = "".join(f", out{o} may overwrite in{i}" for o, i in choice.in_place)
                    lines.append(f"// @{func.name}: '{op.name}' at {op.loc} -> kernel "
                                 f"{choice.kernel}{extra}")
        return "\n".join(lines)


def op_signature(op: Operation, dialect: Dialect | LoweringDialect | None = None) -> tuple[list[str], list[str], dict[str, Any]]:
    """``(input dtypes, output dtypes, attributes as Python values)`` of ``op`` (the declared
    attributes only, given the ``dialect``: discardable ones never match a kernel)."""
    ins = [t.dtype if isinstance(t, TensorType) else str(t) for t in op.operand_types]
    outs = [t.dtype if isinstance(t, TensorType) else str(t) for t in op.result_types]
    attrs = op.attributes if dialect is None else op_attributes(dialect, op)
    return ins, outs, {k: kernel_value(v) for k, v in attrs.items()}


def choose(table: Any, op: Operation, device: str, dialect: Dialect | LoweringDialect | None = None) -> KernelChoice | Any:
    """The first matching kernel for ``op``, or a diagnostic listing the candidates."""
    ins, outs, attrs = op_signature(op, dialect)
    try:
        kernel = table.select(op.name, ins, attrs, device=device)
    except LookupError as exc:
        return diagnostic(str(exc.args[0] if exc.args else exc), op.loc)
    return KernelChoice(kernel.name, tuple(sorted(kernel.inplace.items())),
                        hoistable=is_pure(dialect, op) if dialect is not None else False)


def run_for_folding(context: PassContext, op: Operation, inputs: list[Any]) -> list[Any] | None:
    """Run ``op`` on constant ``inputs`` with the CPU kernel (for constant folding).

    Returns the output arrays, or ``None`` when no CPU kernel matches or the kernel fails (the
    op is then simply not folded).
    """
    import numpy as np

    table = context.kernel_table
    found = choose(table, op, "cpu", context.dialect)
    if not isinstance(found, KernelChoice):
        return None
    outputs = [np.empty(t.shape, t.np_dtype) for t in op.result_types]
    try:
        got = table.get(found.kernel).fn(kernel_attrs(op, context.dialect), inputs, outputs)
    except Exception:  # noqa: BLE001 - a kernel that cannot fold leaves the op alone
        return None
    return [np.asarray(g) for g in got]


def kernel_value(attr: Any) -> Any:
    """An attribute as kernels see it: its Python value, except constant tensors, which stay
    the IR attribute (a kernel decodes its data once, with ``dialect.ir.elements.to_numpy``,
    instead of receiving a tuple of every element)."""
    if isinstance(attr, (DenseElementsAttr, DenseResourceAttr)):
        return attr
    return to_python(attr)


def kernel_attrs(op: Operation, dialect: Dialect | LoweringDialect) -> dict[str, Any]:
    """The attributes a kernel receives: the op's, as Python values, completed and normalized
    (:func:`~tdflow.dialect.attr_normalize.complete_attrs`).

    A fused op's expression text is parsed back into the expression the kernel runs.
    """
    from tdflow.dialect.formula.text import parse_expr

    from ..ir_access import FUSED_OP

    d = op_def(dialect, op.name)
    attrs = {k: kernel_value(v) for k, v in op_attributes(dialect, op).items()}
    if isinstance(d, OpDef):
        # defaults as the IR would hold them, axes non-negative, pairs expanded (the dialect's
        # one normalization), so kernels read attrs[name] and trust it
        groups = operand_groups(d, op) or {}
        # a served op (oneflow.*) by the rules of the standard op serving it
        hook_op = getattr(dialect, "hook_op", None)
        attrs = complete_attrs(d, attrs, {k: [v.type for v in vs] for k, vs in groups.items()},
                               hook_op(op.name) if hook_op is not None else None)
    if op.name == FUSED_OP and isinstance(attrs.get("expr"), str):
        attrs["expr"] = parse_expr(attrs["expr"])
        t = op.results[0].type if op.results else None
        if isinstance(t, TensorType):
            attrs.setdefault("out_dtype", t.dtype)
    return attrs

