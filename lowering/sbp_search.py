"""Look-ahead for ``infer-sbp``: what each SBP of a value will cost its consumers.

Greedy selection (OneFlow's default) picks each op's signature by the copy cost of its own
inputs only: an op whose inputs are cheapest in ``S(0)`` produces ``S(0)`` even when every
consumer then needs ``S(1)`` and must box a much larger tensor. :func:`future_costs` walks the
function backwards once (a small dynamic program over the graph) and gives, for every op and
candidate signature, ``tail``: the cheapest copy cost its results will cause downstream,

    future(v, s) = sum over the uses (op, j) of v of
                   min over op's candidates c of  copy(s -> c.ins[j])
                       + (copy of op's operands whose SBP is known -> c.ins + tail(op, c)) / m
    tail(op, c)  = sum over op's results r_k of future(r_k, c.outs[k])

where the known SBPs are the function's arguments' (weights, mostly) and ``m`` is the number
of op's operands not known (so a join is not counted once per input). The forward walk then
ranks candidates by their input cost plus their tail. Both count the ops' own work too
(:func:`compute_cost`, OneFlow's auto-parallel's measure): bytes alone would rather gather a
data-parallel batch than reduce its gradients, replicating every op in between. It is exact on chains and trees and a
heuristic on other graphs, as OneFlow's own SBP search is.

>>> from tdflow.dialect.sbp import B, S
>>> future_costs([], lambda op: [], lambda h, w, v: 0.0)
{}
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tdflow.dialect.ir.core import RETURN
from tdflow.dialect.sbp import NdSbp

__all__ = ["future_costs", "compute_cost", "CAP"]

# a conversion no boxing does (S -> P) counts as this many bytes in the look-ahead: a large
# finite number, so sums stay comparable (an infinite tail would tie every candidate)
CAP = 1e30


def compute_cost(out_bytes: Sequence[float], outs: Sequence[NdSbp],
                 hierarchy: Sequence[int]) -> float:
    """An op's work on one rank, as OneFlow's auto-parallel counts it: each result's bytes,
    divided by the ranks of every mesh axis that splits it or holds it partial (a broadcast
    axis repeats the work on each of its ranks).

    >>> from tdflow.dialect.sbp import B, S
    >>> compute_cost([800.0], [(S(0),)], (2,)), compute_cost([800.0], [(B,)], (2,))
    (400.0, 800.0)
    """
    total = 0.0
    for nbytes, nd in zip(out_bytes, outs):
        share = 1
        for s, k in zip(nd, hierarchy):
            share *= k if s.kind != "B" else 1
        total += nbytes / share
    return total


def future_costs(ops: Sequence[Any], candidates: Callable[[Any], list[Any]],
                 cost: Callable[[NdSbp, NdSbp | None, Any], float],
                 result_wants: Callable[[Any, int], NdSbp | None] = lambda op, i: None,
                 known: Callable[[Any], NdSbp | None] = lambda v: None,
                 compute: Callable[[Any, Any], float] = lambda op, c: 0.0,
                 ) -> dict[int, list[float]]:
    """``{id(op): [tail of candidate 0, ...]}`` for every op of ``ops`` (a function body in
    program order). ``candidates(op)`` lists an op's candidates (``.ins``, ``.outs``; an
    ``ins`` entry ``None`` takes any SBP); ``cost(have, want, value)`` is the copy cost of
    one value (0 when ``want`` is ``None``); ``result_wants(return_op, i)`` the SBP the
    function's result ``i`` must have (``None``: any); ``known(value)`` the SBP a value
    already has (the arguments'), else ``None``; ``compute(op, candidate)`` the op's own
    work under a candidate (counted in the tail, as the bytes are).

    >>> class C:
    ...     def __init__(self, ins, outs): self.ins, self.outs = ins, outs
    >>> future_costs([], lambda op: [C((), ())], lambda h, w, v: 0.0)
    {}
    """
    tails: dict[int, list[float]] = {}
    cands_of: dict[int, list[Any]] = {}
    memo: dict[tuple[int, NdSbp], float] = {}

    def future(v: Any, s: NdSbp) -> float:
        key = (id(v), s)
        if key in memo:
            return memo[key]
        total = 0.0
        for op, j in v.uses:
            if op.name == RETURN:
                total += min(cost(s, result_wants(op, j), v), CAP)
                continue
            cands = cands_of.get(id(op))
            if not cands:  # an op outside the walk (or none of its candidates is known)
                continue
            fixed = [(i, w, known(w)) for i, w in enumerate(op.operands) if i != j]
            fixed = [(i, w, nd) for i, w, nd in fixed if nd is not None]
            share = 1.0 / max(len(op.operands) - len(fixed), 1)
            best = CAP
            for c, tail in zip(cands, tails[id(op)]):
                want = c.ins[j] if j < len(c.ins) else None
                others = sum(min(cost(nd, c.ins[i] if i < len(c.ins) else None, w), CAP)
                             for i, w, nd in fixed)
                best = min(best, min(cost(s, want, v), CAP) + share * (others + tail))
            total += best
        memo[key] = total
        return total

    for op in reversed(list(ops)):
        if op.name == RETURN:
            continue
        cands = candidates(op)
        cands_of[id(op)] = cands
        tails[id(op)] = [min(compute(op, c) + sum(future(r, nd)
                                                  for r, nd in zip(op.results, c.outs)), CAP)
                         for c in cands]
    return tails
