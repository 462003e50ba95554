"""Hooks shared by families: an output with its input's dtype, and the ``*_like`` pair
(``broadcast_like`` in shape, ``reduce_sum_like`` in reduce), whose ``like`` operand only lends
its shape. Each family module registers them for its own ops.

>>> from tdflow.dialect.hooks._like import like_axes_map
>>> like_axes_map(full_rank=2, small_rank=1, axes=[0])      # [n, c] <-> [c]
([1], [0])
"""

from __future__ import annotations

from collections.abc import Sequence

from ._sbp import signature
from ._shape import normalize_axes
from .context import InferContext, InputArgModifier


def keep_data_type(ctx: InferContext) -> None:
    """``out`` has ``in``'s element type."""
    ctx.set_output_dtype("out", ctx.input_dtype("in"))


def like_data_type(ctx: InferContext) -> None:
    """``y`` has ``x``'s element type (``like`` lends only its shape)."""
    ctx.set_output_dtype("y", ctx.input_dtype("x"))


def like_input_args(ctx: InferContext):
    """``like`` only lends its shape: no gradient flows into it."""
    return {"like": InputArgModifier(requires_grad=False)}


def like_axes_map(full_rank: int, small_rank: int,
                  axes: Sequence[int]) -> tuple[list[int], list[int]] | None:
    """``(kept, axes)``: the dims of the higher-rank tensor that map, in order, onto the dims of
    the lower-rank one, and the dims it has alone (``axes``, else the leading ones, as numpy
    broadcasting aligns shapes on the right). ``None`` when the counts do not add up."""
    gone = sorted(set(axes)) if axes else list(range(full_rank - small_rank))
    kept = [d for d in range(full_rank) if d not in gone]
    if len(kept) != small_rank:
        return None
    return kept, gone


def like_sbp(ctx: InferContext):
    """Axes where ``x`` and ``like`` agree split together. A reduced axis (``x`` full, ``like``
    1 or absent) split on ``x`` gives each rank a partial sum; a broadcast axis (``x`` 1 or
    absent, ``like`` full) is split on ``like`` and the result only. Both ops are linear in
    ``x``: P -> P."""
    like, x = ctx.input_shape("like"), ctx.input_shape("x")
    if like is None or x is None:
        return []
    reduce = ctx.op.mnemonic == "reduce_sum_like"
    sigs = []
    if len(like) == len(x):
        for a, (dx, dl) in enumerate(zip(x, like)):
            if dx == dl:
                sigs.append(signature(ctx, f"S({a})", f"S({a})"))
            elif reduce and dl == 1:
                sigs.append(signature(ctx, {"x": f"S({a})", "like": "B"}, "P"))
            elif not reduce and dx == 1:
                sigs.append(signature(ctx, {"x": "B", "like": f"S({a})"}, f"S({a})"))
    elif reduce == (len(x) > len(like)):
        # Ranks differ: the higher-rank side's extra dims are the reduced (broadcast) axes.
        full, small = (x, like) if reduce else (like, x)
        raw = ctx.attr("axis" if reduce else "broadcast_axes") or ()
        mapped = like_axes_map(len(full), len(small), normalize_axes(raw, len(full)))
        if mapped is None:
            return [signature(ctx, {"x": "P", "like": "B"}, "P")]
        kept, gone = mapped
        for j, d in enumerate(kept):
            if full[d] == small[j]:
                if reduce:  # y has like's shape: x's dim d is y's dim j
                    sigs.append(signature(ctx, {"x": f"S({d})", "like": f"S({j})"}, f"S({j})"))
                else:       # y has like's shape: x's dim j is y's dim d
                    sigs.append(signature(ctx, {"x": f"S({j})", "like": f"S({d})"}, f"S({d})"))
        for d in gone:
            if reduce:
                sigs.append(signature(ctx, {"x": f"S({d})", "like": "B"}, "P"))
            else:
                sigs.append(signature(ctx, {"x": "B", "like": f"S({d})"}, f"S({d})"))
    sigs.append(signature(ctx, {"x": "P", "like": "B"}, "P"))
    return sigs
