"""``infer-shapes``: refine ``?``/``*`` result types from each op's inference hooks.

One generic worklist over the dialect's ``infer_result_types`` (which runs the op's
``infer_logical_tensor_desc`` / ``infer_data_type`` hooks): when an op's result type gets more
precise, its users are queued again. Nothing here knows any op by name.

Declared types that contradict inference are errors; types that stay dynamic are reported as
warnings naming the op and its location (``strict=true`` makes them errors).

Before (``%1`` declared ``tensor<*xf32>``)::

    %1 = "tdflow.relu"(%0) : (tensor<4x8xf32>) -> tensor<*xf32>

after::

    %1 = "tdflow.relu"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from tdflow.dialect.types import TensorType

from ..ir_access import diagnostic, op_attributes, op_def
from ..pass_manager import Pass, PassContext, PassFailure

if TYPE_CHECKING:
    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.ir.core import FuncOp, Module

    from ..ir_access import LoweringDialect


class InferShapesPass(Pass):
    name = "infer-shapes"
    summary = "refine dynamic result types from the ops' inference hooks (one worklist)"
    options = {"strict": False}

    def run(self, module: Module, context: PassContext) -> None:
        errors: list[Any] = []
        unresolved: list[Any] = []
        for func in module:
            self._infer_function(func, context.dialect, errors)
            unresolved.extend(_unresolved(func))
        if errors or (unresolved and self.option("strict")):
            raise PassFailure(self.name, errors + unresolved)
        context.warnings.extend(unresolved)

    def _infer_function(self, func: FuncOp, dialect: Dialect | LoweringDialect, errors: list[Any]) -> None:
        work = deque(func.body)
        queued = set(work)
        while work:
            op = work.popleft()
            queued.discard(op)
            if op.parent is None or not op.results or op_def(dialect, op.name) is None:
                continue
            inputs = op.operand_types
            if not all(isinstance(t, TensorType) for t in inputs):
                continue
            try:
                inferred = dialect.infer_result_types(op.name, list(inputs),
                                                      op_attributes(dialect, op))
            except Exception as exc:  # noqa: BLE001 - a hook's complaint becomes a diagnostic
                if all(t.is_static for t in inputs):
                    errors.append(diagnostic(
                        f"cannot infer the result types of '{op.name}': {_message(exc)}",
                        op.loc))
                continue
            if inferred is None:
                continue
            for r, t in zip(op.results, inferred):
                if not isinstance(t, TensorType) or t == r.type:
                    continue
                old = r.type
                if isinstance(old, TensorType) and t.refines(old):
                    r.type = t
                    for user in r.users:
                        if user not in queued:
                            queued.add(user)
                            work.append(user)
                elif isinstance(old, TensorType) and not t.compatible(old):
                    errors.append(diagnostic(
                        f"'{op.name}' result #{r.index} is declared {old} but its operands "
                        f"give {t}", op.loc))
        _refine_function_results(func)


def _refine_function_results(func: FuncOp) -> None:
    ret = func.body.terminator
    if ret is None:
        return
    for i, v in enumerate(ret.operands):
        if i < len(func.result_types):
            declared = func.result_types[i]
            if (isinstance(declared, TensorType) and isinstance(v.type, TensorType)
                    and v.type != declared and v.type.refines(declared)):
                func.result_types[i] = v.type


def _unresolved(func: FuncOp) -> list[Any]:
    out = []
    for a in func.args:
        if isinstance(a.type, TensorType) and not a.type.is_static:
            out.append(diagnostic(
                f"argument %{a.name} of @{func.name} has dynamic type {a.type}; "
                f"it is resolved when the program is called", a.loc, "warning"))
    for op in func.body:
        for r in op.results:
            if isinstance(r.type, TensorType) and not r.type.is_static:
                out.append(diagnostic(
                    f"result #{r.index} of '{op.name}' stays {r.type} after shape inference",
                    op.loc, "warning"))
    return out


def _message(exc: BaseException) -> str:
    return str(getattr(exc, "message", None) or exc)
