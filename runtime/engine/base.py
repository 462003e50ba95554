"""The engine's core: variables, pushed ops, the :class:`Engine` interface and the failure
bookkeeping both engines share. The semantics are in :mod:`tdflow.runtime.engine`."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable

from tdflow.core.errors import TdflowError

__all__ = ["BLAS_OP_NAMES", "INLINE_COST", "MAX_UNREPORTED", "NOW_COST", "Engine", "EngineError",
           "EngineOp", "Var", "dedup_deps", "run_op"]

#: Ops whose estimated cost (about one unit per element or multiply-add) is at most this run
#: inline on the pushing thread when their dependencies are already satisfied; costlier ones
#: too when nothing else is in flight (see :mod:`tdflow.runtime.engine`).
INLINE_COST = 1 << 16
#: Pure kernels at most this costly may run at once under the engine's lock
#: (:meth:`Engine.run_now`): a few microseconds, so nobody waits long for the lock.
NOW_COST = 1 << 12
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
        engine = self._engine
        if engine is None:  # made as Var(name): which engine's ops it orders is not known
            raise TypeError(f"{self!r} was made without an engine; wait with engine.wait(var), "
                            f"or make vars with engine.new_var()")
        engine.wait(self)

    @property
    def failed(self) -> bool:
        return self._error is not None

    def __repr__(self) -> str:
        state = "failed" if self._error is not None else (
            "writing" if self._writing else f"reads={self._reads}")
        return f"Var({self.name!r}, v{self.version}, {state})"


class EngineOp:
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


def dedup_deps(reads: Iterable[Var], writes: Iterable[Var]
           ) -> tuple[tuple[Var, ...], tuple[Var, ...], tuple[Var, ...]]:
    """``(reads, writes, rw)``: duplicates dropped; a var both read and written moves to
    ``writes`` (a write covers the read) and is listed in ``rw``.

    >>> a, b = Var("a"), Var("b")
    >>> dedup_deps((a, b, a), (b,)) == ((a,), (b,), (b,))
    True
    """
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

    def run_now(self, fn: Callable[[object, object], object], ins: object, out: object,
                tensors: Iterable) -> bool:
        """Run ``fn(ins, out)`` on the calling thread right now, as one atomic step, when no
        pushed op is pending on ``tensors`` (the tensors ``fn`` reads: each one's ``_sync`` is
        ``None``, nothing pushed on it, or an idle :class:`Var`); ``False``, having run
        nothing, when one is busy, failed or has another owner's hook, when ``fn`` raised, or
        when this engine has no such path.

        For the eager hot path (a tiny op on ready inputs): no var for the result, no op
        record, one lock round trip. ``fn`` must be pure and quick: it runs with the engine
        held (an op it pushed would deadlock), and a failure is left for the caller to push
        normally, so the failure surfaces like any op's (``fn`` runs again then). The
        ``_sync`` fields are read under the lock: a var another thread attaches and writes
        meanwhile is seen.
        """
        return False

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


def run_op(op: EngineOp) -> tuple[EngineError | None, bool, BaseException | None]:
    """Run one op unless it inherited a failure (both engines run their ops through it).

    Returns ``(error for its writes, whether that error is new, exception to re-raise)``.

    >>> err, fresh, fatal = run_op(EngineOp(lambda: 1 / 0, (), (), (), "div", None, False, 1))
    >>> type(err.original).__name__, fresh, fatal
    ('ZeroDivisionError', True, None)
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
