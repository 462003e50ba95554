"""An op's ``grad`` field: checked against the op and the context, then evaluated by an emitter.

Inside a ``grad`` field a name is, in this order, an input of the op, a result, the gradient
of a result (``d`` + its name: ``dout`` for result ``out``), an attribute, or ``true``/``false``.
A call applies an op of the context: positional arguments fill its operands, ``name=value``
its attributes (or operands by name). Arithmetic on tensors is elementwise and broadcasting;
one expression of tensor arithmetic becomes one ``tdflow.fused_elementwise`` op. Arithmetic on
numbers and attributes (``1.0 / (1.0 - rate)``) is done when the gradient is built.

An output gradient that does not flow (its result is unused) is a *symbolic zero*: ``a + 0``
is ``a``, ``0 * a`` is ``0``, and an op applied to a zero gradient is zero, since gradient
expressions are linear in the output gradients; an input whose whole expression is zero gets
no gradient, and no kernel runs for it.

>>> from tdflow.dialect.context import standard_context
>>> ctx = standard_context()
>>> g = field_gradient(ctx, ctx.lookup("tdflow.matmul"))
>>> sorted(g.differentiable), sorted(g.saves({}))
(['_add_to_output', 'a', 'b'], ['a', 'b'])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tdflow.dialect.formula.expr import Binary, Const, Expr, Input, Unary, dedup_inputs
from tdflow.dialect.formula.syntax import Formula
from tdflow.dialect.formula.text import format_expr
from tdflow.tdparser.errors import TdError

from .defs import Emitter, Forward, GradDef, OpTable, default_differentiable
from .syntax import BinaryOp, Call, Cond, ListLit, Member, Name, Node, Number, Str, UnaryOp

if TYPE_CHECKING:
    from tdflow.dialect.opdef import OpDef

__all__ = ["check_grad_field", "field_gradient", "parse_op_grad"]

_FUSED = "tdflow.fused_elementwise"
_ARITH = {"+": "add", "-": "sub", "*": "mul", "/": "div"}
_TYPE_FIELDS = ("shape", "dtype", "ndim")


def parse_op_grad(opdef: OpDef) -> Formula:
    """The op's parsed ``grad`` field (located errors: :class:`TdError`)."""
    from .parse import parse_grad

    file, line, col = opdef.grad_loc
    return parse_grad(opdef.grad_code, file=file, line=line, col=col)


class _Zero:
    """The symbolic zero gradient."""

    def __repr__(self) -> str:
        return "zero"


ZERO = _Zero()


@dataclass(frozen=True)
class _Ew:
    """A tensor value: ``expr`` over ``leaves`` (emitted values); ``Input(0)`` of one leaf is
    a plain value."""

    expr: Expr
    leaves: tuple


@dataclass(frozen=True)
class _Results:
    """The results of a several-result op call, picked by ``.name``."""

    op: str
    values: Mapping[str, Any]


def _tensor(v: Any) -> _Ew:
    return _Ew(Input(0), (v,))


class _Scope:
    """Name resolution of one op's grad field."""

    def __init__(self, opdef: OpDef, ctx: OpTable) -> None:
        self.opdef = opdef
        self.ctx = ctx
        self.inputs = set(opdef.operand_names)
        self.outputs = set(opdef.result_names)
        self.grads = {"d" + r: r for r in opdef.result_names}
        self.attrs = {a.name for a in opdef.attributes}

    def kind(self, name: str) -> str | None:
        if name in self.inputs:
            return "input"
        if name in self.outputs:
            return "output"
        if name in self.grads:
            return "grad"
        if name in self.attrs:
            return "attr"
        if name in ("true", "false"):
            return "bool"
        return None

    def names(self) -> list[str]:
        return sorted(self.inputs | self.outputs | set(self.grads) | self.attrs)

    def op(self, name: str) -> Any | None:
        ctx = self.ctx
        if "." in name:
            return ctx.lookup(name)
        return ctx.lookup(f"{self.opdef.dialect}.{name}") or ctx.lookup(f"tdflow.{name}")


