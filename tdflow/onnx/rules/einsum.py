"""ONNX's Einsum as tdflow ops: diagonals by strided slices, lone indices summed out, operands
contracted pairwise by one batch_matmul each, the result transposed into the output's order.

>>> parse_equation("bij,bjk->bik", [3, 3])
(['bij', 'bjk'], 'bik')
>>> parse_equation("...ii->...i", [4])
(['ABii'], 'ABi')
>>> parse_equation("ij,jk", [2, 2])
(['ij', 'jk'], 'ik')
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .api import Lowerer, LoweringError, Node, rule
from .common import reshape, transpose

_ELLIPSIS_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"  # ONNX terms use lower-case letters only


def parse_equation(eq: str, ranks: list[int]) -> tuple[list[str], str]:
    """The terms of ``eq`` with ``...`` spelled out as upper-case letters (right-aligned over
    the operands' ranks, as numpy broadcasts them), and the output term (numpy's implicit one
    when ``eq`` has no ``->``)."""
    eq = eq.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ValueError(f"the equation has {len(terms)} terms for {len(ranks)} inputs")
    ell = max((r - len(t.replace("...", "")) for t, r in zip(terms, ranks) if "..." in t),
              default=0)
    if ell > len(_ELLIPSIS_LETTERS):
        raise ValueError("too many dims under '...'")
    ell_letters = _ELLIPSIS_LETTERS[:ell]
    out_terms = []
    for t, r in zip(terms, ranks):
        if "..." in t:
            k = r - len(t.replace("...", ""))
            t = t.replace("...", ell_letters[ell - k:] if k else "")
        if len(t) != r:
            raise ValueError(f"term '{t}' has {len(t)} indices for an input of rank {r}")
        out_terms.append(t)
    if arrow:
        out = rhs.replace("...", ell_letters)
    else:
        letters = "".join(out_terms)
        out = ell_letters + "".join(sorted(c for c in set(letters)
                                           if c.islower() and letters.count(c) == 1))
    return out_terms, out


def _diagonal(cx: Lowerer, x: Any, term: str) -> tuple[Any, str]:
    """Repeated indices of one term taken on the diagonal (``ii`` -> ``i``)."""
    while True:
        rep = next((c for c in term if term.count(c) > 1), None)
        if rep is None:
            return x, term
        p = term.index(rep)
        q = term.index(rep, p + 1)
        shape = list(cx.shape_of(x))
        rest = [a for a in range(len(term)) if a not in (p, q)]
        x = transpose(cx, x, rest + [p, q])
        d = shape[p]
        lead = [shape[a] for a in rest]
        x = reshape(cx, x, lead + [d * d])
        if d > 1:
            rank = len(lead) + 1
            x = cx.op("tdflow.slice", [x], {"start": [0] * rank, "stop": lead + [d * d],
                                            "step": [1] * (rank - 1) + [d + 1]})
        term = "".join(term[a] for a in rest) + rep


def _sum_out(cx: Lowerer, x: Any, term: str, keep: set[str]) -> tuple[Any, str]:
    axes = [i for i, c in enumerate(term) if c not in keep]
    if not axes:
        return x, term
    x = cx.op("tdflow.reduce_sum", [x], {"axis": axes, "keepdims": False})
    return x, "".join(c for c in term if c in keep)


def _contract(cx: Lowerer, a: Any, ta: str, b: Any, tb: str, keep: set[str]) -> tuple[Any, str]:
    """``a`` and ``b`` multiplied over their shared indices, summed over those not in
    ``keep``."""
    sa, sb = dict(zip(ta, cx.shape_of(a))), dict(zip(tb, cx.shape_of(b)))
    shared = [c for c in ta if c in sb]
    batch = [c for c in shared if c in keep]
    summed = [c for c in shared if c not in keep]
    only_a = [c for c in ta if c not in sb]
    only_b = [c for c in tb if c not in sa]
    # a size-1 dim of one side broadcasts against the other's
    for c in shared:
        if sa[c] != sb[c]:
            if sa[c] == 1:
                a = cx.op("tdflow.expand", [a], {"expand_shape": [sb.get(x, sa[x]) if x == c
                                                                  else sa[x] for x in ta]})
                sa[c] = sb[c]
            elif sb[c] == 1:
                b = cx.op("tdflow.expand", [b], {"expand_shape": [sa.get(x, sb[x]) if x == c
                                                                  else sb[x] for x in tb]})
                sb[c] = sa[c]
            else:
                cx.unsupported(f"index '{c}' has sizes {sa[c]} and {sb[c]}")
    size = lambda cs, s: int(np.prod([s[c] for c in cs], dtype=np.int64))  # noqa: E731
    a = transpose(cx, a, [ta.index(c) for c in batch + only_a + summed])
    b = transpose(cx, b, [tb.index(c) for c in batch + summed + only_b])
    nb, na, nk, nbo = size(batch, sa), size(only_a, sa), size(summed, sa), size(only_b, sb)
    a = reshape(cx, a, [nb, na, nk])
    b = reshape(cx, b, [nb, nk, nbo])
    y = cx.op("tdflow.batch_matmul", [a, b], {})
    term = "".join(batch + only_a + only_b)
    return reshape(cx, y, [sa[c] for c in batch + only_a] + [sb[c] for c in only_b]), term


@rule("Einsum")
def einsum(cx: Lowerer, n: Node) -> list:
    xs = [v for v in n.inputs if v is not None]
    eq = n.attrs["equation"]
    eq = eq.decode() if isinstance(eq, bytes) else eq
    try:
        terms, out = parse_equation(eq, [len(cx.shape_of(x)) for x in xs])
    except ValueError as exc:
        raise LoweringError(f"equation '{eq}': {exc}", n) from None
    vals = []
    for i, (x, t) in enumerate(zip(xs, terms)):
        x, t = _diagonal(cx, x, t)
        others = set(out).union(*[set(u) for j, u in enumerate(terms) if j != i])
        vals.append(_sum_out(cx, x, t, others))
    acc, term = vals[0]
    for i, (x, t) in enumerate(vals[1:], start=1):
        later = set(out).union(*[set(u) for _, u in vals[i + 1:]])
        acc, term = _contract(cx, acc, term, x, t, later)
    acc, term = _sum_out(cx, acc, term, set(out))
    if sorted(term) != sorted(out):
        cx.unsupported(f"equation '{eq}' (output indices {out!r} from {term!r})")
    return [transpose(cx, acc, [term.index(c) for c in out])]
