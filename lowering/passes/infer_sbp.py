"""``infer-sbp{nproc=N}``: choose every value's SBP and insert the boxing between them.

Function arguments take their ``sbp`` argument attribute (default broadcast on every axis of
the hierarchy). Walking the body in order, each op's candidate signatures are its ``get_sbp``
hook's (plus all-broadcast, always valid), or OneFlow's ``parallel`` attribute when the op
carries one; the candidate whose inputs are cheapest to reach from their producers' SBP
(OneFlow's copy cost, ``lowering.sbp.copy_cost``) plus what its results will cost their
consumers (``lowering.sbp_search``: a backward dynamic program over the function; option
``search=greedy`` drops it, OneFlow's default) wins, ties going to the one that boxes fewer
inputs, then to the hook's order. Boxing ops (``tdflow.boxing_*``) are inserted where a
producer's SBP differs from the chosen one. Shape inference runs first: the cost model and the
boxing ops' ``out_shape`` need the logical shapes. Every op records its results' SBP in the
discardable attribute ``sbp = [[#sbp.S<0>], ...]``; the function's arguments and results get
an ``sbp`` attribute (what :func:`function_sbp` reads).

Before (2 ranks)::

    func.func @f(%x: tensor<4x3xf64> {sbp = [#sbp.S<0>]}, %w: tensor<3x2xf64>) -> ... {
      %0 = "tdflow.matmul"(%x, %w) : (tensor<4x3xf64>, tensor<3x2xf64>) -> tensor<4x2xf64>

after: ``%0`` is ``S(0)`` (``{sbp = [[#sbp.S<0>]]}``), ``%w`` broadcast, no boxing.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tdflow.dialect.attr_convert import to_attr
from tdflow.dialect.ir.attrs import ArrayAttr, OpaqueAttr, element_bytes
from tdflow.dialect.ir.core import RETURN, FuncOp, Module, Operation
from tdflow.dialect.ir.rewriter import Rewriter
from tdflow.dialect.op_verify import operand_groups, result_groups
from tdflow.dialect.sbp import B, NdSbp, Sbp, SbpError, parse_sbp
from tdflow.dialect.types import TensorType

from ..ir_access import diagnostic, mutated_operands, op_attributes, op_def
from ..pass_manager import Pass, PassContext, PassFailure
from ..sbp import UNSUPPORTED, nd_copy_cost
from ..sbp_ir import (
    SBP_ATTR,
    boxing_plan,
    boxing_steps,
    hierarchy_of,
    nd_sbp_attr,
    nd_sbp_from_attr,
    nd_sbp_of,
    nd_text,
    parse_parallel,
)
from ..sbp_search import compute_cost, future_costs

if TYPE_CHECKING:
    from tdflow.dialect.opdef import OpDef

    from ..ir_access import Ops

__all__ = ["InferSbpPass", "function_sbp"]


@dataclass(frozen=True)
class _Candidate:
    ins: tuple[NdSbp, ...]   # one per operand (flat)
    outs: tuple[NdSbp, ...]  # one per result


class InferSbpPass(Pass):
    name = "infer-sbp"
    summary = "choose every value's SBP (OneFlow's copy cost) and insert boxing ops"
    options = {"nproc": 1, "search": "lookahead"}

    def run(self, module: Module, context: PassContext) -> None:
        from .infer_shapes import InferShapesPass

        # the cost model and the boxing ops' out_shape need the logical shapes
        InferShapesPass().run(module, context)
        nproc, search = self.option("nproc"), self.option("search")
        if search not in ("lookahead", "greedy"):
            raise PassFailure(self.name, [diagnostic(
                f"infer-sbp: search must be 'lookahead' or 'greedy', not {search!r}", None)])
        errors: list[Any] = []
        for func in module:
            try:
                _Inference(func, context.dialect, nproc, search == "lookahead").run()
            except _Located as exc:
                errors.append(diagnostic(exc.message, exc.loc))
            except SbpError as exc:
                errors.append(diagnostic(f"@{func.name}: {exc}", func.loc))
        if errors:
            raise PassFailure(self.name, errors)


class _Located(SbpError):
    """An SBP error at an op (internal: becomes a diagnostic)."""

    def __init__(self, message: str, loc: Any) -> None:
        super().__init__(message)
        self.message, self.loc = message, loc


def _nbytes(t: Any) -> float:
    if not isinstance(t, TensorType) or t.shape is None:
        return 1.0
    n = 1
    for d in t.shape:
        n *= d if isinstance(d, int) and d >= 0 else 1
    return float(n * (element_bytes(t.dtype) or 8))


def _fits(nd: NdSbp, t: Any) -> bool:
    """Every split axis exists in the value's type."""
    rank = len(t.shape) if isinstance(t, TensorType) and t.shape is not None else None
    return all(s.kind != "S" or (rank is not None and s.axis < rank) for s in nd)


