"""Gradient all-reduces in buckets, overlapped with the rest of the backward pass (DDP's idea).

A rank's plan runs its launches one after the other on the calling thread. An all-reduce
whose result no later launch reads or writes (a gradient, reduced right after the backward
pass produces it: ``infer-sbp`` places a result's boxing next to its producer) need not
hold the plan up: its kernel hands a copy of its input to this rank's :class:`Reducer` and
returns. The reducer packs such inputs into buckets (flat buffers of up to ``bucket_bytes``,
one dtype and one communicator each, in plan order: the same buckets on every rank) and
all-reduces each full bucket on a communication thread while the plan goes on; the last
such launch of the plan (:attr:`Reducer.last`) waits for them and reduces the open bucket
itself (no thread at all when everything fits one bucket), so every result is complete
before the plan returns. Any other collective of the rank first waits for the
pending buckets (:func:`wait_pending`): one rank never has two collectives in flight, and
every rank issues them in the same order.

:func:`eligible` picks the launches from a plan; :func:`reducing` installs a reducer on the
calling thread for one call.

>>> import numpy as np
>>> from tdflow.distributed.comm import SelfComm
>>> r = Reducer({7}, 7, bucket_bytes=1 << 20)
>>> out = np.empty(2)
>>> r.submit(7, SelfComm(), np.ones(2), out)   # the last eligible launch: flushed, waited
>>> out.tolist()
[1.0, 1.0]
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["DEFAULT_BUCKET_BYTES", "Reducer", "active", "eligible", "reducing", "wait_pending"]

DEFAULT_BUCKET_BYTES = 25 * 2**20  # DDP's default bucket size

_local = threading.local()


def eligible(launches: Sequence[Any], kernel_op: str = "tdflow.boxing_all_reduce") -> list[int]:
    """``id(launch.attrs)`` of every ``kernel_op`` launch whose output buffers no later launch
    reads or writes, in plan order (the kernel knows its launch by its attributes' mapping,
    which the executor passes as is).

    >>> from types import SimpleNamespace as L
    >>> a, b = {}, {}
    >>> plan = [L(op="tdflow.boxing_all_reduce", attrs=a, inputs=(0,), outputs=(1,)),
    ...         L(op="tdflow.relu", attrs={}, inputs=(1,), outputs=(2,)),
    ...         L(op="tdflow.boxing_all_reduce", attrs=b, inputs=(0,), outputs=(3,))]
    >>> eligible(plan) == [id(b)]
    True
    """
    out = []
    for k, ln in enumerate(launches):
        if ln.op != kernel_op or len(ln.outputs) != 1:
            continue
        buf = ln.outputs[0]
        if all(buf not in later.inputs and buf not in later.outputs
               for later in launches[k + 1:]):
            out.append(id(ln.attrs))
    return out


class Reducer:
    """One rank's buckets for one call of its plan (the module docstring has the whole
    story; the example there runs one)."""

    def __init__(self, async_ids: set[int], last: int | None,
                 bucket_bytes: int = DEFAULT_BUCKET_BYTES) -> None:
        self.async_ids, self.last, self.bucket_bytes = async_ids, last, bucket_bytes
        self._bucket: list[tuple[np.ndarray, np.ndarray]] = []
        self._comm: Any = None
        self._size = 0
        self._pending: list[Future] = []
        self._pool: ThreadPoolExecutor | None = None
        #: buckets all-reduced in this call (what the bench reports)
        self.buckets = 0

    def submit(self, launch_id: int, comm: Any, x: np.ndarray, out: np.ndarray) -> None:
        """Queue ``x`` (copied: its buffer may be reused at once) to be summed into ``out``."""
        x = np.array(x, copy=True)
        if self._bucket and (comm is not self._comm or x.dtype != self._bucket[0][0].dtype
                             or self._size + x.nbytes > self.bucket_bytes):
            self._flush()
        self._bucket.append((x, out))
        self._comm = comm
        self._size += x.nbytes
        if self._size >= self.bucket_bytes:
            self._flush()
        if launch_id == self.last:
            self.wait()

    def _flush(self) -> None:
        if not self._bucket:
            return
        bucket, comm = self._bucket, self._comm
        self._bucket, self._size = [], 0
        if self._pool is None:
            # imported here: concurrent.futures (and logging) cost every CPU start-up ~3 ms
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(1, thread_name_prefix="tdflow-allreduce")
        self._pending.append(self._pool.submit(_reduce_bucket, comm, bucket))
        self.buckets += 1

    def wait(self) -> None:
        """Wait for every bucket in flight (their errors raise), then reduce the open one on
        the calling thread: nothing is left to overlap it with."""
        pending, self._pending = self._pending, []
        for f in pending:
            f.result()
        if self._bucket:
            bucket, comm = self._bucket, self._comm
            self._bucket, self._size = [], 0
            self.buckets += 1
            _reduce_bucket(comm, bucket)

    def close(self) -> None:
        try:
            self.wait()
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None


def _reduce_bucket(comm: Any, bucket: list[tuple[np.ndarray, np.ndarray]]) -> None:
    flat = bucket[0][0].ravel() if len(bucket) == 1 else np.concatenate(
        [x.ravel() for x, _ in bucket])
    total = comm.allreduce(flat)
    at = 0
    for x, out in bucket:
        np.copyto(out, total[at:at + x.size].reshape(out.shape))
        at += x.size


def active() -> Reducer | None:
    """The calling thread's reducer (inside :func:`reducing`), else ``None``.

    >>> active() is None
    True
    """
    return getattr(_local, "reducer", None)


def wait_pending() -> None:
    """Wait for the calling rank's buckets in flight (before any other collective).

    >>> wait_pending()   # none
    """
    r = active()
    if r is not None:
        r.wait()


@contextmanager
def reducing(async_ids: Sequence[int], bucket_bytes: int = DEFAULT_BUCKET_BYTES
             ) -> Iterator[Reducer | None]:
    """A :class:`Reducer` on the calling thread for one call of a plan whose eligible
    launches are ``async_ids`` (plan order); nothing when there are none. Leaving the block
    waits for every bucket.

    >>> with reducing([]) as r:
    ...     r is None
    True
    """
    if not async_ids:
        yield None
        return
    previous = active()
    r = _local.reducer = Reducer(set(async_ids), async_ids[-1], bucket_bytes)
    try:
        yield r
    except BaseException:
        _local.reducer = previous
        with suppress(Exception):  # the call's own error is the one to report
            r.close()
        raise
    _local.reducer = previous
    r.close()
