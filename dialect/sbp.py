"""SBP values (OneFlow's Split / Broadcast / Partial-sum) and per-rank physical shapes.

One :class:`Sbp` describes a tensor along one axis of the placement hierarchy; an
``NdSbp`` holds one per hierarchy axis. Shapes follow OneFlow's ``GetSliceShape`` rule:
a dimension of size ``n`` split in ``k`` parts gives part ``i`` ``n // k`` elements plus
one when ``i < n % k``; ranks are laid out row-major over the hierarchy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tdflow.core.errors import TdflowError

__all__ = ["Sbp", "NdSbp", "SbpError", "parse_sbp", "sbp_text", "sbp_ir", "physical_shape",
           "slices_of", "rank_coords", "split_range", "B", "P", "S"]


class SbpError(TdflowError, ValueError):
    """An SBP that is malformed or does not fit the tensor or the hierarchy."""


@dataclass(frozen=True)
class Sbp:
    """One axis of the placement hierarchy: ``kind`` is ``"S"``, ``"B"`` or ``"P"``.

    >>> Sbp("S", 1), sbp_text(Sbp("S", 1))
    (Sbp(kind='S', axis=1), 'S(1)')
    """

    kind: str
    axis: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("S", "B", "P"):
            raise SbpError(f"SBP kind {self.kind!r}: expected 'S', 'B' or 'P'")
        if (self.kind == "S") != (self.axis is not None):
            raise SbpError(f"SBP {self.kind} with axis {self.axis!r}: only S takes an axis")
        if self.axis is not None and self.axis < 0:
            raise SbpError(f"SBP S({self.axis}): the split axis must be >= 0")

    def __str__(self) -> str:
        return sbp_text(self)


NdSbp = tuple[Sbp, ...]

B = Sbp("B")
P = Sbp("P")


def S(axis: int) -> Sbp:  # noqa: N802 - OneFlow's spelling
    """``S(axis)``: split along ``axis``.

    >>> S(0)
    Sbp(kind='S', axis=0)
    """
    return Sbp("S", axis)


# "S(0)", "S<0>", "#sbp.S<0>", "B", "#sbp.B", "P", "#sbp.P" (OneFlow prints split_axis too)
_SBP_RE = re.compile(
    r"^\s*(?:#sbp\.)?(?:(?P<s>S)\s*[(<]\s*(?:split_axis\s*=\s*)?(?P<axis>-?\d+)\s*[)>]|(?P<bp>[BP]))\s*$")


def parse_sbp(text: str) -> Sbp:
    """Read one SBP in tdflow's (``S(0)``) or OneFlow's IR (``#sbp.S<0>``) notation.

    >>> parse_sbp("#sbp.S<1>"), parse_sbp("B"), parse_sbp("#sbp.P")
    (Sbp(kind='S', axis=1), Sbp(kind='B', axis=None), Sbp(kind='P', axis=None))
    """
    m = _SBP_RE.match(text)
    if m is None:
        raise SbpError(f"SBP {text!r}: expected S(axis), B or P (or #sbp.S<axis>, #sbp.B, #sbp.P)")
    if m.group("s"):
        return Sbp("S", int(m.group("axis")))
    return Sbp(m.group("bp"))


def sbp_text(s: Sbp) -> str:
    """tdflow's notation (the one ``get_sbp`` hooks use).

    >>> sbp_text(S(0)), sbp_text(B)
    ('S(0)', 'B')
    """
    return f"S({s.axis})" if s.kind == "S" else s.kind


def sbp_ir(s: Sbp) -> str:
    """OneFlow's IR attribute notation.

    >>> sbp_ir(S(2)), sbp_ir(P)
    ('#sbp.S<2>', '#sbp.P')
    """
    return f"#sbp.S<{s.axis}>" if s.kind == "S" else f"#sbp.{s.kind}"


def rank_coords(hierarchy: tuple[int, ...], rank: int) -> tuple[int, ...]:
    """The rank's coordinates in the (row-major) hierarchy.

    >>> rank_coords((2, 3), 4)
    (1, 1)
    """
    size = 1
    for h in hierarchy:
        size *= h
    if not 0 <= rank < size:
        raise SbpError(f"rank {rank} is outside the hierarchy {list(hierarchy)} ({size} ranks)")
    coords = []
    for h in reversed(hierarchy):
        coords.append(rank % h)
        rank //= h
    return tuple(reversed(coords))


def split_range(n: int, parts: int, index: int) -> tuple[int, int]:
    """``[start, stop)`` of part ``index`` when ``n`` elements split in ``parts`` (OneFlow's rule).

    >>> [split_range(5, 2, i) for i in range(2)]
    [(0, 3), (3, 5)]
    """
    base, extra = divmod(n, parts)
    start = index * base + min(index, extra)
    return start, start + base + (1 if index < extra else 0)


def _check(logical: tuple[int, ...], nd_sbp: NdSbp, hierarchy: tuple[int, ...]) -> None:
    if len(nd_sbp) != len(hierarchy):
        raise SbpError(f"nd_sbp {[sbp_text(s) for s in nd_sbp]} has {len(nd_sbp)} axes; "
                       f"the hierarchy {list(hierarchy)} has {len(hierarchy)}")
    for s in nd_sbp:
        if s.kind == "S" and s.axis >= len(logical):
            raise SbpError(f"{sbp_text(s)} splits axis {s.axis} of a rank-{len(logical)} "
                           f"tensor {list(logical)}")


def slices_of(logical: tuple[int, ...], nd_sbp: NdSbp, hierarchy: tuple[int, ...], rank: int,
              ) -> tuple[slice, ...]:
    """Where rank ``rank``'s piece sits in the logical tensor (B and P: everything).

    Splits along the same tensor axis on several hierarchy axes nest, outer axis first.

    >>> slices_of((5, 4), (S(0),), (2,), 1)
    (slice(3, 5, None), slice(0, 4, None))
    >>> slices_of((4, 4), (S(0), S(1)), (2, 2), 3)
    (slice(2, 4, None), slice(2, 4, None))
    """
    _check(logical, nd_sbp, hierarchy)
    coords = rank_coords(hierarchy, rank)
    ranges = [(0, n) for n in logical]
    for s, k, c in zip(nd_sbp, hierarchy, coords):
        if s.kind == "S":
            lo, hi = ranges[s.axis]
            a, b = split_range(hi - lo, k, c)
            ranges[s.axis] = (lo + a, lo + b)
    return tuple(slice(lo, hi) for lo, hi in ranges)


def physical_shape(logical: tuple[int, ...], nd_sbp: NdSbp, hierarchy: tuple[int, ...], rank: int,
                   ) -> tuple[int, ...]:
    """Rank ``rank``'s physical shape of a logical tensor (uneven splits included).

    >>> physical_shape((5, 3), (S(0),), (2,), 0), physical_shape((5, 3), (S(0),), (2,), 1)
    ((3, 3), (2, 3))
    >>> physical_shape((5, 3), (B,), (2,), 1)
    (5, 3)
    """
    return tuple(s.stop - s.start for s in slices_of(logical, nd_sbp, hierarchy, rank))