class _Inference:
    def __init__(self, func: FuncOp, dialect: Ops | None, nproc: int, lookahead: bool = True) -> None:
        self.func, self.dialect, self.lookahead = func, dialect, lookahead
        self.tails: dict[int, list[float]] = {}
        self.hier = hierarchy_of(func, nproc)
        self.sbp: dict[Any, NdSbp] = {}
        self.boxed: dict[tuple[Any, NdSbp], Any] = {}

    # -- the walk ------------------------------------------------------------------------
    def run(self) -> None:
        func, n_axes = self.func, len(self.hier)
        # fewer attribute dicts than arguments (a builder or a pass wrote only the first
        # ones): the missing arguments are broadcast, as OneFlow takes an SBP-less input
        attrs = list(func.arg_attrs or [])[:len(func.args)]
        func.arg_attrs = [dict(a or {}) for a in attrs] + [{} for _ in func.args[len(attrs):]]
        for i, v in enumerate(func.args):
            given = func.arg_attrs[i].get(SBP_ATTR)
            try:
                nd = nd_sbp_from_attr(given, n_axes) if given is not None else (B,) * n_axes
            except SbpError as exc:
                raise _Located(f"@{func.name} argument #{i}: {exc}", func.loc) from None
            if not _fits(nd, v.type):
                raise _Located(f"@{func.name} argument #{i}: SBP {nd_text(nd)} splits an axis "
                               f"that {v.type} does not have", func.loc)
            self.sbp[v] = nd
            func.arg_attrs[i][SBP_ATTR] = nd_sbp_attr(nd)
        if self.lookahead:  # what each candidate's results will cost their consumers
            self.tails = future_costs(list(func.body), self._search_candidates,
                                      self._value_cost, self._result_want, self.sbp.get,
                                      self._compute)
        for op in list(func.body):
            if op.name == RETURN:
                self._return(op)
            else:
                self._op(op)

    def _return(self, op: Operation) -> None:
        func, n_axes = self.func, len(self.hier)
        res = list(func.res_attrs or [])[:len(op.operands)]
        func.res_attrs = [dict(a or {}) for a in res] + [{} for _ in op.operands[len(res):]]
        for i, v in enumerate(op.operands):
            given = func.res_attrs[i].get(SBP_ATTR)
            want = self._of(v) if given is None else nd_sbp_from_attr(given, n_axes)
            # boxed right after its producer: a gradient's all-reduce can then overlap the
            # rest of the backward pass (tdflow.distributed.overlap)
            op.set_operand(i, self._box(v, want, op, early=True))
            func.res_attrs[i][SBP_ATTR] = nd_sbp_attr(want)

    def _of(self, v: Any) -> NdSbp:
        return self.sbp.get(v, (B,) * len(self.hier))

    def _op(self, op: Operation) -> None:
        cands = self._candidates(op)
        # an operand written in place keeps its SBP: boxing would update a copy
        mutated = set(mutated_operands(self.dialect, op))
        best, best_key = None, None
        for k, c in enumerate(cands):
            cost, moved = 0.0, 0
            for i, (v, want) in enumerate(zip(op.operands, c.ins)):
                have = self._of(v)
                if have != want:
                    reachable = i not in mutated and boxing_plan(have, want) is not None
                    cost += (nd_copy_cost(have, want, _nbytes(v.type), self.hier) if reachable
                             else UNSUPPORTED)
                    moved += 1
            tail = self.tails.get(id(op))  # its results' future and its own work
            key = (cost + (tail[k] if tail else 0.0), moved, k)
            if best_key is None or key < best_key:
                best, best_key = c, key
        if best is None or best_key[0] >= UNSUPPORTED:  # inputs unreachable (tails are finite)
            detail = ""
            if best is not None:
                bad = [(i, self._of(v), w) for i, (v, w) in enumerate(zip(op.operands, best.ins))
                       if self._of(v) != w and (
                           i in mutated or boxing_plan(self._of(v), w) is None
                           or nd_copy_cost(self._of(v), w, 1.0, self.hier) >= UNSUPPORTED)]
                detail = "; ".join(f"operand #{i}{' (written in place)' if i in mutated else ''} "
                                   f"is {nd_text(h)} but the signature needs {nd_text(w)}"
                                   for i, h, w in bad[:3])
            raise _Located(f"'{op.name}': no SBP signature can be satisfied ({detail}); "
                           f"boxing cannot turn S into P, re-split a tensor axis that an inner "
                           f"mesh axis splits, or convert an operand written in place", op.loc)
        for i, (v, want) in enumerate(zip(op.operands, best.ins)):
            op.set_operand(i, self._box(v, want, op))
        for i in mutated:  # copies boxed before this update are stale for later users
            v = op.operands[i]
            self.boxed = {k: b for k, b in self.boxed.items() if k[0] is not v}
        for r, nd in zip(op.results, best.outs):
            self.sbp[r] = nd
        if op.results:
            op.attributes[SBP_ATTR] = ArrayAttr(tuple(nd_sbp_attr(nd) for nd in best.outs))

    # -- look-ahead (lowering.sbp_search) ------------------------------------------------
    def _search_candidates(self, op: Operation) -> list[_Candidate]:
        cands = self._candidates(op)
        parallel = op.attributes.get("parallel")
        if (len(cands) == 1 and isinstance(parallel, OpaqueAttr)
                and "[]" in parallel.text.split("->")[0]):
            # a pinned op that takes its operands as they come: any SBP suits it
            return [_Candidate((None,) * len(op.operands), cands[0].outs)]
        return cands

    def _value_cost(self, have: NdSbp, want: NdSbp | None, v: Any) -> float:
        if want is None or have == want:
            return 0.0
        if boxing_plan(have, want) is None:
            return UNSUPPORTED
        return nd_copy_cost(have, want, _nbytes(v.type), self.hier)

    def _result_want(self, op: Operation, i: int) -> NdSbp | None:
        attrs = self.func.res_attrs or []
        given = (attrs[i] or {}).get(SBP_ATTR) if i < len(attrs) else None
        return None if given is None else nd_sbp_from_attr(given, len(self.hier))

    def _compute(self, op: Operation, c: _Candidate) -> float:
        return compute_cost([_nbytes(r.type) for r in op.results], c.outs, self.hier)

    # -- candidates ----------------------------------------------------------------------
    def _candidates(self, op: Operation) -> list[_Candidate]:
        n_axes = len(self.hier)
        all_b = _Candidate(((B,) * n_axes,) * len(op.operands), ((B,) * n_axes,) * len(op.results))
        parallel = op.attributes.get("parallel")
        if isinstance(parallel, OpaqueAttr) and parallel.text.startswith("#sbp.parallel"):
            try:
                ins, outs = parse_parallel(parallel.text, n_axes)
            except SbpError as exc:
                raise _Located(f"'{op.name}': {exc}", op.loc) from None
            if len(outs) != len(op.results) or (ins and len(ins) != len(op.operands)):
                raise _Located(f"'{op.name}': parallel {parallel.text} names {len(ins)} input(s) "
                               f"and {len(outs)} output(s); the op has {len(op.operands)} and "
                               f"{len(op.results)}", op.loc)
            # no inputs listed: the op takes its operands as they come (a source op's form)
            return [_Candidate(tuple(ins) or tuple(self._of(v) for v in op.operands), tuple(outs))]
        opdef = op_def(self.dialect, op.name)
        if opdef is None or any(a.name == "seed" for a in opdef.attributes):
            # an op that draws random numbers (OneFlow's have a `seed`) runs whole on every
            # rank: each draws the logical mask from the same counters, as one process does,
            # and its consumers take their slices of it
            return [all_b]
        one_d = self._one_d(op, opdef)
        if one_d is None:
            return [all_b]
        b_1d = _Candidate(((B,),) * len(op.operands), ((B,),) * len(op.results))
        if b_1d not in one_d:  # broadcast on one mesh axis: its ranks compute the same thing
            one_d = [*one_d, b_1d]
        cands = []
        # OneFlow's nd enumeration: each hierarchy axis picks a 1-D signature on its own
        for combo in itertools.product(one_d, repeat=n_axes):
            c = _Candidate(tuple(tuple(s.ins[i][0] for s in combo) for i in range(len(op.operands))),
                           tuple(tuple(s.outs[i][0] for s in combo) for i in range(len(op.results))))
            if all(_fits(nd, v.type) for nd, v in zip(c.ins + c.outs, op.operands + op.results)):
                cands.append(c)
        if all_b not in cands:
            cands.append(all_b)
        return cands

    def _one_d(self, op: Operation, opdef: OpDef) -> list[_Candidate] | None:
        """The hook's 1-D signatures, mapped onto the flat operands and results."""
        ins, outs = operand_groups(opdef, op), result_groups(opdef, op)
        if ins is None or outs is None:
            return None
        types = {name: tuple(v.type for v in vals) for name, vals in ins.items() if vals}
        try:
            sigs = self.dialect.sbp_signatures(op.name, types, op_attributes(self.dialect, op))
        except (ValueError, TypeError, KeyError) as exc:
            raise _Located(f"'{op.name}': its get_sbp hook failed: {exc}", op.loc) from None
        blobs = _operand_blobs(opdef, op, ins)
        out = []
        for sig in sigs:
            table = dict(sig.inputs) | dict(sig.outputs)
            try:
                c_ins = tuple((parse_sbp(table.get(b, "B")),) for b in blobs)
            except SbpError as exc:
                raise _Located(f"'{op.name}': get_sbp returned {exc}", op.loc) from None
            names = {id(r): f"{name}_{j}" for name, rs in outs.items() for j, r in enumerate(rs)}
            c_outs = tuple((parse_sbp(table.get(names.get(id(r), ""), "B")),) for r in op.results)
            out.append(_Candidate(c_ins, c_outs))
        return out

    # -- boxing ------------------------------------------------------------------------
    def _box(self, v: Any, want: NdSbp, user: Operation, early: bool = False) -> Any:
        have = self._of(v)
        if have == want:
            return v
        key = (v, want)
        if key in self.boxed:
            return self.boxed[key]
        plan = boxing_plan(have, want)
        if plan is None:
            raise _Located(f"'{user.name}': no boxing turns {nd_text(have)} into "
                           f"{nd_text(want)} (a split re-nested under an inner split)", user.loc)
        cur, value = list(have), v
        producer = v.owner if early and isinstance(v.owner, Operation) else None
        for axis, src, dst in plan:
            for name, attrs in boxing_steps(src, dst):
                attrs = {k: to_attr("si64", a) for k, a in attrs.items()}
                attrs["mesh_axis"] = to_attr("si64", axis)
                attrs["out_shape"] = to_attr("shape", list(value.type.shape))
                cur[axis] = _after(name, attrs, dst)
                attrs[SBP_ATTR] = ArrayAttr((nd_sbp_attr(tuple(cur)),))
                box = Operation(name, [value], [value.type], attrs, user.loc)
                if producer is not None:
                    Rewriter().insert_after(producer, box)
                    producer = box
                else:
                    Rewriter().insert_before(user, box)
                value = box.result
                self.sbp[value] = tuple(cur)
        self.boxed[key] = value
        return value


