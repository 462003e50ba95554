"""The synchronous engine (``TDFLOW_ENGINE=naive``): every op runs at push time."""

from __future__ import annotations

import threading

from .. import tracing as _tracing
from .base import Engine, EngineOp, Var, dedup_deps, run_op

__all__ = ["NaiveEngine"]


class NaiveEngine(Engine):
    """Runs each op synchronously at push time (``TDFLOW_ENGINE=naive``); for debugging.

    Failures still surface at ``wait``/``wait_all``, exactly as with the threaded engine.
    ``push_one`` is the base class's (``push`` with one write): one path runs every op, through
    :func:`~tdflow.runtime.engine.base.run_op`.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()  # an op may push more ops
        self._init_failures()

    def push(self, fn, reads=(), writes=(), device="cpu", name=None, loc=None, *,
             cost=None, inline=None, uses_blas=False) -> None:
        if _tracing.active is not None:  # a profile is recording: time this op
            fn = _tracing.active.wrap(fn, name, loc)
        reads, writes, rw = dedup_deps(reads, writes)
        with self._lock:
            self._seq += 1
            op = EngineOp(fn, reads, writes, rw, name, loc, uses_blas, self._seq)
            for v in reads + rw:
                if v._error is not None:
                    op.inherit(v._error)
            err, fresh, fatal = run_op(op)
            if fresh:
                self._record(err)
            for v in writes:
                v._error = err
                v.version += 1
        if fatal is not None:
            raise fatal

    def run_now(self, fn, ins, out, tensors) -> bool:
        if _tracing.active is not None:
            return False
        with self._lock:
            for t in tensors:
                s = t._sync
                if s is not None and (type(s) is not Var or s._error is not None):
                    return False  # push settles the hook, or passes the failure on
            try:
                fn(ins, out)
            except Exception:  # noqa: BLE001 - the caller pushes it: the failure is recorded there
                return False
        return True

    def wait(self, var: Var, timeout: float | None = None) -> None:
        with self._lock:
            self._raise_var_error(var)

    def wait_all(self, timeout: float | None = None) -> None:
        with self._lock:
            self._raise_unreported()
