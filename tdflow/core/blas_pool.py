"""The size of numpy's BLAS thread pool in tdflow's own CLI process (issue 23, start-up).

OpenBLAS starts its thread pool when numpy is imported, one thread per core it counts, and each
thread spins for a while (~0.1 s) before it sleeps: on this project's 2-CPU machine one such
thread was ~50 ms of CPU in every ``tdflow run``, and one per core but one on a larger machine.
The pool's size at start can only be chosen before the library loads, through the environment,
so the ``tdflow`` command (:func:`tdflow.cli.entry`, never ``import tdflow`` in a user's
process: the user owns that one) calls :func:`size_blas_pool` first thing: when none of
``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS`` is set, it sets
``OPENBLAS_NUM_THREADS=1``: the pool starts with no thread of its own, and tdflow's BLAS kernels
grow it to their count (``TDFLOW_BLAS_THREADS``, else one per CPU this process may run on but
one: :func:`default_blas_threads`) at their first product (:mod:`tdflow.runtime.kernels._blas`;
OpenBLAS starts the threads then). A command that multiplies no large matrices starts none.

What the CLI set is not the user's setting: :func:`user_blas_threads_set` does not count it,
and :func:`child_environ` is the environment without it, for the processes the CLI starts
(``mpiexec`` of ``tdflow launch`` and ``tdflow run --mpi``), which size their own pools.

>>> env = {}
>>> size_blas_pool(env), env["OPENBLAS_NUM_THREADS"]
(1, '1')
>>> size_blas_pool({"OMP_NUM_THREADS": "4"}) is None   # the user's setting wins
True
"""

from __future__ import annotations

import functools
import os
from collections.abc import MutableMapping

#: The variables a user sizes BLAS pools with; any one of them set leaves the pool alone.
USER_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

# (variable, value) the CLI put in os.environ, so it can be told from the user's
_added: dict[str, str] = {}


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity mask), not the machine's core count.

    >>> usable_cores() >= 1
    True
    """
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@functools.cache
def default_blas_threads() -> int:
    """One BLAS thread per usable core but one (the engine's calling thread keeps working).

    On 2 cores that is 1: OpenBLAS threads spin while they wait, and two of them next to a
    busy Python thread (or other jobs) make a matmul several times slower, not faster.

    >>> default_blas_threads() >= 1
    True
    """
    return max(1, usable_cores() - 1)


def size_blas_pool(environ: MutableMapping[str, str] | None = None) -> int | None:
    """Start the BLAS pool numpy will load with one thread (tdflow's kernels grow it when they
    first multiply: :func:`cli_pool`), unless the user sized it; returns the count set
    (``None``: left alone). Call it before numpy is imported: OpenBLAS reads the variable
    once, when it loads. ``environ`` defaults to ``os.environ`` (whose changes alone are
    remembered as the CLI's, see :func:`child_environ`).

    >>> size_blas_pool({"OPENBLAS_NUM_THREADS": "2"}) is None
    True
    >>> env = {"TDFLOW_BLAS_THREADS": "3"}; size_blas_pool(env), env["OPENBLAS_NUM_THREADS"]
    (1, '1')
    """
    env = os.environ if environ is None else environ
    if any(env.get(name) for name in USER_VARS):
        return None
    env["OPENBLAS_NUM_THREADS"] = "1"
    if environ is None:
        _added["OPENBLAS_NUM_THREADS"] = "1"
    return 1


def cli_pool() -> bool:
    """Whether this process's BLAS pool is the one :func:`size_blas_pool` started (the
    ``tdflow`` command's, the user having set none): tdflow's kernels may then size it for
    good, there is no user's count to restore.

    >>> isinstance(cli_pool(), bool)
    True
    """
    return _added.get("OPENBLAS_NUM_THREADS") is not None and \
        os.environ.get("OPENBLAS_NUM_THREADS") == _added["OPENBLAS_NUM_THREADS"]


def user_blas_threads_set(names: tuple[str, ...] = USER_VARS) -> bool:
    """Whether the user (not :func:`size_blas_pool`) set one of the variables ``names``.

    >>> isinstance(user_blas_threads_set(), bool)
    True
    """
    return any(os.environ.get(name) and _added.get(name) != os.environ[name]
               for name in names)


def child_environ() -> dict[str, str]:
    """``os.environ`` less what :func:`size_blas_pool` added: the environment of a process the
    CLI starts (a script under ``mpiexec`` sizes its own pool, as the user set it or not).

    >>> env = child_environ(); all(os.environ[k] == v for k, v in env.items())
    True
    """
    return {k: v for k, v in os.environ.items() if _added.get(k) != v}
