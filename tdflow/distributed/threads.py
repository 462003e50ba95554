"""``run_threads(fn, nproc)``: run a function on N thread ranks of one process.

Each thread gets its own :class:`~tdflow.distributed.comm.ThreadComm` installed as its
``current()`` communicator. A rank that raises aborts the group, so the others leave their
collectives with ``CommAborted`` instead of hanging; ``run_threads`` then raises the first
failing rank's own exception, with the rank in a note.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .comm import DEFAULT_TIMEOUT_S, CommAborted, ThreadComm, use


def run_threads(fn: Callable[[int], Any], nproc: int,
                timeout: float = DEFAULT_TIMEOUT_S) -> list[Any]:
    """Call ``fn(rank)`` on ``nproc`` threads, each with its rank's communicator current;
    return the results in rank order. Each rank draws random numbers (``dropout``'s masks)
    from its own copy of the caller's stream counters, as an MPI process would from its own;
    afterwards the caller's counters advance by rank 0's draws.

    >>> import numpy as np
    >>> from tdflow.distributed import comm
    >>> run_threads(lambda r: comm.current().allgather(np.array([r])).tolist(), 3)
    [[0, 1, 2], [0, 1, 2], [0, 1, 2]]
    """
    from tdflow.runtime import rng

    comms = ThreadComm.group(nproc, timeout)
    results: list[Any] = [None] * nproc
    errors: list[BaseException | None] = [None] * nproc
    start = rng.offsets()
    drawn: list[dict[int, int]] = [{} for _ in range(nproc)]

    def body(rank: int) -> None:
        rng.own_offsets(dict(start))
        with use(comms[rank]):
            try:
                results[rank] = fn(rank)
                drawn[rank] = rng.offsets()
            except BaseException as exc:  # noqa: BLE001 - re-raised by the caller's thread
                errors[rank] = exc
                if not isinstance(exc, CommAborted):
                    comms[rank].abort(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=body, args=(r,), name=f"tdflow-rank{r}", daemon=True)
               for r in range(nproc)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for seed, stop in drawn[0].items():  # the caller's counters: as one process's draws
        if stop > start.get(seed, 0):
            rng.take(seed, stop - start.get(seed, 0))
    # the root cause first: a rank's own error, not the CommAborted it caused elsewhere
    failed = [(r, e) for r, e in enumerate(errors) if e is not None]
    own = [(r, e) for r, e in failed if not isinstance(e, CommAborted)]
    if own or failed:
        rank, exc = (own or failed)[0]
        if hasattr(exc, "add_note"):
            exc.add_note(f"(on rank {rank} of {nproc} thread ranks)")
        raise exc
    return results
