"""An eager op's slow path: what one (input types, attributes) combination of an op needs at
run time, inferred and selected once and cached by the :class:`~tdflow.runtime.eager.OpRunner`.

:func:`prepare_entry` asks the dialect's inference hooks for the result types and the kernel
table for a kernel, binds the kernel to the entry's shapes and attributes where it can
(:func:`bind_for_entry`), and decides how a call runs: an elementwise numpy program, a
kernel's direct form, at once under the engine's lock (tiny and pure, :func:`is_pure`) or
queued. The hot paths (:mod:`~tdflow.runtime.eager` and :mod:`~tdflow.runtime.eager_fast`) only
read the :class:`Entry` it returns.

>>> import numpy as np
>>> from tdflow.dialect import standard_dialect
>>> from tdflow.runtime.eager import OpRunner
>>> d = standard_dialect()
>>> relu = OpRunner(d.lookup("tdflow.relu"), (), d)
>>> x = np.float32([-1, 2])
>>> e = prepare_entry(relu, (x.shape, x.dtype), [x], ())
>>> e.shape, e.npdt, e.dt, e.now
((2,), dtype('float32'), 'f32', True)
"""

from __future__ import annotations

from typing import Any

from tdflow.dialect.attr_normalize import AttrError, complete_attrs
from tdflow.dialect.types import DTYPES, TensorType, dtype_from_numpy

from .eager_call import EagerError, settled_result, settled_results
from .eager_native import counting_run
from .engine import NOW_COST
from .op_kernels import kernel_table_for

__all__ = ["CACHE_LIMIT", "MAX_RESULT_BYTES", "Entry", "bind_for_entry", "is_pure",
           "prepare_entry"]

# entries kept per op before its cache starts afresh: shapes may vary without bound
CACHE_LIMIT = 4096
# The user address space of x86-64 and arm64 (47 bits): a result beyond it cannot be allocated
# anywhere, so it is a bad argument (a huge shape), not an out-of-memory condition.
MAX_RESULT_BYTES = 2**47


class Entry:
    """What one (input types, attributes) combination of an op needs at run time.

    >>> e = Entry((((2,), "float32", "f32"),), None, print, {}, 2)
    >>> e.shape, e.run is None, e.now
    ((2,), True, False)
    """

    __slots__ = ("specs", "single", "prog", "fn", "attrs", "cost", "run", "now", "shape", "npdt",
                 "dt", "runn")

    def __init__(self, specs, prog, fn, attrs, cost, run=None, now=False, runn=None):
        self.specs = specs  # ((shape, numpy dtype, mlir dtype), ...) per result
        self.single = specs[0] if len(specs) == 1 else None
        self.prog = prog  # an elementwise numpy program prog(inputs, out), or None
        self.fn = fn  # the kernel: fn(attrs, inputs, outs)
        self.attrs = attrs
        self.cost = cost
        # one result: run(inputs, out) computes it (the program, a kernel's direct form, or
        # the kernel with its result settled into out); `now`: pure and tiny, so the engine
        # may run it at once (Engine.run_now)
        self.run = run
        self.now = now
        self.runn = runn  # several results: runn(inputs, outs), with `now` as run's
        self.shape, self.npdt, self.dt = self.single or (None, None, None)


def is_pure(fn: Any) -> bool:
    """Whether a kernel may run under the engine's lock: tdflow's own kernels are numpy code
    that never calls back into the engine; a user's kernel might (it would deadlock).

    >>> from tdflow.runtime.kernels import linalg
    >>> is_pure(linalg.matmul), is_pure(lambda attrs, ins, outs: None)
    (True, False)
    """
    return getattr(fn, "__module__", "").startswith(_OWN_KERNELS)


_OWN_KERNELS = __name__.rpartition(".")[0] + ".kernels."


