"""The dependency engine: MXNet's design, in Python.

Work is pushed as an *op*: a callable plus the variables it reads and the variables it writes.
The engine runs ops as soon as their dependencies allow, and never in an order a program could
observe as different from push order:

* reads of one variable may run together;
* a write runs after every earlier read and write of its variables (RAW, WAR, WAW), and every
  later op on those variables waits for it;
* an op that raises marks the variables it writes as *failed* (their values are poison); ops
  that later read a failed variable do not run and pass the failure on to what they write; an
  op that overwrites a failed variable without reading it runs, and its success clears the
  failure. A failure surfaces at every ``wait`` on a failed variable, and once at the next
  ``wait_all`` (unless a ``wait`` reported it first), as an :class:`EngineError` naming the
  failing op and its location, chained (``__cause__``) to the original exception.

Each variable keeps a FIFO queue of the ops waiting on it (MXNet's ``ThreadedVar``); an op
holds a counter of dependencies not yet granted, and runs when it reaches zero.

>>> eng = NaiveEngine()
>>> a, b = eng.new_var("a"), eng.new_var("b")
>>> box = {}
>>> eng.push(lambda: box.__setitem__("a", 2), reads=(), writes=(a,), name="init")
>>> eng.push(lambda: box.__setitem__("b", box["a"] * 21), reads=(a,), writes=(b,), name="mul")
>>> eng.wait(b); box["b"]
42

Threads and BLAS. :class:`ThreadedEngine` sizes its pool to the machine: ``os.cpu_count() - 1``
worker threads (at least one), because the calling thread works too: it runs ready tiny ops
inline at push time and helps drain the ready queue while it waits. On 2 cores that is one
worker plus the caller, never two workers. numpy's BLAS already spreads one large matmul over
every core, and a library cannot change BLAS's thread count after numpy is imported, so ops
pushed with ``uses_blas=True`` (or named in :data:`BLAS_OP_NAMES`) take a single *BLAS slot*:
at most one of them runs at a time, and it has all the cores to itself. ``TDFLOW_ENGINE_WORKERS`` overrides the pool size.

Tiny ops never pay a thread hand-off: an op whose dependencies are all granted at push time
runs inline on the calling thread when it is cheap (``cost`` below :data:`INLINE_COST`) or when
the engine is otherwise idle. Ops that become ready when another op completes are run by the
thread that completed it, in a loop, without waking anybody (bulk execution).
"""

from __future__ import annotations

import atexit
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable

from tdflow.core.errors import TdflowError

from . import tracing as _tracing

__all__ = [
    "INLINE_COST",
    "Engine",
    "EngineError",
    "NaiveEngine",
    "ThreadedEngine",
    "Var",
    "default_workers",
    "get_engine",
    "set_engine",
]

#: Ops whose estimated cost (about one unit per element or multiply-add) is at most this run
#: inline on the pushing thread when their dependencies are already satisfied.
INLINE_COST = 1 << 16
#: Ops whose CPU kernels call multi-threaded BLAS: ``push`` treats them as ``uses_blas=True``
#: even when the pusher (an executor replaying a plan) does not say so.
BLAS_OP_NAMES = frozenset({"tdflow.matmul", "tdflow.batch_matmul", "tdflow.conv2d",
                           "tdflow.conv_data_grad", "tdflow.conv_filter_grad"})
#: Failures kept for ``wait_all`` between two calls (older ones are only counted).
MAX_UNREPORTED = 64


class EngineError(TdflowError, RuntimeError):
    """An op pushed to the engine raised; carries the op's name and location.

    The original exception is ``__cause__`` (and ``original``).
    """

    def __init__(self, op_name: str | None, loc: object, original: BaseException, seq: int = 0):
        self.op_name = op_name
        self.seq = seq  # push order of the failing op: an op reading several failures gets
        # the earliest pushed one, whatever order the threads ran them in
        self.loc = loc
        self.original = original
        where = f" at {loc}" if loc is not None else ""
        who = repr(op_name) if op_name is not None else "<unnamed>"
        from tdflow.dialect.user_code import raised_at  # only when an op failed

        super().__init__(f"op {who}{where} failed{raised_at(original)}: "
                         f"{type(original).__name__}: {original}")
        self.__cause__ = original


