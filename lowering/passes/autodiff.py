"""``autodiff``: add ``@f_grad``, the reverse-mode gradient of each function ``@f``.

``@f_grad`` takes ``@f``'s arguments plus one output-gradient seed per result and returns
``@f``'s results followed by the gradient of every floating-point argument (or of those
named by ``autodiff{wrt=x,w1}``). It recomputes the forward ops, then applies each op's
gradient definition (its ``grad`` field, a Python rule, or derived from its formula; see
:mod:`tdflow.dialect.grad`) in reverse order through a :class:`GraphEmitter`, which builds IR
ops; eager ``backward()`` runs the very same definitions. The passes that follow (CSE, fusion,
memory planning) then optimise forward and backward together.

Options: ``func`` (default: every function without a ``_grad`` twin), ``wrt`` (argument
names, ``%`` optional), ``suffix`` (default ``_grad``).

Before::

    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "tdflow.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }

after (``@f`` is kept)::

    func.func @f_grad(%x: tensor<4xf32>, %seed0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
      %0 = "tdflow.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
      %1 = "tdflow.fused_elementwise"(%seed0, %x) {expr = "..."} : ...
      return %0, %1 : tensor<4xf32>, tensor<4xf32>
    }
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tdflow.dialect.attr_convert import to_value
from tdflow.dialect.builder import op_method
from tdflow.dialect.grad import Forward, GradError, input_gradients
from tdflow.dialect.ir import RETURN
from tdflow.dialect.ir.builder import Builder
from tdflow.dialect.op_verify import operand_groups
from tdflow.dialect.types import FLOAT_DTYPES, TensorType

from ..ir_access import diagnostic, op_def
from ..pass_manager import Pass, PassContext, PassFailure

if TYPE_CHECKING:
    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.ir.core import FuncOp, Module, Operation
    from tdflow.dialect.opdef import AttrDef, OpDef

    from ..ir_access import LoweringDialect

__all__ = ["AutodiffPass", "GraphEmitter", "differentiate"]


class GraphEmitter:
    """The :class:`~tdflow.dialect.grad.Emitter` of graph mode: builds IR ops at a builder's
    insertion point, with result types from the ops' inference hooks."""

    def __init__(self, ctx: Dialect | LoweringDialect, builder: Builder, loc: Any = None) -> None:
        self.ctx = ctx
        self.builder = builder
        self.loc = loc
        self._methods: dict[str, Any] = {}

    def op(self, name: str, operands, attrs) -> tuple:
        entry = self._methods.get(name)
        if entry is None:
            opdef = self.ctx.lookup(name)
            if opdef is None:
                raise GradError(f"a gradient uses '{name}', which is not an op of the context")
            entry = self._methods[name] = (op_method(self.ctx, opdef), opdef)
        method, opdef = entry
        # values equal to the .td default are left out, as a person writes the op (and so CSE
        # sees one op where a gradient and the program spell the same thing)
        attrs = {k: None if _is_default(opdef.attr(k), v) else v for k, v in attrs.items()}
        out = method(self.builder, *operands, loc=self.loc, **attrs)
        if isinstance(out, tuple):
            return out
        return () if not hasattr(out, "type") else (out,)

    def type_of(self, value: Any) -> TensorType:
        return value.type


def _is_default(adef: AttrDef | None, value: Any) -> bool:
    if adef is None or not adef.has_default or isinstance(value, bool) != isinstance(
            adef.default, bool):
        return False
    default = adef.default
    if isinstance(default, tuple):
        default = list(default)
    return (list(value) if isinstance(value, tuple) else value) == default


def _python_attrs(opdef: OpDef, op: Operation) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for a in opdef.attributes:
        if a.name in op.attributes:
            v = to_value(a.kind, op.attributes[a.name])
            out[a.name] = list(v) if isinstance(v, tuple) else v
        elif a.has_default:
            out[a.name] = list(a.default) if isinstance(a.default, tuple) else a.default
        else:
            out[a.name] = None
    return out


def _is_float(v: Any) -> bool:
    return isinstance(v.type, TensorType) and v.type.dtype in FLOAT_DTYPES


def _is_nograd(ctx: Dialect | LoweringDialect, op: Operation) -> bool:
    opdef = op_def(ctx, op.name)
    return opdef is not None and opdef.has_trait("NoGrad")


