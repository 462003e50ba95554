"""The DRR reader: ``Pattern`` records (``Pat<...>``, ``Pattern<...>``) -> :class:`Pattern` data.

Names, root ops, benefits and generated ops are what ``mlir-tblgen -gen-rewriters`` computes;
a malformed pattern is reported as mlir-tblgen rejects it, at the pattern's record, every
pattern's error at once (a :class:`~tdflow.tdparser.errors.TdError` with ``others``).

>>> from tdflow.tdparser import parse_string
>>> rk = parse_string('include "tdflow/Patterns.td"\\ninclude "tdflow/ops.td"\\n'
...                   'def : Pat<(TDF_ReluOp (TDF_ReluOp $x)), (TDF_ReluOp $x)>;\\n',
...                   include_dirs=[str(INCLUDE_DIR)])
>>> [(p.name, p.root, p.benefit, p.generated_ops) for p in read_patterns(rk)][-1]
('GeneratedConvert0', 'tdflow.relu', 2, ('tdflow.relu',))
"""

from __future__ import annotations

import os
import re

from tdflow.tdparser.errors import TdError
from tdflow.tdparser.records import Code, Dag, DefRef, Loc, Record, RecordKeeper

from ..paths import INCLUDE_DIR
from .model import Bind, Constraint, OpNode, Pattern
from .signatures import OpSig, OpSignatures

__all__ = ["read_patterns", "pattern_records", "INCLUDE_DIR"]

# DRR's directives are plain defs, recognised by name as mlir-tblgen does
_DIRECTIVES = {"replaceWithValue": "replace_with_value", "location": "location",
               "returnType": "return_type", "either": "either", "variadic": "variadic"}
# Constraints tdflow checks without a Python native
_KNOWN_CONSTRAINTS = frozenset({"HasNoUseOf"})
_INDEXED = re.compile(r"^(.*)__\d+$")  # `$res__1`: result 1 of the op bound as `res`


def pattern_records(rk: RecordKeeper) -> list[Record]:
    """Every concrete DRR ``Pattern`` record of ``rk``, in definition order.

    Found by shape (a ``sourcePattern`` dag), as the ODS reader finds ops: LLVM's instruction
    selection has a ``Pattern`` class of its own (``PatternToMatch``, ``ResultInstrs``) that is
    no rewrite rule.

    >>> pattern_records(RecordKeeper())
    []
    """
    return [r for r in rk.defs.values() if not r.is_class and "Pattern" in r.superclasses
            and isinstance(r.fields.get("sourcePattern"), Dag)]


def read_patterns(rk: RecordKeeper, default_dialect: str = "tdflow") -> list[Pattern]:
    """Every pattern of ``rk`` as a :class:`Pattern`, in definition order.

    Anonymous patterns are named ``GeneratedConvertN`` as mlir-tblgen names them: N counts the
    anonymous ones in record-name order. Raises :class:`TdError` at the first malformed
    pattern's record, the others in ``others``.

    >>> read_patterns(RecordKeeper())
    []
    """
    records = pattern_records(rk)
    if not records:
        return []
    names: dict[str, str] = {}
    n = 0
    for rec in sorted(records, key=lambda r: r.name.encode()):  # llvm's std::map order
        if rec.anonymous:
            names[rec.name] = f"GeneratedConvert{n}"
            n += 1
        else:
            names[rec.name] = rec.name
    sigs = OpSignatures(rk, default_dialect)
    out: list[Pattern] = []
    errors: list[TdError] = []
    for rec in records:
        reader = _PatternReader(rk, sigs, rec)
        try:
            out.append(reader.pattern(names[rec.name]))
        except TdError as bad:
            errors.append(_error(rec, bad.message))
    if errors:
        first, *rest = errors
        first.others = rest
        raise first
    return out


def _error(rec: Record, message: str) -> TdError:
    loc = rec.loc
    if loc is None:
        return TdError(f"pattern '{rec.name}': {message}")
    return TdError(message, os.path.normpath(loc.file), loc.line, loc.col or 1)


