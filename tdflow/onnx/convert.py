"""Lowering ``onnx.*`` to ``tdflow.*``: each op through its rule, constants folded on the way.

The converter walks a function in order. An ONNX op whose inputs are all known (initializers,
``Constant`` nodes, values folded before it, graph inputs the caller specialises on) is folded:
its rule runs on tdflow's eager kernels and the result is a constant. Any other op's rule builds
``tdflow.*`` IR, with result types from tdflow's inference hooks. A rule that needs a value only
known at run time (a ``Reshape`` whose shape is a graph input) raises :class:`NeedsValue`
naming the graph inputs it comes from; :func:`convert` with those inputs' ``values`` lowers the
specialised program (onnx-mlir's "constant" mode).

Ops that are not ``onnx.*`` are copied, so a program may mix dialects.

>>> import numpy as np, onnx
>>> from onnx import helper, TensorProto
>>> from tdflow.onnx.importer import import_model
>>> g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
>>> m = import_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
>>> print(convert(m), end="")
func.func @g(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "tdflow.relu"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tdflow.dialect.attr_convert import to_value
from tdflow.dialect.context import Context
from tdflow.dialect.ir.builder import Builder
from tdflow.dialect.ir.core import RETURN, FuncOp, Module, Operation
from tdflow.dialect.ir.elements import elements_attr, to_numpy
from tdflow.dialect.types import TensorType

from .context import onnx_context
from .rules import load_rules, rule_for
from .rules.api import Const, Lowerer, LoweringError, NeedsValue, Node
from .schema import op_version

if TYPE_CHECKING:
    from tdflow.dialect.opdef import OpDef

__all__ = ["convert", "has_onnx_ops", "NeedsValue", "LoweringError", "unsupported_ops"]



def has_onnx_ops(module: Module) -> bool:
    """Whether any function of ``module`` holds an ``onnx.*`` op."""
    return any(op.name.startswith("onnx.") for f in module for op in f.body.ops)


def unsupported_ops(module: Module) -> list[LoweringError]:
    """Every ``onnx.*`` op without a lowering rule, each a located error."""
    load_rules()
    errors = []
    for f in module:
        for op in f.body.ops:
            if op.name.startswith("onnx."):
                op_type, version = op_version(op.name[5:])
                if rule_for(op_type, version) is None:
                    errors.append(LoweringError(f"ONNX op {op_type} (version {version}) has no "
                                                f"lowering to tdflow ops", loc=op.loc))
    return errors


def convert(module: Module, ctx: Context | None = None, *,
            values: Mapping[str, Any] | None = None,
            arg_types: Mapping[str, TensorType] | None = None, fold: bool = True) -> Module:
    """A new module in which every ``onnx.*`` op is lowered to ``tdflow.*`` ops.

    ``values`` maps function argument names to arrays to specialise on (they stay arguments,
    unused); ``arg_types`` gives arguments other (static) types; ``fold=False`` folds nothing, so every op's rule builds IR. Raises
    :class:`LoweringError` (all unsupported ops at once) or :class:`NeedsValue`.
    """
    ctx = ctx or onnx_context()
    errors = unsupported_ops(module)
    if errors:
        if len(errors) == 1:
            raise errors[0]
        raise LoweringError(f"{len(errors)} ops cannot be lowered:\n  " +
                            "\n  ".join(f"{e.loc}: {e}" if e.loc else str(e) for e in errors))
    out = Module()
    out.resources = module.resources
    for f in module:
        _Converter(ctx, out, dict(values or {}), dict(arg_types or {}), fold).run(f)
    return out


class _Converter:
    def __init__(self, ctx: Context, out: Module, values: dict[str, Any],
                 arg_types: dict[str, TensorType], fold: bool) -> None:
        self.ctx = ctx
        self.arg_types = arg_types
        self.out = out
        self.values = values
        self.fold = fold
        self.b = Builder(out)
        self.env: dict[Any, Any] = {}
        self.prov: dict[int, frozenset[str]] = {}
        self._graph = None
        self._eager = None
        self._n_const = 0
        self._folded: set[Operation] = set()

    # -- values -----------------------------------------------------------------------------
    def materialize(self, c: Const) -> Any:
        if c.materialized is None:
            self._n_const += 1
            if c.array.size == 0:  # no elements to hold: a fill of the shape
                c.materialized = self._graph.op("tdflow.constant", [], {
                    "shape": list(c.array.shape), "dtype": c.type.dtype})[0]
            else:
                attr = elements_attr(c.array, self.out, f"cst{self._n_const}", dtype=c.dtype)
                op = self.b.create("tdflow.dense_constant", [], [attr.type], {"value": attr})
                c.materialized = op.results[0]
            self.prov[id(c.materialized)] = frozenset()
        return c.materialized

    def provenance(self, v: Any) -> frozenset[str]:
        if isinstance(v, Const):
            return frozenset()
        return self.prov.get(id(v), frozenset())

    def run(self, f: FuncOp) -> None:
        import numpy as np

        from tdflow.lowering.passes.autodiff import GraphEmitter

        arg_names = [a.name or f"arg{i}" for i, a in enumerate(f.args)]
        types = [self.arg_types.get(n, a.type) for n, a in zip(arg_names, f.args)]
        with self.b.func(f.name, types, None, arg_names=arg_names,
                         loc=f.loc) as nf:
            self._graph = GraphEmitter(self.ctx, self.b)
            for old, new, name in zip(f.args, nf.args, arg_names):
                if name in self.values:
                    dt = types[arg_names.index(name)].dtype
                    self.env[old] = Const(np.asarray(self.values[name]),
                                          dtype=dt if dt == "bf16" else None)
                else:
                    self.env[old] = new
                    self.prov[id(new)] = frozenset({name})
            for op in f.body.ops:
                if op.name == RETURN:
                    if any(isinstance(self.env[v], list) for v in op.operands):
                        raise LoweringError("a sequence as a graph output: tdflow functions "
                                            "return tensors", loc=op.loc)
                    self.b.ret(*[self._ir(self.env[v]) for v in op.operands], loc=op.loc)
                elif op in self._folded:
                    continue  # a BatchNormalization applied inside its Conv's weights
                elif op.name.startswith("onnx."):
                    self._lower(op)
                else:
                    self._copy(op)

    def _ir(self, v: Any) -> Any:
        return self.materialize(v) if isinstance(v, Const) else v

    def _copy(self, op: Operation) -> None:
        new = self.b.create(op.name, [self._ir(self.env[v]) for v in op.operands],
                            [r.type for r in op.results], dict(op.attributes), op.loc)
        for r, nr in zip(op.results, new.results):
            self.env[r] = nr
            self.prov[id(nr)] = frozenset().union(
                *(self.provenance(self.env[v]) for v in op.operands))

    # -- ONNX ops ---------------------------------------------------------------------------
    def _node(self, op: Operation) -> Node:
        opdef = self.ctx.lookup(op.name)
        op_type, version = op_version(op.name[5:])
        inputs: list[Any] = []
        groups = _operand_groups(op, opdef)
        for od, vals in zip(opdef.operands, groups):
            if od.is_variadic:
                inputs.extend(self.env[v] for v in vals)
            else:
                inputs.append(self.env[vals[0]] if vals else None)
        return Node(op_type, version, str(op.loc) if op.loc else op_type, inputs,
                    self._attrs(op), len(op.results), [r.type for r in op.results])

    def _attrs(self, op: Operation) -> dict[str, Any]:
        """Every attribute of the op's schema by its ONNX name, defaults filled in."""
        attrs: dict[str, Any] = {}
        for a in self.ctx.lookup(op.name).attributes:
            if a.name in op.attributes:
                attrs[a.name] = _attr_python(a.kind, op.attributes[a.name])
            else:
                attrs[a.name] = a.default
        return attrs

    def _lower(self, op: Operation) -> None:
        node = self._node(op)
        folded_bn = None
        fold = self._foldable_batch_norm(op, node) if node.op_type == "Conv" else None
        if fold is not None:
            folded_bn, weight, bias = fold
            node = _with_batch_norm(node, weight, bias)
            self._folded.add(folded_bn)
        fn = rule_for(node.op_type, node.version)
        results = None
        known = all(v is None or isinstance(v, Const) for v in node.inputs)
        opdef = self.ctx.lookup(op.name)
        if self.fold and known and opdef.has_trait("NoMemoryEffect"):
            results = self._fold(fn, node)
        if results is None:
            self._graph.loc = op.loc
            cx = Lowerer(self._graph, self.materialize, self.provenance, node)
            try:
                results = list(fn(cx, node))
            except LoweringError as exc:
                if exc.loc is None:
                    exc.loc = op.loc
                raise
            except (TypeError, ValueError, KeyError, IndexError) as exc:
                raise _located(exc, node, op) from exc
            except Exception as exc:
                if hasattr(exc, "render"):  # a tdflow diagnostic: the hooks refused the op
                    raise _located(exc, node, op) from exc
                raise
        if len(results) < len(op.results):
            results += [None] * (len(op.results) - len(results))
        src = frozenset().union(*(self.provenance(v) for v in node.inputs if v is not None))
        for r, v in zip(op.results, results):
            if v is None:
                if r.users:
                    raise LoweringError(f"output {r.index} is used but the lowering gives none",
                                        node, op.loc)
                continue
            self.env[r] = v
            if not isinstance(v, Const):
                self.prov.setdefault(id(v), src)
        if folded_bn is not None:  # the BatchNormalization folded into this Conv: its result
            self.env[folded_bn.results[0]] = self.env[op.results[0]]

    def _foldable_batch_norm(self, op: Operation, node: Node) -> tuple | None:
        """``(the BatchNormalization, new weights, new bias)`` when a Conv's only user is an
        inference BatchNormalization with known statistics: the Conv then takes the
        normalisation into its weights and bias, as exporters' optimisers and
        onnxruntime do (``W * s``, ``(B - mean) * s + beta`` with ``s = scale / sqrt(var +
        eps)``, in float64): the BatchNormalization is then skipped and its result is the
        Conv's. Anything else (several users, statistics from graph inputs, training mode,
        a non-float weight) is ``None``: both ops stay as they are."""
        import numpy as np

        (out,) = op.results if len(op.results) == 1 else (None,)
        if out is None or len(out.users) != 1:
            return None
        (bn,) = out.users
        if not bn.name.startswith("onnx.BatchNormalization") or bn.operands[0] is not out:
            return None
        bn_attrs = self._attrs(bn)
        if (op_version(bn.name[5:])[1] < 9 or bn_attrs.get("training_mode")
                or any(r.users for r in bn.results[1:])):
            return None
        params = [self.env.get(v) for v in bn.operands[1:5]]
        w, b = node.inputs[1], node.inputs[2] if len(node.inputs) > 2 else None
        if not all(isinstance(v, Const) for v in (w, *params)) or \
                (b is not None and not isinstance(b, Const)):
            return None
        if w.array.dtype.kind != "f" or w.dtype is not None or len(w.array.shape) < 3:
            return None
        scale, beta, mean, var = (np.asarray(c.array, np.float64) for c in params)
        s = scale / np.sqrt(var + float(bn_attrs["epsilon"]))
        if s.shape != (w.array.shape[0],):
            return None
        w2 = w.array.astype(np.float64) * s.reshape(-1, *[1] * (w.array.ndim - 1))
        b0 = np.zeros_like(s) if b is None else b.array.astype(np.float64)
        b2 = (b0 - mean) * s + beta
        dt = w.array.dtype
        return bn, Const(w2.astype(dt)), Const(b2.astype(dt))

    def _fold(self, fn: Any, node: Node) -> list[Any] | None:
        """The op's results computed now by tdflow's eager kernels, or ``None`` when it cannot
        be (no kernel for a dtype, ...): it is then lowered to IR."""
        import tdflow
        from tdflow.runtime.autograd import EagerEmitter

        if self._eager is None:
            self._eager = EagerEmitter(self.ctx)
        tensors: dict[int, Any] = {}

        def materialize(c: Const) -> Any:
            t = tensors.get(id(c))
            if t is None:
                t = tensors[id(c)] = tdflow.tensor(c.array, dtype=c.dtype)
            return t

        cx = Lowerer(self._eager, materialize, lambda v: frozenset(), node, eager=True)
        try:
            with tdflow.no_grad():
                outs = list(fn(cx, node))
            return [None if v is None else v if isinstance(v, Const) else
                    Const(v.numpy(), dtype="bf16" if v.dtype == "bf16" else None) for v in outs]
        except NeedsValue:
            return None
        except Exception:  # noqa: BLE001 - any failure to fold: lower to IR instead
            return None


