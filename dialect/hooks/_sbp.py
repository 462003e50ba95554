"""SBP signature builders shared by the families' hooks (OneFlow's ``SbpSignatureBuilder`` as
plain data).

A signature maps every blob (``x_0``, ``y_0``) to ``S(axis)``, ``B`` or ``P``. ``get_sbp``
hooks list the interesting signatures; broadcasting every blob is always valid and implied.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ._shape import Shape
from .context import InferContext, SbpSignature


def blob(name: str, index: int = 0) -> str:
    return f"{name}_{index}"


def signature(ctx: InferContext, inputs: dict[str, str] | str, outputs: dict[str, str] | str,
              ) -> SbpSignature:
    """A signature; a plain string applies to every present input (or output) blob."""
    ins = {blob(n, i): (inputs if isinstance(inputs, str) else inputs.get(n, "B"))
           for n, i in ctx.input_names()}
    outs = {blob(n, i): (outputs if isinstance(outputs, str) else outputs.get(n, "B"))
            for n, i in ctx.output_names()}
    return SbpSignature.make(ins, outs)


def split_all(ctx: InferContext, axes: Iterable[int]) -> list[SbpSignature]:
    """``S(axis)`` for every blob, one signature per axis."""
    return [signature(ctx, f"S({a})", f"S({a})") for a in axes]


def first_rank(ctx: InferContext) -> int:
    """Rank of the first ranked input (0 if none)."""
    for n, i in ctx.input_names():
        shape = ctx.input_shape(n, i)
        if shape is not None:
            return len(shape)
    return 0


def split_dims(ctx: InferContext, shape: Shape | None, skip: Sequence[int] = ()) -> list:
    """``S(i)`` of every blob for each dim ``i`` of ``shape`` not in ``skip``."""
    return split_all(ctx, (i for i in range(len(shape or ())) if i not in skip))
