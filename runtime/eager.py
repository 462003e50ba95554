"""Eager execution of one op: the path every ``tdflow.functional`` call ends in.

An :class:`OpRunner` runs one op of the dialect on tensors. The first call with a given
(input shapes and dtypes, attributes) asks the dialect's inference hooks for the result types
and the kernel registry for a kernel, and caches both (for an elementwise kernel, its numpy
program with the attributes bound); later calls allocate the results, wrap them as tensors, and
push the kernel to the engine, which runs a ready tiny op inline, so a small eager op costs a
few microseconds. Every result tensor owns a fresh engine var (``tensor_glue``).

The pieces, by job: this module holds the runner and its general call (:meth:`OpRunner.run`);
:mod:`~tdflow.runtime.eager_entry` the slow path, a cache entry inferred, selected and bound
once; :mod:`~tdflow.runtime.eager_fast` the fast call paths ``functional`` binds per op
(``make_call1``...); :mod:`~tdflow.runtime.eager_call` what they all share (the attribute
key, the questions asked of a call's tensors, :class:`EagerError`);
:mod:`~tdflow.runtime.eager_device` GPU devices; :mod:`~tdflow.runtime.tape` the recording
for autograd.

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

from . import eager_fast
from .eager_call import EagerError, any_requires_grad, attrs_cache_key, device_of, distinct_vars
from .eager_device import run_on_device
from .eager_entry import MAX_RESULT_BYTES, Entry, prepare_entry
from .engine import BLAS_OP_NAMES, Var, get_engine
from .grad_mode import MODE as _grad
from .kernels._util import settle as _settle
from .tape import record as _record
from .tensor_glue import Tensor, var_of

if TYPE_CHECKING:
    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.opdef import OpDef

__all__ = ["MAX_RESULT_BYTES", "EagerError", "OpRunner"]

_wrap = Tensor._wrap
_empty = np.empty


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
        self.cache: dict[tuple, Entry] = {}  # by (attribute key, input shapes and dtypes)
        self._devices: dict[str, OpRunner] = {}  # runners of this op on GPU devices
        self._f32 = tuple(a.name for a in opdef.attributes if a.kind == "f32")
        # these take the engine's BLAS slot (an op served by a standard BLAS op does too)
        self._aliases = getattr(dialect, "served_by", None) or None
        serving = self._aliases.get(opdef.name) if self._aliases else None
        self.uses_blas = opdef.name in BLAS_OP_NAMES or serving in BLAS_OP_NAMES
        # a served op's attributes are normalized by the serving op's rules
        hook_op = getattr(dialect, "hook_op", None)
        self.ruled_by = hook_op(opdef.name) if hook_op is not None else None
        # operands the op writes in place (sgd_update's model), from its modify_input_arg hook
        try:
            self.mutable = frozenset(dialect.mutable_operands(self.name))
        except (AttributeError, KeyError, ValueError):  # no such API, or the hook needs attrs
            self.mutable = frozenset({0}) if self.n_results == 0 else frozenset()

    def attr_values(self, attr_vals: tuple) -> dict[str, Any]:
        """Every attribute's value (defaults filled), as a compiled program sees it: an f32
        attribute rounded to float32, as its IR attribute holds it (so eager and graph mode
        compute the same bits).

        >>> from tdflow.dialect import standard_dialect
        >>> d = standard_dialect()
        >>> OpRunner(d.lookup("tdflow.leaky_relu"), ("alpha",), d).attr_values((0.1,))
        {'alpha': 0.10000000149011612}
        """
        attrs = dict(self._fixed)
        attrs.update(zip(self.attr_names, attr_vals))
        for name in self._f32:
            if name in attrs:
                attrs[name] = as_stored("f32", attrs[name])
        return attrs

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
        entry = self.cache.get(k)
        if entry is None:
            entry = self.prepare(k, arrays, attr_vals)
        if entry.run is not None:  # one result, nothing written in place (as calln)
            out = _empty(entry.shape, entry.npdt)
            r = _wrap(out, entry.dt)
            if not (entry.now and get_engine().run_now(entry.run, arrays, out, readers)):
                self.push1(entry, arrays, out, r, distinct_vars(readers))
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
                 uses_blas=self.uses_blas)
        if results and _grad.enabled and any_requires_grad(tensors):
            _record(self, tensors, attr_vals, results)
        if self.n_results == 1:
            return results[0]
        return tuple(results) if results else None

    def push1(self, entry: Entry, ins: list, out: Any, r: Tensor, reads: tuple) -> None:
        """The queued path of a one-result call (inputs pending, or the op not tiny): the
        result ``r`` (wrapping ``out``) gets a var, and the engine runs ``entry`` on ``ins``
        once the vars ``reads`` are ready.

        >>> from tdflow.dialect import standard_dialect
        >>> d = standard_dialect()
        >>> relu = OpRunner(d.lookup("tdflow.relu"), (), d)
        >>> a, out = np.float32([-1, 2]), np.empty(2, np.float32)
        >>> entry, r = relu.prepare((a.shape, a.dtype), [a], ()), _wrap(out, "f32")
        >>> relu.push1(entry, [a], out, r, ()); r.tolist()
        [0.0, 2.0]
        """
        eng = get_engine()
        r._sync = v = Var(None, eng)
        run = entry.run
        eng.push_one(lambda: run(ins, out), reads, v, self.name, entry.cost, self.uses_blas)

    # The slow path (eager_entry) and the fast call paths (eager_fast) are functions of the
    # runner, made its methods here as they are: no wrapper, so no frame more on a cache miss
    # or a call.
    prepare = prepare_entry
    make_calln = eager_fast.make_calln
    make_call1 = eager_fast.make_call1
    make_call1a = eager_fast.make_call1a
    make_call2 = eager_fast.make_call2
    make_call2a = eager_fast.make_call2a
    make_update2 = eager_fast.make_update2
    make_fixed = eager_fast.make_fixed

