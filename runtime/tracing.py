"""The runtime's profiling hook: where kernel launches, compiles and builds report their time.

The hook is one module attribute, :data:`active`. When it is ``None`` (the normal case) the
instrumented places pay one attribute check and nothing else; a profiler
(:class:`tdflow.profile.Profile`) installs a :class:`Recorder` there while it runs. Recording is
data only: ``(name, category, start_ns, duration_ns, thread ident, args)`` tuples appended to a
list (``list.append`` is atomic under the GIL, so engine workers need no lock). Turning them
into Chrome Trace Event JSON is the profiler's job, above the runtime.

>>> rec = Recorder()
>>> with installed(rec), span("compile @f", "compile"):
...     pass
>>> [e[0] for e in rec.events]
['compile @f']
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

#: The recorder in use, or ``None``: the only thing the hot paths look at.
active: Recorder | None = None

_clock = time.perf_counter_ns


class Recorder:
    """Collects events; ``events`` holds ``(name, cat, start_ns, dur_ns, tid, args)`` tuples."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, int, int, int, dict[str, Any]]] = []
        self.thread_names: dict[int, str] = {}
        self.origin_ns = _clock()

    def record(self, name: str, cat: str, start: int, end: int, args: dict[str, Any]) -> None:
        """Add one finished slice measured on the calling thread."""
        t = threading.current_thread()
        tid = t.ident or 0
        if tid not in self.thread_names:
            self.thread_names[tid] = t.name
        self.events.append((name, cat, start, end - start, tid, args))

    def wrap(self, fn: Callable[[], object], name: str | None, loc: object,
             args: dict[str, Any] | None = None) -> Callable[[], object]:
        """``fn`` timed as a ``launch`` slice wherever (on whichever thread) it runs.

        >>> rec = Recorder(); rec.wrap(lambda: None, "tdflow.relu", "p.mlir:3:8")()
        >>> rec.events[0][0], rec.events[0][5]["loc"]
        ('tdflow.relu', 'p.mlir:3:8')
        """
        if getattr(fn, "_tdflow_traced", False):
            return fn  # the executor already wrapped it with its launch's details
        info = dict(args or {})
        if loc is not None:
            info["loc"] = str(loc)

        def timed() -> object:
            start = _clock()
            try:
                return fn()
            finally:
                self.record(name or "op", "launch", start, _clock(), info)

        timed._tdflow_traced = True  # type: ignore[attr-defined]
        return timed


@contextlib.contextmanager
def installed(recorder: Recorder) -> Iterator[Recorder]:
    """Make ``recorder`` the active one for the ``with`` block (restoring the previous one)."""
    global active
    previous, active = active, recorder
    try:
        yield recorder
    finally:
        active = previous


@contextlib.contextmanager
def span(name: str, cat: str, **args: Any) -> Iterator[None]:
    """Time the block as one slice when a recorder is active (compiles, g++/nvcc builds).

    >>> with span("g++ build", "build"):  # no recorder: nothing happens
    ...     pass
    """
    rec = active
    if rec is None:
        yield
        return
    start = _clock()
    try:
        yield
    finally:
        rec.record(name, cat, start, _clock(), args)