def _operand_blobs(opdef: OpDef, op: Operation, groups: dict[str, list]) -> list[str]:
    """The blob name (``a_0``) of every flat operand, by position: a value used twice
    (``matmul(%x, %x)``) is two blobs with their own SBP."""
    names = []
    for d in opdef.operands:
        names += [f"{d.name}_{j}" for j in range(len(groups.get(d.name, ())))]
    if len(names) == len(op.operands):
        return names
    # OneFlow's control operands sit outside the groups: match the data operands by identity
    by_id = {id(v): f"{name}_{j}" for name, vals in groups.items() for j, v in enumerate(vals)}
    return [by_id.get(id(v), "") for v in op.operands]


def _after(name: str, attrs: dict, dst: Sbp) -> Sbp:
    """The SBP one boxing step leaves (an S -> P conversion passes through B)."""
    return B if name == "tdflow.boxing_all_gather" and dst.kind == "P" else dst


def function_sbp(func: FuncOp) -> tuple[list[NdSbp], list[NdSbp]]:
    """The nd_sbp of every argument and result of ``func`` after ``infer-sbp``.

    >>> from tdflow.dialect import standard_dialect
    >>> from tdflow.dialect.ir.parser import parse_module
    >>> from tdflow.lowering.pass_manager import PassManager
    >>> m = parse_module('''func.func @f(%x: tensor<4x3xf64> {sbp = [#sbp.S<0>]}) -> tensor<4x3xf64> {
    ...   %0 = "tdflow.relu"(%x) : (tensor<4x3xf64>) -> tensor<4x3xf64>
    ...   return %0 : tensor<4x3xf64>
    ... }''')
    >>> _ = PassManager.parse("infer-sbp{nproc=2}", dialect=standard_dialect()).run(m)
    >>> function_sbp(m["f"])
    ([(Sbp(kind='S', axis=0),)], [(Sbp(kind='S', axis=0),)])
    """
    def read(attrs: Any, n: int, what: str) -> list[NdSbp]:
        if attrs is None or len(attrs) != n or any(SBP_ATTR not in (a or {}) for a in attrs):
            raise SbpError(f"@{func.name}: its {what} have no SBP; run infer-sbp first")
        return [nd_sbp_of(a[SBP_ATTR]) for a in attrs]

    n_results = len(func.result_types)
    return read(func.arg_attrs, len(func.args), "arguments"), read(func.res_attrs, n_results,
                                                                     "results")
