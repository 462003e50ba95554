"""The op builder: one method per op of a dialect, on the IR's base ``Builder``.

>>> from tdflow.dialect import standard_dialect
>>> from tdflow.dialect.types import TensorType
>>> d = standard_dialect()
>>> b = d.Builder()
>>> t = TensorType((8, 4), "f32")
>>> with b.func("f", [t], None, arg_names=["x"]) as f:
...     y = b.leaky_relu(f.args[0], alpha=0.2)
...     _ = b.ret(b.reduce_sum(y, axis=[1]))
>>> print(b.module, end="")
func.func @f(%x: tensor<8x4xf32>) -> tensor<8xf32> {
  %0 = "tdflow.leaky_relu"(%x) {alpha = 2.000000e-01 : f32} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = "tdflow.reduce_sum"(%0) {axis = [1 : si32]} : (tensor<8x4xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

Operands are positional (or by name; a variadic operand takes a list, an optional one ``None``
when absent); attributes are keywords whose ``None`` means "the ``.td`` default" (left out of
the IR). Result types come from the inference hooks unless ``result_types=`` is given;
``operandSegmentSizes`` is filled in for ops that need it. A method returns the result
``Value``, a tuple of them for several results, or the ``Operation`` when there are none.
"""

from __future__ import annotations

import inspect
import keyword
from typing import Any

from .attr_convert import to_attr
from .infer import SEGMENT_ATTR
from .ir.attrs import DenseArrayAttr
from .ir.builder import Builder
from .opdef import OpDef


def method_name(mnemonic: str) -> str:
    """The builder method for an op: its mnemonic, with ``_`` appended on a clash."""
    name = mnemonic.replace(".", "_")
    if keyword.iskeyword(name) or hasattr(Builder, name):
        name += "_"
    return name


def _param_name(name: str) -> str:
    return name + "_" if keyword.iskeyword(name) or not name.isidentifier() else name


def make_builder_class(dialect) -> type:
    """A ``Builder`` subclass with a method per op of ``dialect``."""
    ns: dict[str, Any] = {"dialect": dialect, "__doc__": f"Builder for the {dialect.name} dialect "
                          f"({len(dialect.ops)} ops): one method per op."}
    for op in dialect.ops.values():
        ns[method_name(op.mnemonic)] = op_method(dialect, op)
    return type(f"{dialect.name.capitalize()}Builder", (Builder,), ns)


def op_method(dialect, opdef: OpDef):
    """The builder method of one op (``method(builder, *operands, **attrs)``)."""
    operands = opdef.operands
    aliases = {_param_name(d.name): d.name for d in operands}
    aliases.update({_param_name(a.name): a.name for a in opdef.attributes})
    needs_sizes = opdef.has_trait("AttrSizedOperandSegments") or sum(
        1 for d in operands if not d.is_single) > 1
    n_results = len(opdef.results)

    def build(self, *args, loc=None, result_types=None, **kwargs):
        if len(args) > len(operands):
            raise TypeError(f"{opdef.mnemonic}() takes {len(operands)} operand(s) "
                            f"({', '.join(d.name for d in operands)}), got {len(args)}")
        kwargs = {aliases.get(k, k): v for k, v in kwargs.items()}
        groups: dict[str, list] = {}
        for i, d in enumerate(operands):
            v = args[i] if i < len(args) else kwargs.pop(d.name, None)
            if d.is_variadic:
                vals = [] if v is None else [v] if hasattr(v, "type") else list(v)
            elif v is None:
                if d.is_single:
                    raise TypeError(f"{opdef.mnemonic}() missing operand '{d.name}'")
                vals = []
            else:
                vals = [v]
            groups[d.name] = vals
        attrs: dict[str, Any] = {}
        for k, v in kwargs.items():
            adef = opdef.attr(k)
            if adef is None:
                names = ", ".join(a.name for a in opdef.attributes) or "none"
                raise TypeError(f"{opdef.mnemonic}() got an unexpected keyword '{k}' "
                                f"(attributes: {names})")
            if v is not None:
                attrs[k] = to_attr(adef.kind, v)
        if needs_sizes:
            attrs[SEGMENT_ATTR] = DenseArrayAttr("i32", tuple(len(groups[d.name]) for d in operands))
        flat = [v for d in operands for v in groups[d.name]]
        if result_types is None:
            types = {k: [v.type for v in vs] for k, vs in groups.items()}
            result_types = dialect.infer_result_types(opdef.name, types, attrs)
        op = self.create(opdef.name, flat, result_types, attrs, loc)
        if n_results == 1 and len(op.results) == 1:
            return op.results[0]
        return op if not op.results else tuple(op.results)

    build.__name__ = method_name(opdef.mnemonic)
    build.__qualname__ = build.__name__
    build.__doc__ = _doc(opdef)
    build.__signature__ = _signature(opdef)
    return build


def _doc(opdef: OpDef) -> str:
    lines = [f"``{opdef.name}``: {opdef.summary}." if opdef.summary else f"``{opdef.name}``."]
    if opdef.attributes:
        lines.append("")
        for a in opdef.attributes:
            default = "required" if a.required else f"default {a.default!r}"
            lines.append(f"  {a.name}: {a.kind} ({default})")
    return "\n".join(lines)


def _signature(opdef: OpDef) -> inspect.Signature:
    P = inspect.Parameter
    params = [P("self", P.POSITIONAL_OR_KEYWORD)]
    for d in opdef.operands:
        default = P.empty if d.is_single else (() if d.is_variadic else None)
        params.append(P(_param_name(d.name), P.POSITIONAL_OR_KEYWORD, default=default))
    # keep positional-with-default ordering valid: operands after an optional get defaults too
    seen_default = False
    for i, p in enumerate(params[1:], 1):
        if p.default is not P.empty:
            seen_default = True
        elif seen_default:
            params[i] = p.replace(default=None)
    for a in opdef.attributes:
        params.append(P(_param_name(a.name), P.KEYWORD_ONLY,
                        default=P.empty if a.required else a.default))
    params.append(P("loc", P.KEYWORD_ONLY, default=None))
    params.append(P("result_types", P.KEYWORD_ONLY, default=None))
    return inspect.Signature(params)
