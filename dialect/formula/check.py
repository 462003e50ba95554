"""Check a parsed formula against its op and convert it to the expression IR.

>>> from tdflow.dialect import standard_dialect
>>> from tdflow.dialect.formula.parse import parse_formula
>>> op = standard_dialect().lookup("tdflow.leaky_relu")
>>> c = check_formula(parse_formula("x > 0 ? x : x * alpha", file="ops.td", line=5, col=21), op)
>>> c.operands, c.results, c.expr, c.bind({"alpha": 0.2})
(('x',), ('y',), where(gt(in0, 0), in0, mul(in0, @alpha)), max(in0, mul(in0, 0.2)))
>>> check_formula(parse_formula("x * alpah", file="ops.td", line=5, col=21), op)
Traceback (most recent call last):
  ...
tdflow.tdparser.errors.TdError: ops.td:5:25: error: unknown name 'alpah' in the formula of tdflow.leaky_relu; did you mean 'alpha'?

Every problem found is reported (the first as the error, the others in ``others``), each at its
line and column inside the code block. Names resolve to the op's operands (``Input(i)``, by
declaration order) and to its bool, integer and float attributes (``Attr(name)``, bound when
a kernel is built); functions come from :data:`~.functions.FUNCTIONS`.
"""

from __future__ import annotations

import difflib
from typing import Any, Protocol

from tdflow.tdparser.errors import TdError

from .checked import CheckedFormula  # noqa: F401 - re-exported: where it lived
from .expr import Attr, Binary, Const, Expr, Input, Select, Unary
from .functions import FUNCTIONS
from .syntax import BinaryOp, Call, Cond, Formula, Name, Node, Number, Pos, UnaryOp

# Attribute kinds a formula may read (the values are scalars a kernel can embed).
MATH_ATTR_KINDS = frozenset({"bool", "si32", "si64", "f32", "f64"})
_BINARY = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod", "<": "lt", "<=": "le",
           ">": "gt", ">=": "ge", "==": "eq", "!=": "ne", "&&": "and", "||": "or"}
_BOOL_RESULT = frozenset({"lt", "le", "gt", "ge", "eq", "ne", "and", "or"})


class _Value(Protocol):
    name: str
    arity: str


class _Attribute(Protocol):
    name: str
    kind: str
    default: Any


class OpLike(Protocol):
    """What the checker reads of an op (:class:`~tdflow.dialect.opdef.OpDef` has it)."""

    name: str
    operands: tuple[_Value, ...]
    results: tuple[_Value, ...]
    attributes: tuple[_Attribute, ...]


def _kind_of(kind: str) -> str:
    return "bool" if kind == "bool" else "num"


