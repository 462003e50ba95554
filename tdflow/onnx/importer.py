"""ONNX models in: a ``ModelProto`` becomes a :class:`Module` of ``onnx.*`` ops.

Each node becomes the op of the ``onnx`` dialect (``tdflow/onnx/onnx.td``) for the schema
version its opset resolves to: ``onnx.Add`` for the newest, ``onnx.ReduceSumV13`` for an older
one (onnx-mlir's naming). ONNX value names become the IR's value names, node names its
locations; initializers and ``Constant`` nodes become ``onnx.Constant`` ops whose data is a
``dense<...>`` attribute or, for big tensors, a ``dense_resource`` blob of the module. Result
types come from ONNX's own shape inference (unknown dims are ``?``).

Every problem is reported before anything runs, all at once: a file that is not an ONNX model,
a graph that fails ONNX's checker (cycles, dangling inputs), unknown ops or domains, attributes
of the wrong type, shapes that contradict the data.

>>> import onnx
>>> from onnx import helper, TensorProto
>>> g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu0")], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
>>> m = import_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
>>> print(m, end="")
func.func @g(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = "onnx.Relu"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

from tdflow.dialect.attr_convert import to_attr
from tdflow.dialect.builder import op_method
from tdflow.dialect.context import Context
from tdflow.dialect.ir.builder import Builder
from tdflow.dialect.ir.core import Module, NameLoc
from tdflow.dialect.ir.elements import elements_attr
from tdflow.dialect.types import TensorType

from .context import onnx_context
from .extra import ONNX_DTYPES, onnx_dtype_name, require_onnx
from .rules.api import LoweringError
from .schema import ONNX_TD as _ONNX_TD
from .schema import tensor_type

if TYPE_CHECKING:
    from tdflow.dialect.opdef import OpDef

__all__ = ["import_model", "initializers", "onnx_context", "load_model", "OnnxImportError",
           "ONNX_TD", "resolve_op", "value_name"]

ONNX_TD = os.fspath(_ONNX_TD)
DEFAULT_DOMAINS = ("", "ai.onnx")


class OnnxImportError(LoweringError):
    """A model that cannot be imported; ``problems`` lists every one found."""

    def __init__(self, source: str, problems: list[str]):
        self.source = source
        self.problems = problems
        head = f"{source}: " if source else ""
        super().__init__(head + ("\n".join(problems) if len(problems) == 1 else
                                 f"{len(problems)} problems:\n  " + "\n  ".join(problems)))

    def render(self) -> str:
        head = f"{self.source}: " if self.source else ""
        return "\n".join(f"{head}error: {p}" for p in self.problems)



def load_model(model: Any, source: str = "") -> tuple[Any, str]:
    """``(ModelProto, name for messages)`` from a ModelProto, a path or the serialized bytes."""
    onnx = require_onnx()
    if isinstance(model, onnx.ModelProto):
        return model, source or model.graph.name or "model"
    if isinstance(model, (bytes, bytearray, memoryview)):
        data, source = bytes(model), source or "<bytes>"
    else:
        source = source or os.fspath(model)
        try:
            with open(model, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise OnnxImportError(source, [f"cannot read the model: {exc.strerror}"]) from None
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except Exception as exc:  # noqa: BLE001 - protobuf's DecodeError and friends
        raise OnnxImportError(source, [f"not an ONNX model (the protobuf does not parse: "
                                       f"{exc})"]) from None
    if not proto.HasField("graph"):
        raise OnnxImportError(source, ["not an ONNX model (no graph)"])
    return proto, source


def resolve_op(op_type: str, opset: int) -> tuple[str, int] | None:
    """``(mnemonic, since_version)`` of the ``onnx`` dialect op that ``op_type`` is at default
    domain ``opset``, or ``None`` when ONNX defines no such op there."""
    onnx = require_onnx()
    try:
        schema = onnx.defs.get_schema(op_type, opset, "")
        latest = onnx.defs.get_schema(op_type, "")
    except onnx.defs.SchemaError:
        return None
    v = schema.since_version
    return (op_type if v == latest.since_version else f"{op_type}V{v}"), v


_NAME_RE = re.compile(r"[^A-Za-z0-9_$.\-]")


def value_name(name: str) -> str:
    """The IR value name of ONNX value ``name`` (characters MLIR names cannot hold become
    ``_``; a leading digit gets a ``v``).

    >>> value_name("gpu_0/data_0"), value_name("0")
    ('gpu_0_data_0', 'v0')
    """
    n = _NAME_RE.sub("_", name)
    return n if n and not n[0].isdigit() else f"v{n}"


def import_model(model: Any, *, ctx: Context | None = None, source: str = "",
                 func_name: str | None = None, weights_as_args: bool = False) -> Module:
    """The model as a Module of ``onnx.*`` ops (one function, named after the graph).

    ``model`` is a ``ModelProto``, a path or the serialized bytes; raises
    :class:`OnnxImportError` listing every problem found. ``weights_as_args`` makes the
    initializers arguments after the graph's inputs (their values: :func:`initializers`), so
    that ``tdflow.value_and_grad`` can differentiate with respect to them and fine-tune.
    """
    onnx = require_onnx()
    proto, source = load_model(model, source)
    ctx = ctx or onnx_context()
    problems: list[str] = []
    opsets = {o.domain: o.version for o in proto.opset_import}
    opset = next((opsets[d] for d in DEFAULT_DOMAINS if d in opsets), None)
    g = proto.graph
    # ops and domains first: ONNX's checker would stop at the first, without its node
    resolved: list[tuple[Any, Any, int]] = []
    for i, node in enumerate(g.node):
        where = f"node '{node.name or f'#{i}'}' ({node.op_type})"
        if node.domain not in DEFAULT_DOMAINS:
            problems.append(f"{where}: domain '{node.domain}' is not supported (only the "
                            f"default ONNX domain is)")
            continue
        if opset is None:
            problems.append(f"{where}: the model imports no opset of the default domain")
            continue
        r = resolve_op(node.op_type, opset)
        if r is None:
            problems.append(f"{where}: ONNX opset {opset} has no op '{node.op_type}'")
            continue
        opdef = ctx.lookup(f"onnx.{r[0]}")
        if opdef is None:
            problems.append(f"{where}: op {node.op_type} (opset {opset}, version {r[1]}) is "
                            f"not in the onnx dialect")
            continue
        resolved.append((node, opdef, r[1]))
    if problems:
        raise OnnxImportError(source, problems)
    skeleton = _skeleton(proto)
    try:
        onnx.checker.check_model(skeleton)
    except onnx.checker.ValidationError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid"
        raise OnnxImportError(source, [f"the model fails ONNX's checker: {first}"]) from None
    try:
        inferred = onnx.shape_inference.infer_shapes(skeleton, check_type=True,
                                                     strict_mode=True, data_prop=True)
    except Exception as exc:  # noqa: BLE001 - onnx raises InferenceError and plain errors
        msg = str(exc).strip().splitlines()
        raise OnnxImportError(source, [f"shape inference failed: "
                                       f"{msg[-1] if msg else type(exc).__name__}"]) from None
    types: dict[str, Any] = {}
    for vi in list(inferred.graph.input) + list(inferred.graph.value_info) + \
            list(inferred.graph.output):
        types[vi.name] = vi.type
    g = proto.graph

    inits = {t.name: t for t in g.initializer}
    args = [vi for vi in g.input if vi.name not in inits]
    if weights_as_args:
        args += [onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                 for t in g.initializer]
        inits = {}
    arg_types = []
    for vi in args:
        t = tensor_type(vi.type)
        if t is None:
            problems.append(f"graph input '{vi.name}' has type {_type_text(vi.type)}, which "
                            f"tdflow has no tensor type for")
            t = TensorType(None, "f32")
        arg_types.append(t)

    if problems:
        raise OnnxImportError(source, problems)

    module = Module()
    module.value_names = True  # print ONNX's value names, not numbers
    b = Builder(module)
    env: dict[str, Any] = {}
    with b.func(value_name(func_name or g.name or "main"), arg_types, None,
                arg_names=[value_name(a.name) for a in args]) as f:
        for vi, v in zip(args, f.args):
            env[vi.name] = v
        const_def = ctx.lookup("onnx.Constant")
        for name, t in inits.items():
            env[name] = _constant(b, ctx, const_def, module, name, t, problems)
        for i, (node, opdef, version) in enumerate(resolved):
            _import_node(b, ctx, module, node, opdef, version, env, types, problems, i)
        outs = []
        for vi in g.output:
            v = env.get(vi.name)
            if v is None:
                problems.append(f"graph output '{vi.name}' is not computed by any node")
            else:
                outs.append(v)
        if problems:
            raise OnnxImportError(source, problems)
        b.ret(*outs)
    return module


#: initializers with more elements than this are checked and inferred as typed graph inputs
_BIG_INITIALIZER = 4096


def _skeleton(proto: Any) -> Any:
    """``proto`` with its big initializers turned into typed graph inputs: ONNX's checker and
    shape inference serialize the whole model (seconds for ResNet-50's weights), and only
    small initializers (shapes, axes) carry values that inference uses."""
    import math

    onnx = require_onnx()
    big = [t for t in proto.graph.initializer if math.prod(t.dims) > _BIG_INITIALIZER]
    if not big:
        return proto
    sk = onnx.ModelProto()
    sk.CopyFrom(proto)
    names = {t.name for t in big}
    keep = [t for t in sk.graph.initializer if t.name not in names]
    del sk.graph.initializer[:]
    sk.graph.initializer.extend(keep)
    listed = {vi.name for vi in sk.graph.input}
    sk.graph.input.extend(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                          for t in big if t.name not in listed)
    return sk


def initializers(model: Any) -> dict[str, Any]:
    """The model's initializers as numpy arrays, by the argument names
    ``import_model(..., weights_as_args=True)`` gives them."""
    onnx = require_onnx()
    proto, _ = load_model(model)
    return {value_name(t.name): onnx.numpy_helper.to_array(t) for t in proto.graph.initializer}


def _type_text(tp: Any) -> str:
    kind = tp.WhichOneof("value") if tp is not None else None
    if kind == "tensor_type":
        return f"tensor({onnx_dtype_name(tp.tensor_type.elem_type)})"
    return kind or "unknown"


def _constant(b: Builder, ctx: Context, const_def: Any, module: Module, name: str, tensor: Any,
              problems: list[str]) -> Any:
    arr, dtype = _tensor_array(tensor, problems, f"initializer '{name}'")
    if arr is None:
        return None
    attr = elements_attr(arr, module, value_name(name), dtype=dtype)
    op = b.create("onnx.Constant", [], [attr.type], {"value": attr}, NameLoc(name))
    op.results[0].name = value_name(name)
    return op.results[0]


def _tensor_array(tensor: Any, problems: list[str], what: str) -> tuple[Any, str | None]:
    onnx = require_onnx()
    dtype = ONNX_DTYPES.get(tensor.data_type)
    if dtype is None:
        problems.append(f"{what} has element type {onnx_dtype_name(tensor.data_type)}, which "
                        f"tdflow has no dtype for")
        return None, None
    try:
        arr = onnx.numpy_helper.to_array(tensor)
    except Exception as exc:  # noqa: BLE001 - external data missing, bad sizes
        problems.append(f"{what}: its data cannot be read ({exc})")
        return None, None
    if dtype == "bf16":
        import numpy as np

        arr = np.asarray(arr, dtype=np.float32)
    return arr, dtype


def _attr_value(a: Any, kind: str, problems: list[str], where: str, module: Module) -> Any:
    """The IR attribute of ONNX attribute ``a`` for a tdflow attribute of ``kind``."""
    onnx = require_onnx()
    AP = onnx.AttributeProto
    expected = {"si64": AP.INT, "f32": AP.FLOAT, "str": AP.STRING, "si64_array": AP.INTS,
                "f32_array": AP.FLOATS, "str_array": AP.STRINGS}.get(kind)
    if a.type == AP.TENSOR and kind == "other":
        arr, dtype = _tensor_array(a.t, problems, f"{where}: attribute '{a.name}'")
        return None if arr is None else elements_attr(arr, module, None, dtype=dtype)
    if expected is None or a.type != expected:
        problems.append(f"{where}: attribute '{a.name}' is {AP.AttributeType.Name(a.type)}, "
                        f"expected {AP.AttributeType.Name(expected) if expected else kind}"
                        + (" (graph attributes, If/Loop/Scan, are not supported)"
                           if a.type in (AP.GRAPH, AP.GRAPHS) else ""))
        return None
    value = onnx.helper.get_attribute_value(a)
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    elif isinstance(value, list) and value and isinstance(value[0], bytes):
        value = [v.decode("utf-8", "replace") for v in value]
    try:
        return to_attr(kind, value)
    except (ValueError, TypeError, OverflowError) as exc:
        problems.append(f"{where}: attribute '{a.name}': {exc}")
        return None


def _import_node(b: Builder, ctx: Context, module: Module, node: Any, opdef: OpDef, version: int,
                 env: dict[str, Any], types: dict[str, Any], problems: list[str], i: int) -> None:
    where = f"node '{node.name or f'#{i}'}' ({node.op_type})"
    # operands in the op's order: the ONNX inputs, "" for an absent optional one
    ins = list(node.input)
    groups: list[Any] = []
    pos = 0
    for od in opdef.operands:
        if od.is_variadic:
            vals = [env.get(n) for n in ins[pos:] if n]
            pos = len(ins)
            groups.append(vals)
            continue
        name = ins[pos] if pos < len(ins) else ""
        pos += 1
        if not name:
            if od.is_single:
                problems.append(f"{where}: input '{od.name}' is required")
            groups.append(None)
        else:
            groups.append(env.get(name))
    if pos < len(ins) and any(ins[pos:]):
        problems.append(f"{where}: {len(ins)} inputs, the op takes at most {pos}")
    for n in ins:
        if n and n not in env:
            problems.append(f"{where}: input '{n}' is not a graph input, an initializer or an "
                            f"earlier node's output")
            return
    attrs: dict[str, Any] = {}
    for a in node.attribute:
        adef = opdef.attr(a.name)
        if adef is None:
            names = ", ".join(x.name for x in opdef.attributes) or "none"
            problems.append(f"{where}: unknown attribute '{a.name}' (attributes: {names})")
            continue
        v = _attr_value(a, adef.kind, problems, where, module)
        if v is not None:
            attrs[a.name] = v
    # results: the outputs up to the last one used (an absent optional output is "")
    outs = list(node.output)
    while outs and not outs[-1]:
        outs.pop()
    n_max = sum(1 for r in opdef.results if not r.is_variadic)
    if not any(r.is_variadic for r in opdef.results) and len(outs) > n_max:
        problems.append(f"{where}: {len(outs)} outputs, the op has {n_max}")
        return
    rtypes = []
    for o in outs:
        t = tensor_type(types.get(o)) if o else None
        rtypes.append(t if t is not None else TensorType(None, "f32"))
    if problems:
        return
    method = op_method(ctx, opdef)
    built = method(b, *groups, loc=NameLoc(node.name or f"{node.op_type}_{i}"),
                   result_types=rtypes, **attrs)
    op = built if not isinstance(built, tuple) and not hasattr(built, "type") else None
    results = (op.results if op is not None else
               built if isinstance(built, tuple) else (built,))
    for o, r in zip(outs, results):
        if o:
            r.name = value_name(o)
            env[o] = r
