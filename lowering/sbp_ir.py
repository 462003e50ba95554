"""SBP in the IR: reading OneFlow's notation off functions and ops, writing the chosen SBP.

* function arguments: ``{sbp = [#sbp.S<0>]}`` (one entry per hierarchy axis; default B);
* a function's ``attributes {hierarchy = [2, 2]}`` (default ``[nproc]``);
* OneFlow's op attribute ``parallel = #sbp.parallel<[inputs] -> [outputs]>`` (an entry is
  ``#sbp.S<0>`` on a 1-D hierarchy or ``[#sbp.S<0>, #sbp.B]``);
* what ``infer-sbp`` records: the discardable op attribute ``sbp = [[#sbp.S<0>], ...]``, one
  nd_sbp per result, and ``sbp`` on every argument and result of the function.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from tdflow.dialect.ir.attrs import ArrayAttr, IntegerAttr, OpaqueAttr, StringAttr
from tdflow.dialect.sbp import B, NdSbp, Sbp, SbpError, parse_sbp, sbp_ir, sbp_text

if TYPE_CHECKING:
    from tdflow.dialect.ir.core import FuncOp

__all__ = ["SBP_ATTR", "hierarchy_of", "nd_sbp_from_attr", "nd_sbp_of", "nd_sbp_attr",
           "parse_parallel", "nd_text", "boxing_steps", "boxing_plan"]

#: The discardable op attribute (and argument/result attribute) holding the chosen SBP.
SBP_ATTR = "sbp"


def hierarchy_of(func: FuncOp, nproc: int) -> tuple[int, ...]:
    """The function's placement hierarchy: ``attributes {hierarchy = [...]}``, else the
    ``hierarchy`` OneFlow's job ops carry (all alike), else ``[nproc]``.

    >>> from tdflow.dialect.ir.core import FuncOp
    >>> hierarchy_of(FuncOp("f"), 4)
    (4,)
    """
    h = func.attributes.get("hierarchy")
    if h is None:
        # OneFlow's jobs put the placement's hierarchy on every op instead
        found = {str(op.attributes["hierarchy"]) for op in func.body
                 if isinstance(op.attributes.get("hierarchy"), ArrayAttr)}
        if len(found) > 1:
            raise SbpError(f"@{func.name}: its ops carry different hierarchies "
                           f"({', '.join(sorted(found))}); one placement per function")
        h = next((op.attributes["hierarchy"] for op in func.body
                  if isinstance(op.attributes.get("hierarchy"), ArrayAttr)), None)
    if h is None:
        return (nproc,)
    if not isinstance(h, ArrayAttr) or not all(isinstance(v, IntegerAttr) for v in h.value):
        raise SbpError(f"@{func.name}: hierarchy must be a list of integers, not {h}")
    hier = tuple(v.value for v in h.value)
    size = 1
    for k in hier:
        size *= k
    if not hier or min(hier) < 1 or size != nproc:
        raise SbpError(f"@{func.name}: hierarchy {list(hier)} has {size} ranks; the program "
                       f"runs on {nproc} (nproc)")
    return hier


def _one(attr: Any) -> Sbp:
    if isinstance(attr, (OpaqueAttr, StringAttr)):
        return parse_sbp(attr.text if isinstance(attr, OpaqueAttr) else attr.value)
    raise SbpError(f"expected an SBP (#sbp.S<axis>, #sbp.B, #sbp.P), found {attr}")


def nd_sbp_from_attr(attr: Any, n_axes: int) -> NdSbp:
    """An nd_sbp from ``[#sbp.S<0>, #sbp.B]`` (or one bare SBP on a 1-D hierarchy).

    >>> nd_sbp_from_attr(ArrayAttr((OpaqueAttr("#sbp.S<0>"),)), 1)
    (Sbp(kind='S', axis=0),)
    """
    items = attr.value if isinstance(attr, ArrayAttr) else (attr,)
    nd = tuple(_one(a) for a in items)
    if len(nd) != n_axes:
        raise SbpError(f"SBP {nd_text(nd)} has {len(nd)} axes; the hierarchy has {n_axes}")
    return nd


def nd_sbp_attr(nd: NdSbp) -> ArrayAttr:
    """The IR attribute of an nd_sbp, in OneFlow's notation.

    >>> str(nd_sbp_attr((Sbp("S", 1), Sbp("B"))))
    '[#sbp.S<1>, #sbp.B]'
    """
    return ArrayAttr(tuple(OpaqueAttr(sbp_ir(s)) for s in nd))


def nd_text(nd: NdSbp) -> str:
    """``(S(0), B)``-style text for messages and ``tdflow lower --nproc``.

    >>> nd_text((Sbp("S", 0),))
    '[S(0)]'
    """
    return "[" + ", ".join(sbp_text(s) for s in nd) + "]"


_PARALLEL = re.compile(r"^#sbp\.parallel<\s*\[(?P<ins>.*)\]\s*->\s*\[(?P<outs>.*)\]\s*>$", re.S)
_ENTRY = re.compile(r"\[[^\[\]]*\]|#sbp\.[A-Za-z]+(?:<[^>]*>)?")


def parse_parallel(text: str, n_axes: int) -> tuple[list[NdSbp], list[NdSbp]]:
    """OneFlow's ``#sbp.parallel<[inputs] -> [outputs]>``: one nd_sbp per input and output.

    >>> ins, outs = parse_parallel("#sbp.parallel<[#sbp.S<0>] -> [#sbp.P]>", 1)
    >>> [nd_text(s) for s in ins], [nd_text(s) for s in outs]
    (['[S(0)]'], ['[P]'])
    >>> parse_parallel("#sbp.parallel<[] -> [[#sbp.B, #sbp.S<1>]]>", 2)[1]
    [(Sbp(kind='B', axis=None), Sbp(kind='S', axis=1))]
    """
    m = _PARALLEL.match(text.strip())
    if m is None:
        raise SbpError(f"expected #sbp.parallel<[inputs] -> [outputs]>, found {text!r}")

    def entries(body: str) -> list[NdSbp]:
        out = []
        for e in _ENTRY.findall(body):
            parts = [p for p in re.split(r"\s*,\s*", e.strip("[]").strip()) if p]
            nd = tuple(parse_sbp(p) for p in parts)
            if len(nd) != n_axes:
                raise SbpError(f"{e} in {text!r} has {len(nd)} axes; the hierarchy has {n_axes}")
            out.append(nd)
        return out

    return entries(m.group("ins")), entries(m.group("outs"))


def boxing_steps(src: Sbp, dst: Sbp) -> list[tuple[str, dict[str, Any]]]:
    """The boxing ops (name, attributes) that turn ``src`` into ``dst`` on one hierarchy axis.

    >>> boxing_steps(Sbp("P"), Sbp("S", 1))
    [('tdflow.boxing_reduce_scatter', {'axis': 1})]
    >>> [n for n, _ in boxing_steps(Sbp("S", 0), Sbp("P"))]
    ['tdflow.boxing_all_gather', 'tdflow.boxing_to_partial']
    """
    if src == dst:
        return []
    table = {
        ("P", "B"): [("tdflow.boxing_all_reduce", {})],
        ("P", "S"): [("tdflow.boxing_reduce_scatter", {"axis": dst.axis})],
        ("S", "B"): [("tdflow.boxing_all_gather", {"axis": src.axis})],
        ("S", "S"): [("tdflow.boxing_all_to_all", {"in_axis": src.axis, "out_axis": dst.axis})],
        ("B", "S"): [("tdflow.boxing_slice", {"axis": dst.axis})],
        ("B", "P"): [("tdflow.boxing_to_partial", {})],
        # OneFlow has no S -> P boxing: gather, then keep one copy
        ("S", "P"): [("tdflow.boxing_all_gather", {"axis": src.axis}),
                     ("tdflow.boxing_to_partial", {})],
    }
    return table[(src.kind, dst.kind)]


def nd_sbp_of(attr: Any) -> NdSbp:
    """The nd_sbp ``infer-sbp`` recorded (any number of axes; see :func:`nd_sbp_from_attr`).

    >>> nd_sbp_of(ArrayAttr((OpaqueAttr("#sbp.P"), OpaqueAttr("#sbp.S<1>"))))
    (Sbp(kind='P', axis=None), Sbp(kind='S', axis=1))
    """
    items = attr.value if isinstance(attr, ArrayAttr) else (attr,)
    return tuple(parse_sbp(a.text if isinstance(a, OpaqueAttr) else a.value) for a in items)


def _nested_ok(cur: list[Sbp], axis: int, src: Sbp, dst: Sbp) -> bool:
    """Converting hierarchy axis ``axis`` acts on each rank's piece within its inner groups:
    it is right only when no inner axis splits the same tensor axis."""
    touched = {s.axis for s in (src, dst) if s.kind == "S"}
    return not any(s.kind == "S" and s.axis in touched for s in cur[axis + 1:])


def boxing_plan(have: NdSbp, want: NdSbp) -> list[tuple[int, Sbp, Sbp]] | None:
    """Per-axis conversions ``(mesh axis, from, to)`` turning ``have`` into ``want``, or
    ``None``. Splits are undone inner axis first (a gather never crosses an inner split of
    the same tensor axis), then the rest is done outer axis first (a new split nests inside
    the outer ones, as OneFlow's layout has it).

    >>> from tdflow.dialect.sbp import B, S
    >>> boxing_plan((S(0), S(0)), (B, B))
    [(1, Sbp(kind='S', axis=0), Sbp(kind='B', axis=None)), (0, Sbp(kind='S', axis=0), Sbp(kind='B', axis=None))]
    >>> [(a, str(d)) for a, _, d in boxing_plan((B, B), (S(0), S(0)))]
    [(0, 'S(0)'), (1, 'S(0)')]
    """
    cur, steps = list(have), []
    for axis in reversed(range(len(cur))):  # undo splits, inner first
        src, dst = cur[axis], want[axis]
        if src.kind != "S" or src == dst:
            continue
        direct = dst if dst.kind != "P" else B
        if _nested_ok(cur, axis, src, direct):
            steps.append((axis, src, direct))
            cur[axis] = direct
        elif _nested_ok(cur, axis, src, B):
            steps.append((axis, src, B))
            cur[axis] = B
        else:
            return None
    for axis in range(len(cur)):  # then the rest, outer first
        src, dst = cur[axis], want[axis]
        if src == dst:
            continue
        if not _nested_ok(cur, axis, src, dst):
            return None
        steps.append((axis, src, dst))
        cur[axis] = dst
    return steps
