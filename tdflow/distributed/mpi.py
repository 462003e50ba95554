"""``MpiComm``: the communicator over MPI (``mpi4py``, imported when one is made).

>>> from tdflow.distributed.mpi import MpiComm
>>> MpiComm.__name__
'MpiComm'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tdflow.core.errors import TdflowError

from .errors import CommError, check_counts


class MpiComm:
    """The collectives over an ``mpi4py`` communicator (default ``COMM_WORLD``), on numpy
    buffers without pickling: ``Allreduce``, ``Reduce_scatter``, ``Allgatherv``,
    ``Alltoallv``. ``abort`` calls ``MPI_Abort``, so every rank of the job exits non-zero.

    >>> MpiComm  # doctest: +ELLIPSIS
    <class '...MpiComm'>
    """

    def __init__(self, comm: Any = None) -> None:
        MPI = _mpi()
        self._MPI = MPI
        self._comm = comm if comm is not None else MPI.COMM_WORLD
        self.rank = self._comm.Get_rank()
        self.size = self._comm.Get_size()
        self.bytes_sent = 0

    def allreduce(self, x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x)
        out = np.empty_like(x)
        self._comm.Allreduce(x, out, op=self._MPI.SUM)
        self.bytes_sent += 2 * (self.size - 1) * x.nbytes // self.size
        return out

    def reduce_scatter(self, x: np.ndarray, counts: Sequence[int]) -> np.ndarray:
        x = np.ascontiguousarray(np.ravel(x))
        counts = check_counts(x, counts, self.size)
        out = np.empty(counts[self.rank], dtype=x.dtype)
        self._comm.Reduce_scatter(x, out, recvcounts=counts, op=self._MPI.SUM)
        self.bytes_sent += x.nbytes - out.nbytes
        return out

    def allgather(self, x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(np.ravel(x))
        counts = self._comm.allgather(x.size)  # small pickled ints: the lengths may differ
        out = np.empty(sum(counts), dtype=x.dtype)
        self._comm.Allgatherv(x, [out, counts])
        self.bytes_sent += (self.size - 1) * x.nbytes
        return out

    def alltoall(self, pieces: Sequence[np.ndarray]) -> list[np.ndarray]:
        if len(pieces) != self.size:
            raise CommError(f"alltoall got {len(pieces)} pieces for {self.size} ranks")
        flat = [np.ravel(np.asarray(p)) for p in pieces]
        dtype = flat[0].dtype if flat else np.float64
        send = np.ascontiguousarray(np.concatenate(flat).astype(dtype, copy=False))
        scounts = [p.size for p in flat]
        rcounts = self._comm.alltoall(scounts)
        recv = np.empty(sum(rcounts), dtype=dtype)
        self._comm.Alltoallv([send, scounts], [recv, rcounts])
        self.bytes_sent += sum(p.nbytes for j, p in enumerate(flat) if j != self.rank)
        offsets = np.cumsum([0] + list(rcounts))
        return [recv[offsets[i]:offsets[i + 1]].copy() for i in range(self.size)]

    def barrier(self) -> None:
        self._comm.Barrier()

    def split(self, color: int, key: int) -> MpiComm:
        """``Comm_Split``: the ranks of one ``color`` form a group, numbered by ``key``."""
        return MpiComm(self._comm.Split(color, key))

    def abort(self, reason: str) -> None:
        import sys
        import time

        sys.stderr.write(f"tdflow: rank {self.rank} failed: {reason}\n")
        sys.stderr.flush()
        # MPI_Abort kills every process of the job at once, mpiexec's output proxies
        # included: a moment first lets them forward what this rank just wrote (without it the
        # error was lost now and then under load).
        time.sleep(0.5)
        self._comm.Abort(1)


class MpiUnavailableError(TdflowError, ImportError):
    """mpi4py (or an MPI library) is missing: the message says what to install."""


def _mpi() -> Any:
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise MpiUnavailableError(
            f"distributed runs over MPI need mpi4py and an MPI library ({exc}); install them "
            f"with: pip install 'tdflow[distributed]' (mpi4py, mpich)") from None
    return MPI
