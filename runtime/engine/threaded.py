"""The threaded dependency engine (MXNet's ``ThreadedEngine``); semantics in
:mod:`tdflow.runtime.engine`.

State lives in the :class:`~tdflow.runtime.engine.Var` objects and is changed only under the
engine's one lock (ops run outside it). A var's ``_queue`` holds the ops not yet granted access,
in push order. Invariants, for every var:

* ``_writing`` and ``_reads > 0`` never hold together;
* a queued op exists only behind an unfinished op: when ``_reads > 0`` the queue's head is a write.

>>> eng = ThreadedEngine(workers=1)
>>> v = eng.new_var("v")
>>> out = []
>>> eng.push(lambda: out.append(1), writes=(v,), inline=False)
>>> eng.push(lambda: out.append(2), writes=(v,))
>>> eng.wait(v); out
[1, 2]
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque

from .. import tracing as _tracing
from .base import (
    BLAS_OP_NAMES,
    INLINE_COST,
    Engine,
    EngineError,
    EngineOp,
    Var,
    dedup_deps,
    run_op,
)

__all__ = ["ThreadedEngine", "default_workers"]


class ThreadedEngine(Engine):
    """Runs ops on a small worker pool plus the calling thread (see :mod:`tdflow.runtime.engine`)."""

    def __init__(self, workers: int | None = None):
        self.workers = default_workers() if workers is None else workers
        if self.workers < 1:
            raise ValueError(f"ThreadedEngine needs at least one worker, got {self.workers}")
        self._lock = threading.Lock()
        self._work_cv = threading.Condition(self._lock)  # workers: an op became ready
        self._done_cv = threading.Condition(self._lock)  # waiters: an op completed
        self._ready: deque[EngineOp] = deque()
        self._pending = 0  # pushed and not completed (wait markers excluded)
        self._idle = 0  # workers sleeping on _work_cv
        self._waiters = 0
        self._threads: list[threading.Thread] = []
        self._helping = threading.local()  # depth of ops a waiting thread is running for us
        self._blas_slot = threading.RLock()  # re-entrant: a BLAS op may wait and help run another
        self._init_failures()

    # ------------------------------------------------------------------ push
    def push(self, fn, reads=(), writes=(), device="cpu", name=None, loc=None, *,
             cost=None, inline=None, uses_blas=False) -> None:
        if not uses_blas and name in BLAS_OP_NAMES:
            uses_blas = True
        if _tracing.active is not None:  # a profile is recording: time this op
            fn = _tracing.active.wrap(fn, name, loc)
        if (type(writes) is tuple and 1 <= len(writes) <= 4 and type(reads) is tuple
                and len(reads) <= 3 and inline is not False):
            # a few distinct output vars (an op's results), a few distinct input vars, none
            # both: try running it right here
            ok = True
            for w in writes:
                if type(w) is not Var:
                    ok = False
            for r in reads:
                if type(r) is not Var or r in writes:
                    ok = False
            if (ok and (len(reads) < 2 or len(set(reads)) == len(reads))
                    and (len(writes) < 2 or len(set(writes)) == len(writes))):
                if self._push_inline(fn, reads, writes, name, loc, cost, inline, uses_blas):
                    return
        if (type(reads) is tuple and type(writes) is tuple and len(writes) == 1
                and len(reads) <= 1 and type(writes[0]) is Var
                and (not reads or (type(reads[0]) is Var and reads[0] is not writes[0]))):
            rw = ()
        else:
            reads, writes, rw = dedup_deps(reads, writes)
        self._push_queued(fn, reads, writes, rw, name, loc, cost, inline, uses_blas)

    def push_one(self, fn, reads, write, name=None, cost=None, uses_blas=False) -> None:
        """``push`` for the eager hot path: ``reads`` a tuple of distinct vars, one ``write``
        var not among them (the caller guarantees both; nothing is checked)."""
        if _tracing.active is not None:
            fn = _tracing.active.wrap(fn, name, None)
        if not self._push_inline(fn, reads, (write,), name, None, cost, None, uses_blas):
            self._push_queued(fn, reads, (write,), (), name, None, cost, None, uses_blas)

    def run_now(self, fn, ins, out, tensors) -> bool:
        if _tracing.active is not None:  # a profile is recording: ops go through push
            return False
        with self._lock:
            # Granting happens under this lock, so while we hold it nobody starts writing a
            # var found idle here; a tensor without a var gets one (tensor_glue.var_of) before
            # its writer pushes, and that push waits for this lock.
            for t in tensors:
                s = t._sync
                if s is not None and (type(s) is not Var or s._writing or s._queue
                                      or s._error is not None):
                    return False
            try:
                fn(ins, out)
            except Exception:  # noqa: BLE001 - the caller pushes it: the failure is recorded there
                return False
        return True

    def _push_queued(self, fn, reads, writes, rw, name, loc, cost, inline, uses_blas) -> None:
        with self._lock:
            self._seq += 1
            op = EngineOp(fn, reads, writes, rw, name, loc, uses_blas, self._seq)
            self._pending += 1
            waiting = 0
            for v in reads:
                if v._writing or v._queue:
                    if v._queue is None:
                        v._queue = deque()
                    v._queue.append((op, False))
                    waiting += 1
                else:
                    v._reads += 1
                    if v._error is not None:
                        op.inherit(v._error)
            for v in writes:
                if v._writing or v._reads or v._queue:
                    if v._queue is None:
                        v._queue = deque()
                    v._queue.append((op, True))
                    waiting += 1
                else:
                    v._writing = True
                    if v._error is not None and rw and v in rw:
                        op.inherit(v._error)
            op.pending = waiting
            if waiting:
                return  # the completion of what it waits for makes it ready
            if inline is None:
                # alone in the engine, a worker would only add a hand-off and a wake-up
                inline = self._pending == 1 or (cost is not None and cost <= INLINE_COST)
            if not inline:
                self._ready.append(op)
                self._wake_workers(1)
                return
        self._execute(op, reraise=True)

    def _push_inline(self, fn, reads, writes, name, loc, cost, inline, blas) -> bool:
        """Run a ready op right here, without building the queued form; False if not ready
        (or not to be inlined): then ``push`` takes the general path. ``reads`` and ``writes``
        are tuples of distinct vars, none in both (the callers check or guarantee it)."""
        err = None
        with self._lock:
            for w in writes:
                if w._writing or w._reads or w._queue:
                    return False
            for r in reads:
                if r._writing or r._queue:
                    return False
            if not inline and self._pending and (cost is None or cost > INLINE_COST):
                return False  # something is in flight: a costly op may overlap it on a worker
            for r in reads:
                r._reads += 1
                e = r._error
                if e is not None and (err is None or e.seq < err.seq):
                    err = e
            for w in writes:
                w._writing = True
            self._seq += 1
            seq = self._seq
            self._pending += 1
        fresh = False
        fatal = None
        if err is None:
            if blas:
                self._blas_slot.acquire()
            try:
                fn()
            except Exception as e:
                err, fresh = EngineError(name, loc, e, seq), True
            except BaseException as e:
                err, fresh, fatal = EngineError(name, loc, e, seq), True, e
            finally:
                if blas:
                    self._blas_slot.release()
        with self._lock:
            queued = False
            for v in writes:
                if v._queue:
                    queued = True
            for r in reads:
                if r._queue:
                    queued = True
            if queued:  # others queued behind us meanwhile: the general release
                self._complete(EngineOp(fn, reads, writes, (), name, loc, blas, seq), err, fresh)
            else:
                if fresh:
                    self._record(err)
                for w in writes:
                    w._error = err
                    w._writing = False
                    w.version += 1
                for r in reads:
                    r._reads -= 1
                self._pending -= 1
                if self._waiters:
                    self._done_cv.notify_all()
        if fatal is not None:
            raise fatal
        return True

    # ------------------------------------------------------------- execution
    def _execute(self, op: EngineOp, reraise: bool = False, worker: bool = False) -> None:
        if op.blas:
            with self._blas_slot:  # one BLAS-threaded op at a time: it owns every core
                err, fresh, fatal = run_op(op)
        else:
            err, fresh, fatal = run_op(op)
        with self._lock:
            self._complete(op, err, fresh, worker)
        if fatal is not None and reraise:
            raise fatal

    def _complete(self, op: EngineOp, err: EngineError | None, fresh: bool,
                  worker: bool = False) -> None:
        """Release ``op``'s vars and grant waiting ops; called with the lock held.

        A worker goes on with the first op this makes ready itself (bulk execution: a chain of
        tiny ops runs on one thread); only the others wake sleeping workers.
        """
        if fresh:
            self._record(err)
        for v in op.writes:
            v._error = err  # poison, or clear an earlier failure by a successful overwrite
        ready = self._ready
        before = len(ready)
        stack = [op]
        while stack:
            done = stack.pop()
            done.done = True
            for v in done.reads:
                v._reads -= 1
                if v._reads == 0 and v._queue:
                    _grant_write(v, ready)  # the head is a write (invariant)
            for v in done.writes:
                v._writing = False
                v.version += 1
                q = v._queue
                if q:
                    if q[0][1]:
                        _grant_write(v, ready)
                    else:
                        while q and not q[0][1]:
                            nxt = q.popleft()[0]
                            v._reads += 1
                            if v._error is not None:
                                nxt.inherit(v._error)
                            nxt.pending -= 1
                            if nxt.pending == 0:
                                if nxt.fn is None:  # a wait marker: nothing to run
                                    stack.append(nxt)
                                else:
                                    ready.append(nxt)
            if done.fn is not None:
                self._pending -= 1
        new = len(ready) - before - (1 if worker else 0)
        if new > 0:
            self._wake_workers(new)
        if self._waiters:
            self._done_cv.notify_all()

    def _wake_workers(self, n: int) -> None:
        """Make sure someone runs ``n`` newly ready ops (lock held)."""
        if not self._threads:
            self._start_workers()
        if self._idle:
            self._work_cv.notify(min(n, self._idle))

    def _start_workers(self) -> None:
        for i in range(self.workers):
            t = threading.Thread(target=self._worker_loop, name=f"tdflow-engine-{i}", daemon=True)
            self._threads.append(t)
            t.start()

    def _worker_loop(self) -> None:
        ready = self._ready
        while True:
            with self._lock:
                while not ready:
                    self._idle += 1
                    self._work_cv.wait()
                    self._idle -= 1
                op = ready.popleft()
            self._execute(op, worker=True)

    # ------------------------------------------------------------------ wait
    def _help_or_sleep(self, deadline: float | None, what: str) -> None:
        """With the lock held: run one ready op on this thread, or sleep until a completion."""
        if self._ready:
            op = self._ready.popleft()
            self._lock.release()
            self._helping.depth = getattr(self._helping, "depth", 0) + 1
            try:
                self._execute(op, reraise=True)
            finally:
                self._helping.depth -= 1
                self._lock.acquire()
            return
        if deadline is None:
            self._done_cv.wait()
            return
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"engine: timed out waiting for {what}")
        self._done_cv.wait(left)

    def wait(self, var: Var, timeout: float | None = None) -> None:
        if type(var) is not Var:
            raise TypeError(f"wait() needs a Var, not {type(var).__name__}")
        with self._lock:
            if var._writing or var._queue:
                marker = EngineOp(None, (var,), (), (), "wait", None, False, 0)
                if var._queue is None:
                    var._queue = deque()
                var._queue.append((marker, False))
                deadline = None if timeout is None else time.monotonic() + timeout
                self._waiters += 1
                try:
                    while not marker.done:
                        self._help_or_sleep(deadline, f"{var!r}")
                finally:
                    self._waiters -= 1
            self._raise_var_error(var)

    def wait_all(self, timeout: float | None = None) -> None:
        if threading.current_thread() in self._threads or getattr(self._helping, "depth", 0):
            raise RuntimeError("wait_all() called from inside an engine op would wait for that "
                               "op itself; wait for the specific vars it needs instead")
        with self._lock:
            deadline = None if timeout is None else time.monotonic() + timeout
            self._waiters += 1
            try:
                while self._pending:
                    self._help_or_sleep(deadline, f"all ops ({self._pending} pending)")
            finally:
                self._waiters -= 1
            self._raise_unreported()

    def pending(self) -> int:
        """Ops pushed and not yet completed."""
        return self._pending


def _grant_write(v: Var, ready: deque[EngineOp]) -> None:
    """Give ``v`` to the write at the head of its queue (lock held): the op inherits the var's
    failure if it also reads ``v``, and is ready once it holds all its vars."""
    nxt = v._queue.popleft()[0]
    v._writing = True
    if v._error is not None and nxt.rw and v in nxt.rw:
        nxt.inherit(v._error)
    nxt.pending -= 1
    if nxt.pending == 0:
        ready.append(nxt)


def default_workers() -> int:
    """Worker threads for :class:`ThreadedEngine`: ``TDFLOW_ENGINE_WORKERS``, else cores - 1 (>= 1)."""
    env = os.environ.get("TDFLOW_ENGINE_WORKERS")
    if env:
        try:
            n = int(env)
        except ValueError:
            raise ValueError(f"TDFLOW_ENGINE_WORKERS must be an integer, got {env!r}") from None
        if n < 1:
            raise ValueError(f"TDFLOW_ENGINE_WORKERS must be >= 1, got {n}")
        return n
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, cores - 1)
