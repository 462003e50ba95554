"""CPU seconds, not wall-clock seconds, for the tests' "this does not blow up" bounds.

What a process computes does not grow when other processes load the machine; its wall time
does (a 2-core CI machine running two suites doubles it). So bounds that guard against
exponential or quadratic behaviour measure CPU time: this process's (every thread), or that of
the child processes waited for inside the block.

>>> with cpu_clock() as clock:
...     _ = sum(range(1000))
>>> 0 <= clock.seconds < 1
True
"""

from __future__ import annotations

import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass
class Clock:
    seconds: float = 0.0


def _children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


@contextmanager
def cpu_clock(children: bool = False) -> Iterator[Clock]:
    """Measure the CPU seconds spent inside the block: this process's, or with ``children`` those
    of the child processes it waited for (``subprocess.run``)."""
    clock = Clock()
    read = _children if children else time.process_time
    start = read()
    try:
        yield clock
    finally:
        clock.seconds = read() - start


def cpu_timed(fn, *args):
    """``(fn(*args), CPU seconds it took)`` in this process."""
    with cpu_clock() as clock:
        out = fn(*args)
    return out, clock.seconds