def differentiate(ctx: Dialect | LoweringDialect, func: FuncOp, wrt: list[str] | None = None,
                  name: str | None = None, ones_seeds: bool = False):
    """Build ``@<name>`` (default ``@<func>_grad``) for ``func``; return the new ``FuncOp``.

    With ``ones_seeds``, the output-gradient seeds are ``tdflow.constant`` ones instead of
    arguments (what ``value_and_grad`` and ``sgd_step`` always pass): ``canonicalize`` then
    folds what the seed's chain computes from them (a mean's ``1/n``) at compile time.

    Raises :class:`GradError` naming the op and input when a needed gradient is missing.
    """
    g_func = func.clone(name or f"{func.name}_grad")
    ret = g_func.body.terminator
    if ret is None or ret.name != RETURN:
        raise GradError(f"@{func.name} has no return")
    results = list(ret.operands)
    args = list(g_func.args)
    arg_names = [a.name or f"arg{i}" for i, a in enumerate(args)]
    if wrt:
        unknown = [w for w in wrt if w not in arg_names]
        if unknown:
            raise GradError(f"autodiff: @{func.name} has no argument %{unknown[0]} "
                            f"(arguments: {', '.join('%' + n for n in arg_names)})")
        targets = [a for a, n in zip(args, arg_names) if n in wrt]
        bad = [n for a, n in zip(args, arg_names) if n in wrt and not _is_float(a)]
        if bad:
            raise GradError(f"autodiff: argument %{bad[0]} of @{func.name} is not "
                            f"floating-point and has no gradient")
    else:
        targets = [a for a in args if _is_float(a)]
    forward = [op for op in g_func.body if op is not ret]
    # values that depend on a target: the only ones gradients flow through
    active = set(targets)
    # (a NoGrad op's results are constants, as in eager mode: ones_like(x) passes nothing back)
    for op in forward:
        if any(v in active for v in op.operands) and not _is_nograd(ctx, op):
            active.update(r for r in op.results if _is_float(r))
    b = Builder(None)
    b.set_insertion_point_before(ret)
    em = GraphEmitter(ctx, b)
    if ones_seeds:
        em.loc = ret.loc
        seeds = [_ones(em, r.type) for r in results]
    else:
        seeds = [g_func.body.add_arg(r.type, f"seed{i}") for i, r in enumerate(results)]
    adj: dict[Any, Any] = {}

    def accumulate(v: Any, grad: Any) -> None:
        if grad is None:
            return
        old = adj.get(v)
        adj[v] = grad if old is None else em.op("tdflow.broadcast_add", [old, grad], {})[0]

    for r, s in zip(results, seeds):
        if r in active:
            accumulate(r, s)
    for op in reversed(forward):
        if not any(r in adj for r in op.results):
            continue
        opdef = op_def(ctx, op.name)
        if opdef is None:
            raise GradError(f"'{op.name}' is not an op of the context; it cannot be "
                            f"differentiated")
        groups = operand_groups(opdef, op) or {}
        inputs: dict[str, Any] = {}
        wants = set()
        for d in opdef.operands:
            vals = groups.get(d.name, [])
            if d.is_variadic:
                inputs[d.name] = tuple(vals)
            else:
                inputs[d.name] = vals[0] if vals else None
            if any(v in active for v in vals):
                wants.add(d.name)
        em.loc = op.loc
        fwd = Forward(opdef, _python_attrs(opdef, op), inputs,
                      dict(zip(opdef.result_names, op.results)),
                      {n: adj.get(r) for n, r in zip(opdef.result_names, op.results)},
                      frozenset(wants))
        grads = input_gradients(ctx, em, fwd)
        for n, gv in grads.items():
            x = inputs[n]
            if isinstance(x, tuple):
                for xi, gi in zip(x, gv or ()):
                    if xi in active:
                        accumulate(xi, gi)
            elif x in active:
                accumulate(x, gv)
    outs = list(results)
    for t in targets:
        gv = adj.get(t)
        if gv is None:  # no path from this argument to a result: its gradient is zero
            gv = em.op("tdflow.constant", [None], {
                "dtype": t.type.dtype, "shape": list(t.type.shape), "is_floating_value": True,
                "floating_value": 0.0})[0]
        outs.append(gv)
    new_ret = b.create(RETURN, outs, (), None, ret.loc)
    ret.drop_operands()
    g_func.body._unlink(ret)
    g_func.result_types = [v.type for v in new_ret.operands]
    return g_func


def _ones(em: GraphEmitter, t: Any) -> Any:
    """A ``tdflow.constant`` of ones of type ``t`` (a seed known at compile time)."""
    is_float = t.dtype in FLOAT_DTYPES
    attrs = {"dtype": t.dtype, "shape": list(t.shape), "is_floating_value": is_float}
    attrs["floating_value" if is_float else "integer_value"] = 1.0 if is_float else 1
    return em.op("tdflow.constant", [None], attrs)[0]


class AutodiffPass(Pass):
    name = "autodiff"
    summary = "add @f_grad: @f's results and the gradients of its floating-point arguments"
    options = {"func": "", "wrt": "", "suffix": "_grad"}

    def run(self, module: Module, context: PassContext) -> None:
        ctx = context.dialect
        suffix = self.option("suffix")
        wanted = self.option("func").lstrip("@")
        wrt = [w.strip().lstrip("%") for w in self.option("wrt").split(",") if w.strip()]
        names = [f.name for f in module]
        if wanted and wanted not in names:
            raise PassFailure(self.name, [diagnostic(
                f"autodiff: no function @{wanted} (functions: "
                f"{', '.join('@' + n for n in names)})")])
        todo = [f for f in list(module) if (f.name == wanted if wanted else
                                            f.name + suffix not in names
                                            and not f.name.endswith(suffix))]
        for f in todo:
            try:
                g = differentiate(ctx, f, wrt or None, f.name + suffix)
            except GradError as e:
                raise PassFailure(self.name, [diagnostic(str(e), f.loc)]) from None
            module.add(g)