class _PatternReader:
    """Reads one pattern record; raises an unlocated :class:`TdError` with mlir-tblgen's complaint (the
    pattern's first: mlir-tblgen stops a pattern at its first, too)."""

    def __init__(self, rk: RecordKeeper, sigs: OpSignatures, rec: Record) -> None:
        self.rk = rk
        self.sigs = sigs
        self.rec = rec
        self.bound: dict[str, str] = {}  # symbol -> "op" | "value"
        self.natives: list[str] = []

    # -- the pattern ------------------------------------------------------------------------
    def pattern(self, name: str) -> Pattern:
        f = self.rec.fields
        src_dag = f.get("sourcePattern")
        if not isinstance(src_dag, Dag):
            raise TdError("the source pattern must be a dag: (Op $arg, ...)")
        source = self.node(src_dag, result=False)
        if not isinstance(source, OpNode) or source.kind != "op":
            raise TdError("the source pattern's root must be an op")
        root = self.sigs.get(src_dag.operator.name)
        results = self.result_patterns(f.get("resultPatterns") or [], root)
        constraints = tuple(self.constraint(c) for c in f.get("constraints") or [])
        supplemental = tuple(self.node(d, result=True)
                             for d in f.get("supplementalPatterns") or [] if isinstance(d, Dag))
        matched = tuple(_ops_of(source))
        generated = sorted({op for r in results for op in _ops_of(r)})
        loc = self.rec.loc
        return Pattern(
            name=name, root=source.op, benefit=_count_ops(source) + self.benefit_delta(),
            source=source, results=results, constraints=constraints, supplemental=supplemental,
            matched_ops=matched, generated_ops=tuple(generated),
            natives=tuple(dict.fromkeys(self.natives)),
            # (normpath: tdflow/ops.td reaches the standard library as include/tdflow/../../..)
            loc=Loc(os.path.normpath(loc.file), loc.line, loc.col or 1) if loc else None)

    def benefit_delta(self) -> int:
        delta = self.rec.fields.get("benefitDelta")
        if (not isinstance(delta, Dag) or len(delta.args) != 1
                or not isinstance(delta.args[0][0], int)):
            raise TdError("The 'addBenefit' takes and only takes one integer value")
        return delta.args[0][0]

    def result_patterns(self, dags: list, root: OpSig) -> tuple[OpNode | Bind, ...]:
        n_replacing = len(root.results)
        # the last patterns' values replace the root's results; earlier ones are auxiliary
        replacing_from = len(dags)
        provided = 0
        for i in range(len(dags) - 1, -1, -1):
            if provided >= n_replacing:
                break
            provided += self.value_count(dags[i])
            replacing_from = i
        out = []
        for i, d in enumerate(dags):
            if not isinstance(d, Dag):
                raise TdError("a result pattern must be a dag: (Op $arg, ...)")
            out.append(self.node(d, result=True, replaces_root=i >= replacing_from))
        total = sum(self.value_count(d) for d in dags)
        if total < n_replacing:
            raise TdError("not enough values generated to replace the matched op")
        return tuple(out)

    def value_count(self, dag) -> int:
        """How many values a result dag produces (mlir-tblgen's getNodeValueCount)."""
        if not isinstance(dag, Dag):
            return 1
        kind, rec = self.kind_of(dag)
        if kind == "op":
            return len(self.sigs.get(rec.name).results)
        if kind == "native":
            returns = rec.get("numReturns")
            return returns if isinstance(returns, int) else 1
        return 1

    # -- dags -------------------------------------------------------------------------------
    def kind_of(self, dag: Dag) -> tuple[str, Record | None]:
        op = dag.operator
        rec = self.rk.defs.get(op.name) if isinstance(op, DefRef) else None
        if rec is None:
            raise TdError(f"unknown op '{op}': the dag operator is not a record")
        if rec.name in _DIRECTIVES and not rec.superclasses:
            return _DIRECTIVES[rec.name], rec
        if self.sigs.get(rec.name) is not None:
            return "op", rec
        if rec.isa("NativeCodeCall"):
            return "native", rec
        if rec.isa("Constraint"):
            return "constraint_dag", rec
        raise TdError(f"unknown op '{rec.name}': it is not an op definition, a NativeCodeCall "
                   f"or a DRR directive (replaceWithValue, location, returnType, either, "
                   f"variadic)")

    def node(self, dag: Dag, *, result: bool, replaces_root: bool = False) -> OpNode:
        kind, rec = self.kind_of(dag)
        if kind == "op":
            return self.op_node(dag, rec, result=result, replaces_root=replaces_root)
        if kind == "native":
            return self.native_node(dag, rec, result=result)
        if kind == "return_type":
            for value, _ in dag.args:
                if isinstance(value, Dag) and self.kind_of(value)[0] != "native":
                    raise TdError("nested DAG in `returnType` must be a native code call")
        args = tuple(self.arg(v, n, result=result) for v, n in dag.args)
        if dag.operator_name and kind not in ("either", "variadic"):
            self.bind(dag.operator_name, "value", result)
        return OpNode(kind, rec.name if kind == "constraint_dag" else None, args,
                      name=dag.operator_name)

    def op_node(self, dag: Dag, rec: Record, *, result: bool, replaces_root: bool) -> OpNode:
        sig = self.sigs.get(rec.name)
        # `location` and `returnType` trail a result op's arguments without taking a slot
        directives = [v for v, _ in dag.args if isinstance(v, Dag) and self.kind_of(v)[0] in
                      ("location", "return_type")] if result else []
        if replaces_root and any(self.kind_of(d)[0] == "return_type" for d in directives):
            raise TdError("Cannot specify explicit return types in an op whose return values "
                       "replace the source pattern's root op")
        n_args = sum(len(v.args) if isinstance(v, Dag) and self.kind_of(v)[0] == "either"
                     else 1 for v, _ in dag.args) - len(directives)
        if n_args != sig.arity:
            raise TdError(f"op '{sig.name}' argument number mismatch: {n_args} in pattern vs. "
                       f"{sig.arity} in definition")
        if not result and dag.operator_name:
            self.bind(dag.operator_name, "op", result)
        args, names, slot = [], [], 0
        for value, name in dag.args:
            if isinstance(value, Dag):
                kind = self.kind_of(value)[0]
                if kind in ("location", "return_type") and result:
                    args.append(self.node(value, result=True))
                    names.append(f"${kind}")
                    continue
                if kind == "either":
                    covered = tuple(a.name for a in sig.args[slot:slot + len(value.args)])
                    node = self.node(value, result=result)
                    args.append(OpNode("either", None, node.args, covered, node.name))
                    names.append(covered[0] if covered else "")
                    slot += len(value.args)
                    continue
                if (result and kind == "op" and slot < sig.arity and sig.args[slot].variadic):
                    raise TdError(f"op expects variadic operand `{sig.args[slot].name}`, while "
                               f"provided is non-variadic")
            args.append(self.arg(value, name, result=result))
            names.append(sig.args[slot].name)
            slot += 1
        if result and dag.operator_name:
            self.bind(dag.operator_name, "op", result)
        return OpNode("op", sig.name, tuple(args), tuple(names), dag.operator_name)

    def native_node(self, dag: Dag, rec: Record, *, result: bool) -> OpNode:
        expr = str(rec.get("expression") or "")
        self.natives.append(rec.name)
        if not result:
            # a native matcher gets the op through $_self and binds its outputs (`&$0`)
            if "$_self" not in expr:
                raise TdError("NativeCodeCall must have $_self as argument for passing the "
                           "defining Operation")
            if dag.operator_name:
                raise TdError(f"binding symbol '{dag.operator_name}' to NativecodeCall in "
                           f"MatchPattern is not supported")
            for i, (value, _name) in enumerate(dag.args):
                if isinstance(value, Dag):
                    raise TdError(f"Matching nested tree in NativeCodecall not supported: "
                               f"argument {i} of '{rec.name}' is a dag; bind it to a $name "
                               f"and match the op in a pattern of its own")
        args = tuple(self.arg(v, n, result=result) for v, n in dag.args)
        if result and dag.operator_name:
            self.bind(dag.operator_name, "op", result)
        return OpNode("native", rec.name, args, name=dag.operator_name, expr=expr)

    # -- leaves -----------------------------------------------------------------------------
    def arg(self, value, name: str | None, *, result: bool) -> OpNode | Bind:
        if isinstance(value, Dag):
            return self.node(value, result=result)
        name = None if name == "_" else name
        if name is not None:
            if result and value is None:
                self.use(name)
            else:
                self.bind(name, "value", result)
        if value is None:
            return Bind(name, "any")
        if isinstance(value, (int, str)) and not isinstance(value, DefRef):
            return Bind(name, "literal", value=str(value) if isinstance(value, Code) else value)
        rec = self.rk.defs.get(value.name) if isinstance(value, DefRef) else None
        if rec is None:
            raise TdError(f"unexpected argument '{value}': expected $name, a constraint, a "
                       f"constant attribute or a dag")
        label = rec.name
        if rec.isa("ConstantAttr"):
            attr = rec.get("attr")
            attr_name = attr.name if isinstance(attr, DefRef) else None
            return Bind(name, "constant_attr", attr_name if rec.anonymous else label,
                        (attr_name, rec.get("value")), self.pred_of(rec))
        if rec.isa("NativeCodeCall"):
            self.natives.append(label)
            return Bind(name, "native", label, str(rec.get("expression") or ""))
        if rec.isa("TypeConstraint"):
            return Bind(name, "type", label, pred=self.pred_of(rec))
        if rec.isa("AttrConstraint"):
            return Bind(name, "attr", label, pred=self.pred_of(rec))
        return Bind(name, "any", label, pred=self.pred_of(rec))

    def pred_of(self, rec: Record) -> str | None:
        pred = rec.get("predicate")
        prec = self.rk.defs.get(pred.name) if isinstance(pred, DefRef) else None
        text = prec.get("predExpr") if prec is not None else None
        return str(text) if isinstance(text, str) else None

    # -- symbols ----------------------------------------------------------------------------
    def bind(self, name: str, what: str, result: bool) -> None:
        prev = self.bound.get(name)
        # a value bound twice in the source is an equality check (mlir-tblgen allows it)
        if prev is not None and (what == "op" or prev == "op" or result):
            raise TdError(f"symbol '{name}' bound more than once")
        self.bound[name] = what

    def use(self, name: str) -> None:
        base = _INDEXED.match(name)
        if name not in self.bound and (base is None or base.group(1) not in self.bound):
            raise TdError(f"referencing unbound symbol '{name}'")

    # -- constraints ------------------------------------------------------------------------
    def constraint(self, dag) -> Constraint:
        if not isinstance(dag, Dag) or not isinstance(dag.operator, DefRef):
            raise TdError(f"a constraint must be a dag (Constraint $a, ...), not {dag}")
        rec = self.rk.defs.get(dag.operator.name)
        if rec is None or not rec.isa("Constraint"):
            raise TdError(f"'{dag.operator}' in the constraint list is not a Constraint")
        names = []
        for value, name in dag.args:
            if value is not None or name is None:
                raise TdError(f"constraint '{rec.name}' takes bound values ($name), not {value}")
            self.use(name)
            names.append(name)
        if rec.isa("TypeConstraint") and len(names) != 1:
            raise TdError("type constraint requires exactly one argument")
        known = rec.isa("TypeConstraint") or rec.isa("AttrConstraint") or (
            rec.name in _KNOWN_CONSTRAINTS)
        if not known:
            self.natives.append(rec.name)
        summary = rec.get("summary")
        return Constraint(rec.name, tuple(names), "known" if known else "cpred",
                          self.pred_of(rec), summary if isinstance(summary, str) else "")


def _ops_of(node) -> list[str]:
    """Every op a dag mentions, preorder (root first), as mlir-tblgen's collectOps walks."""
    if not isinstance(node, OpNode):
        return []
    out = [node.op] if node.kind == "op" else []
    for a in node.args:
        out.extend(_ops_of(a))
    return out


def _count_ops(node) -> int:
    """mlir-tblgen's DagNode::getNumOps: every dag but natives, `either` and `variadic`."""
    if not isinstance(node, OpNode):
        return 0
    own = 0 if node.kind in ("native", "either", "variadic") else 1
    return own + sum(_count_ops(a) for a in node.args)