class _Checker:
    def __init__(self, formula: Formula, op: OpLike) -> None:
        self.formula = formula
        self.op = op
        self.errors: list[TdError] = []
        self.attr_kinds: dict[str, str] = {}
        self.operands = {o.name: (i, o) for i, o in enumerate(op.operands)}
        self.attrs = {a.name: a for a in op.attributes}
        self.results = {r.name: r for r in op.results}
        first_var = next((i for i, o in enumerate(op.operands) if o.arity != "single"), None)
        self.first_variable = first_var

    def error(self, message: str, pos: Pos) -> None:
        loc = self.formula.loc(pos)
        self.errors.append(TdError(message, loc.file, loc.line, loc.col))

    def suggest(self, name: str, candidates) -> str:
        close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
        return f"; did you mean {close[0]!r}?" if close else ""

    def value_names(self) -> list[str]:
        return [*self.operands, *(a for a, d in self.attrs.items() if d.kind in MATH_ATTR_KINDS)]

    # Each convert_* returns (expression, kind): kind is "bool" (a predicate), "num" (a
    # number) or "any" (an operand, whose type is the program's). After an error a placeholder
    # is returned so the rest of the formula is still checked.

    def convert(self, node: Node) -> tuple[Expr, str]:
        if isinstance(node, Number):
            return Const(node.value), "num"
        if isinstance(node, Name):
            return self.convert_name(node)
        if isinstance(node, UnaryOp):
            if node.op == "-" and isinstance(node.x, Number):
                return Const(-node.x.value), "num"  # a negative literal is one constant
            x, _ = self.convert(node.x)
            return (Unary("neg", x), "num") if node.op == "-" else (Unary("not", x), "bool")
        if isinstance(node, BinaryOp):
            (a, ka), (b, kb) = self.convert(node.a), self.convert(node.b)
            op = _BINARY[node.op]
            return Binary(op, a, b), "bool" if op in _BOOL_RESULT else "num"
        if isinstance(node, Cond):
            cond, kc = self.convert(node.cond)
            if kc == "num":
                self.error("the condition of `?:` is a number, not a truth value; compare it "
                           "(for example `alpha != 0`)", node.cond.pos)  # type: ignore[attr-defined]
            (a, ka), (b, kb) = self.convert(node.a), self.convert(node.b)
            return Select(cond, a, b), ka if ka == kb else "any"
        if isinstance(node, Call):
            return self.convert_call(node)
        raise TypeError(f"unknown formula node {node!r}")  # pragma: no cover

    def convert_name(self, node: Name) -> tuple[Expr, str]:
        name = node.name
        if name in self.operands:
            i, operand = self.operands[name]
            if operand.arity != "single":
                self.error(f"operand {name!r} of {self.op.name} is {operand.arity}; a formula "
                           f"reads only single operands", node.pos)
            elif self.first_variable is not None and i > self.first_variable:
                before = self.op.operands[self.first_variable]
                self.error(f"operand {name!r} comes after the {before.arity} operand "
                           f"{before.name!r}, so its position varies; a formula reads only "
                           f"operands before the first optional or variadic one", node.pos)
            return Input(i), "any"
        if name in self.attrs:
            attr = self.attrs[name]
            if attr.kind not in MATH_ATTR_KINDS:
                what = "a kind tdflow does not model" if attr.kind == "other" else attr.kind
                self.error(f"attribute {name!r} of {self.op.name} is of kind {what}; a formula "
                           f"can use only bool, integer (si32, si64) and float (f32, f64) "
                           f"attributes", node.pos)
                return Const(0), "any"
            self.attr_kinds[name] = attr.kind
            return Attr(name), _kind_of(attr.kind)
        if name in self.results:
            self.error(f"{name!r} is a result of {self.op.name}; a formula reads only operands "
                       f"and attributes (write the expression again)", node.pos)
        elif name in FUNCTIONS:
            self.error(f"{name!r} is a function; call it: {name}(...)", node.pos)
        else:
            self.error(f"unknown name {name!r} in the formula of {self.op.name}"
                       f"{self.suggest(name, self.value_names())}", node.pos)
        return Const(0), "any"

    def convert_call(self, node: Call) -> tuple[Expr, str]:
        fn = FUNCTIONS.get(node.func)
        args = [self.convert(a) for a in node.args]
        if fn is None:
            if node.func in self.operands or node.func in self.attrs:
                what = "an operand" if node.func in self.operands else "an attribute"
                self.error(f"{node.func!r} is {what} of {self.op.name}, not a function",
                           node.pos)
            else:
                self.error(f"unknown function {node.func!r}{self.suggest(node.func, FUNCTIONS)}"
                           f" (known: {', '.join(FUNCTIONS)})", node.pos)
            return Const(0), "any"
        if len(args) != fn.arity:
            plural = "s" if fn.arity != 1 else ""
            self.error(f"{fn.name}() takes {fn.arity} argument{plural}, got {len(args)}",
                       node.pos)
            return Const(0), "any"
        expr = fn.build(*(a for a, _ in args))
        if fn.kind == "cast":
            return expr, "bool" if node.func in ("i1", "bool") else "num"
        if fn.kind == "predicate":
            return expr, "bool"
        if fn.kind == "order":
            kinds = {k for _, k in args}
            return expr, kinds.pop() if len(kinds) == 1 else "any"
        return expr, "num"

    def check_results(self) -> list[tuple[str, Node]]:
        """(result name, expression) per statement, after checking the names."""
        f, op = self.formula, self.op
        for r in op.results:
            if r.arity != "single":
                self.error(f"result {r.name!r} of {op.name} is {r.arity}; a formula computes "
                           f"single results only", (1, 1))
        if not op.results:
            self.error(f"{op.name} has no results; a formula computes the op's results", (1, 1))
            return []
        if f.single:
            if len(op.results) != 1:
                names = ", ".join(r.name for r in op.results)
                assigns = " ".join(f"{r.name} = ...;" for r in op.results)
                self.error(f"{op.name} has {len(op.results)} results ({names}); write one "
                           f"statement per result: {assigns}", f.body[0].pos)
                return []
            return [(op.results[0].name, f.body[0].expr)]
        seen: dict[str, Pos] = {}
        out: list[tuple[str, Node]] = []
        for stmt in f.body:
            name = stmt.name or ""
            if name not in self.results:
                self.error(f"{name!r} is not a result of {op.name} (results: "
                           f"{', '.join(self.results)}){self.suggest(name, self.results)}",
                           stmt.pos)
                continue
            if name in seen:
                first = f.loc(seen[name])
                self.error(f"result {name!r} is assigned twice (first at line {first.line}, "
                           f"column {first.col})", stmt.pos)
                continue
            seen[name] = stmt.pos
            out.append((name, stmt.expr))
        for r in op.results:
            if r.name not in seen and r.name in self.results:
                self.error(f"result {r.name!r} of {op.name} is not assigned; add "
                           f"`{r.name} = ...;`", f.end_pos())
        return out


def check_formula(formula: Formula, opdef: OpLike) -> CheckedFormula:
    """Check ``formula`` against ``opdef`` and convert it to expression trees.

    Raises :class:`TdError` (located inside the code block; further errors in ``others``) for
    unknown names or functions, wrong arities, attributes that are not bool/int/float, a
    condition that is a number, optional or variadic operands, and results not assigned
    exactly once.

    >>> from tdflow.dialect import standard_dialect
    >>> from tdflow.dialect.formula.parse import parse_formula
    >>> op = standard_dialect().lookup("tdflow.broadcast_add")
    >>> check_formula(parse_formula("z = x + y;", file="a.td", line=1, col=1), op).expr
    add(in0, in1)
    """
    checker = _Checker(formula, opdef)
    stmts = checker.check_results()
    by_name: dict[str, Expr] = {}
    for name, node in stmts:
        by_name[name], _ = checker.convert(node)
    if checker.errors:
        first, *rest = sorted(checker.errors, key=lambda e: (e.line, e.col))
        first.others.extend(rest)
        raise first
    used = checker.attr_kinds
    return CheckedFormula(
        op=opdef.name,
        formula=formula,
        operands=tuple(o.name for o in opdef.operands),
        results=tuple(r.name for r in opdef.results),
        exprs=tuple(by_name[r.name] for r in opdef.results),
        attr_kinds={a.name: used[a.name] for a in opdef.attributes if a.name in used},
        attr_defaults={a.name: a.default for a in opdef.attributes if a.name in used},
    )
