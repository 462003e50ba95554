"""Eager execution of one op: the path every ``tdflow.functional`` call ends in.

An :class:`OpRunner` runs one op of the dialect on tensors. The first call with a given
(input shapes and dtypes, attributes) asks the dialect's inference hooks for the result types
and the kernel registry for a kernel, and caches both (for an elementwise kernel, its numpy
program with the attributes bound); later calls allocate the results, wrap them as tensors, and
push the kernel to the engine, which runs a ready tiny op inline, so a small eager op costs a
few microseconds. Every result tensor owns a fresh engine var (``tensor_glue``).

>>> from tdflow.dialect import standard_dialect
>>> from tdflow.runtime.tensor import tensor
>>> d = standard_dialect()
>>> relu = OpRunner(d.lookup("tdflow.relu"), (), d)
>>> relu.run((tensor([-1.0, 2.0]),), ()).numpy().tolist()
[0.0, 2.0]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from tdflow.dialect.attr_kinds import as_stored
from tdflow.dialect.attr_normalize import AttrError, complete_attrs
from tdflow.dialect.types import DTYPES, TensorType, dtype_from_numpy

from .eager_call import (
    EagerError,
    any_requires_grad,
    attrs_cache_key,
    device_of,
    distinct_vars,
    settled_result,
    settled_results,
)
from .eager_device import run_on_device
from .eager_native import counting_run
from .engine import BLAS_OP_NAMES, NOW_COST, Var, get_engine
from .grad_mode import MODE as _grad
from .kernels._util import settle as _settle
from .op_kernels import kernel_table_for
from .tape import record as _record
from .tensor_glue import Tensor, var_of

if TYPE_CHECKING:
    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.opdef import OpDef

__all__ = ["EagerError", "OpRunner"]

_wrap = Tensor._wrap
_empty = np.empty
_CACHE_LIMIT = 4096
# The user address space of x86-64 and arm64 (47 bits): a result beyond it cannot be allocated
# anywhere, so it is a bad argument (a huge shape), not an out-of-memory condition.
MAX_RESULT_BYTES = 2**47


class _Entry:
    """What one (input types, attributes) combination of an op needs at run time."""

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


def _is_pure(fn: Any) -> bool:
    """Whether a kernel may run under the engine's lock: tdflow's own kernels are numpy code
    that never calls back into the engine; a user's kernel might (it would deadlock)."""
    return getattr(fn, "__module__", "").startswith(_OWN_KERNELS)


_OWN_KERNELS = __name__.rpartition(".")[0] + ".kernels."


