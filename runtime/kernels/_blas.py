"""BLAS threads for tdflow's own BLAS calls, and only for them.

numpy's OpenBLAS starts one thread per core; next to the engine's threads (or other jobs) that
oversubscribes small machines, and spinning OpenBLAS threads then make a matmul several times
slower (measured: 5x on a loaded 2-core machine). So a kernel registered with
``uses_blas=True`` runs inside :func:`blas_scoped`: OpenBLAS gets :func:`tdflow_blas_threads`
threads for the call and the caller's count back afterwards. A user's own numpy code, before or
after tdflow's calls, runs with the user's setting.

The count: ``TDFLOW_BLAS_THREADS=N`` wins; a user's own ``OPENBLAS_NUM_THREADS`` /
``OMP_NUM_THREADS`` is left alone; otherwise one per usable core but one
(:func:`default_blas_threads`). Nothing happens when numpy's BLAS is not an OpenBLAS this
module can control. The ``tdflow`` command starts numpy's pool with one thread
(:mod:`tdflow.core.blas_pool`: nothing spins at start) and the first scoped call there sets
tdflow's count for good (the pool is tdflow's: no user's count to restore), after which the
scope is a no-op.

>>> @blas_scoped
... def threads_inside():
...     return blas_threads()
>>> want = tdflow_blas_threads()
>>> want is None or threads_inside() == want
True
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from tdflow.core.blas_pool import cli_pool, default_blas_threads, user_blas_threads_set

__all__ = ["blas_scoped", "blas_scoped_launch", "blas_threads", "default_blas_threads",
           "set_blas_threads", "tdflow_blas_threads"]

F = TypeVar("F", bound=Callable[..., Any])


@functools.cache
def _openblas() -> tuple[Any, Any] | None:
    """(set, get) functions of the OpenBLAS numpy loaded, if it is OpenBLAS (looked up once:
    numpy, imported by every kernel module, has loaded its BLAS by then)."""
    import numpy  # noqa: F401 - its BLAS must be loaded to be found

    try:
        with open("/proc/self/maps") as f:
            paths = {ln.split()[-1] for ln in f if "openblas" in ln.lower() and "/" in ln}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for suffix in ("", "64_", "_64_"):
            for prefix in ("openblas", "scipy_openblas"):
                setter = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                getter = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                if setter is not None and getter is not None:
                    return setter, getter
    return None


def set_blas_threads(n: int) -> bool:
    """Limit BLAS to ``n`` threads; ``False`` when the BLAS is not one we can control.

    >>> before = blas_threads()
    >>> before is None or (set_blas_threads(before) and blas_threads() == before)
    True
    """
    fns = _openblas()
    if fns is None:
        return False
    fns[0](ctypes.c_int(int(n)))
    return True


def blas_threads() -> int | None:
    """Threads BLAS uses now (``None`` if unknown).

    >>> blas_threads() is None or blas_threads() >= 1
    True
    """
    fns = _openblas()
    return int(fns[1]()) if fns is not None else None


@functools.cache
def tdflow_blas_threads() -> int | None:
    """The BLAS threads tdflow's kernels run with (``None``: leave the count alone), read from
    the environment once (``tdflow_blas_threads.cache_clear()`` reads it again).

    >>> import os
    >>> os.environ["TDFLOW_BLAS_THREADS"] = "3"; tdflow_blas_threads.cache_clear()
    >>> tdflow_blas_threads()
    3
    >>> del os.environ["TDFLOW_BLAS_THREADS"]; tdflow_blas_threads.cache_clear()
    """
    env = os.environ.get("TDFLOW_BLAS_THREADS")
    if env:
        return int(env)
    # (MKL_NUM_THREADS does not size an OpenBLAS; what the tdflow CLI set is not the user's)
    if user_blas_threads_set(("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")):
        return None
    return default_blas_threads()


# Calls in flight and the count before the first of them: overlapping calls (eager ops on two
# threads) set the count once and the last one out restores the caller's.
_lock = threading.Lock()
_scope: list[int] = [0, 0]  # [calls in flight, the count before the first]


# Set at the first scoped call that has a count to set (then the tdflow command's pool, which
# it started with one thread, has been given tdflow's count; elsewhere nothing was done)
_claimed: list[bool] = []


def _claim(fns: tuple[Any, Any], want: int) -> None:
    """In the ``tdflow`` command (:func:`~tdflow.core.blas_pool.cli_pool`), the pool takes
    tdflow's count for good at the first scoped call: OpenBLAS starts its threads then, not at
    numpy's import, and only in a process that multiplies. In a user's process, nothing: the
    scope restores the user's count after every call."""
    with _lock:
        if not _claimed:
            if cli_pool():
                if _scope[0]:  # a scope open on another thread: it leaves tdflow's count behind
                    _scope[1] = want
                elif fns[1]() != want:
                    fns[0](ctypes.c_int(want))
            _claimed.append(True)


def blas_scoped(fn: F) -> F:
    """``fn`` run with :func:`tdflow_blas_threads` BLAS threads, the caller's count restored
    afterwards (also when ``fn`` raises). See the module docstring for an example."""

    @functools.wraps(fn)
    def scoped(*args: Any, **kwargs: Any) -> Any:
        fns = _openblas()
        want = tdflow_blas_threads() if fns is not None else None
        if want is None:
            return fn(*args, **kwargs)
        if fns[1]() == want and not _scope[0]:
            # The count is already tdflow's and no scope is open: nothing to set or restore, so
            # no lock and no bookkeeping (a 64x784x256 product: ~9 us of thread CPU by median
            # through the full scope, ~2 us this way). A scope opening on another thread finds
            # the same count and restores nothing; one closing between the two checks above
            # could restore a caller's larger count under this call (threads, never values).
            return fn(*args, **kwargs)
        if not _claimed:
            _claim(fns, want)  # once: the tdflow command's pool becomes tdflow's here
            return scoped(*args, **kwargs)
        with _lock:
            _scope[0] += 1  # counted before the count changes: the check above sees it
            if _scope[0] == 1:
                _scope[1] = int(fns[1]())
                if _scope[1] != want:
                    fns[0](ctypes.c_int(want))
        try:
            return fn(*args, **kwargs)
        finally:
            with _lock:
                _scope[0] -= 1
                if _scope[0] == 0 and _scope[1] != want:
                    fns[0](ctypes.c_int(_scope[1]))

    return scoped  # type: ignore[return-value]


def blas_scoped_launch(fn: F) -> F:
    """:func:`blas_scoped` for one bound launch ``fn(attrs, inputs, outs)`` of a compiled plan:
    tdflow's count read once, here, and the check that nothing needs setting made inline
    before the full scope. Same threads, same values; measured on the MLP's 64x784x256
    product (thread CPU, medians of 4,000 calls in random order, two runs): 5-7 us a call
    less than through :func:`blas_scoped`'s generic wrapper (``*args``, two cached look-ups),
    1-1.5 us over the bare call.

    >>> run = blas_scoped_launch(lambda attrs, ins, outs: blas_threads())
    >>> want = tdflow_blas_threads()
    >>> want is None or run({}, [], []) == want
    True
    """
    fns = _openblas()
    want = tdflow_blas_threads() if fns is not None else None
    if want is None:
        return fn
    get, scoped = fns[1], blas_scoped(fn)

    def launch(attrs: Any, inputs: Any, outs: Any) -> Any:
        if get() == want and not _scope[0]:  # blas_scoped's fast path (see there)
            return fn(attrs, inputs, outs)
        return scoped(attrs, inputs, outs)

    return launch  # type: ignore[return-value]
