"""The process-wide engine: :func:`get_engine` and :func:`set_engine`."""

from __future__ import annotations

import atexit
import os
import threading

from .base import Engine
from .naive import NaiveEngine
from .threaded import ThreadedEngine

__all__ = ["ENGINE_KINDS", "get_engine", "set_engine"]

_ENGINE: Engine | None = None
_ENGINE_LOCK = threading.Lock()
ENGINE_KINDS = ("threaded", "naive")


def get_engine() -> Engine:
    """The process-wide engine: ``TDFLOW_ENGINE=naive`` or ``threaded`` (the default).

    >>> get_engine() is get_engine()
    True
    """
    eng = _ENGINE
    if eng is None:
        eng = _create_default()
    return eng


def _create_default() -> Engine:
    global _ENGINE
    with _ENGINE_LOCK:
        if _ENGINE is None:
            kind = os.environ.get("TDFLOW_ENGINE", "threaded").strip().lower() or "threaded"
            if kind == "naive":
                _ENGINE = NaiveEngine()
            elif kind == "threaded":
                _ENGINE = ThreadedEngine()
                atexit.register(_drain, _ENGINE)
            else:
                raise ValueError(f"TDFLOW_ENGINE must be one of {', '.join(ENGINE_KINDS)}; "
                                 f"got {kind!r}")
        return _ENGINE


def _drain(engine: Engine) -> None:
    """At interpreter exit, let pushed work finish (MXNet waits too); failures are dropped."""
    try:
        engine.wait_all(timeout=60)
    except Exception:  # noqa: BLE001 - nobody is left to report to
        pass


def set_engine(engine: Engine | None) -> Engine | None:
    """Replace the process-wide engine (``None``: recreate from the environment on next use).

    Returns the previous one. Pending work on the old engine is not waited for.
    """
    global _ENGINE
    if engine is not None and not isinstance(engine, Engine):
        raise TypeError(f"set_engine() needs an Engine, not {type(engine).__name__}")
    with _ENGINE_LOCK:
        old, _ENGINE = _ENGINE, engine
    return old


def _reset_after_fork() -> None:
    # worker threads do not survive fork(): the child builds a fresh engine on first use
    global _ENGINE, _ENGINE_LOCK
    _ENGINE = None
    _ENGINE_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)
