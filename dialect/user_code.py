"""Where a Python exception was raised, said the way a user reads it: the function of *their*
code (a hook, a kernel, a native pattern function) with its file and line, and where the error
came from when it was raised deeper.

tdflow's own frames (its packages) and library frames (the standard library, site-packages:
numpy and friends) are skipped, so a ``KeyError`` raised by ``attrs["axsi"]`` in a user's
kernel names that kernel and line, not ``executor.py``. Errors from tdflow's own code name
the deepest tdflow function instead.

>>> def my_kernel(attrs):
...     return attrs["axsi"]
>>> try:
...     my_kernel({})
... except KeyError as e:
...     site = code_site(e)
>>> "raised in my_kernel at" in site
True
"""

from __future__ import annotations

import sys
import sysconfig
import traceback
from functools import cache
from pathlib import Path

from tdflow.core.errors import TdflowError

__all__ = ["code_site", "raised_at", "user_frames"]


@cache
def _roots() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(tdflow's package dirs, library dirs), as path prefixes."""
    mods = ("tdflow", "tdflow.dialect", "tdflow.runtime", "tdflow.lowering", "tdflow.tdparser")
    own = []
    for name in mods:
        mod = sys.modules.get(name)
        if mod is not None and getattr(mod, "__file__", None):
            own.append(str(Path(mod.__file__).resolve().parent) + "/")
    libs = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return tuple(own), tuple(str(Path(p).resolve()) + "/" for p in libs)


def _kind(filename: str) -> str:
    own, libs = _roots()
    try:
        path = str(Path(filename).resolve())
    except (OSError, ValueError):
        return "user"
    if path.startswith(own):
        return "tdflow"
    if path.startswith(libs) or filename.startswith("<frozen"):
        return "library"
    return "user"


def user_frames(exc: BaseException) -> list[traceback.FrameSummary]:
    """The frames of ``exc``'s traceback that are neither tdflow's nor a library's."""
    return [f for f in traceback.extract_tb(exc.__traceback__) if _kind(f.filename) == "user"]


def code_site(exc: BaseException) -> str | None:
    """``"in FUNC (FILE:LINE)"`` for the first user frame of ``exc`` (the hook or kernel
    tdflow called), plus ``", raised in G at FILE:LINE"`` when a deeper user function raised;
    the deepest tdflow frame when no user code ran; None without a traceback."""
    frames = user_frames(exc)
    if not frames:
        mine = [f for f in traceback.extract_tb(exc.__traceback__)
                if _kind(f.filename) == "tdflow"]
        if not mine:
            return None
        f = mine[-1]
        return f"in {f.name} ({f.filename}:{f.lineno})"
    entry, last = frames[0], frames[-1]
    text = f"in {entry.name} ({entry.filename}:{entry.lineno})"
    if last is not entry:
        text += f", raised in {last.name} at {last.filename}:{last.lineno}"
    return text


def raised_at(original: BaseException) -> str:
    """`` in my_kernel (hooks.py:14)``: :func:`code_site` as a phrase for a failure message
    (the engine's, a compiled plan's); empty for tdflow's own errors, which say where they are.

    >>> raised_at(TdflowError("located already"))
    ''
    """
    if isinstance(original, TdflowError):
        return ""
    site = code_site(original)
    return f" {site}" if site else ""
