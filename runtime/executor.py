"""Run an ``ExecutablePlan``: allocate its buffers once, then call kernels in order.

Loading a plan (``Executor(plan, kernel_table)``) allocates every internal buffer, makes the
views each launch sees (a reused buffer may be larger than the value it holds), binds each
launch's kernel and attributes once, and runs the prologue (constants). A call then only
checks its arguments, allocates fresh result arrays, and loops over prebuilt launches, so the
per-launch cost is one Python call into the kernel.

Two ways to run the launches:

* **direct** (the fast path): a tight loop on the calling thread. Used when the engine is the
  naive one, when the plan is small, or when its launches form a chain (nothing to overlap).
* **engine**: each launch is pushed with the buffers it reads and writes; independent launches
  may overlap, and failures surface at the wait with the op's name and location.

Results are fresh arrays owned by the caller (never views of the plan's buffers), so a later
call does not overwrite them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from tdflow.dialect.types import DTYPES
from tdflow.lowering.plan import ExecutablePlan, Launch
from tdflow.runtime.kernels._util import mark_constant
from tdflow.runtime.kernels._util import settle as _settle

from tdflow.core.errors import TdflowError

from . import tracing as _tracing
from .arguments import ArgumentError, bind_arguments, type_text
from .plan_codes import plan_codes

if TYPE_CHECKING:
    from .engine import Engine

__all__ = ["ArgumentError", "Executor", "KernelFailure", "aligned_empty", "bound_kernel",
           "dead_inputs", "unused_outputs", "without_outputs"]

#: Where a plan's CPU buffers start: on a cache line. A streaming pass over an array that
#: starts 16 bytes past one splits its vector loads across lines: ``w -= lr * g`` over 784x256
#: f32 took 41 us with ``g`` there against 35 us aligned (malloc gives 16-byte alignment, so
#: which one a plan got varied from process to process).
ALIGN = 64
# (Results, allocated per call, stay np.empty's: aligning them costs each call ~1 us and a larger
# request, which malloc may serve from other memory than the block of that size just freed; the
# value_and_grad column measured no better with them, so they were left out.)


def aligned_empty(shape: tuple[int, ...], dtype: Any, align: int = ALIGN) -> np.ndarray:
    """``np.empty(shape, dtype)`` whose data starts at a multiple of ``align`` bytes (a
    contiguous view into a slightly larger byte buffer).

    >>> a = aligned_empty((3, 5), np.float32)
    >>> a.ctypes.data % 64, a.shape, a.dtype.name, a.flags.c_contiguous
    (0, (3, 5), 'float32', True)
    """
    dt = np.dtype(dtype)
    if align <= 1:
        return np.empty(shape, dt)
    n = dt.itemsize * int(np.prod(shape, dtype=np.int64))
    raw = np.empty(n + align, np.uint8)
    off = -raw.ctypes.data % align
    return raw[off:off + n].view(dt).reshape(shape)

class KernelFailure(TdflowError, RuntimeError):
    """A kernel raised while running a plan; names the op and its source location."""

    def __init__(self, launch: Launch, original: BaseException):
        # imported when a kernel fails: it imports sysconfig and traceback (start-up of `run`)
        from tdflow.dialect.user_code import raised_at

        self.launch = launch
        self.original = original
        super().__init__(f"'{launch.op}' at {launch.loc} (kernel {launch.kernel}) failed"
                         f"{raised_at(original)}: {type(original).__name__}: {original}")

    def render(self) -> str:
        return f"{self.launch.loc}: error: {self}"


class Executor:
    """A loaded plan, callable with numpy arrays; see the module docstring.

    ``resolve(kernel_id)`` returns the kernel's function, called as the kernel registry's
    convention says: ``fn(attrs, inputs, outs) -> list of arrays`` with preallocated ``outs``.
    A kernel that returns new arrays instead of filling ``outs`` is copied into them.
    """

    def __init__(self, plan: ExecutablePlan, resolve: Callable[[str], Callable[..., Any]],
                 *, mode: str = "auto", engine: Engine | None = None, backend: Any = None):
        if mode not in ("auto", "direct", "engine"):
            raise ValueError(f"mode must be 'auto', 'direct' or 'engine', not {mode!r}")
        self.plan = plan
        self._lock = threading.Lock()
        self._arg_index = {a.name: i for i, a in enumerate(plan.arguments)}
        self._arg_specs = [(a.shape, DTYPES[a.dtype]) for a in plan.arguments]
        self._arg_names = tuple(a.name for a in plan.arguments)
        dyn: dict[int, int] = {}  # buffer id -> index into the per-call dynamic list
        for i, a in enumerate(plan.arguments):
            dyn.setdefault(a.buffer, i)
        n_args = len(plan.arguments)
        self._result_slots: list[int] = []
        self._result_specs: list[tuple[tuple[int, ...], np.dtype]] = []
        self._result_copy: list[int] = []  # results that are an argument or a constant
        pinned = {a.buffer for a in plan.arguments}
        for r in plan.results:
            if r.buffer in dyn or r.buffer in pinned or r.buffer in self._prologue_buffers():
                self._result_copy.append(len(self._result_slots))
                self._result_slots.append(dyn.get(r.buffer, -1 - r.buffer))
            else:
                dyn[r.buffer] = n_args + len(self._result_specs)
                self._result_slots.append(dyn[r.buffer])
            self._result_specs.append((r.shape, DTYPES[r.dtype]))

        # a GPU device's buffers come from its backend (numpy arrays for cudasim, device
        # memory for cuda, whose arguments and results are then copied in and out per call)
        gpu = backend is not None and backend.name != "cpu"
        self._backend = backend if gpu else None
        self._device_memory = gpu and not getattr(backend, "host_memory", True)
        alloc = backend.allocate if gpu else (lambda shape, dt: aligned_empty(shape, DTYPES[dt]))
        storage = {b.id: alloc(b.shape, b.dtype) for b in plan.buffers if b.id not in dyn}
        self._storage = storage

        def view(buf: int, shape: tuple[int, ...]) -> np.ndarray:
            base = storage[buf]
            if base.shape == shape:
                return base
            if not isinstance(base, np.ndarray):
                return base.view(shape)  # a DeviceArray: its first elements
            n = int(np.prod(shape, dtype=np.int64))
            return base.reshape(-1)[:n].reshape(shape)

        dtypes = {b.id: DTYPES[b.dtype] for b in plan.buffers}
        # per launch, the buffers whose value dies there and that the kernel may overwrite
        consts = self._prologue_buffers()
        kept = {*dyn, *pinned, *consts}
        dead = dead_inputs(plan.launches, kept)
        unused = unused_outputs(plan.launches, kept)

        def prepare(ln: Launch, dead: frozenset[int] = frozenset(),
                    unused: frozenset[int] = frozenset()
                    ) -> tuple[Callable[..., Any], list[Any], list[Any], tuple]:
            fn = resolve(ln.kernel)
            if ln.tile:
                fn = _tiled(fn, ln.tile)
            elif not gpu:
                fn = without_outputs(fn, ln, dtypes, unused) or bound_kernel(
                    fn, ln, dtypes, frozenset(i for i, b in enumerate(ln.inputs) if b in dead))
            ins = [None if b in dyn else view(b, s) for b, s in zip(ln.inputs, ln.input_shapes)]
            outs = [None if b in dyn else view(b, s)
                    for b, s in zip(ln.outputs, ln.output_shapes)]
            patches = tuple([(0, i, dyn[b]) for i, b in enumerate(ln.inputs) if b in dyn]
                            + [(1, i, dyn[b]) for i, b in enumerate(ln.outputs) if b in dyn])
            return fn, ins, outs, patches

        self._launches = [prepare(ln, d, u) for ln, d, u in zip(plan.launches, dead, unused)]
        if not gpu:  # constant operands: a kernel may keep what it derives from them
            for ln, (_, ins, _, _) in zip(plan.launches, self._launches):
                for b, a in zip(ln.inputs, ins):
                    if b in consts and isinstance(a, np.ndarray):
                        mark_constant(a)
        # the dead inputs each bound kernel does overwrite: the engine orders those writes
        self._overwrites = [tuple(ln.inputs[i] for i in getattr(fn, "overwrites", ()))
                            for ln, (fn, *_) in zip(plan.launches, self._launches)]
        # The direct loop's work list: one flat tuple per launch, nothing looked up per call.
        self._steps = [(fn, ln.attrs, ins, outs, patches, ln, len(outs) > 1)
                       for ln, (fn, ins, outs, patches) in zip(plan.launches, self._launches)]
        # What call_plain compares (per argument its shape tuple and dtype object; numpy's
        # dtypes are shared objects, so an identity test mostly answers) and its loop's work,
        # laid out at load: every argument/result position of every launch in one flat list
        # (one loop, not one per launch) and the launches without patches.
        self._arg_checks = tuple((tuple(s), d) for s, d in self._arg_specs)
        self._plain_patches = [(outs if side else ins, i, d)
                               for _, _, ins, outs, patches, _, _ in self._steps
                               for side, i, d in patches]
        self._plain_steps = [(fn, attrs, ins, outs, ln, several)
                             for fn, attrs, ins, outs, _, ln, several in self._steps]
        if gpu and hasattr(backend, "prepare"):
            backend.prepare(plan_codes(plan, resolve))  # one compiler call for the whole plan
        for ln, (fn, ins, outs, _) in zip(plan.prologue, map(prepare, plan.prologue)):
            self._call(ln, fn, ins, outs)
        self._direct = self._choose_direct(mode, engine)
        self._engine = engine
        # call_plain's own loop serves a CPU plan run directly whose results are this call's
        # fresh arrays (no argument or constant among them, which run() copies)
        self._plain_loop = (self._direct and not gpu and not self._result_copy
                            and all(s >= 0 for s in self._result_slots))
        self._plain_none: Callable[..., Any] | None = None

    def _prologue_buffers(self) -> set[int]:
        return {b for ln in self.plan.prologue for b in ln.outputs}

    def _choose_direct(self, mode: str, engine: Any) -> bool:
        if mode != "auto":
            return mode == "direct"
        # GPU launches are asynchronous (cuda) or simulated: nothing to overlap. On the CPU,
        # pushed one by one from this thread, a plan's launches run inline, one after the other,
        # on any engine (an op alone in the engine runs where it is pushed: runtime/engine): the
        # engine would add its bookkeeping and nothing else, and the loop below runs the kernels
        # bound at load. ResNet graph step: 1.57x torch CPU through the engine, 1.37x direct
        # (docs/benchmarks.md, "Issue 23, ResNet convolutions"). mode="engine" still pushes.
        return True

    @staticmethod
    def _call(ln: Launch, fn: Callable[..., Any], ins: list, outs: list) -> None:
        try:
            _settle(fn(ln.attrs, ins, outs), outs, fn)
        except Exception as exc:  # noqa: BLE001 - re-raised with the op's name and location
            raise KernelFailure(ln, exc) from exc

    # -- calling -------------------------------------------------------------------------------
    def bind_arguments(self, args: Sequence[Any], kwargs: dict[str, Any]) -> list[np.ndarray]:
        """Check and order the arguments; ``ArgumentError`` naming the bad one."""
        plan = self.plan
        values = args
        if kwargs and len(args) + len(kwargs) == len(self._arg_specs):
            # Keywords naming exactly the trailing arguments in order (value_and_grad's seeds)
            # take the fast path too: the generic binder costs ~10x the check below.
            if tuple(kwargs) == self._arg_names[len(args):]:
                values = (*args, *kwargs.values())
        if not kwargs or values is not args:
            plain = self.plain_arguments(values)
            if plain is not None:
                return plain
        return bind_arguments(plan.name, [(a.name, a.shape, a.dtype) for a in plan.arguments],
                              args, kwargs)

    def plain_arguments(self, values: Sequence[Any]) -> list[np.ndarray] | None:
        """``values`` as the argument list when they are numpy arrays of exactly the
        arguments' types, in order (the fast path of :meth:`bind_arguments`); else ``None``."""
        if len(values) != len(self._arg_specs):
            return None
        for v, (shape, dt) in zip(values, self._arg_specs):
            if type(v) is not np.ndarray or v.shape != shape or v.dtype != dt:
                return None
        return list(values)

    def call_plain(self, values: Sequence[Any]) -> Any:
        """The call's result (one array, or a tuple of several) when ``values`` are numpy
        arrays of exactly the arguments' types, in order; ``None`` otherwise (then bind them
        with :meth:`bind_arguments`, which names what is wrong). A training loop's call.

        >>> import numpy as np
        >>> import tdflow
        >>> ex = tdflow.compile('func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\\n'
        ...     '  %0 = "tdflow.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>\\n'
        ...     '  return %0 : tensor<2xf32>\\n}').executor
        >>> ex.call_plain((np.array([-1, 2], np.float32),)).tolist(), ex.call_plain((np.ones(2),))
        ([0.0, 2.0], None)
        """
        if self._plain_none is None:
            self._plain_none = self.plain_caller(_nothing)
        return self._plain_none(*values)

    def plain_caller(self, otherwise: Callable[[tuple, dict], Any]) -> Callable[..., Any]:
        """``call(*args, **kwargs)``: the plan's result (one array, or a tuple of several) for
        positional numpy arrays of exactly the arguments' types, else ``otherwise(args,
        kwargs)`` (the general binder, which names what is wrong). The check and the direct
        loop run in this one frame, on values looked up here, once: a compiled program's
        call goes from the caller to its first launch through no other Python frame.

        >>> import numpy as np
        >>> import tdflow
        >>> ex = tdflow.compile('func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\\n'
        ...     '  %0 = "tdflow.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>\\n'
        ...     '  return %0 : tensor<2xf32>\\n}').executor
        >>> call = ex.plain_caller(lambda args, kwargs: "not plain")
        >>> call(np.array([-1, 2], np.float32)).tolist(), call(np.ones(2)), call(x=1)
        ([0.0, 2.0], 'not plain', 'not plain')
        """
        checks = self._arg_checks
        n_args = len(checks)
        patches, steps, run = self._plain_patches, self._plain_steps, self.run
        # the lock's bound methods, not ``with``: ~0.07 us a call less (measured, thread CPU)
        acquire, release = self._lock.acquire, self._lock.release
        ndarray, empty = np.ndarray, np.empty
        specs = self._result_specs
        one = specs[0] if len(specs) == 1 else None
        # own loop: results are fresh arrays right after the arguments (slots n_args, ...)
        own_loop = self._plain_loop and bool(specs)

        def call(*args: Any, **kwargs: Any) -> Any:
            if kwargs or len(args) != n_args:
                return otherwise(args, kwargs)
            for v, (shape, dt) in zip(args, checks):
                if type(v) is not ndarray or v.shape != shape or (
                        v.dtype is not dt and v.dtype != dt):
                    return otherwise(args, kwargs)
            if not own_loop or _tracing.active is not None:
                results = run(list(args))
                return results[0] if len(results) == 1 else tuple(results)
            if one is not None:
                dynamic = (*args, empty(*one))
            else:
                dynamic = (*args, *[empty(s, d) for s, d in specs])
            acquire()
            try:
                for where, i, d in patches:
                    where[i] = dynamic[d]
                for fn, attrs, ins, outs, ln, several in steps:
                    try:
                        got = fn(attrs, ins, outs)
                        # a bound kernel may return ``outs`` itself: filled, nothing to check
                        if got is not outs and outs and (
                                several or type(got) is not list or len(got) != 1
                                or got[0] is not outs[0]):
                            _settle(got, outs, fn)
                    except Exception as exc:  # noqa: BLE001
                        raise KernelFailure(ln, exc) from exc
            finally:
                release()
            return dynamic[n_args] if one is not None else dynamic[n_args:]

        return call

    def _signature(self) -> str:
        return ", ".join(f"%{a.name}: {type_text(a.shape, a.dtype)}"
                         for a in self.plan.arguments)

    def run(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        """Run the plan on checked arguments (as from ``bind_arguments``); returns results."""
        if self._device_memory:
            be = self._backend
            dynamic = [be.from_numpy(a) for a in arrays] + [be.allocate(s, d)
                                                             for s, d in self._result_specs]
        else:
            dynamic = arrays + [np.empty(s, d) for s, d in self._result_specs]
        if self._direct and _tracing.active is not None:  # a profile is recording
            with self._lock:
                self._run_traced(dynamic, _tracing.active)
        elif self._direct:
            with self._lock:
                for fn, attrs, ins, outs, patches, ln, several in self._steps:
                    for side, i, d in patches:
                        (outs if side else ins)[i] = dynamic[d]
                    try:
                        got = fn(attrs, ins, outs)
                        # a bound kernel may return ``outs`` itself: filled, nothing to check
                        if got is not outs and outs and (
                                several or type(got) is not list or len(got) != 1
                                or got[0] is not outs[0]):
                            _settle(got, outs, fn)
                    except Exception as exc:  # noqa: BLE001
                        raise KernelFailure(ln, exc) from exc
        else:
            with self._lock:  # the plan's buffers serve one call at a time
                self._run_on_engine(dynamic)
        if self._device_memory:
            return [self._backend.to_numpy(self._storage[-1 - slot] if slot < 0
                                           else dynamic[slot]) for slot in self._result_slots]
        results = []
        for k, slot in enumerate(self._result_slots):
            if slot < 0:
                results.append(self._storage[-1 - slot].copy())
            elif k in self._result_copy:
                results.append(np.array(dynamic[slot], copy=True))
            else:
                results.append(dynamic[slot])
        return results

    def _run_traced(self, dynamic: list[Any], rec: _tracing.Recorder) -> None:
        """The direct loop with each launch timed as a slice (only while profiling)."""
        for fn, _attrs, ins, outs, patches, ln, _ in self._steps:
            for side, i, d in patches:
                (outs if side else ins)[i] = dynamic[d]
            start = _tracing._clock()
            self._call(ln, fn, ins, outs)
            if self._backend is not None:
                self._backend.synchronize()  # a GPU launch is asynchronous: time its work
            rec.record(ln.op, "launch", start, _tracing._clock(), self.launch_args(ln))

    def launch_args(self, ln: Launch) -> dict[str, Any]:
        """What a profile shows of a launch: kernel, location, shapes, dtypes and bytes."""
        dtypes = getattr(self, "_dtypes", None)
        if dtypes is None:
            dtypes = self._dtypes = {b.id: b.dtype for b in self.plan.buffers}
        nbytes = 0
        for bufs, shapes in ((ln.inputs, ln.input_shapes), (ln.outputs, ln.output_shapes)):
            for b, shape in zip(bufs, shapes):
                if b is not None:
                    nbytes += int(np.prod(shape, dtype=np.int64)) * DTYPES[dtypes[b]].itemsize
        return {"kernel": ln.kernel, "loc": ln.loc,
                "inputs": [type_text(s, dtypes[b]) for b, s in zip(ln.inputs, ln.input_shapes)
                           if b is not None],
                "outputs": [type_text(s, dtypes[b])
                            for b, s in zip(ln.outputs, ln.output_shapes)],
                "bytes": nbytes}

    def _run_on_engine(self, dynamic: list[np.ndarray]) -> None:
        eng = self._engine
        rec = _tracing.active
        vars_: dict[int, Any] = {}

        def var(b: int) -> Any:
            v = vars_.get(b)
            if v is None:
                v = vars_[b] = eng.new_var(f"buf{b}")
            return v

        for ln, (fn, ins, outs, patches), dead in zip(self.plan.launches, self._launches,
                                                      self._overwrites):
            ins, outs = list(ins), list(outs)
            for side, i, d in patches:
                (outs if side else ins)[i] = dynamic[d]

            def work(fn=fn, ins=ins, outs=outs, attrs=ln.attrs) -> None:
                _settle(fn(attrs, ins, outs), outs, fn)

            if rec is not None:
                work = rec.wrap(work, ln.op, None, self.launch_args(ln))
            written = (*ln.outputs, *dead)  # a dead input the kernel may overwrite
            eng.push(work, reads=tuple(var(b) for b in dict.fromkeys(ln.inputs)
                                       if b not in written),
                     writes=tuple(var(b) for b in dict.fromkeys(written)),
                     name=ln.op, loc=ln.loc)
        # Vars live for one call, so the next call must not start before this one ends; wait
        # for this call's buffers only (other work on the engine goes on).
        try:
            for v in vars_.values():
                eng.wait(v)
        except Exception as exc:  # noqa: BLE001 - the engine names the op; we add the launch
            for ln in self.plan.launches:
                if ln.op == getattr(exc, "op_name", None) and ln.loc == getattr(exc, "loc", None):
                    raise KernelFailure(ln, getattr(exc, "original", exc)) from exc
            raise


def _nothing(args: tuple, kwargs: dict) -> None:
    """:meth:`Executor.call_plain`'s answer for arguments the fast path does not take."""
    return None


def dead_inputs(launches: Sequence[Launch], kept: set[int]) -> list[frozenset[int]]:
    """Per launch, the input buffers whose value no later launch reads and that hold no
    argument, result or constant (``kept``), read once by the launch and not written by it:
    the kernel may use them as scratch (``sgd_update`` scales its gradient in place there,
    as a hand-written step does, instead of allocating a temporary).

    >>> from tdflow.lowering.plan import Launch
    >>> dead_inputs([Launch("k", (0,), (1,), {}, "a", ""), Launch("k", (1, 0), (2,), {}, "b", "")],
    ...             kept={0, 2})
    [frozenset(), frozenset({1})]
    """
    last: dict[int, int] = {}
    for k, ln in enumerate(launches):
        for b in ln.inputs:
            last[b] = k
    return [frozenset(b for b in ln.inputs if last[b] == k and b not in kept
                      and ln.inputs.count(b) == 1 and b not in ln.outputs)
            for k, ln in enumerate(launches)]


def unused_outputs(launches: Sequence[Launch], kept: set[int]) -> list[frozenset[int]]:
    """Per launch, the indices of its outputs whose value nothing reads: no later launch
    reads the buffer before another writes it again, and it holds no argument, result or
    constant (``kept``). A kernel may leave such an output unwritten (:func:`without_outputs`).

    >>> from tdflow.lowering.plan import Launch
    >>> unused_outputs([Launch("k", (0,), (1, 2), {}, "a", ""),
    ...                 Launch("k", (1,), (2,), {}, "b", "")], kept={0, 2})
    [frozenset(), frozenset()]
    >>> unused_outputs([Launch("k", (0,), (1, 2), {}, "a", ""),
    ...                 Launch("k", (1,), (2,), {}, "b", "")], kept={0})
    [frozenset({1}), frozenset({0})]
    """
    read_next: dict[int, bool] = {}  # buffer -> whether its next access (later on) is a read
    res: list[frozenset[int]] = []
    for ln in reversed(launches):
        res.append(frozenset(i for i, b in enumerate(ln.outputs)
                             if b not in kept and not read_next.get(b, False)
                             and b not in ln.inputs))
        for b in ln.outputs:
            read_next[b] = False
        for b in ln.inputs:
            read_next[b] = True
    return res[::-1]


def without_outputs(fn: Callable[..., Any], ln: Launch, dtypes: dict[int, np.dtype],
                    unused: frozenset[int]) -> Callable[..., Any] | None:
    """``fn`` specialised for a launch some of whose outputs nothing reads (``unused``, their
    indices): a kernel function may carry ``bind_unused(attrs, in_specs, out_specs, unused)``
    returning a function of the kernel's signature that computes the other outputs with the
    same arithmetic and leaves those unwritten (``max_pool_2d``'s indices, which an ONNX
    ``MaxPool`` without its second output never reads), or ``None``; then (and without
    ``unused``) ``None`` here, and the caller binds as usual (:func:`bound_kernel`).

    >>> from tdflow.lowering.plan import Launch
    >>> without_outputs(print, Launch("k", (0,), (1,), {}, "op", ""), {}, frozenset({0})) is None
    True
    """
    bind = getattr(fn, "bind_unused", None)
    if bind is None or not unused:
        return None
    ins = [None if b is None else (tuple(s), dtypes[b])
           for b, s in zip(ln.inputs, ln.input_shapes)]
    outs = [(tuple(s), dtypes[b]) for b, s in zip(ln.outputs, ln.output_shapes)]
    return bind(ln.attrs, ins, outs, unused)


def bound_kernel(fn: Callable[..., Any], ln: Launch, dtypes: dict[int, np.dtype],
                 dead: frozenset[int] = frozenset()) -> Callable[..., Any]:
    """``fn`` specialised for one launch when the kernel offers it: a kernel function may
    carry ``bind(attrs, in_specs, out_specs, dead)``, called once when the plan is loaded
    with the ``(shape, dtype)`` of each operand (``None`` for an absent one) and the indices
    of the inputs it may overwrite (:func:`dead_inputs`), returning a function of the
    kernel's signature that runs this launch's case with the same arithmetic (so the same
    values) and without the checks a general call needs, or ``None`` (then ``fn`` runs);
    the function lists in its ``overwrites`` attribute the dead inputs it does write, and may
    return the ``outs`` list itself once it has filled it (the direct loop then checks nothing).
    The shapes and types of a plan's operands are fixed, so they are checked here once.

    >>> import numpy as np
    >>> from tdflow.lowering.plan import Launch
    >>> def twice(attrs, ins, outs):
    ...     return [np.multiply(ins[0], 2, out=outs[0])]
    >>> twice.bind = lambda attrs, ins, outs, dead: (
    ...     lambda a, i, o: [np.add(i[0], i[0], out=o[0])])
    >>> ln = Launch("k", (0,), (1,), {}, "op", "loc", input_shapes=((2,),),
    ...             output_shapes=((2,),))
    >>> f = bound_kernel(twice, ln, {0: np.dtype("f4"), 1: np.dtype("f4")})
    >>> f({}, [np.ones(2, np.float32)], [np.empty(2, np.float32)])[0].tolist()
    [2.0, 2.0]
    """
    bind = getattr(fn, "bind", None)
    if bind is None:
        return fn
    ins = [None if b is None else (tuple(s), dtypes[b])
           for b, s in zip(ln.inputs, ln.input_shapes)]
    outs = [(tuple(s), dtypes[b]) for b, s in zip(ln.outputs, ln.output_shapes)]
    fast = bind(ln.attrs, ins, outs, dead)
    return fn if fast is None else fast


def _tiled(fn: Callable[..., Any], tile: int) -> Callable[..., Any]:
    """Run an elementwise kernel over slices of ``tile`` elements (all operands one shape).

    Falls back to one call when an operand is not C-contiguous (its flat view would copy).
    """

    def run(attrs: Any, ins: list[np.ndarray], outs: list[np.ndarray]) -> list[np.ndarray]:
        for a in (*ins, *outs):
            if not a.flags.c_contiguous:
                return fn(attrs, ins, outs)
        flat_in = [a.reshape(-1) for a in ins]
        flat_out = [o.reshape(-1) for o in outs]
        for start in range(0, flat_out[0].size, tile):
            stop = start + tile
            part = [o[start:stop] for o in flat_out]
            _settle(fn(attrs, [a[start:stop] for a in flat_in], part), part, fn)
        return outs

    return run
