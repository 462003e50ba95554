"""Python gradient rules of the standard ops whose gradient a ``grad`` field cannot say: those
that compute axes or permutations from shapes and attributes. Every other standard op's
gradient is its ``grad`` field in ``ops.td`` or derived from its formula.

A rule receives an :class:`~tdflow.dialect.grad.Emitter` ``g`` and the op application ``fwd``
and returns ``{input name: gradient}``; the same rule serves eager backward and the
``autodiff`` pass.
"""

from __future__ import annotations

from typing import Any

from ..grad.core import Emitter, Forward, grad_rule
from .shape_util import normalize_axes


def _axes(axes: Any, rank: int) -> list[int]:
    """``axis`` normalised to non-negative dims; an empty list means every dim."""
    return sorted(normalize_axes(list(axes), rank)) if axes else list(range(rank))


def _expand_to(g: Emitter, dy: Any, x: Any, axes: list[int], keepdims: bool) -> Any:
    """``dy`` (a reduction of ``x`` over ``axes``) broadcast back to ``x``'s shape."""
    if keepdims or not axes:
        return g.op("tdflow.broadcast_like", [dy, x], {"broadcast_axes": []})[0]
    return g.op("tdflow.broadcast_like", [dy, x], {"broadcast_axes": axes})[0]


@grad_rule("tdflow.bias_add", saves=("b",))
def _bias_add(g: Emitter, fwd: Forward) -> dict[str, Any]:
    dout, b = fwd.douts["out"], fwd.inputs["b"]
    rank = len(g.type_of(dout).shape)
    axis = fwd.attrs["axis"] % rank if rank else 0
    out: dict[str, Any] = {"a": dout}
    if "b" in fwd.wants:
        others = [i for i in range(rank) if i != axis]
        out["b"] = g.op("tdflow.reduce_sum_like", [dout, b], {"axis": others})[0] if others \
            else dout
    return out


@grad_rule("tdflow.reduce_sum", saves=("input_tensor",))
def _reduce_sum(g: Emitter, fwd: Forward) -> dict[str, Any]:
    x, dy = fwd.inputs["input_tensor"], fwd.douts["output_tensor"]
    axes = _axes(fwd.attrs["axis"], len(g.type_of(x).shape))
    return {"input_tensor": _expand_to(g, dy, x, axes, fwd.attrs["keepdims"])}


@grad_rule("tdflow.reduce_max", saves=("input_tensor", "output_tensor"))
def _reduce_max(g: Emitter, fwd: Forward) -> dict[str, Any]:
    """The gradient goes to the maxima, split evenly between ties (PyTorch's ``amax``)."""
    x, y, dy = fwd.inputs["input_tensor"], fwd.outputs["output_tensor"], fwd.douts[
        "output_tensor"]
    rank = len(g.type_of(x).shape)
    axes = _axes(fwd.attrs["axis"], rank)
    keep = fwd.attrs["keepdims"]
    yb = _expand_to(g, y, x, axes, keep)
    dyb = _expand_to(g, dy, x, axes, keep)
    dtype = g.type_of(x).dtype
    hit = g.op("tdflow.fused_elementwise", [[x, yb]],
               {"expr": f"cast(eq(in0, in1), {dtype})"})[0]
    count = g.op("tdflow.reduce_sum", [hit], {"axis": axes, "keepdims": True})[0]
    countb = g.op("tdflow.broadcast_like", [count, x], {"broadcast_axes": []})[0]
    dx = g.op("tdflow.fused_elementwise", [[hit, dyb, countb]],
              {"expr": "div(mul(in0, in1), in2)"})[0]
    return {"input_tensor": dx}


@grad_rule("tdflow.transpose", saves=())
def _transpose(g: Emitter, fwd: Forward) -> dict[str, Any]:
    perm = [int(p) for p in fwd.attrs["perm"]]
    rank = len(perm)
    perm = [p % rank for p in perm]
    inverse = [0] * rank
    for i, p in enumerate(perm):
        inverse[p] = i
    return {"input": g.op("tdflow.transpose", [fwd.douts["output"]], {"perm": inverse})[0]}


@grad_rule("tdflow.broadcast_like", saves=("x",), inputs=("x",))
def _broadcast_like(g: Emitter, fwd: Forward) -> dict[str, Any]:
    x, dy = fwd.inputs["x"], fwd.douts["y"]
    axes = fwd.attrs["broadcast_axes"]
    if not axes:  # numpy broadcasting: the driver sums the stretched dims back
        return {"x": dy}
    rank = len(g.type_of(dy).shape)
    return {"x": g.op("tdflow.reduce_sum_like", [dy, x],
                      {"axis": sorted(normalize_axes(list(axes), rank))})[0]}


@grad_rule("tdflow.reduce_sum_like", saves=("x",), inputs=("x",))
def _reduce_sum_like(g: Emitter, fwd: Forward) -> dict[str, Any]:
    x, dy = fwd.inputs["x"], fwd.douts["y"]
    rank = len(g.type_of(x).shape)
    axes = sorted(normalize_axes(list(fwd.attrs["axis"]), rank)) if fwd.attrs["axis"] else []
    keep = len(g.type_of(dy).shape) == rank
    return {"x": _expand_to(g, dy, x, axes, keep)}
