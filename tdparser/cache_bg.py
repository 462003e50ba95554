"""Cache writes off the critical path: a forked child pickles and writes, the caller goes on.

Storing a large keeper costs seconds (X86's 68k records: pickling and writing the entry and
the rendered text), which made the first, cache-filling ``tdflow tblgen`` run slower than a
``--no-cache`` one. :func:`run_detached` runs such a write in a child process forked after the
result is ready: the parent returns the result at once and the child, which shares the
parent's memory copy-on-write, writes the entries and exits. Entries are written atomically
(:func:`.cache_dir.atomic_write`), so a reader that comes before the child is done sees no
entry (a miss, rebuilt), never part of one. Nothing here reads anything back.

The child's standard streams go to ``/dev/null`` (a pipe the parent writes to, as in
``tdflow tblgen ... | jq``, must not stay open until the child is done), its garbage collector
is off (a collection would touch, and so copy, every page of the parent's heap) and it leaves
with ``os._exit``, so no buffer or exit handler of the parent runs twice. It starts its own
session (``setsid``): tools that kill a command's whole process group once the command has
exited (timeouts, CI runners, a terminal's Ctrl-C after the prompt returns) would otherwise
kill the write, and every later run would be a cold one again; the parent goes on only once
the child has left its group (a pipe the child closes after ``setsid``).

>>> run_detached(lambda: None) in (True, False)
True
>>> wait_for_writes()
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable

_pending: list[int] = []  # children not yet waited for
# What the parent keeps alive while a child writes: freeing a large keeper object by object
# writes to every page the child still shares, so each is copied first (X86: ~1.5 s, which
# made the cache-filling run slower than a --no-cache one). `exit_now` leaves without freeing.
_held: list = []


def run_detached(write: Callable[[], object], hold: object = None) -> bool:
    """Run ``write()`` in a forked child and return at once (``True``); where ``fork`` is not
    available, or other threads are running (a fork would copy their held locks), run it here
    and return ``False``. ``hold`` is kept alive in the parent until the children are done."""
    _reap(block=False)
    if not hasattr(os, "fork") or threading.active_count() > 1:
        write()
        return False
    try:
        ready_r, ready_w = os.pipe()
    except OSError:
        write()
        return False
    try:
        pid = os.fork()
    except OSError:
        os.close(ready_r)
        os.close(ready_w)
        write()
        return False
    if pid == 0:  # the child: write, then leave without running anything of the parent's
        code = 0
        try:
            gc.disable()
            try:
                os.setsid()  # out of the caller's process group (see the module docstring)
            except OSError:
                pass
            os.close(ready_r)
            os.close(ready_w)  # the parent's read returns: the child is out of the group
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            write()
        except BaseException:  # noqa: BLE001 - a failed write is just no entry
            code = 1
        finally:
            os._exit(code)
    # Wait until the child has left the process group (its end of the pipe closes), so that
    # a caller killing the group as soon as this process exits cannot catch the child before
    # its setsid on a busy machine; then nothing or the whole entry is written, never a part.
    os.close(ready_w)
    try:
        os.read(ready_r, 1)
    except OSError:
        pass
    finally:
        os.close(ready_r)
    _pending.append(pid)
    if hold is not None:
        _held.append(hold)
    return True


def holding() -> bool:
    """Whether a child may still be writing what this process holds for it.

    >>> holding() in (True, False)
    True
    """
    return bool(_held)


def wait_for_writes() -> None:
    """Wait until every write started by :func:`run_detached` in this process is done (tests,
    benchmarks, and callers that read the entries back at once)."""
    _reap(block=True)


def _reap(block: bool) -> None:
    for pid in list(_pending):
        try:
            done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _pending.remove(pid)
    if not _pending:
        _held.clear()
