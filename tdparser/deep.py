"""Run the front end where deep input cannot overflow: a thread with a large stack.

The parser is iterative, but evaluating values (and printing, converting and pickling them) is
naturally recursive, one Python frame or more per nesting level. llvm-tblgen accepts about
5000 nested ``!add(...)``, 5000 nested lists or dags and 20,000 ``#`` pastes in one value (it
crashes beyond that), so tdflow must recurse that deep too. The main thread's C stack (8 MiB
by default) cannot hold such recursion, so :func:`run_deep` runs the work in a thread whose
stack is :data:`STACK_BYTES` and with Python's recursion limit raised to
:data:`RECURSION_LIMIT`. Deeper input raises :class:`RecursionError` long before the stack is
exhausted (about 1.5 KiB of C stack per Python frame in the worst paths measured, against
:data:`STACK_BYTES` / :data:`RECURSION_LIMIT` = 5 KiB), which callers turn into a located
"nesting too deep" :class:`~.errors.TdError`.

>>> run_deep(sum, [1, 2, 3])
6
"""

from __future__ import annotations

import sys
import threading

#: The deep thread's stack. Only the pages a deep input touches are ever committed.
STACK_BYTES = 1 << 30
#: Python frames allowed in the deep thread: well past llvm-tblgen's own limits (see above).
RECURSION_LIMIT = 200_000

_lock = threading.Lock()
_active = 0  # deep threads running; the recursion limit is process-wide
_saved_limit = 0
_inside = threading.local()


def _release() -> None:
    """One deep thread fewer; the last one puts the recursion limit back (``_lock`` held)."""
    global _active
    _active -= 1
    if _active == 0:
        sys.setrecursionlimit(_saved_limit)


def in_deep_thread() -> bool:
    """Whether the caller already runs under :func:`run_deep`."""
    return getattr(_inside, "on", False)


def run_deep(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` run in a thread with a large stack and a high recursion limit.

    The result is returned and an exception re-raised in the caller, as if ``fn`` had been
    called directly; a call made from inside such a thread simply calls ``fn``.

    >>> def depth(n):
    ...     return 0 if n == 0 else 1 + depth(n - 1)
    >>> run_deep(depth, 50_000)
    50000
    """
    if in_deep_thread():
        return fn(*args, **kwargs)
    box: list = [None, None]

    def target():
        _inside.on = True
        try:
            box[0] = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed to the calling thread as is
            box[1] = exc

    global _active, _saved_limit
    with _lock:
        # The limit goes up before the worker starts, which may recurse at once.
        if _active == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, RECURSION_LIMIT))
        _active += 1
        old_size = threading.stack_size()
        try:
            threading.stack_size(STACK_BYTES)
            # A daemon thread: an interrupted caller (Ctrl-C) must not keep the process alive.
            worker = threading.Thread(target=target, name="tdflow-deep", daemon=True)
            worker.start()
        except (RuntimeError, ValueError, MemoryError):
            worker = None
            _release()
        finally:
            threading.stack_size(old_size)
    if worker is None:
        # No big thread on this platform: run here at the normal limit, so deep input fails
        # with RecursionError (reported as "nesting too deep") rather than a crash.
        return fn(*args, **kwargs)
    try:
        worker.join()
    finally:
        with _lock:
            _release()
    if box[1] is not None:
        exc = box[1]
        box[1] = None  # no reference cycle through the traceback
        raise exc
    return box[0]
