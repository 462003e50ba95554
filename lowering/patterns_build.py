"""Building a DRR pattern's result dags: new ops before the matched root, or bound values.

Each result dag gives one value: a bound ``$x`` or ``(replaceWithValue $x)`` is that value; an op
dag creates the op (operands and attributes from the bindings, nested dags built first, result
types from ``returnType`` or the dialect's inference, else the replaced root's); a
``NativeCodeCall`` is its Python native's return value. A ``:$name`` on a result op binds it for
the result dags after it. The last N results replace the root's N results (MLIR's rule: the
ones before them are auxiliary ops).

>>> from tdflow.dialect import standard_dialect
>>> from tdflow.dialect.ir import parse_module, Rewriter
>>> from tdflow.dialect.patterns.model import Bind, OpNode, Pattern
>>> m = parse_module('''func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
...   %0 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
...   return %0 : tensor<4xf32>
... }''')
>>> relu = m["f"].ops[0]
>>> p = Pattern("ReluToExp", "tdflow.relu", 1, OpNode("op", "tdflow.relu", (Bind("x", "any"),), ("x",)),
...             (OpNode("op", "tdflow.exp", (Bind("x", "any"),), ("x",)),))
>>> new, created = build_results(p, {"x": m["f"].args[0]}, relu, standard_dialect(), Rewriter())
>>> [op.name for op in created], new[0].type
(['tdflow.exp'], TensorType(shape=(4,), dtype='f32'))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tdflow.dialect.attr_convert import to_attr
from tdflow.dialect.infer import SEGMENT_ATTR
from tdflow.dialect.ir import Operation, Rewriter, Value
from tdflow.dialect.ir.attrs import Attribute, DenseArrayAttr
from tdflow.dialect.patterns.model import Bind, OpNode, Pattern

from tdflow.core.errors import TdflowError

from .patterns_match import PatternError, arg_layout, constant_attr_value, native_fn, where

if TYPE_CHECKING:
    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.opdef import AttrDef, OpDef

    from .ir_access import LoweringDialect

__all__ = ["build_results", "BuildFailed"]


class BuildFailed(TdflowError):
    """The result cannot be built for this match (e.g. inference rejects the new op): the
    rewrite is abandoned and the IR left as it was, as MLIR's ``notifyMatchFailure``. Never
    reaches a user; a TdflowError all the same, as every error class of tdflow is."""


def build_results(pattern: Pattern, values: dict[str, Any], root: Operation, dialect: Dialect | LoweringDialect,
                  rw: Rewriter) -> tuple[list[Value], list[Operation]]:
    """Build every result dag before ``root``; return the values replacing ``root``'s results
    and the ops created. On ``BuildFailed`` the ops created so far are erased again."""
    b = _Builder(pattern, dict(values), root, dialect, rw)
    n = len(root.results)
    try:
        outs = [b.value(r, top=i >= len(pattern.results) - n)
                for i, r in enumerate(pattern.results)]
        for s in pattern.supplemental:
            b.value(s, top=False)
    except BuildFailed:
        for op in reversed(b.created):
            if op.parent is not None and not op.has_users():
                rw.erase_op(op)
        raise
    replacements = outs[len(outs) - n:] if n else []
    for v in replacements:
        if not isinstance(v, Value):
            raise PatternError(f"{where(pattern)}: a result pattern gives {v!r}, not an IR value, "
                               f"to replace '{root.name}'")
    return replacements, b.created


class _Builder:
    def __init__(self, pattern: Pattern, values: dict[str, Any], root: Operation, dialect: Dialect | LoweringDialect,
                 rw: Rewriter) -> None:
        self.pattern, self.values, self.root, self.dialect, self.rw = (pattern, values, root,
                                                                      dialect, rw)
        self.created: list[Operation] = []

    def lookup(self, name: str) -> Any:
        try:
            return self.values[name]
        except KeyError:
            raise PatternError(f"{where(self.pattern)}: ${name} is not bound by the source "
                               f"pattern or an earlier result") from None

    def value(self, node: Any, top: bool = False, adef: AttrDef = None) -> Any:
        """The IR value (or attribute value, for ``adef``) one result argument gives."""
        if isinstance(node, Bind):
            if node.kind == "constant_attr" and adef is not None:
                return constant_attr_value(node, adef)
            if node.kind == "literal":
                return node.value
            if node.kind == "native":
                return self.native(node.constraint or str(node.value), [])
            return self.lookup(node.name) if node.name else None
        kind = node.kind
        if kind == "replace_with_value":
            return self.value(node.args[0])
        if kind == "native":
            out = self.native(node.op, [self.value(a) for a in node.args
                                        if not (isinstance(a, OpNode) and a.kind == "location")])
            if node.name:
                self.values[node.name] = out
            return out
        if kind == "op":
            return self.op(node, top)
        raise PatternError(f"{where(self.pattern)}: tdflow cannot build a '{kind}' result")

    def native(self, record: str, args: list[Any]) -> Any:
        fn = native_fn(self.pattern, record)
        try:
            out = fn(*args)
        except Exception as exc:  # noqa: BLE001 - the user's code: report it with the pattern
            raise PatternError(f"{where(self.pattern)}: native '{record}' failed with "
                               f"{type(exc).__name__}: {exc}") from exc
        if isinstance(out, Operation):
            out = out.results[0] if len(out.results) == 1 else tuple(out.results)
        for v in (out if isinstance(out, tuple) else (out,)):
            if isinstance(v, Value):
                self._insert_detached(v.op)
        return out

    def _insert_detached(self, op: Operation | None) -> None:
        """Insert an op a native built (and its detached producers) before the root."""
        if op is None or op.parent is not None:
            return
        for v in op.operands:
            self._insert_detached(v.op)
        self.rw.insert_before(self.root, op)
        self.created.append(op)

    def op(self, node: OpNode, top: bool) -> Value | tuple[Value, ...]:
        opdef = self.dialect.ops.get(node.op)
        if opdef is None:
            raise PatternError(f"{where(self.pattern)}: op '{node.op}' is not in the context")
        groups: dict[str, list[Value]] = {d.name: [] for d in opdef.operands}
        attrs: dict[str, Attribute] = {}
        for arg, name in arg_layout(node, opdef):
            if name in groups:
                v = self.value(arg)
                groups[name] = list(v) if isinstance(v, (tuple, list)) else [] if v is None else [v]
                continue
            adef = opdef.attr(name)
            if adef is None:
                raise PatternError(f"{where(self.pattern)}: '{node.op}' has no argument '{name}'")
            v = self.value(arg, adef=adef)
            # an attribute at its .td default is left out, as the printer and builder do
            if v is not None and not (adef.has_default and not isinstance(v, Attribute)
                                      and v == adef.default):
                try:
                    attrs[name] = v if isinstance(v, Attribute) else to_attr(adef.kind, v, adef.enum)
                except (TypeError, ValueError) as exc:
                    raise PatternError(f"{where(self.pattern)}: attribute '{name}' of "
                                       f"'{node.op}' cannot hold {v!r}: {exc}") from None
        if opdef.has_trait("AttrSizedOperandSegments") or sum(
                1 for d in opdef.operands if not d.is_single) > 1:
            attrs[SEGMENT_ATTR] = DenseArrayAttr("i32", tuple(len(groups[d.name])
                                                             for d in opdef.operands))
        operands = [v for d in opdef.operands for v in groups[d.name]]
        types = self.result_types(node, opdef, operands, attrs, top)
        new = Operation(node.op, operands, types, attrs, self.root.loc)
        self.rw.insert_before(self.root, new)
        self.created.append(new)
        out = new.results[0] if len(new.results) == 1 else tuple(new.results)
        if node.name:
            self.values[node.name] = out
            for i, r in enumerate(new.results):
                self.values[f"{node.name}__{i}"] = r
        return out

    def result_types(self, node: OpNode, opdef: OpDef, operands: list[Value],
                     attrs: dict[str, Attribute], top: bool) -> list[Any]:
        given = [a for a in node.args if isinstance(a, OpNode) and a.kind == "return_type"]
        if given:  # (returnType $x): the type of a bound value
            types = []
            for rt in given:
                for a in rt.args:
                    v = self.value(a)
                    types.append(v.type if isinstance(v, Value) else v)
            return types
        try:
            return list(self.dialect.infer_result_types(node.op, [v.type for v in operands],
                                                        attrs))
        except Exception as exc:  # noqa: BLE001 - no inference: fall back as MLIR does
            if top and len(opdef.results) == len(self.root.results):
                return list(self.root.result_types)  # the replaced op's result types
            raise BuildFailed(f"cannot infer the result types of '{node.op}': {exc}") from exc
