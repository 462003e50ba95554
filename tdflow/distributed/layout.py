"""Logical tensors and their per-rank pieces: shard one by its nd_sbp, assemble one back.

For every rank, ``slices_of`` (``tdflow.dialect.sbp``) says where its piece sits. A piece is
the logical tensor's slice (``S`` axes), all of it (``B``) or a summand (``P``). Sharding a
logical ``P`` tensor gives it whole to the ranks at coordinate 0 of every ``P`` axis and zeros
to the others, so the sum is the tensor. Assembling takes, for each position, one copy of
every ``B`` axis (coordinate 0) and the sum over every ``P`` axis, in rank order, so the
result is deterministic (the same on every rank, bitwise).

>>> from tdflow.dialect.sbp import S, B, P
>>> x = np.arange(10.0).reshape(5, 2)
>>> pieces = [shard(x, (S(0),), (2,), r) for r in range(2)]
>>> [p.shape for p in pieces]
[(3, 2), (2, 2)]
>>> bool((assemble(pieces, (5, 2), (S(0),), (2,)) == x).all())
True
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tdflow.dialect.sbp import NdSbp, physical_shape, rank_coords, slices_of

from .comm import Communicator


def _kept(nd_sbp: NdSbp, coords: Sequence[int], kind: str) -> bool:
    return all(c == 0 for s, c in zip(nd_sbp, coords) if s.kind == kind)


def shard(x: np.ndarray, nd_sbp: NdSbp, hierarchy: tuple[int, ...], rank: int) -> np.ndarray:
    """Rank ``rank``'s piece of the logical array ``x`` (a fresh contiguous array).

    >>> from tdflow.dialect.sbp import P
    >>> shard(np.ones(2), (P,), (2,), 1).tolist()
    [0.0, 0.0]
    """
    x = np.asarray(x)
    piece = np.array(x[slices_of(x.shape, nd_sbp, hierarchy, rank)], copy=True)
    if not _kept(nd_sbp, rank_coords(hierarchy, rank), "P"):
        piece[...] = 0
    return piece


def assemble(pieces: Sequence[np.ndarray], logical: tuple[int, ...], nd_sbp: NdSbp,
             hierarchy: tuple[int, ...]) -> np.ndarray:
    """The logical array from every rank's piece (rank order), as described above.

    >>> from tdflow.dialect.sbp import P
    >>> assemble([np.ones(2), 2 * np.ones(2)], (2,), (P,), (2,)).tolist()
    [3.0, 3.0]
    """
    dtype = np.result_type(*pieces) if pieces else np.float64
    out = np.zeros(logical, dtype=dtype)
    for rank, piece in enumerate(pieces):
        if _kept(nd_sbp, rank_coords(hierarchy, rank), "B"):
            out[slices_of(logical, nd_sbp, hierarchy, rank)] += piece
    return out


def gather(local: np.ndarray, logical: tuple[int, ...], nd_sbp: NdSbp,
           hierarchy: tuple[int, ...], comm: Communicator) -> np.ndarray:
    """The logical array on every rank, from this rank's piece: one allgather of the pieces
    (skipped when every axis is ``B``: the piece is the whole).

    >>> from tdflow.dialect.sbp import S
    >>> from tdflow.distributed.comm import SelfComm
    >>> gather(np.arange(3), (3,), (S(0),), (1,), SelfComm()).tolist()
    [0, 1, 2]
    """
    local = np.asarray(local)
    if all(s.kind == "B" for s in nd_sbp):
        return np.array(local, copy=True)
    flat = comm.allgather(np.ascontiguousarray(local).ravel())
    shapes = [physical_shape(logical, nd_sbp, hierarchy, r) for r in range(comm.size)]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    offsets = np.cumsum([0] + sizes)
    pieces = [flat[offsets[r]:offsets[r + 1]].reshape(shapes[r]) for r in range(comm.size)]
    return assemble(pieces, logical, nd_sbp, hierarchy).astype(local.dtype, copy=False)
