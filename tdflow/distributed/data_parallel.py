"""Data parallelism: each rank takes its rows of the global batch, computes its part of the
loss and gradients, and the parts are summed with all-reduces.

This is the SBP signature a data-parallel step has (batch ``S(0)``, parameters ``B``, loss and
gradients ``P``, boxed to ``B`` by an all-reduce), written out for a loss program whose mean is
taken over the *global* batch: each rank's loss is its rows' sum divided by the global batch
size, so the ranks' parts add up to the single-process loss. Gradients travel in buckets (flat
buffers of up to ``bucket_bytes``), one all-reduce each, as DDP does: few large messages
instead of one per parameter.

>>> import numpy as np
>>> rows_of(64, 2, 1)
slice(32, 64, None)
>>> [g.tolist() for g in allreduce_buckets([np.ones(2), np.zeros(1)])]   # one rank
[[1.0, 1.0], [0.0]]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tdflow.dialect.sbp import split_range

from .comm import Communicator, current

DEFAULT_BUCKET_BYTES = 25 * 2**20  # DDP's default bucket size


def rows_of(batch: int, nproc: int, rank: int) -> slice:
    """The rows of a ``batch``-row global batch that ``rank`` of ``nproc`` takes (OneFlow's
    split rule: the first ``batch % nproc`` ranks take one more).

    >>> [rows_of(5, 2, r) for r in range(2)]
    [slice(0, 3, None), slice(3, 5, None)]
    """
    lo, hi = split_range(batch, nproc, rank)
    return slice(lo, hi)


def allreduce_buckets(arrays: Sequence[np.ndarray], comm: Communicator | None = None,
                      bucket_bytes: int = DEFAULT_BUCKET_BYTES) -> list[np.ndarray]:
    """The sum over ranks of every array, packed into buckets of at most ``bucket_bytes``
    (an array larger than that is a bucket of its own); arrays of one bucket share a dtype.

    >>> from tdflow.distributed import run_threads
    >>> out = run_threads(lambda r: allreduce_buckets([np.full(2, r), np.ones(1)], None, 8), 2)
    >>> [a.tolist() for a in out[0]]   # two buckets: 16 + 8 bytes > 8
    [[1, 1], [2.0]]
    """
    comm = comm or current()
    out: list[np.ndarray | None] = [None] * len(arrays)
    bucket: list[int] = []
    size = 0

    def flush() -> None:
        nonlocal bucket, size
        if not bucket:
            return
        flat = np.concatenate([np.ravel(arrays[i]) for i in bucket])
        total = comm.allreduce(flat)
        at = 0
        for i in bucket:
            n = np.size(arrays[i])
            out[i] = total[at:at + n].reshape(np.shape(arrays[i]))
            at += n
        bucket, size = [], 0

    for i, a in enumerate(arrays):
        a = np.asarray(a)
        if bucket and (size + a.nbytes > bucket_bytes
                       or np.asarray(arrays[bucket[0]]).dtype != a.dtype):
            flush()
        bucket.append(i)
        size += a.nbytes
    flush()
    return out  # type: ignore[return-value]