def _err(formula: Formula, message: str, pos) -> TdError:
    loc = formula.loc(pos)
    return TdError(message, loc.file, loc.line, loc.col)


def check_grad_field(formula: Formula, opdef: OpDef, ctx: OpTable) -> frozenset[str]:
    """Check a parsed ``grad`` field against ``opdef`` and the ops of ``ctx``; return the
    inputs and results it reads. Raises :class:`TdError` located inside the field."""
    scope = _Scope(opdef, ctx)
    diff = default_differentiable(ctx, opdef)
    reads: set[str] = set()
    for entry in formula.body:
        if entry.name not in scope.inputs:
            raise _err(formula, f"'{entry.name}' is not an input of '{opdef.name}' (inputs: "
                                f"{', '.join(opdef.operand_names) or 'none'})", entry.pos)
        if entry.name not in diff:
            raise _err(formula, f"input '{entry.name}' of '{opdef.name}' takes no gradient "
                                f"(an integer operand, or marked requires_grad=False)",
                       entry.pos)
        stack: list[Node] = [entry.expr]
        while stack:  # iterative: the parser bounds depth, but nothing here needs recursion
            node = stack.pop()
            if isinstance(node, Name):
                k = scope.kind(node.name)
                if k is None:
                    import difflib

                    close = difflib.get_close_matches(node.name, scope.names(), n=1)
                    hint = f"; did you mean '{close[0]}'?" if close else ""
                    raise _err(formula, f"unknown name '{node.name}' in the grad field of "
                                        f"'{opdef.name}'{hint} (inputs, results, d<result> "
                                        f"and attributes may be used)", node.pos)
                if k in ("input", "output"):
                    reads.add(node.name)
            elif isinstance(node, Call):
                callee = scope.op(node.op)
                if callee is None:
                    raise _err(formula, f"unknown op '{node.op}' called in the grad field of "
                                        f"'{opdef.name}'", node.pos)
                if len(node.args) > len(callee.operands):
                    raise _err(formula, f"'{callee.name}' takes {len(callee.operands)} "
                                        f"operand(s), got {len(node.args)}", node.pos)
                for kw in node.keywords:
                    if callee.attr(kw.name) is None and kw.name not in callee.operand_names:
                        raise _err(formula, f"'{callee.name}' has no attribute or operand "
                                            f"'{kw.name}'", kw.pos)
                    stack.append(kw.value)
                stack.extend(node.args)
            elif isinstance(node, Member):
                if not isinstance(node.obj, Call) and node.field not in _TYPE_FIELDS:
                    raise _err(formula, f"unknown field '.{node.field}' (a value has "
                                        f"{', '.join('.' + f for f in _TYPE_FIELDS)}; a call "
                                        f"of a several-result op has its results)", node.pos)
                if isinstance(node.obj, Name) and scope.kind(node.obj.name) in ("input",
                                                                                 "output"):
                    continue  # `x.shape` reads x's type only: x's buffer need not be kept
                stack.append(node.obj)
            elif isinstance(node, BinaryOp):
                stack.extend((node.a, node.b))
            elif isinstance(node, Cond):
                stack.extend((node.cond, node.a, node.b))
            elif isinstance(node, UnaryOp):
                stack.append(node.x)
            elif isinstance(node, ListLit):
                stack.extend(node.items)
    return frozenset(reads)


