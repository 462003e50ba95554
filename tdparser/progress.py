"""Progress on long work (TableGen parses, g++/nvcc builds, the ONNX suite, training loops),
shown only where a person watches: on a terminal, never in a pipe, a file or a CI log.

``TDFLOW_NO_PROGRESS=1`` turns it off on terminals too. It lives at the bottom layer (here,
next to the errors every layer uses) so that the parser, the runtime and the tools share it.

>>> import io
>>> live(io.StringIO())
False
>>> with spinner("parsing", stream=io.StringIO()):  # not a terminal: nothing is drawn
...     pass
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
from collections.abc import Iterator


def live(stream: io.TextIOBase | None = None) -> bool:
    """Whether progress may be drawn on ``stream`` (default: stderr): it is a terminal and
    ``TDFLOW_NO_PROGRESS`` is not set."""
    stream = sys.stderr if stream is None else stream
    if os.environ.get("TDFLOW_NO_PROGRESS", "").strip() not in ("", "0"):
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # a closed stream
        return False


@contextlib.contextmanager
def spinner(text: str, delay: float = 0.0, stream: io.TextIOBase | None = None) -> Iterator[None]:
    """A transient spinner with elapsed time while the block runs, on a terminal only; with
    ``delay``, only once the block has run that long (short work stays silent)."""
    stream = sys.stderr if stream is None else stream
    if not live(stream):
        yield
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    bar = Progress(SpinnerColumn(), TextColumn("[bold]{task.description}"), TimeElapsedColumn(),
                   transient=True, console=Console(file=stream))
    bar.add_task(text, total=None)
    started = threading.Event()
    lock = threading.Lock()

    def start() -> None:
        with lock:
            if not started.is_set():
                started.set()
                bar.start()

    timer = threading.Timer(delay, start) if delay > 0 else None
    if timer is None:
        start()
    else:
        timer.daemon = True
        timer.start()
    try:
        yield
    finally:
        if timer is not None:
            timer.cancel()
        with lock:
            if started.is_set():
                bar.stop()
            started.set()  # a timer firing late must not start it now


def progress_bar(stream: io.TextIOBase | None = None, **columns: object) -> object:
    """A rich ``Progress`` (bar, count, elapsed) for a loop on a terminal, or ``None`` when
    progress is not to be drawn on ``stream`` (default: stdout)."""
    stream = sys.stdout if stream is None else stream
    if not live(stream):
        return None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), transient=True, console=Console(file=stream), **columns)
