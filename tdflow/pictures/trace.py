"""Profiles in the ecosystem's format: Chrome Trace Event JSON (``chrome://tracing``, Perfetto).

:func:`profile` installs a :class:`~tdflow.runtime.tracing.Recorder` as the runtime's hook for
the ``with`` block and, on exit, waits for the engine's pending work and writes (or keeps) the
trace: one complete (``"ph": "X"``) slice per kernel launch (op name, location, shapes, dtypes,
bytes), lowering and loading as ``compile`` slices, g++/nvcc builds as ``build`` slices, each
on the track (``tid``) of the thread that ran it, named by ``"M"`` metadata events.

>>> import numpy as np, tdflow
>>> with tdflow.profile() as prof:
...     _ = tdflow.functional.relu(tdflow.tensor(np.ones(3, np.float32))).numpy()
>>> [e["name"] for e in prof.trace()["traceEvents"] if e["ph"] == "X"]
['tdflow.relu']
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tdflow.runtime import tracing

#: Chrome's trace viewer has no processes of its own here: one pid for the whole run.
PID = 1


class Profile:
    """The events of one :func:`profile` block; :meth:`trace` is the Chrome Trace document."""

    def __init__(self) -> None:
        self.recorder = tracing.Recorder()

    def trace(self) -> dict[str, Any]:
        """The Trace Event document (``ts``/``dur`` in microseconds from the block's start).

        >>> Profile().trace()["traceEvents"][0]["ph"]
        'M'
        """
        rec = self.recorder
        origin = rec.origin_ns
        tids: dict[int, int] = {}  # thread idents are huge: number the tracks 1, 2, ...
        main = threading.main_thread().ident
        if main is not None:
            tids[main] = 1
        events: list[dict[str, Any]] = [
            {"name": "process_name", "ph": "M", "pid": PID, "tid": 0,
             "args": {"name": "tdflow"}}]
        slices = []
        for name, cat, start, dur, ident, args in sorted(list(rec.events), key=lambda e: e[2]):
            tid = tids.setdefault(ident, len(tids) + 1)
            slices.append({"name": name, "cat": cat, "ph": "X", "pid": PID, "tid": tid,
                           "ts": (start - origin) / 1000.0, "dur": dur / 1000.0,
                           "args": args})
        names = dict(rec.thread_names)
        for ident, tid in sorted(tids.items(), key=lambda kv: kv[1]):
            label = "main" if ident == main else names.get(ident, f"thread {tid}")
            events.append({"name": "thread_name", "ph": "M", "pid": PID, "tid": tid,
                           "args": {"name": label}})
        return {"traceEvents": events + slices, "displayTimeUnit": "ms",
                "otherData": {"producer": "tdflow"}}

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`trace` as JSON to ``path``; returns the path.

        >>> import tempfile; p = Path(tempfile.mkdtemp()) / "t.json"
        >>> Profile().save(p).read_text().startswith('{"traceEvents"')
        True
        """
        out = Path(path)
        out.write_text(json.dumps(self.trace()), encoding="utf-8")
        return out


@contextlib.contextmanager
def profile(path: str | os.PathLike[str] | None = None) -> Iterator[Profile]:
    """Record kernel launches (compiled and eager), compiles and builds inside the block.

    With ``path``, the trace is written there on a normal exit; either way the yielded
    :class:`Profile` holds it. Open the file in ``chrome://tracing`` or ui.perfetto.dev.

    >>> import tdflow
    >>> with tdflow.profile() as p:
    ...     pass
    >>> p.trace()["displayTimeUnit"]
    'ms'
    """
    prof = Profile()
    with tracing.installed(prof.recorder):
        yield prof
        _settle_engine()
    if path is not None:
        prof.save(path)


def _settle_engine(timeout: float = 60.0) -> None:
    """Let ops pushed in the block finish so their slices are in the trace. Their failures
    stay the user's, seen at their own waits: this polls the pending count and raises nothing
    (``wait_all`` would report, and so consume, them)."""
    import time

    from tdflow.runtime.engine import get_engine

    pending = getattr(get_engine(), "pending", None)  # the naive engine has nothing pending
    deadline = time.monotonic() + timeout
    while pending is not None and pending() and time.monotonic() < deadline:
        time.sleep(0.0005)
