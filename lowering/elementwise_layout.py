"""Which broadcasts the native fused loop (:mod:`tdflow.lowering.elementwise_native`) reads,
and how: the output seen as rows of ``m`` contiguous elements, each operand either of the
output's shape, whole rows read again in turn (a trailing-dims operand, as a last-axis bias),
or one value a row (an operand whose trailing dims are all broadcast: a batch norm's
``(1, C, 1, 1)`` against ``(N, C, H, W)``, a layer norm's ``(..., 1)``, a single value), each
broadcast operand repeating with a period of rows. Anything else is numpy's broadcast.

>>> broadcast_layout((8, 3, 5, 5), [(8, 3, 5, 5), (3, 1, 1)])
(frozenset(), frozenset({1}), 25)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["broadcast_layout"]


def broadcast_layout(shape: tuple[int, ...], shapes: Sequence[tuple[int, ...]]
                     ) -> tuple[frozenset[int], frozenset[int], int] | None:
    """How the native loop reads operands of ``shapes`` broadcast (numpy's rules) to ``shape``:
    ``(rows, per_row, m)``, the output seen as rows of ``m`` elements; the operands in
    ``rows`` are trailing blocks (``shape[j:]``, a last-axis bias), whole rows read again in
    turn; those in ``per_row`` are one value a row: the dims after their last non-1 dim are all
    broadcast (a batch norm's ``(1, C, 1, 1)`` against ``(N, C, H, W)``: ``m = H * W``, the
    value for channel ``r % C`` hoisted out of the row; a layer norm's ``(..., 1)``; a single
    value); the others are of ``shape``. ``None`` for any other broadcast (numpy's), and when
    the per-row operands disagree on ``m`` or a row operand is not whole rows of it.

    >>> broadcast_layout((64, 16, 8, 8), [(1, 16, 1, 1), (64, 16, 8, 8), (16, 1, 1)])
    (frozenset(), frozenset({0, 2}), 64)
    >>> broadcast_layout((4, 32, 64), [(4, 32, 1), (64,), (4, 32, 64)])
    (frozenset({1}), frozenset({0}), 64)
    >>> broadcast_layout((2, 4, 8, 8), [(1, 4, 1, 1), (8,)]) is None  # rows of 8, planes of 64
    True
    """
    nd = len(shape)
    rows: set[int] = set()
    per_row: set[int] = set()
    row_sizes: list[int] = []
    m = None
    for k, s in enumerate(shapes):
        if s == shape:
            continue
        if len(s) > nd:
            return None
        p = (1,) * (nd - len(s)) + tuple(s)
        big = [d for d in range(nd) if p[d] != 1]
        if not big:
            per_row.add(k)  # one value: any row length
            continue
        a, b = big[0], big[-1] + 1
        if p[a:] == shape[a:]:
            rows.add(k)
            row_sizes.append(math.prod(p))
            continue
        if p[a:b] != shape[a:b]:
            return None  # broadcast in the middle of its own dims: numpy's
        inner = math.prod(shape[b:])
        if m not in (None, inner):
            return None
        m = inner
        per_row.add(k)
    if m is None:
        m = min(row_sizes) if row_sizes else math.prod(shape)
    if m <= 0 or any(size % m for size in row_sizes):
        return None
    return frozenset(rows), frozenset(per_row), m