class _Evaluator:
    def __init__(self, formula: Formula, scope: _Scope, g: Emitter, fwd: Forward) -> None:
        self.formula = formula
        self.scope = scope
        self.g = g
        self.fwd = fwd

    def fail(self, message: str, pos) -> TdError:
        return _err(self.formula, f"in the gradient of '{self.scope.opdef.name}': {message}",
                    pos)

    # -- values ---------------------------------------------------------------------------
    def name(self, node: Name) -> Any:
        fwd, n = self.fwd, node.name
        k = self.scope.kind(n)
        if k == "input":
            v = fwd.inputs.get(n)
            if v is None:
                raise self.fail(f"optional input '{n}' is absent", node.pos)
            return tuple(_tensor(e) for e in v) if isinstance(v, tuple) else _tensor(v)
        if k == "output":
            return _tensor(fwd.outputs[n])
        if k == "grad":
            v = fwd.douts.get(self.scope.grads[n])
            return ZERO if v is None else _tensor(v)
        if k == "attr":
            return fwd.attrs.get(n)
        return n == "true"

    def materialize(self, v: Any, pos) -> Any:
        """An emitted value for a tensor operand (``ZERO`` stays zero)."""
        if v is ZERO:
            return ZERO
        if isinstance(v, tuple):
            return [self.materialize(e, pos) for e in v]
        if not isinstance(v, _Ew):
            raise self.fail(f"expected a tensor, got {_describe(v)}", pos)
        if isinstance(v.expr, Input):
            return v.leaves[v.expr.index]
        expr, leaves = dedup_inputs(v.expr, list(v.leaves))
        return self.g.op(_FUSED, [leaves], {"expr": format_expr(expr)})[0]

    def eval(self, node: Node) -> Any:
        if isinstance(node, Number):
            return node.value
        if isinstance(node, Str):
            return node.value
        if isinstance(node, Name):
            return self.name(node)
        if isinstance(node, ListLit):
            return [self.eval(i) for i in node.items]
        if isinstance(node, Cond):
            c = self.eval(node.cond)
            if not isinstance(c, bool | int):
                raise self.fail(f"a condition must be an attribute value (a bool), not "
                                f"{_describe(c)}", node.pos)
            return self.eval(node.a if c else node.b)
        if isinstance(node, UnaryOp):
            v = self.eval(node.x)
            if node.op == "+":
                return v
            if node.op == "!":
                if not isinstance(v, bool | int) or isinstance(v, _Ew):
                    raise self.fail(f"'!' needs a bool attribute value, not {_describe(v)}",
                                    node.pos)
                return not v
            if v is ZERO:
                return ZERO
            if isinstance(v, _Ew):
                return _Ew(Unary("neg", v.expr), v.leaves)
            if isinstance(v, int | float) and not isinstance(v, bool):
                return -v
            raise self.fail(f"cannot negate {_describe(v)}", node.pos)
        if isinstance(node, BinaryOp):
            return self.binary(node)
        if isinstance(node, Member):
            return self.member(node)
        if isinstance(node, Call):
            return self.call(node)
        raise self.fail(f"unexpected {type(node).__name__}", node.pos)  # pragma: no cover

    def binary(self, node: BinaryOp) -> Any:
        a, b = self.eval(node.a), self.eval(node.b)
        op = node.op
        if op in ("==", "!="):
            if isinstance(a, _Ew | _Results) or isinstance(b, _Ew | _Results) or ZERO in (a, b):
                raise self.fail(f"'{op}' compares attribute values, not tensors", node.op_pos)
            return (a == b) == (op == "==")
        if a is ZERO or b is ZERO:
            if op == "+":
                return b if a is ZERO else a
            if op == "-":
                return a if b is ZERO else self._neg(b, node)
            if op == "*" or (op == "/" and a is ZERO):
                return ZERO
            raise self.fail("division by a zero gradient", node.op_pos)
        num = (int, float)
        if isinstance(a, num) and isinstance(b, num):
            if op == "/" and b == 0:
                raise self.fail("division by zero", node.op_pos)
            return {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else 0}[op]
        if isinstance(a, _Ew) or isinstance(b, _Ew):
            ea, la = self._operand(a, (), node)
            eb, lb = self._operand(b, la, node)
            return _Ew(Binary(_ARITH[op], ea, eb), lb)
        raise self.fail(f"cannot apply '{op}' to {_describe(a)} and {_describe(b)}", node.op_pos)

    def _neg(self, v: Any, node: Node) -> Any:
        if isinstance(v, _Ew):
            return _Ew(Unary("neg", v.expr), v.leaves)
        if isinstance(v, int | float):
            return -v
        raise self.fail(f"cannot negate {_describe(v)}", node.pos)

    def _operand(self, v: Any, leaves: tuple, node: BinaryOp) -> tuple[Expr, tuple]:
        """``v`` as an expression over ``leaves`` extended with its own leaves."""
        if isinstance(v, _Ew):
            shift = len(leaves)
            from tdflow.dialect.formula.expr import remap_inputs

            e = remap_inputs(v.expr, {i: i + shift for i in range(len(v.leaves))})
            return e, leaves + v.leaves
        if isinstance(v, bool):
            return Const(v), leaves
        if isinstance(v, int | float):
            return Const(v), leaves
        raise self.fail(f"cannot use {_describe(v)} in tensor arithmetic", node.op_pos)

    def member(self, node: Member) -> Any:
        obj = self.eval(node.obj)
        if isinstance(obj, _Results):
            if node.field not in obj.values:
                raise self.fail(f"'{obj.op}' has no result '{node.field}' (results: "
                                f"{', '.join(obj.values)})", node.pos)
            return _tensor(obj.values[node.field])
        if obj is ZERO:
            raise self.fail(f"'.{node.field}' of a zero gradient", node.pos)
        if isinstance(obj, _Ew):
            t = self.g.type_of(self.materialize(obj, node.pos))
            if node.field == "shape":
                return list(t.shape)
            if node.field == "dtype":
                return t.dtype
            return len(t.shape)
        raise self.fail(f"'.{node.field}' of {_describe(obj)}", node.pos)

    def call(self, node: Call) -> Any:
        callee = self.scope.op(node.op)
        operands: dict[str, Any] = {}
        attrs: dict[str, Any] = {}
        zero = False
        for d, arg in zip(callee.operands, node.args):
            operands[d.name] = self.eval(arg)
        for kw in node.keywords:
            v = self.eval(kw.value)
            if kw.name in callee.operand_names and callee.attr(kw.name) is None:
                operands[kw.name] = v
            else:
                attrs[kw.name] = v.expr.value if isinstance(v, _Ew) and isinstance(
                    v.expr, Const) else v
        args: list[Any] = []
        for d in callee.operands:
            v = operands.get(d.name)
            if v is None:
                if d.is_single:
                    raise self.fail(f"'{callee.name}' needs operand '{d.name}'", node.pos)
                args.append([] if d.is_variadic else None)
                continue
            m = self.materialize(v, node.pos)
            if m is ZERO or (isinstance(m, list) and any(e is ZERO for e in m)):
                zero = True
            args.append(m)
        if zero:
            return ZERO
        results = self.g.op(callee.name, args, attrs)
        if len(results) == 1:
            return _tensor(results[0])
        return _Results(callee.name, dict(zip(callee.result_names, results)))


