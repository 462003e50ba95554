"""Communicators: the collectives SBP boxing needs, on numpy arrays.

A :class:`Communicator` is one rank's view of a group of ``size`` ranks. Two implementations:

* :class:`ThreadComm` -- N ranks as N threads of one process, exchanging arrays through shared
  slots. It is how the test suite runs every distributed program without ``mpiexec``; an
  exception on one rank aborts the group, so the other ranks raise :class:`CommAborted`
  instead of waiting forever.
* :class:`MpiComm` -- the same collectives over ``mpi4py`` (imported only when one is made).

The communicator of the running rank is per thread: :func:`use` installs one, :func:`current`
finds it (boxing kernels call it), falling back to an ``MpiComm`` of ``COMM_WORLD`` when the
process was started by ``mpiexec`` and to a 1-rank :class:`SelfComm` otherwise.

>>> comm = current()
>>> comm.size, comm.rank
(1, 0)
>>> comm.allreduce(np.array([1.0, 2.0])).tolist()
[1.0, 2.0]
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .errors import CommAborted, CommError, check_counts

#: how long a thread rank waits for the others at one collective before it gives up
DEFAULT_TIMEOUT_S = float(os.environ.get("TDFLOW_COMM_TIMEOUT", "120"))


@runtime_checkable
class Communicator(Protocol):
    """One rank of a group. Every collective is called by every rank of the group, in the same
    order; arrays are numpy arrays and results are fresh arrays (never views of the input).

    * ``allreduce(x)`` -- elementwise sum over ranks, every rank gets it.
    * ``reduce_scatter(x, counts)`` -- sum over ranks of ``x`` (1-D), then rank ``r`` keeps
      elements ``[sum(counts[:r]), sum(counts[:r+1]))``.
    * ``allgather(x)`` -- the 1-D pieces of every rank, concatenated in rank order (pieces may
      differ in length: ``allgatherv``).
    * ``alltoall(pieces)`` -- ``pieces[j]`` (1-D) goes to rank ``j``; returns the list of what
      every rank sent to this one, in rank order (lengths may differ: ``alltoallv``).
    * ``barrier()``, ``abort(reason)`` (end the group: the others raise or exit).
    """

    rank: int
    size: int

    def allreduce(self, x: np.ndarray) -> np.ndarray: ...
    def reduce_scatter(self, x: np.ndarray, counts: Sequence[int]) -> np.ndarray: ...
    def allgather(self, x: np.ndarray) -> np.ndarray: ...
    def alltoall(self, pieces: Sequence[np.ndarray]) -> list[np.ndarray]: ...
    def barrier(self) -> None: ...
    def abort(self, reason: str) -> None: ...


class MeshComm:
    """A group seen as a placement hierarchy (``[2, 2]``: 4 ranks, row-major): the whole
    group's collectives, plus :meth:`mesh_axis_comm`, the ranks that differ only in one
    hierarchy axis (what a boxing op over ``mesh_axis`` talks to). Sub-groups are split once
    per communicator and hierarchy axis and kept.

    >>> MeshComm(SelfComm(), (1,)).mesh_axis_comm(0).size
    1
    """

    def __init__(self, comm: Any, hierarchy: Sequence[int]) -> None:
        self.comm = comm
        self.hierarchy = tuple(int(h) for h in hierarchy)
        self.rank, self.size = comm.rank, comm.size
        if int(np.prod(self.hierarchy)) != comm.size:
            raise CommError(f"hierarchy {list(self.hierarchy)} does not have the group's "
                            f"{comm.size} ranks")

    def __getattr__(self, name: str) -> Any:  # allreduce, barrier, bytes_sent...: the group's
        return getattr(self.comm, name)

    def mesh_axis_comm(self, axis: int) -> Any:
        if len(self.hierarchy) == 1:
            if axis != 0:
                raise CommError(f"mesh axis {axis} of a 1-D hierarchy")
            return self.comm
        if not 0 <= axis < len(self.hierarchy):
            raise CommError(f"mesh axis {axis} of hierarchy {list(self.hierarchy)}")
        cache = self.comm.__dict__.setdefault("_mesh_axes", {})
        found = cache.get((self.hierarchy, axis))
        if found is None:
            coords = list(np.unravel_index(self.rank, self.hierarchy))
            key = int(coords[axis])
            coords[axis] = 0
            color = int(np.ravel_multi_index(coords, self.hierarchy))
            found = cache[(self.hierarchy, axis)] = self.comm.split(color, key)
        return found


class SelfComm:
    """The group of one rank: every collective is the identity (a copy).

    >>> SelfComm().reduce_scatter(np.arange(3.0), [3]).tolist()
    [0.0, 1.0, 2.0]
    """

    rank, size = 0, 1
    bytes_sent = 0

    def allreduce(self, x: np.ndarray) -> np.ndarray:
        return np.array(x, copy=True)

    def reduce_scatter(self, x: np.ndarray, counts: Sequence[int]) -> np.ndarray:
        check_counts(np.ravel(x), counts, 1)
        return np.array(np.ravel(x), copy=True)

    def allgather(self, x: np.ndarray) -> np.ndarray:
        return np.array(np.ravel(x), copy=True)

    def alltoall(self, pieces: Sequence[np.ndarray]) -> list[np.ndarray]:
        return [np.array(np.ravel(p), copy=True) for p in pieces]

    def barrier(self) -> None:
        pass

    def abort(self, reason: str) -> None:
        raise CommAborted(0, reason)

    def split(self, color: int, key: int) -> SelfComm:
        return SelfComm()


class _Group:
    """What the thread ranks of one :class:`ThreadComm` group share: one slot per rank, a
    barrier (with a timeout: a rank that never arrives cannot hang the others) and the
    abort flag."""

    def __init__(self, size: int, timeout: float, family: list[_Group] | None = None) -> None:
        self.size = size
        self.timeout = timeout
        self.slots: list[Any] = [None] * size
        self.barrier = threading.Barrier(size)
        self.failed: tuple[int, str] | None = None
        self.lock = threading.Lock()
        # a group and the groups split from it fail together: a rank that dies while its
        # neighbours wait in a sub-group's collective must wake them too
        self.family = family if family is not None else []
        self.family.append(self)
        self.subgroups: dict[tuple[int, Any], _Group] = {}

    def wait(self, rank: int) -> None:
        if self.failed is not None:
            raise CommAborted(*self.failed)
        try:
            self.barrier.wait(self.timeout)
        except threading.BrokenBarrierError:
            if self.failed is not None:
                raise CommAborted(*self.failed) from None
            self.abort(rank, f"timed out after {self.timeout:g} s waiting for the other ranks")
            raise CommAborted(*self.failed) from None  # type: ignore[misc]

    def abort(self, rank: int, reason: str) -> None:
        for g in list(self.family):
            with g.lock:
                if g.failed is None:
                    g.failed = (rank, reason)
            g.barrier.abort()


class ThreadComm:
    """Rank ``rank`` of ``size`` thread ranks sharing one group: make them with
    :meth:`group` and run one per thread (:func:`tdflow.distributed.run_threads` does both).

    A collective is two phases: every rank puts its contribution in its slot and waits at the
    barrier; then each reads what it needs and waits again, so slots are not overwritten
    while someone still reads them. Sums run in rank order, so every rank gets bitwise the
    same result, and the same as a sequential sum over ranks.

    >>> a, b = ThreadComm.group(2)
    >>> a.rank, b.rank, a.size
    (0, 1, 2)
    """

    def __init__(self, group: _Group, rank: int) -> None:
        self._group = group
        self.rank = rank
        self.size = group.size
        self.bytes_sent = 0  # what this rank's contributions to other ranks weighed
        self._splits = 0

    @classmethod
    def group(cls, size: int, timeout: float = DEFAULT_TIMEOUT_S) -> list[ThreadComm]:
        """``size`` communicators, one per rank, of one new group."""
        if size < 1:
            raise CommError(f"a group needs at least one rank, not {size}")
        g = _Group(size, timeout)
        return [cls(g, r) for r in range(size)]

    def _exchange(self, value: Any) -> list[Any]:
        g = self._group
        g.slots[self.rank] = value
        g.wait(self.rank)
        return list(g.slots)

    def _done(self) -> None:
        self._group.wait(self.rank)

    def allreduce(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x)
        everyone = self._exchange(x)
        shapes = {a.shape for a in everyone}
        if len(shapes) != 1:
            self._group.abort(self.rank, f"allreduce of different shapes {sorted(shapes)}")
            raise CommAborted(*self._group.failed)  # type: ignore[misc]
        out = np.array(everyone[0], copy=True)
        for a in everyone[1:]:
            out += a
        self._done()
        # a ring all-reduce sends 2 (N-1)/N of the buffer from each rank: count what MPI would
        self.bytes_sent += 2 * (self.size - 1) * x.nbytes // self.size
        return out

    def reduce_scatter(self, x: np.ndarray, counts: Sequence[int]) -> np.ndarray:
        x = np.ravel(np.asarray(x))
        counts = check_counts(x, counts, self.size)
        everyone = self._exchange(x)
        lo = sum(counts[:self.rank])
        hi = lo + counts[self.rank]
        out = np.array(everyone[0][lo:hi], copy=True)
        for a in everyone[1:]:
            out += a[lo:hi]
        self._done()
        self.bytes_sent += (x.nbytes - counts[self.rank] * x.itemsize)
        return out

    def allgather(self, x: np.ndarray) -> np.ndarray:
        x = np.ravel(np.asarray(x))
        everyone = self._exchange(x)
        out = np.concatenate(everyone)
        self._done()
        self.bytes_sent += (self.size - 1) * x.nbytes
        return out

    def alltoall(self, pieces: Sequence[np.ndarray]) -> list[np.ndarray]:
        if len(pieces) != self.size:
            self._group.abort(self.rank, f"alltoall got {len(pieces)} pieces for "
                                         f"{self.size} ranks")
            raise CommAborted(*self._group.failed)  # type: ignore[misc]
        pieces = [np.ravel(np.asarray(p)) for p in pieces]
        everyone = self._exchange(pieces)
        out = [np.array(everyone[src][self.rank], copy=True) for src in range(self.size)]
        self._done()
        self.bytes_sent += sum(p.nbytes for j, p in enumerate(pieces) if j != self.rank)
        return out

    def barrier(self) -> None:
        self._group.wait(self.rank)

    def split(self, color: int, key: int) -> ThreadComm:
        """MPI's ``Comm_Split``: the ranks of one ``color`` form a group, numbered by ``key``
        (called by every rank, in the same order)."""
        g = self._group
        everyone = self._exchange((color, key, self.rank))
        self._splits += 1
        members = sorted((k, r) for c, k, r in everyone if c == color)
        with g.lock:
            sub = g.subgroups.get((self._splits, color))
            if sub is None:
                sub = g.subgroups[(self._splits, color)] = _Group(len(members), g.timeout,
                                                                   g.family)
        self._done()
        return ThreadComm(sub, members.index((key, self.rank)))

    def abort(self, reason: str) -> None:
        """End the group: every rank waiting in (or later entering) a collective raises
        :class:`CommAborted` naming this rank and ``reason``."""
        self._group.abort(self.rank, reason)


def launched_by_mpi() -> bool:
    """True when this process was started by ``mpiexec`` (MPICH's or Open MPI's variables).

    >>> isinstance(launched_by_mpi(), bool)
    True
    """
    return any(v in os.environ for v in ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE",
                                         "PMIX_RANK"))


_local = threading.local()
_world: list[Any] = []


def current() -> Communicator:
    """The communicator of the calling thread: the one installed by :func:`use`, else (under
    ``mpiexec``) an :class:`MpiComm` of ``COMM_WORLD``, else a 1-rank :class:`SelfComm`.

    >>> current().size
    1
    """
    comm = getattr(_local, "comm", None)
    if comm is not None:
        return comm
    if not _world:
        if launched_by_mpi():
            from .mpi import MpiComm

            _world.append(MpiComm())
        else:
            _world.append(SelfComm())
    return _world[0]


def set_world(comm: Communicator) -> None:
    """Make ``comm`` the process's fallback communicator (what :func:`current` returns on a
    thread without :func:`use`); the MPI launcher installs ``COMM_WORLD``'s.

    >>> set_world(SelfComm()); current().size
    1
    """
    _world[:] = [comm]


@contextmanager
def use(comm: Communicator) -> Iterator[Communicator]:
    """Make ``comm`` the calling thread's communicator inside the ``with`` block.

    >>> with use(SelfComm()) as c:
    ...     current() is c
    True
    """
    previous = getattr(_local, "comm", None)
    _local.comm = comm
    try:
        yield comm
    finally:
        _local.comm = previous


def __getattr__(name: str) -> Any:
    # MpiComm lives in .mpi (mpi4py is imported only when one is made); named here too
    if name in ("MpiComm", "MpiUnavailableError"):
        from . import mpi

        return getattr(mpi, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
