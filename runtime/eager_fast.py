"""An eager op's fast call paths: closures built once per ``tdflow.functional`` op, each for one
call shape (one tensor, two, with or without attribute values, a gradient step's fixed
attributes, an in-place update), so a call reaches the engine through one Python frame.

Each ``make_*`` takes an :class:`~tdflow.runtime.eager.OpRunner` (they are its methods of the
same names) and returns a function doing what :meth:`OpRunner.run
<tdflow.runtime.eager.OpRunner.run>` does for that shape, without its general loop's questions;
anything else (another device, a first call, several results) goes to ``run`` or
``on_device``. Every closure keeps its look-ups in cells, not attribute reads: the frames and
reads on these paths were counted and cut on purpose (docs/benchmarks.md, the eager sections).

>>> from tdflow.dialect import standard_dialect
>>> from tdflow.runtime.eager import OpRunner
>>> from tdflow.runtime.tensor import tensor
>>> d = standard_dialect()
>>> add = make_call2(OpRunner(d.lookup("tdflow.broadcast_add"), (), d))
>>> add(tensor([1.0, 2.0]), tensor([0.5, 0.5])).tolist()
[1.5, 2.5]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .eager_call import any_requires_grad, attrs_cache_key, device_of, distinct_vars
from .engine import get_engine
from .grad_mode import MODE as _grad
from .kernels._util import settle as _settle
from .tape import record as _record
from .tensor_glue import Tensor, var_of

__all__ = ["make_call1", "make_call1a", "make_call2", "make_call2a", "make_calln", "make_fixed",
           "make_update2"]

_wrap = Tensor._wrap
_empty = np.empty


def make_calln(runner: Any):
    """``f(tensors, attr_vals) -> Tensor`` for an op with single or optional operands (a
    tensor or ``None`` each, no variadic) and one result.

    >>> from tdflow.dialect import standard_dialect
    >>> from tdflow.runtime.eager import OpRunner
    >>> from tdflow.runtime.tensor import tensor
    >>> d = standard_dialect()
    >>> mul = make_calln(OpRunner(d.lookup("tdflow.broadcast_mul"), (), d))
    >>> mul((tensor([1.0, 2.0]), tensor([3.0, 3.0])), ()).tolist()
    [3.0, 6.0]
    """
    cache = runner.cache
    prepare = runner.prepare
    push1 = runner.push1

    def calln(tensors, attr_vals):
        device = device_of(tensors)
        if device is not None:
            return runner.on_device(device, tensors, attr_vals)
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
            _record(runner, tensors, attr_vals, (r,))
        return r

    return calln


def make_call1(runner: Any):
    """``f(t) -> Tensor`` for an op with one tensor operand, one result and no attribute
    values (``relu(x)``): the shortest path.

    >>> from tdflow.dialect import standard_dialect
    >>> from tdflow.runtime.eager import OpRunner
    >>> from tdflow.runtime.tensor import tensor
    >>> d = standard_dialect()
    >>> make_call1(OpRunner(d.lookup("tdflow.relu"), (), d))(tensor([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    cache = runner.cache
    prepare = runner.prepare
    push1 = runner.push1

    def call1(t):
        if t.device != "cpu":
            return runner.on_device(t.device, (t,), ())
        a = t._buf
        k = (a.shape, a.dtype)
        entry = cache.get(k) or prepare(k, [a], ())
        out = _empty(entry.shape, entry.npdt)
        r = _wrap(out, entry.dt)
        ins = [a]
        if not (entry.now and get_engine().run_now(entry.run, ins, out, (t,))):
            push1(entry, ins, out, r, (var_of(t),))
        if t.requires_grad and _grad.enabled:
            _record(runner, (t,), (), (r,))
        return r

    return call1


def make_call1a(runner: Any):
    """``f(t, attr_vals) -> Tensor`` for an op with one tensor operand and one result
    (``leaky_relu(x, alpha=0.2)``, ``add(x, 1.0)``).

    >>> from tdflow.dialect import standard_dialect
    >>> from tdflow.runtime.eager import OpRunner
    >>> from tdflow.runtime.tensor import tensor
    >>> d = standard_dialect()
    >>> leaky = make_call1a(OpRunner(d.lookup("tdflow.leaky_relu"), ("alpha",), d))
    >>> leaky(tensor([-1.0, 2.0]), (0.5,)).tolist()
    [-0.5, 2.0]
    """
    cache = runner.cache
    prepare = runner.prepare
    push1 = runner.push1

    def call1a(t, attr_vals):
        if t.device != "cpu":
            return runner.on_device(t.device, (t,), attr_vals)
        a = t._buf
        k = (attrs_cache_key(attr_vals), a.shape, a.dtype)
        entry = cache.get(k) or prepare(k, [a], attr_vals)
        out = _empty(entry.shape, entry.npdt)
        r = _wrap(out, entry.dt)
        ins = [a]
        if not (entry.now and get_engine().run_now(entry.run, ins, out, (t,))):
            push1(entry, ins, out, r, (var_of(t),))
        if t.requires_grad and _grad.enabled:
            _record(runner, (t,), attr_vals, (r,))
        return r

    return call1a


def make_call2(runner: Any):
    """``f(t, u) -> Tensor`` for an op with two tensor operands, one result, no attributes
    (the module's example)."""
    cache = runner.cache
    prepare = runner.prepare
    push1 = runner.push1

    def call2(t, u):
        if t.device != "cpu" or u.device != "cpu":
            return runner.on_device(u.device if t.device == "cpu" else t.device, (t, u), ())
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
            _record(runner, (t, u), (), (r,))
        return r

    return call2


def make_call2a(runner: Any, npad: int):
    """``f(t, u, attr_vals) -> Tensor`` for an op whose first two operands are single
    tensors, followed by ``npad`` absent optional ones, with one result (``matmul(a, b)``,
    ``bias_add(x, b, axis=1)``); keyed like :func:`make_calln`'s call of the same.

    >>> from tdflow.dialect import standard_dialect
    >>> from tdflow.runtime.eager import OpRunner
    >>> from tdflow.runtime.tensor import tensor
    >>> d = standard_dialect()
    >>> bias_add = make_call2a(OpRunner(d.lookup("tdflow.bias_add"), ("axis",), d), 0)
    >>> bias_add(tensor([[1.0, 2.0]]), tensor([10.0, 20.0]), (1,)).tolist()
    [[11.0, 22.0]]
    """
    cache = runner.cache
    prepare = runner.prepare
    push1 = runner.push1
    pad = [None] * npad
    kpad = (None,) * npad
    # the last attribute values and their key: a call without attributes passes the same
    # tuple of defaults every time (one tuple, swapped whole: safe between threads). Kept
    # inline here and in make_update2, not in a helper: a call per op would be a frame more.
    last = [((), ())]

    def call2a(t, u, attr_vals):
        if t.device != "cpu" or u.device != "cpu":
            return runner.on_device(u.device if t.device == "cpu" else t.device,
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
            _record(runner, (t, u, *kpad), attr_vals, (r,))
        return r

    return call2a


def make_update2(runner: Any, npad: int):
    """``f(t, u, attr_vals) -> None`` for an op of no results writing its first operand
    alone, given two tensors and ``npad`` absent ones (``sgd_update(w, g, lr=...)``):
    ``run``'s in-place path without its loop (a first call, another device or a read-only
    buffer: ``run``).

    >>> from tdflow.dialect import standard_dialect
    >>> from tdflow.runtime.eager import OpRunner
    >>> d, w, g = standard_dialect(), Tensor(np.float32([1, 2])), Tensor(np.float32([4, 4]))
    >>> up = make_update2(OpRunner(d.lookup("tdflow.sgd_update"), ("learning_rate_val",), d), 4)
    >>> up(w, g, (0.25,)), up(w, g, (0.25,)), w.tolist()  # (the first call: run's path)
    (None, None, [-1.0, 0.0])
    """
    run = runner.run
    cache = runner.cache
    pad = [None] * npad
    kpad = (None,) * npad
    name, uses_blas = runner.name, runner.uses_blas
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


def make_fixed(runner: Any, attr_vals: tuple, tuples: bool = False):
    """``f(tensors) -> results`` for calls with the same attribute values every time (a
    gradient trace's step, replayed each backward): ``run`` with the attribute key made
    once, one result taking the one-result path without the general loop's questions
    (in-place operands, another device, several results: ``run``). ``tuples``: the
    results always as a tuple (none: ``()``), as a gradient's emitter hands them on.

    >>> from tdflow.dialect import standard_dialect
    >>> from tdflow.runtime.eager import OpRunner
    >>> from tdflow.runtime.tensor import tensor
    >>> d = standard_dialect()
    >>> relu = make_fixed(OpRunner(d.lookup("tdflow.relu"), (), d), (), tuples=True)
    >>> [t.tolist() for t in relu((tensor([-1.0, 2.0]),))]
    [[0.0, 2.0]]
    """
    run = runner.run
    if tuples:
        general = run

        def run(tensors, vals):  # noqa: F811 - the general call, its results as a tuple
            out = general(tensors, vals)
            return () if out is None else out if type(out) is tuple else (out,)

    if runner.mutable:
        return lambda tensors: run(tensors, attr_vals)
    ak = attrs_cache_key(attr_vals)
    cache = runner.cache
    push1 = runner.push1

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
            _record(runner, tensors, attr_vals, (r,))
        return (r,) if tuples else r

    return fixed