def prepare_entry(runner: Any, key: tuple, arrays: list, attr_vals: tuple) -> Entry:
    """Infer, select and bind for ``runner`` (an :class:`~tdflow.runtime.eager.OpRunner`) on
    ``arrays`` (numpy arrays or ``None``, one per operand, a variadic one spread) with
    ``attr_vals``; the entry is cached in ``runner.cache`` under ``key``. A call the hooks
    or the kernel table reject raises :class:`~tdflow.runtime.eager_call.EagerError` naming
    the op. (Also ``OpRunner.prepare``; the example is the module's.)
    """
    attrs = runner.attr_values(attr_vals)
    name = runner.name
    in_types = [None if a is None else TensorType(a.shape, dtype_from_numpy(a.dtype))
                for a in arrays]
    try:
        out_types = runner.dialect.infer_result_types(name, in_types, attrs)
    except (ValueError, TypeError) as e:
        text = str(e)  # the dialect's InferError already names the op
        raise EagerError(text if name in text else f"'{name}': {text}") from e
    try:  # the kernel's attributes: completed and normalized once (axes non-negative, ...)
        attrs = complete_attrs(runner.opdef, attrs, [None if a is None else a.shape
                                                     for a in arrays], runner.ruled_by)
    except AttrError as e:  # (inference checks them first; this names op and attribute)
        raise EagerError(str(e)) from e
    from tdflow.runtime.kernels.registry import KernelNotFoundError

    dtypes = tuple(None if t is None else t.dtype for t in in_types)
    try:  # the context's kernels (a formula-only op's derived one included)
        kernel = kernel_table_for(runner.dialect, runner.device).select(name, dtypes, attrs)
    except KernelNotFoundError as e:
        # The hooks accepted the types but no kernel computes them (bool matmul...): for
        # the caller that is a bad argument dtype, not a lookup failure.
        raise EagerError(str(e)) from e  # (the message names the op)
    specs = []
    cost = 0
    for t in out_types:
        if not t.is_static:
            raise EagerError(f"{name}: could not infer a static result type (got {t}) "
                             f"for inputs {', '.join(map(str, in_types))}")
        np_dtype = DTYPES[t.dtype]
        if (t.numel or 0) * np_dtype.itemsize > MAX_RESULT_BYTES:
            raise EagerError(f"'{name}': the result {t} would need "
                             f"{(t.numel or 0) * np_dtype.itemsize:.3g} bytes, more than "
                             f"any machine can address (2**47)")
        specs.append((tuple(t.shape), np_dtype, t.dtype))
        cost += t.numel or 0
    if runner.uses_blas:
        cost = max(cost, sum(a.size for a in arrays if a is not None))
    prog = program = None
    if kernel.elementwise is not None and len(specs) == 1 and None not in dtypes:
        from tdflow.runtime.kernels.formula import build_program

        # the same program the kernel would build, with the attributes bound once
        program = build_program(kernel.elementwise, dtypes, attrs, specs[0][2])
        prog = program.run
    # (a GPU device's kernels are never bound: the executor binds CPU launches only)
    fn = kernel.fn if prog is not None or runner.device != "cpu" else \
        bind_for_entry(kernel.fn, attrs, arrays, specs)
    run = now = runn = None
    if len(specs) > 1 and not runner.mutable and prog is None:
        # a tiny pure one (the loss and its softmax) runs at once, as one-result ops do:
        # no vars for its results, no queued op
        now = cost <= NOW_COST and is_pure(kernel.fn)
        runn = settled_results(fn, attrs) if now else None
    if len(specs) == 1 and not runner.mutable:
        direct = getattr(kernel.fn, "direct", None)  # a kernel's plain form (matmul)
        run = prog or (direct(attrs, arrays) if direct is not None and cost <= NOW_COST
                       else None) or settled_result(fn, attrs)
        now = cost <= NOW_COST and (prog is not None or is_pure(kernel.fn))
    entry = Entry(tuple(specs), prog, fn, attrs, cost, run, now, runn)
    expr = getattr(program, "expr", None) if prog is not None else None
    if now and expr is not None:  # a tiny formula op: native loop once it proves hot
        entry.run = counting_run(entry, prog, expr, program.in_dtypes, program.out_dtype,
                                 [a.shape for a in arrays], specs[0][0])
    cache = runner.cache
    if len(cache) >= CACHE_LIMIT:  # shapes may vary without bound
        cache.clear()
    cache[key] = entry
    return entry


def bind_for_entry(fn: Any, attrs: dict, arrays: list, specs: list) -> Any:
    """The kernel specialised for this cache entry's (shapes, dtypes, attributes) when it
    offers the executor's ``bind`` (:func:`~tdflow.runtime.executor.bound_kernel`): the
    function a compiled plan runs for the same launch, with the same arithmetic, so eager
    calls compute what graph mode does with the per-call checks made once. Inputs are never
    overwritten (no ``dead`` operands: the caller keeps its tensors); results are fresh
    buffers of exactly the result types. Else, or if ``bind`` fails, ``fn`` itself.

    >>> def kernel(attrs, ins, outs): pass
    >>> bind_for_entry(kernel, {}, [], []) is kernel  # no bind: the kernel itself
    True
    """
    bind = getattr(fn, "bind", None)
    if bind is None:
        return fn
    ins = [None if a is None else (a.shape, a.dtype) for a in arrays]
    outs = [(shape, npdt) for shape, npdt, _ in specs]
    try:
        fast = bind(attrs, ins, outs, frozenset())
    except Exception:  # noqa: BLE001 - a bind that cannot handle the case: the general kernel
        return fn
    return fn if fast is None else fast