class Var:
    """A variable tracked by the engine (a tensor's buffer, a parameter, a stream token).

    It holds no data; it orders the ops that read and write whatever it stands for.
    ``version`` counts the completed writes. Calling a var made by ``Engine.new_var`` waits
    for it (so a var can serve as a tensor's ``_sync``).
    """

    __slots__ = ("name", "version", "_reads", "_writing", "_queue", "_error", "_engine",
                 "__weakref__")

    def __init__(self, name: str | None = None, engine: Engine | None = None):
        self.name = name
        self._engine = engine
        self.version = 0
        self._reads = 0  # granted reads not yet completed
        self._writing = False  # a write has been granted and not completed
        self._queue: deque | None = None  # ops waiting on this var, in push order
        self._error: EngineError | None = None

    def __call__(self) -> None:
        """Wait for the pending writes of this var (raising its failure, if any)."""
        (self._engine or get_engine()).wait(self)

    @property
    def failed(self) -> bool:
        return self._error is not None

    def __repr__(self) -> str:
        state = "failed" if self._error is not None else (
            "writing" if self._writing else f"reads={self._reads}")
        return f"Var({self.name!r}, v{self.version}, {state})"


class _Op:
    """One pushed op: the function, its dependencies and the count of those not yet granted.

    ``rw`` lists the written vars the op also reads (a failure there poisons the op too).
    ``error`` is the failure it inherits from a var it reads, captured when the var is
    *granted*, so a later write or wait cannot change what an earlier-pushed op sees.
    """

    __slots__ = ("fn", "reads", "writes", "rw", "name", "loc", "pending", "blas", "done",
                 "error", "seq")

    def __init__(self, fn, reads, writes, rw, name, loc, blas, seq):
        self.fn = fn
        self.reads = reads
        self.writes = writes
        self.rw = rw
        self.name = name
        self.loc = loc
        self.pending = 1
        self.blas = blas
        self.done = False
        self.error: EngineError | None = None
        self.seq = seq

    def inherit(self, error: EngineError) -> None:
        """A var this op reads was failed when granted: keep the earliest-pushed failure."""
        if self.error is None or error.seq < self.error.seq:
            self.error = error


def _dedup(reads: Iterable[Var], writes: Iterable[Var]
           ) -> tuple[tuple[Var, ...], tuple[Var, ...], tuple[Var, ...]]:
    """``(reads, writes, rw)``: duplicates dropped; a var both read and written moves to
    ``writes`` (a write covers the read) and is listed in ``rw``."""
    reads = tuple(reads)
    writes = tuple(writes)
    for v in reads:
        if type(v) is not Var:
            raise TypeError(f"engine dependencies must be Var, not {type(v).__name__}")
    for v in writes:
        if type(v) is not Var:
            raise TypeError(f"engine dependencies must be Var, not {type(v).__name__}")
    if len(writes) > 1:
        writes = tuple(dict.fromkeys(writes))
    if len(reads) > 1:
        reads = tuple(dict.fromkeys(reads))
    rw: tuple[Var, ...] = ()
    if reads and writes:
        wset = set(writes)
        rw = tuple(v for v in reads if v in wset)
        if rw:
            reads = tuple(v for v in reads if v not in wset)
    return reads, writes, rw


class Engine:
    """The engine interface; see the module docstring for the semantics."""

    def new_var(self, name: str | None = None) -> Var:
        """A fresh variable with no pending ops."""
        return Var(name, self)

    def push(self, fn: Callable[[], object], reads: Iterable[Var] = (),
             writes: Iterable[Var] = (), device: str = "cpu", name: str | None = None,
             loc: object = None, *, cost: float | None = None, inline: bool | None = None,
             uses_blas: bool = False) -> None:
        """Schedule ``fn()`` after the ops it depends on through ``reads`` and ``writes``.

        ``name`` and ``loc`` (any object with a useful ``str``, e.g. ``"mlp.mlir:3:8"``) name the
        op in errors. ``device`` is accepted for MXNet's per-device worker pools; every op runs
        on the one CPU pool today (a CUDA launch is asynchronous on its stream anyway). ``cost`` estimates its work (elements or multiply-adds); ``inline`` forces
        (``True``) or forbids (``False``) running it on the calling thread when it is ready.
        ``uses_blas`` marks ops that call multi-threaded BLAS (see the module docstring).
        """
        raise NotImplementedError

    def push_one(self, fn: Callable[[], object], reads: tuple[Var, ...], write: Var,
                 name: str | None = None, cost: float | None = None,
                 uses_blas: bool = False) -> None:
        """``push(fn, reads, (write,), ...)`` for callers that guarantee ``reads`` is a tuple
        of distinct vars and ``write`` is not among them (eager calls: skips the checks)."""
        self.push(fn, reads, (write,), name=name, cost=cost, uses_blas=uses_blas)

    def wait(self, var: Var, timeout: float | None = None) -> None:
        """Block until every op pushed so far that writes ``var`` has completed.

        Raises the :class:`EngineError` of the failure that poisoned ``var``, every time until
        a successful overwrite. ``TimeoutError`` after ``timeout`` seconds. While it waits, the
        calling thread runs ready ops itself (it is one of the engine's threads), so the
        timeout is checked between ops.
        """
        raise NotImplementedError

    def wait_all(self, timeout: float | None = None) -> None:
        """Block until every pushed op has completed; raise the first failure not yet reported
        (by an earlier ``wait`` or ``wait_all``), with the others as a note.

        Not from inside an op: it would wait for that op itself (the threaded engine refuses
        with ``RuntimeError`` where it can tell; wait for the vars the op needs instead).
        """
        raise NotImplementedError

    # -- failure bookkeeping shared by both engines (called with the engine's lock held) --
    def _init_failures(self) -> None:
        self._unreported: list[EngineError] = []
        self._dropped = 0  # failures beyond MAX_UNREPORTED, counted but not kept
        self._seq = 0

    def _record(self, err: EngineError) -> None:
        """Keep a new failure for ``wait_all`` (bounded: tracebacks hold frames alive)."""
        if len(self._unreported) >= MAX_UNREPORTED:
            self._unreported.pop(0)
            self._dropped += 1
        self._unreported.append(err)

    def _raise_var_error(self, var: Var) -> None:
        err = var._error
        if err is not None:
            try:
                self._unreported.remove(err)
            except ValueError:
                pass
            raise err

    def _raise_unreported(self) -> None:
        errs = self._unreported
        dropped, self._dropped = self._dropped, 0
        self._unreported = []
        if errs:
            err = errs[0]
            more = len(errs) - 1 + dropped
            if more:
                _add_note(err, f"({more} more op(s) failed since the last wait_all: "
                             + ", ".join(repr(e.op_name) for e in errs[1:6])
                             + (", ..." if more > 5 else "") + ")")
            raise err