def _describe(v: Any) -> str:
    if isinstance(v, _Results):
        return f"the results of '{v.op}' (pick one with .name)"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, str):
        return f"the string {v!r}"
    if isinstance(v, bool):
        return "a bool"
    if isinstance(v, int | float):
        return f"the number {v}"
    return type(v).__name__


class _FieldRule:
    def __init__(self, formula: Formula, opdef: OpDef, ctx: OpTable) -> None:
        self.formula = formula
        self.scope = _Scope(opdef, ctx)

    def __call__(self, g: Emitter, fwd: Forward) -> dict[str, Any]:
        ev = _Evaluator(self.formula, self.scope, g, fwd)
        out: dict[str, Any] = {}
        for entry in self.formula.body:
            if entry.name not in fwd.wants:
                continue
            v = ev.eval(entry.expr)
            m = ev.materialize(v, entry.pos)
            out[entry.name] = None if m is ZERO else m
        return out


def field_gradient(ctx: OpTable, opdef: OpDef) -> GradDef:
    """The gradient an op's ``grad`` field defines (parsed and checked on first use)."""
    formula = parse_op_grad(opdef)
    reads = check_grad_field(formula, opdef, ctx)
    diff = frozenset(e.name for e in formula.body)
    return GradDef("grad field", _FieldRule(formula, opdef, ctx), diff,
                   lambda attrs, r=reads: r)
