"""Shape and dtype inference hooks of the ``onnx`` dialect: ONNX's own inference, per op.

Every ``onnx.*`` op declares ``has_logical_tensor_desc_infer_fn`` and ``has_data_type_infer_fn``
(the generated ``ONNX_Op`` class sets both); one hook serves them all by asking
``onnx.shape_inference`` about a one-node model of the op at its schema's opset: the operand
types and attributes the IR holds go in, the result types come out. The verifier then checks an
imported or hand-written ``onnx.*`` program like any other (``tdflow verify model.mlir``).

>>> from tdflow.dialect.types import TensorType
>>> from tdflow.onnx.context import onnx_context
>>> transpose = onnx_context().lookup("onnx.Transpose")
>>> infer_op_types(transpose, {"data": [TensorType((2, 3, 4), "f32")]}, {"perm": [2, 0, 1]})
[TensorType(shape=(4, 2, 3), dtype='f32')]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tdflow.dialect.opdef import OpDef
from tdflow.dialect.types import TensorType

from .extra import ONNX_DTYPES, require_onnx
from .schema import op_version, tensor_type

if TYPE_CHECKING:
    from tdflow.dialect.hooks.context import InferContext

__all__ = ["declare_hooks", "infer_op_types"]

_CODE = {v: k for k, v in ONNX_DTYPES.items()}


def _onnx_attr(onnx: Any, name: str, kind: str, value: Any) -> Any:
    """An ``AttributeProto`` for a typed tdflow attribute value."""
    if kind == "other":
        from tdflow.dialect.ir.elements import to_numpy

        try:
            arr = to_numpy(value)
        except (ValueError, TypeError):
            return None  # a graph: nothing ONNX's inference of this node needs
        return onnx.helper.make_attribute(name, onnx.numpy_helper.from_array(arr))
    if isinstance(value, tuple):
        value = list(value)
    return onnx.helper.make_attribute(name, value)


def infer_op_types(opdef: OpDef, inputs: dict[str, list[TensorType]], attrs: dict[str, Any],
                   n_results: int | None = None) -> list[TensorType | None]:
    """The result types ONNX infers for the ``onnx.*`` op ``opdef`` (``onnx.Conv``,
    ``onnx.ReduceSumV13``) with operands of ``inputs`` (by operand name, a list per operand) and
    ``attrs`` (typed values; absent ones take the schema's default). ``None`` for a result ONNX
    says nothing of. :func:`tdflow.onnx.context.infer_types` does the same by op name."""
    onnx = require_onnx()
    op_type, version = op_version(opdef.name[len("onnx."):])
    helper = onnx.helper
    names, infos = [], []
    for od in opdef.operands:
        vals = inputs.get(od.name, [])
        if not vals and not od.is_variadic:
            names.append("")
            continue
        for i, t in enumerate(vals):
            n = f"{od.name}_{i}"
            names.append(n)
            shape = None if t.shape is None else [d if d is not None else f"d{len(infos)}_{j}"
                                                  for j, d in enumerate(t.shape)]
            infos.append(helper.make_tensor_value_info(n, _CODE[t.dtype], shape))
    while names and not names[-1]:
        names.pop()
    count = n_results if n_results is not None else len(opdef.results)
    outs = [f"out{i}" for i in range(count)]
    node = helper.make_node(op_type, names, outs)
    for a in opdef.attributes:
        if a.name in attrs and attrs[a.name] is not None and a.name in _schema_attrs(
                onnx, op_type, version):
            pa = _onnx_attr(onnx, a.name, a.kind, attrs[a.name])
            if pa is not None:
                node.attribute.append(pa)
    graph = helper.make_graph([node], "op", infos, [helper.make_empty_tensor_value_info(o)
                                                    for o in outs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", version)])
    model.ir_version = min(model.ir_version, onnx.IR_VERSION)
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    except Exception as exc:  # noqa: BLE001 - InferenceError and friends
        lines = str(exc).strip().splitlines()
        raise ValueError(lines[-1] if lines else type(exc).__name__) from None
    by_name = {vi.name: vi.type for vi in inferred.graph.output}
    return [tensor_type(by_name.get(o)) if by_name.get(o) is not None and
            by_name[o].tensor_type.elem_type else None for o in outs]


def _schema_attrs(onnx: Any, op_type: str, version: int) -> set[str]:
    return set(onnx.defs.get_schema(op_type, version, "").attributes)


def _hook(ctx: InferContext) -> None:
    from tdflow.dialect.hooks.context import HookError

    inputs = {o.name: ctx.inputs(o.name) for o in ctx.op.operands}
    outs = ctx.output_names()
    try:
        types = infer_op_types(ctx.op, inputs, ctx.attrs, len(outs))
    except ValueError as exc:
        raise HookError(f"ONNX's shape inference: {exc}") from None
    for (name, i), t in zip(outs, types):
        if t is None:
            ctx.set_output(name, TensorType(None, ctx.input(*ctx.input_names()[0]).dtype)
                           if ctx.input_names() else TensorType(None, "f32"), i)
        else:
            ctx.set_output(name, t, i)


def declare_hooks() -> str:
    """Declare the inference hooks of every ``onnx.*`` op as the onnx library's own and return
    the name they are declared under: :func:`tdflow.dialect.context.load_ops` calls it when it
    loads ``onnx.td`` (:data:`~tdflow.dialect.context.SHIPPED_LIBRARIES`), so the contexts
    with the onnx dialect get these hooks and no other context sees them.

    >>> from tdflow.core.declarations import snapshot
    >>> ops, kind, fn, replace = snapshot([declare_hooks()])["hook"][0]
    >>> "onnx.Relu" in ops, kind
    (True, 'infer_logical_tensor_desc')
    """
    from tdflow.core.declarations import declare

    from .gen_td import schemas

    require_onnx()
    names = tuple(f"onnx.{s.name}" if latest else f"onnx.{s.name}V{s.since_version}"
                  for s, latest in schemas())
    return declare(__name__, "hook", [(names, kind, _hook, False) for kind in
                                      ("infer_logical_tensor_desc", "infer_data_type")])