def _add_note(err: BaseException, note: str) -> None:
    if hasattr(err, "add_note"):  # Python >= 3.11
        err.add_note(note)
    else:
        err.__notes__ = [*getattr(err, "__notes__", []), note]  # type: ignore[attr-defined]


def _run_op(op: _Op) -> tuple[EngineError | None, bool, BaseException | None]:
    """Run one op unless it inherited a failure.

    Returns ``(error for its writes, whether that error is new, exception to re-raise)``.
    """
    if op.error is not None:
        return op.error, False, None
    try:
        op.fn()
    except Exception as e:  # an op's failure is data for its dependents
        return EngineError(op.name, op.loc, e, op.seq), True, None
    except BaseException as e:  # KeyboardInterrupt, SystemExit: record it, then let it fly
        return EngineError(op.name, op.loc, e, op.seq), True, e
    return None, False, None


class NaiveEngine(Engine):
    """Runs each op synchronously at push time (``TDFLOW_ENGINE=naive``); for debugging.

    Failures still surface at ``wait``/``wait_all``, exactly as with the threaded engine.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()  # an op may push more ops
        self._init_failures()

    def push(self, fn, reads=(), writes=(), device="cpu", name=None, loc=None, *,
             cost=None, inline=None, uses_blas=False) -> None:
        if _tracing.active is not None:  # a profile is recording: time this op
            fn = _tracing.active.wrap(fn, name, loc)
        reads, writes, rw = _dedup(reads, writes)
        with self._lock:
            self._seq += 1
            op = _Op(fn, reads, writes, rw, name, loc, uses_blas, self._seq)
            for v in reads + rw:
                if v._error is not None:
                    op.inherit(v._error)
            err, fresh, fatal = _run_op(op)
            if fresh:
                self._record(err)
            for v in writes:
                v._error = err
                v.version += 1
        if fatal is not None:
            raise fatal

    def push_one(self, fn, reads, write, name=None, cost=None, uses_blas=False) -> None:
        if _tracing.active is not None:
            fn = _tracing.active.wrap(fn, name, None)
        with self._lock:
            self._seq += 1
            err = None
            for v in reads:
                e = v._error
                if e is not None and (err is None or e.seq < err.seq):
                    err = e
            fatal = None
            if err is None:
                try:
                    fn()
                except Exception as e:
                    err = EngineError(name, None, e, self._seq)
                    self._record(err)
                except BaseException as e:
                    err = EngineError(name, None, e, self._seq)
                    self._record(err)
                    fatal = e
            write._error = err
            write.version += 1
        if fatal is not None:
            raise fatal

    def wait(self, var: Var, timeout: float | None = None) -> None:
        with self._lock:
            self._raise_var_error(var)

    def wait_all(self, timeout: float | None = None) -> None:
        with self._lock:
            self._raise_unreported()


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


# ---------------------------------------------------------------------------- the singleton
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

from .threaded_engine import ThreadedEngine  # noqa: E402  (it builds on the classes above)
