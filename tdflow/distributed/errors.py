"""The communicators' errors and argument checks (shared by ``comm`` and ``mpi``, which
import nothing else from each other's side).

>>> CommAborted(1, "boom").failed_rank
1
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tdflow.core.errors import TdflowError

__all__ = ["CommAborted", "CommError", "check_counts"]


class CommError(TdflowError, RuntimeError):
    """A collective was called with arguments the ranks disagree on, or timed out."""


class CommAborted(CommError):
    """Another rank failed: this rank's collective was abandoned (``rank`` names the failing
    rank, ``reason`` its error)."""

    def __init__(self, rank: int, reason: str) -> None:
        super().__init__(f"rank {rank} failed: {reason}")
        self.failed_rank = rank
        self.reason = reason


def check_counts(x: np.ndarray, counts: Sequence[int], size: int) -> list[int]:
    """``counts`` as ints, checked for a ``reduce_scatter`` of ``x`` over ``size`` ranks.

    >>> check_counts(np.zeros(5), [3, 2], 2)
    [3, 2]
    """
    counts = [int(c) for c in counts]
    if len(counts) != size or sum(counts) != x.size or min(counts, default=0) < 0:
        raise CommError(f"reduce_scatter: counts {counts} must be {size} non-negative numbers "
                        f"summing to the input's {x.size} elements")
    return counts
