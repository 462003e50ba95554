"""``tdflow.distributed.compile``: an SBP program lowered per rank, called with logical arrays.

Each rank lowers the program with the SBP pipeline (``tdflow.lowering.sbp_pipeline(nproc,
rank)``: ``infer-sbp`` picks every value's SBP and inserts boxing ops, ``physicalize`` gives
the rank its physical shapes, then the usual passes) and runs its plan in ``mode="direct"``,
so each boxing kernel runs on the calling thread and finds that rank's communicator. A call
takes the *logical* arrays on every rank, keeps each rank's piece of every argument (by the
argument's SBP), and returns the logical results on every rank (the pieces gathered).

Called from a thread that is not a rank (no communicator installed, not under ``mpiexec``), a
program of ``nproc > 1`` ranks runs them as threads of this process
(:func:`~tdflow.distributed.threads.run_threads`); called on a rank, it is that rank's part.

>>> import numpy as np, tdflow.distributed as dist
>>> prog = dist.compile_physical(
...     lambda r: 'func.func @f(%x: tensor<2xf64>) -> tensor<2xf64> {\\n'
...               '  %y = "tdflow.relu"(%x) : (tensor<2xf64>) -> tensor<2xf64>\\n'
...               '  return %y : tensor<2xf64>\\n}',
...     nproc=2, arg_sbp=["S(0)"], result_sbp=["S(0)"], arg_shapes=[(4,)], result_shapes=[(4,)])
>>> prog(np.array([-1.0, 2.0, -3.0, 4.0])).tolist()
[0.0, 2.0, 0.0, 4.0]
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from tdflow.core.errors import TdflowError
from tdflow.dialect.sbp import NdSbp, Sbp, parse_sbp, physical_shape

from .comm import Communicator, current, use
from .layout import gather, shard
from .overlap import DEFAULT_BUCKET_BYTES, eligible, reducing

if TYPE_CHECKING:
    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.ir.core import FuncOp, Module


class DistributedError(TdflowError, ValueError):
    """A distributed call or compile with arguments that cannot work (names what and why)."""


def as_nd_sbp(spec: Any, ndim: int = 1) -> NdSbp:
    """An nd_sbp from ``"S(0)"``, ``"#sbp.B"``, an ``Sbp``, or a sequence of those.

    >>> as_nd_sbp("S(0)")
    (Sbp(kind='S', axis=0),)
    >>> [s.kind for s in as_nd_sbp(["S(0)", "B"])]
    ['S', 'B']
    """
    if isinstance(spec, (str, Sbp)):
        spec = [spec] * ndim
    return tuple(s if isinstance(s, Sbp) else parse_sbp(s) for s in spec)


@dataclass(frozen=True)
class Local:
    """An argument that is already this rank's piece (:func:`from_local`): not sharded again.

    >>> Local(np.zeros(1)).value.tolist()
    [0.0]
    """

    value: np.ndarray


def from_local(piece: Any) -> Local:
    """Mark ``piece`` as the calling rank's own piece of an argument (as a rank's data loader
    produces it), so a distributed program takes it as is.

    >>> from_local(np.zeros(2)).value.shape
    (2,)
    """
    return Local(np.asarray(piece))


def to_local(x: Any, sbp: Any, hierarchy: Sequence[int] | None = None,
             comm: Communicator | None = None) -> np.ndarray:
    """The calling rank's piece of the logical array ``x`` under ``sbp`` (1-D hierarchy of
    the group's size unless given).

    >>> to_local(np.arange(4), "S(0)").tolist()   # one rank: everything
    [0, 1, 2, 3]
    """
    comm = comm or current()
    hier = tuple(hierarchy) if hierarchy is not None else (comm.size,)
    return shard(np.asarray(x), as_nd_sbp(sbp, len(hier)), hier, comm.rank)


@dataclass
class RankPlan:
    """One rank's compiled program and the SBP contract of its arguments and results
    (:meth:`DistributedProgram.plan`; the example at the top of this module builds some)."""

    program: Any  # a CompiledProgram over the rank's physical arrays
    arg_sbp: list[NdSbp]
    result_sbp: list[NdSbp]
    arg_shapes: list[tuple[int, ...]]  # logical
    result_shapes: list[tuple[int, ...]]  # logical
    hierarchy: tuple[int, ...]
    #: the all-reduce launches that may overlap the rest of the plan (``overlap.eligible``)
    async_ids: list[int] = field(default_factory=list)


class DistributedProgram:
    """A program over ``nproc`` ranks; call it with logical arrays (or :func:`from_local`
    pieces), get the logical results (one array, or a tuple). ``plan(rank)`` is rank
    ``rank``'s :class:`RankPlan`; ``arguments`` the logical ``(name, shape, dtype)``.

    >>> DistributedProgram("f", 2, lambda r: None).nproc
    2
    """

    def __init__(self, name: str, nproc: int, build_rank: Callable[[int], RankPlan],
                 arguments: Sequence[tuple[str, Any, str]] = (),
                 bucket_bytes: int = DEFAULT_BUCKET_BYTES) -> None:
        self.__name__ = name
        self.nproc = nproc
        #: the size of a bucket of overlapped all-reduces (:mod:`.overlap`)
        self.bucket_bytes = bucket_bytes
        #: ``(name, logical shape, dtype)`` of each argument, as ``CompiledProgram.arguments``
        self.arguments = list(arguments)
        self._build_rank = build_rank
        self._plans: dict[int, RankPlan] = {}
        self._lock = threading.Lock()

    def plan(self, rank: int) -> RankPlan:
        """Rank ``rank``'s compiled program (lowered on first use)."""
        with self._lock:
            found = self._plans.get(rank)
        if found is None:
            found = self._build_rank(rank)
            with self._lock:
                self._plans[rank] = found
        return found

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            args = self._bind(args, kwargs)
        comm = current()
        if comm.size == 1 and self.nproc > 1:  # not on a rank: be all of them, as threads
            from .threads import run_threads

            return run_threads(lambda _r: self._call_rank(args, current()), self.nproc)[0]
        if comm.size != self.nproc:
            raise DistributedError(f"@{self.__name__} was compiled for {self.nproc} ranks but "
                                   f"runs in a group of {comm.size}")
        return self._call_rank(args, comm)

    def _bind(self, args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        names = [n for n, _, _ in self.arguments]
        bound = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names or k in bound:
                raise DistributedError(f"@{self.__name__}: unexpected or repeated argument "
                                       f"{k!r}; arguments: {', '.join(names)}")
            bound[k] = v
        missing = [n for n in names if n not in bound]
        if missing:
            raise DistributedError(f"@{self.__name__}: missing argument(s) {', '.join(missing)}")
        return tuple(bound[n] for n in names)

    def _call_rank(self, args: Sequence[Any], comm: Communicator) -> Any:
        rp = self.plan(comm.rank)
        if len(args) != len(rp.arg_sbp):
            raise DistributedError(f"@{self.__name__} takes {len(rp.arg_sbp)} arguments, "
                                   f"got {len(args)}")
        pieces = []
        for i, (a, sbp, shape) in enumerate(zip(args, rp.arg_sbp, rp.arg_shapes)):
            if isinstance(a, Local):
                pieces.append(a.value)
                continue
            a = np.asarray(a)
            if a.shape != tuple(shape):
                raise DistributedError(f"@{self.__name__}: argument #{i} has shape {a.shape}; "
                                       f"the program's logical shape is {tuple(shape)}")
            pieces.append(shard(a, sbp, rp.hierarchy, comm.rank))
        from .comm import MeshComm

        # a hierarchy of several axes: boxing ops find the ranks of their mesh axis through it
        with use(MeshComm(comm, rp.hierarchy) if len(rp.hierarchy) > 1 else comm), \
                reducing(rp.async_ids, self.bucket_bytes):
            out = rp.program(*pieces)
        out = list(out) if isinstance(out, tuple) else [out]
        logical = [gather(o, shape, sbp, rp.hierarchy, comm)
                   for o, sbp, shape in zip(out, rp.result_sbp, rp.result_shapes)]
        return logical[0] if len(logical) == 1 else tuple(logical)

    def __repr__(self) -> str:
        return f"<DistributedProgram @{self.__name__} on {self.nproc} ranks>"


def compile_physical(rank_source: Callable[[int], Any], nproc: int, arg_sbp: Sequence[Any],
                     result_sbp: Sequence[Any], arg_shapes: Sequence[Sequence[int]],
                     result_shapes: Sequence[Sequence[int]],
                     hierarchy: Sequence[int] | None = None, *, entry: str | None = None,
                     ops: Dialect | None = None, device: str = "cpu") -> DistributedProgram:
    """A distributed program from hand-written per-rank programs (``rank_source(rank)``: MLIR
    over the rank's physical shapes, boxing ops written out) and the SBP of its arguments
    and results (the example at the top of this module, and one rank here).

    >>> compile_physical(lambda r: 'func.func @f(%x: tensor<1xf64>) -> tensor<1xf64> {\\n'
    ...     '  return %x : tensor<1xf64>\\n}', 1, ["B"], ["B"], [(1,)], [(1,)])(np.ones(1))
    array([1.])
    """
    import tdflow

    hier = tuple(hierarchy) if hierarchy is not None else (nproc,)
    a_sbp = [as_nd_sbp(s, len(hier)) for s in arg_sbp]
    r_sbp = [as_nd_sbp(s, len(hier)) for s in result_sbp]

    def build(rank: int) -> RankPlan:
        prog = tdflow.compile(rank_source(rank), device, entry, mode="direct", ops=ops)
        return RankPlan(prog, a_sbp, r_sbp, [tuple(s) for s in arg_shapes],
                        [tuple(s) for s in result_shapes], hier)

    arguments = [(f"arg{i}", tuple(s), "") for i, s in enumerate(arg_shapes)]
    return DistributedProgram(entry or "main", nproc, build, arguments)


def compile(source: Any, nproc: int | None = None, comm: Communicator | None = None, *,  # noqa: A001
            entry: str | None = None, ops: Dialect | None = None, device: str = "cpu",
            search: str = "lookahead", overlap: bool = False,
            bucket_bytes: int = DEFAULT_BUCKET_BYTES) -> DistributedProgram:
    """Compile an SBP-annotated program for ``nproc`` ranks (default: the size of ``comm`` or
    of the calling rank's group). Arguments without an ``sbp`` attribute are broadcast;
    ``search`` is ``infer-sbp``'s (``"greedy"``: OneFlow's per-op choice); ``overlap``:
    all-reduces whose results only the caller reads (gradients) go in buckets of
    ``bucket_bytes`` while the plan goes on (:mod:`tdflow.distributed.overlap`; off by
    default: it needs a core free for the communication thread, see docs/benchmarks.md).

    >>> import numpy as np, tdflow.distributed as dist
    >>> prog = dist.compile('func.func @f(%x: tensor<5xf64> {sbp = [#sbp.S<0>]}) -> tensor<5xf64> {\\n'
    ...     '  %y = "tdflow.relu"(%x) : (tensor<5xf64>) -> tensor<5xf64>\\n'
    ...     '  return %y : tensor<5xf64>\\n}', nproc=2)
    >>> prog(np.array([-1.0, 2.0, -3.0, 4.0, 5.0])).tolist()
    [0.0, 2.0, 0.0, 4.0, 5.0]
    """
    import tdflow
    from tdflow.runtime.compiled import load_module

    if nproc is None:
        nproc = (comm or current()).size
    if not isinstance(nproc, int) or nproc < 1:
        raise DistributedError(f"nproc must be a positive integer, not {nproc!r}")
    from tdflow.runtime.backends import get_backend

    get_backend(device)  # an unavailable device is said now, not on the first call
    module = load_module(source)
    if not len(module):
        raise DistributedError("the program has no function to compile")
    entry = entry or module.funcs[0].name
    from tdflow.dialect.ir import DiagnosticError, verify_module
    from tdflow.runtime.compiled import context_of

    errors = [d for d in verify_module(module, context_of(ops)) if d.severity == "error"]
    if errors:  # the program's own mistakes first, located, before any SBP pass runs
        raise DiagnosticError(errors)
    arg_sbp, result_sbp, hier = _function_sbp(module, entry, nproc, ops, search)
    func = module[entry]
    arg_shapes = [tuple(t.shape) for t in func.arg_types]
    result_shapes = [tuple(t.shape) for t in _result_types(func)]

    def build(rank: int) -> RankPlan:
        prog = tdflow.compile(module.clone(), device, entry,
                              pipeline=rank_pipeline(nproc, rank, device, search), mode="direct",
                              ops=ops)
        async_ids = eligible(prog.plan.launches) if overlap and prog.plan is not None else []
        return RankPlan(prog, arg_sbp, result_sbp, arg_shapes, result_shapes, hier, async_ids)

    arguments = [(a.name or f"arg{i}", tuple(a.type.shape), a.type.dtype)
                 for i, a in enumerate(func.args)]
    return DistributedProgram(entry, nproc, build, arguments, bucket_bytes)


def rank_pipeline(nproc: int, rank: int, device: str = "cpu", search: str = "lookahead") -> str:
    """The whole pipeline of rank ``rank``: the compiler's (``tdflow.lowering.sbp``) SBP
    passes (``infer-sbp``, ``physicalize``), then the device's standard pipeline.

    >>> rank_pipeline(2, 1).split(",")[0]
    'infer-sbp{nproc=2}'
    """
    from tdflow.lowering.sbp import sbp_pipeline

    return sbp_pipeline(nproc, rank, device, search)


def _result_types(func: FuncOp) -> list[Any]:
    types = getattr(func, "result_types", None)
    if types is None:
        types = func.type.results
    return list(types)


def _function_sbp(module: Module, entry: str, nproc: int, ops: Dialect | None, search: str = "lookahead"
                  ) -> tuple[list[NdSbp], list[NdSbp], tuple[int, ...]]:
    """The SBP the compiler chose for ``entry``'s arguments and results, and the hierarchy."""
    from tdflow.lowering.pass_manager import PassManager
    from tdflow.lowering.passes.infer_sbp import function_sbp
    from tdflow.lowering.sbp import sbp_pipeline
    from tdflow.runtime.compiled import context_of

    m = module.clone()
    PassManager.parse(sbp_pipeline(nproc, 0, search=search).split(",physicalize")[0],
                      dialect=context_of(ops)).run(m)
    args, results = function_sbp(m[entry])
    from tdflow.lowering.sbp_ir import hierarchy_of

    hier = hierarchy_of(m[entry], nproc)
    for sbp in (*args, *results):
        if len(sbp) != len(hier):
            raise DistributedError(f"@{entry}: an SBP of {len(sbp)} axes on a hierarchy "
                                   f"{list(hier)}")
    for sbp, t in zip(args, m[entry].arg_types):
        physical_shape(tuple(t.shape), sbp, hier, 0)  # an SbpError names a bad axis now
    return list(args), list(results), hier