def _with_batch_norm(conv: Node, weight: Const, bias: Const) -> Node:
    """The Conv node reading the folded weights and bias instead of its own."""
    return Node(conv.op_type, conv.version, conv.name, [conv.inputs[0], weight, bias],
                conv.attrs, conv.num_outputs, conv.output_types)


def _located(exc: Exception, node: Node, op: Operation) -> LoweringError:
    text = str(exc.args[0]) if exc.args and isinstance(exc.args[0], str) else str(exc)
    return LoweringError(f"{type(exc).__name__}: {text}" if not hasattr(exc, "render") else text,
                         node, op.loc)


def _operand_groups(op: Operation, opdef: OpDef) -> list[list[Any]]:
    """The op's operands split into its ``.td`` operand groups (segment sizes when given)."""
    from tdflow.dialect.infer import SEGMENT_ATTR

    seg = op.attributes.get(SEGMENT_ATTR)
    operands = list(op.operands)
    if seg is not None:
        sizes = list(seg.value)
    else:
        n_fixed = sum(1 for d in opdef.operands if d.is_single)
        extra = len(operands) - n_fixed
        sizes = []
        for d in opdef.operands:
            if d.is_single:
                sizes.append(1)
            elif d.is_variadic:
                sizes.append(max(extra, 0))
                extra = 0
            else:
                k = 1 if extra > 0 else 0
                sizes.append(k)
                extra -= k
    groups, pos = [], 0
    for n in sizes:
        groups.append(operands[pos:pos + n])
        pos += n
    return groups


def _attr_python(kind: str, attr: Any) -> Any:
    if kind == "other":
        try:
            return to_numpy(attr)
        except ValueError:
            return attr
    v = to_value(kind, attr)
    return list(v) if isinstance(v, tuple) else v


def result_type(v: Any) -> TensorType | None:
    """The tensor type of a lowered value (IR value or constant)."""
    return v.type if isinstance(getattr(v, "type", None), TensorType) else None