class OpRunner:
    """Runs one op eagerly; see the module docstring.

    ``attr_names`` fixes the order of the attribute values given to :meth:`run`; attributes
    not listed take their ``.td`` default. ``dialect`` provides ``infer_result_types``.
    """

    def __init__(self, opdef: OpDef, attr_names: tuple[str, ...], dialect: Dialect,
                 device: str = "cpu"):
        self.opdef = opdef
        self.dialect = dialect
        self.name: str = opdef.name
        self.device = device
        self.attr_names = attr_names
        self.n_results = len(opdef.results)
        self._fixed: dict[str, Any] = {
            a.name: a.default for a in opdef.attributes
            if a.name not in attr_names and a.has_default and a.kind != "other"}
        self._cache: dict[tuple, _Entry] = {}
        self._devices: dict[str, OpRunner] = {}  # runners of this op on GPU devices
        self._f32 = tuple(a.name for a in opdef.attributes if a.kind == "f32")
        # these take the engine's BLAS slot (an op served by a standard BLAS op does too)
        self._aliases = getattr(dialect, "served_by", None) or None
        serving = self._aliases.get(opdef.name) if self._aliases else None
        self._uses_blas = opdef.name in BLAS_OP_NAMES or serving in BLAS_OP_NAMES
        # a served op's attributes are normalized by the serving op's rules
        hook_op = getattr(dialect, "hook_op", None)
        self._ruled_by = hook_op(opdef.name) if hook_op is not None else None
        # operands the op writes in place (sgd_update's model), from its modify_input_arg hook
        try:
            self.mutable = frozenset(dialect.mutable_operands(self.name))
        except (AttributeError, KeyError, ValueError):  # no such API, or the hook needs attrs
            self.mutable = frozenset({0}) if self.n_results == 0 else frozenset()

    def attr_values(self, attr_vals: tuple) -> dict[str, Any]:
        """Every attribute's value (defaults filled), as a compiled program sees it: an f32
        attribute rounded to float32, as its IR attribute holds it (so eager and graph mode
        compute the same bits)."""
        attrs = dict(self._fixed)
        attrs.update(zip(self.attr_names, attr_vals))
        for name in self._f32:
            if name in attrs:
                attrs[name] = as_stored("f32", attrs[name])
        return attrs

    # -- the slow path: infer and select, once per (types, attrs) ---------------------------
    def _prepare(self, key: tuple, arrays: list, attr_vals: tuple) -> _Entry:
        attrs = self.attr_values(attr_vals)
        in_types = [None if a is None else TensorType(a.shape, dtype_from_numpy(a.dtype))
                    for a in arrays]
        try:
            out_types = self.dialect.infer_result_types(self.name, in_types, attrs)
        except (ValueError, TypeError) as e:
            text = str(e)  # the dialect's InferError already names the op
            raise EagerError(text if self.name in text else f"'{self.name}': {text}") from e
        try:  # the kernel's attributes: completed and normalized once (axes non-negative, ...)
            attrs = complete_attrs(self.opdef, attrs, [None if a is None else a.shape
                                                       for a in arrays], self._ruled_by)
        except AttrError as e:  # (inference checks them first; this names op and attribute)
            raise EagerError(str(e)) from e
        from tdflow.runtime.kernels.registry import KernelNotFoundError

        dtypes = tuple(None if t is None else t.dtype for t in in_types)
        try:  # the context's kernels (a formula-only op's derived one included)
            kernel = kernel_table_for(self.dialect, self.device).select(self.name, dtypes, attrs)
        except KernelNotFoundError as e:
            # The hooks accepted the types but no kernel computes them (bool matmul...): for
            # the caller that is a bad argument dtype, not a lookup failure.
            raise EagerError(str(e)) from e  # (the message names the op)
        specs = []
        cost = 0
        for t in out_types:
            if not t.is_static:
                raise EagerError(f"{self.name}: could not infer a static result type (got {t}) "
                                 f"for inputs {', '.join(map(str, in_types))}")
            np_dtype = DTYPES[t.dtype]
            if (t.numel or 0) * np_dtype.itemsize > MAX_RESULT_BYTES:
                raise EagerError(f"'{self.name}': the result {t} would need "
                                 f"{(t.numel or 0) * np_dtype.itemsize:.3g} bytes, more than "
                                 f"any machine can address (2**47)")
            specs.append((tuple(t.shape), np_dtype, t.dtype))
            cost += t.numel or 0
        if self._uses_blas:
            cost = max(cost, sum(a.size for a in arrays if a is not None))
        prog = program = None
        if kernel.elementwise is not None and len(specs) == 1 and None not in dtypes:
            from tdflow.runtime.kernels.formula import build_program

            # the same program the kernel would build, with the attributes bound once
            program = build_program(kernel.elementwise, dtypes, attrs, specs[0][2])
            prog = program.run
        # (a GPU device's kernels are never bound: the executor binds CPU launches only)
        fn = kernel.fn if prog is not None or self.device != "cpu" else \
            _bound(kernel.fn, attrs, arrays, specs)
        run = now = runn = None
        if len(specs) > 1 and not self.mutable and prog is None:
            # a tiny pure one (the loss and its softmax) runs at once, as one-result ops do:
            # no vars for its results, no queued op
            now = cost <= NOW_COST and _is_pure(kernel.fn)
            runn = settled_results(fn, attrs) if now else None
        if len(specs) == 1 and not self.mutable:
            direct = getattr(kernel.fn, "direct", None)  # a kernel's plain form (matmul)
            run = prog or (direct(attrs, arrays) if direct is not None and cost <= NOW_COST
                           else None) or settled_result(fn, attrs)
            now = cost <= NOW_COST and (prog is not None or _is_pure(kernel.fn))
        entry = _Entry(tuple(specs), prog, fn, attrs, cost, run, now, runn)
        expr = getattr(program, "expr", None) if prog is not None else None
        if now and expr is not None:  # a tiny formula op: native loop once it proves hot
            entry.run = counting_run(entry, prog, expr, program.in_dtypes, program.out_dtype,
                                     [a.shape for a in arrays], specs[0][0])
        if len(self._cache) >= _CACHE_LIMIT:  # shapes may vary without bound
            self._cache.clear()
        self._cache[key] = entry
        return entry

    # -- GPU devices ------------------------------------------------------------------------------
    def on_device(self, device: str, tensors: tuple, attr_vals: tuple) -> Any:
        """Run on tensors of a GPU device (``cudasim``, ``cuda``): the device's kernel, results
        allocated by its backend, the work ordered by the engine like any other op."""
        runner = self._devices.get(device)
        if runner is None:
            runner = self._devices[device] = OpRunner(self.opdef, self.attr_names,
                                                      self.dialect, device)
        return run_on_device(runner, tensors, attr_vals)

    # -- the hot paths ---------------------------------------------------------------------------
    def run(self, tensors: tuple, attr_vals: tuple) -> Any:
        """Run on ``tensors`` (one per operand: a Tensor, ``None`` or a tuple for variadic)."""
        device = device_of(tensors)
        if device is not None:
            return self.on_device(device, tensors, attr_vals)
        arrays: list = []
        readers: list = []  # the tensors read (a variadic operand's spread)
        inplace: list = []
        key: list = [attrs_cache_key(attr_vals)]
        mutable = self.mutable
        for i, t in enumerate(tensors):
            if mutable and i in mutable and t is not None:
                a = t._buf
                if not a.flags.writeable:  # Tensor.from_numpy of a read-only array
                    name = self.opdef.operands[i].name if i < len(self.opdef.operands) else i
                    raise EagerError(f"'{self.name}' writes its operand '{name}' in place, but "
                                     f"that tensor shares a read-only numpy array; pass "
                                     f"tdflow.tensor(array) (a copy) instead")
                arrays.append(a)
                inplace.append(var_of(t))
                t._version += 1  # autograd refuses a backward that would read the old value
                key.append(a.shape)
                key.append(a.dtype)
            elif t is None:
                arrays.append(None)
                key.append(None)
            elif type(t) is tuple:
                key.append(len(t))
                for e in t:
                    a = e._buf
                    arrays.append(a)
                    readers.append(e)
                    key.append(a.shape)
                    key.append(a.dtype)
            else:
                a = t._buf
                arrays.append(a)
                readers.append(t)
                key.append(a.shape)
                key.append(a.dtype)
        k = tuple(key)
        entry = self._cache.get(k)
        if entry is None:
            entry = self._prepare(k, arrays, attr_vals)
        if entry.run is not None:  # one result, nothing written in place (as calln)
            out = _empty(entry.shape, entry.npdt)
            r = _wrap(out, entry.dt)
            if not (entry.now and get_engine().run_now(entry.run, arrays, out, readers)):
                self._push1(entry, arrays, out, r, distinct_vars(readers))
            if _grad.enabled and any_requires_grad(tensors):
                _record(self, tensors, attr_vals, (r,))
            return r
        eng = get_engine()
        outs = [_empty(s, d) for s, d, _ in entry.specs]
        if entry.runn is not None and eng.run_now(entry.runn, arrays, outs, readers):
            results = tuple([_wrap(o, dt) for o, (_, _, dt) in zip(outs, entry.specs)])
            if _grad.enabled and any_requires_grad(tensors):
                _record(self, tensors, attr_vals, results)
            return results
        reads = [var_of(t) for t in readers]
        results = []
        writes = []
        for o, (_, _, dt) in zip(outs, entry.specs):
            r = _wrap(o, dt)
            r._sync = v = Var(None, eng)
            results.append(r)
            writes.append(v)
        for v in inplace:
            if v not in writes:
                writes.append(v)
        reads = [v for v in reads if v not in writes]
        prog = entry.prog
        if prog is not None:
            out = outs[0]

            def work():
                prog(arrays, out)
        else:
            fn, attrs = entry.fn, entry.attrs

            def work():
                _settle(fn(attrs, arrays, outs), outs, fn)

        reads = tuple(dict.fromkeys(reads)) if len(reads) > 1 else tuple(reads)
        eng.push(work, reads, tuple(writes), name=self.name, cost=entry.cost,
                 uses_blas=self._uses_blas)
        if results and _grad.enabled and any_requires_grad(tensors):
            _record(self, tensors, attr_vals, results)
        if self.n_results == 1:
            return results[0]
        return tuple(results) if results else None

    def _push1(self, entry: _Entry, ins: list, out: Any, r: Tensor, reads: tuple) -> None:
        """The queued path of a one-result call (inputs pending, or the op not tiny): the
        result gets a var, and the engine runs the op when its inputs are ready."""
        eng = get_engine()
        r._sync = v = Var(None, eng)
        run = entry.run
        eng.push_one(lambda: run(ins, out), reads, v, self.name, entry.cost, self._uses_blas)

    def make_calln(self):
        """``f(tensors, attr_vals) -> Tensor`` for an op with single or optional operands (a
        tensor or ``None`` each, no variadic) and one result."""
        cache = self._cache
        prepare = self._prepare
        push1 = self._push1

        def calln(tensors, attr_vals):
            device = device_of(tensors)
            if device is not None:
                return self.on_device(device, tensors, attr_vals)
            arrays = []
            key = [attrs_cache_key(attr_vals)]
            readers = []
            for t in tensors:
                if t is None:
                    arrays.append(None)
                    key.append(None)
                    continue
                a = t._buf
                arrays.append(a)
                key.append(a.shape)
                key.append(a.dtype)
                readers.append(t)
            k = tuple(key)
            entry = cache.get(k) or prepare(k, arrays, attr_vals)
            out = _empty(entry.shape, entry.npdt)
            r = _wrap(out, entry.dt)
            if not (entry.now and get_engine().run_now(entry.run, arrays, out, readers)):
                push1(entry, arrays, out, r, distinct_vars(tensors))
            if _grad.enabled and any_requires_grad(tensors):
                _record(self, tensors, attr_vals, (r,))
            return r

        return calln

    def make_call1(self):
        """``f(t) -> Tensor`` for an op with one tensor operand, one result and no attribute
        values (``relu(x)``): the shortest path."""
        cache = self._cache
        prepare = self._prepare
        push1 = self._push1

        def call1(t):
            if t.device != "cpu":
                return self.on_device(t.device, (t,), ())
            a = t._buf
            k = (a.shape, a.dtype)
            entry = cache.get(k) or prepare(k, [a], ())
            out = _empty(entry.shape, entry.npdt)
            r = _wrap(out, entry.dt)
            ins = [a]
            if not (entry.now and get_engine().run_now(entry.run, ins, out, (t,))):
                push1(entry, ins, out, r, (var_of(t),))
            if t.requires_grad and _grad.enabled:
                _record(self, (t,), (), (r,))
            return r

        return call1

    def make_call1a(self):
        """``f(t, attr_vals) -> Tensor`` for an op with one tensor operand and one result
        (``leaky_relu(x, alpha=0.2)``, ``add(x, 1.0)``)."""
        cache = self._cache
        prepare = self._prepare
        push1 = self._push1

        def call1a(t, attr_vals):
            if t.device != "cpu":
                return self.on_device(t.device, (t,), attr_vals)
            a = t._buf
            k = (attrs_cache_key(attr_vals), a.shape, a.dtype)
            entry = cache.get(k) or prepare(k, [a], attr_vals)
            out = _empty(entry.shape, entry.npdt)
            r = _wrap(out, entry.dt)
            ins = [a]
            if not (entry.now and get_engine().run_now(entry.run, ins, out, (t,))):
                push1(entry, ins, out, r, (var_of(t),))
            if t.requires_grad and _grad.enabled:
                _record(self, (t,), attr_vals, (r,))
            return r

        return call1a

    def make_call2(self):
        """``f(t, u) -> Tensor`` for an op with two tensor operands, one result, no attributes."""
        cache = self._cache
        prepare = self._prepare
        push1 = self._push1

        def call2(t, u):
            if t.device != "cpu" or u.device != "cpu":
                return self.on_device(u.device if t.device == "cpu" else t.device, (t, u), ())
            a = t._buf
            b = u._buf
            k = (a.shape, a.dtype, b.shape, b.dtype)
            entry = cache.get(k) or prepare(k, [a, b], ())
            out = _empty(entry.shape, entry.npdt)
            r = _wrap(out, entry.dt)
            ins = [a, b]
            if not (entry.now and get_engine().run_now(entry.run, ins, out, (t, u))):
                v1 = var_of(t)
                v2 = var_of(u)
                push1(entry, ins, out, r, (v1, v2) if v1 is not v2 else (v1,))
            if (t.requires_grad or u.requires_grad) and _grad.enabled:
                _record(self, (t, u), (), (r,))
            return r

        return call2

    def make_update2(self, npad: int):
        """``f(t, u, attr_vals) -> None`` for an op of no results writing its first operand
        alone, given two tensors and ``npad`` absent ones (``sgd_update(w, g, lr=...)``):
        :meth:`run`'s in-place path without its loop (a first call, another device or a
        read-only buffer: :meth:`run`).

        >>> from tdflow.dialect import standard_dialect
        >>> d, w, g = standard_dialect(), Tensor(np.float32([1, 2])), Tensor(np.float32([4, 4]))
        >>> up = OpRunner(d.lookup("tdflow.sgd_update"), ("learning_rate_val",), d).make_update2(4)
        >>> up(w, g, (0.25,)), up(w, g, (0.25,)), w.tolist()  # (the first call: run's path)
        (None, None, [-1.0, 0.0])
        """
        run = self.run
        cache = self._cache
        pad = [None] * npad
        kpad = (None,) * npad
        name, uses_blas = self.name, self._uses_blas
        last = [((), ())]  # the last attribute values and their key (as make_call2a)

        def update2(t, u, attr_vals):
            if t.device != "cpu" or u.device != "cpu":
                return run((t, u, *kpad), attr_vals)
            a = t._buf
            b = u._buf
            m = last[0]
            if m[0] is attr_vals:
                ak = m[1]
            else:
                ak = attrs_cache_key(attr_vals)
                last[0] = (attr_vals, ak)
            entry = cache.get((ak, a.shape, a.dtype, b.shape, b.dtype, *kpad))
            if entry is None or not a.flags.writeable:  # (run says what is wrong)
                return run((t, u, *kpad), attr_vals)
            w = var_of(t)
            v = var_of(u)
            t._version += 1  # autograd refuses a backward that would read the old value
            fn, attrs = entry.fn, entry.attrs
            ins = [a, b, *pad]

            def work():
                outs: list = []
                _settle(fn(attrs, ins, outs), outs, fn)

            get_engine().push_one(work, (v,) if v is not w else (), w, name, entry.cost,
                                  uses_blas)
            return None

        return update2

    def make_fixed(self, attr_vals: tuple, tuples: bool = False):
        """``f(tensors) -> results`` for calls with the same attribute values every time (a
        gradient trace's step, replayed each backward): :meth:`run` with the attribute key made
        once, one result taking the one-result path without the general loop's questions
        (in-place operands, another device, several results: :meth:`run`). ``tuples``: the
        results always as a tuple (none: ``()``), as a gradient's emitter hands them on.

        >>> from tdflow.dialect import standard_dialect
        >>> from tdflow.runtime.tensor import tensor
        >>> d = standard_dialect()
        >>> relu = OpRunner(d.lookup("tdflow.relu"), (), d).make_fixed((), tuples=True)
        >>> [t.tolist() for t in relu((tensor([-1.0, 2.0]),))]
        [[0.0, 2.0]]
        """
        run = self.run
        if tuples:
            general = run

            def run(tensors, vals):  # noqa: F811 - the general call, its results as a tuple
                out = general(tensors, vals)
                return () if out is None else out if type(out) is tuple else (out,)

        if self.mutable:
            return lambda tensors: run(tensors, attr_vals)
        ak = attrs_cache_key(attr_vals)
        cache = self._cache
        push1 = self._push1

        def fixed(tensors):
            arrays = []
            key = [ak]
            readers = []
            for t in tensors:
                if t is None:
                    arrays.append(None)
                    key.append(None)
                    continue
                if type(t) is tuple:  # a variadic operand (fused_elementwise's inputs)
                    key.append(len(t))
                    for e in t:
                        if e.device != "cpu":
                            return run(tensors, attr_vals)
                        a = e._buf
                        arrays.append(a)
                        key.append(a.shape)
                        key.append(a.dtype)
                        readers.append(e)
                    continue
                if t.device != "cpu":
                    return run(tensors, attr_vals)
                a = t._buf
                arrays.append(a)
                key.append(a.shape)
                key.append(a.dtype)
                readers.append(t)
            entry = cache.get(tuple(key))
            if entry is None or entry.run is None:  # first call, or several results
                return run(tensors, attr_vals)
            out = _empty(entry.shape, entry.npdt)
            r = _wrap(out, entry.dt)
            if not (entry.now and get_engine().run_now(entry.run, arrays, out, readers)):
                push1(entry, arrays, out, r, distinct_vars(readers))
            if _grad.enabled and any_requires_grad(tensors):
                _record(self, tensors, attr_vals, (r,))
            return (r,) if tuples else r

        return fixed

    def make_call2a(self, npad: int):
        """``f(t, u, attr_vals) -> Tensor`` for an op whose first two operands are single
        tensors, followed by ``npad`` absent optional ones, with one result (``matmul(a, b)``,
        ``bias_add(x, b, axis=1)``); keyed like :meth:`make_calln`'s call of the same."""
        cache = self._cache
        prepare = self._prepare
        push1 = self._push1
        pad = [None] * npad
        kpad = (None,) * npad
        # the last attribute values and their key: a call without attributes passes the same
        # tuple of defaults every time (one tuple, swapped whole: safe between threads)
        last = [((), ())]

        def call2a(t, u, attr_vals):
            if t.device != "cpu" or u.device != "cpu":
                return self.on_device(u.device if t.device == "cpu" else t.device,
                                      (t, u, *kpad), attr_vals)
            a = t._buf
            b = u._buf
            m = last[0]
            if m[0] is attr_vals:
                ak = m[1]
            else:
                ak = attrs_cache_key(attr_vals)
                last[0] = (attr_vals, ak)
            k = (ak, a.shape, a.dtype, b.shape, b.dtype, *kpad)
            ins = [a, b, *pad]
            entry = cache.get(k) or prepare(k, ins, attr_vals)
            out = _empty(entry.shape, entry.npdt)
            r = _wrap(out, entry.dt)
            if not (entry.now and get_engine().run_now(entry.run, ins, out, (t, u))):
                v1 = var_of(t)
                v2 = var_of(u)
                push1(entry, ins, out, r, (v1, v2) if v1 is not v2 else (v1,))
            if (t.requires_grad or u.requires_grad) and _grad.enabled:
                _record(self, (t, u, *kpad), attr_vals, (r,))
            return r

        return call2a


def _bound(fn: Any, attrs: dict, arrays: list, specs: list) -> Any:
    """The kernel specialised for this cache entry's (shapes, dtypes, attributes) when it
    offers the executor's ``bind`` (:func:`~tdflow.runtime.executor.bound_kernel`): the
    function a compiled plan runs for the same launch, with the same arithmetic, so eager
    calls compute what graph mode does with the per-call checks made once. Inputs are never
    overwritten (no ``dead`` operands: the caller keeps its tensors); results are fresh
    buffers of exactly the result types. Else, or if ``bind`` fails, ``fn`` itself."""
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
