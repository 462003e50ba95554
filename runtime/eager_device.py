"""Eager ops on GPU devices (``cudasim``, ``cuda``): the runner of an op on one device.

:meth:`OpRunner.on_device <tdflow.runtime.eager.OpRunner.on_device>` hands a call whose tensors
live on a GPU device to :func:`run_on_device`; the CPU's hot paths stay as they are.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .eager_call import EagerError, any_requires_grad, attrs_cache_key
from .engine import Var, get_engine
from .grad_mode import MODE as _grad
from .tape import record as _record
from .tensor_glue import Tensor, var_of

_wrap = Tensor._wrap


def run_on_device(runner: Any, tensors: tuple, attr_vals: tuple) -> Any:
    """Run ``runner`` (an :class:`~tdflow.runtime.eager.OpRunner` of a GPU device) on tensors of
    its device: its kernel, results allocated by the device's backend, the work ordered by the
    engine like any other op's.

    >>> from tdflow.dialect import standard_dialect
    >>> from tdflow.runtime.eager import OpRunner
    >>> from tdflow.runtime.tensor import tensor
    >>> d = standard_dialect()
    >>> relu = OpRunner(d.lookup("tdflow.relu"), (), d, "cudasim")
    >>> run_on_device(relu, (tensor([-1.0, 2.0], device="cudasim"),), ()).numpy().tolist()
    [0.0, 2.0]
    """
    from tdflow.runtime.backends import get_backend

    arrays: list = []
    reads: list = []
    writes: list = []
    key: list = [attrs_cache_key(attr_vals)]
    for i, t in enumerate(tensors):
        if t is None:
            arrays.append(None)
            key.append(None)
            continue
        group = t if type(t) is tuple else (t,)
        if type(t) is tuple:
            key.append(len(t))
        for e in group:
            if e.device != runner.device:
                raise EagerError(f"'{runner.name}': operand tensors are on devices "
                                 f"{runner.device!r} and {e.device!r}; move them to one "
                                 f"device first (tensor.to({runner.device!r}))")
            a = e._buf
            if type(a) is np.ndarray and not a.flags.c_contiguous:
                # a broadcast view (autograd's shape-only operands): GPU kernels index
                # dense row-major buffers
                a = np.ascontiguousarray(a)
            arrays.append(a)
            key.append(a.shape)
            key.append(a.dtype)
            v = var_of(e)
            if runner.mutable and i in runner.mutable:
                e._version += 1
                writes.append(v)
            else:
                reads.append(v)
    k = tuple(key)
    entry = runner.cache.get(k)
    if entry is None:
        entry = runner.prepare(k, arrays, attr_vals)
    backend = get_backend(runner.device)
    eng = get_engine()
    outs = [backend.allocate(shape, dt) for shape, _, dt in entry.specs]
    results = []
    for o, (_, _, dt) in zip(outs, entry.specs):
        r = _wrap(o, dt, runner.device)
        r._sync = v = Var(None, eng)
        results.append(r)
        writes.append(v)
    reads = [v for v in dict.fromkeys(reads) if v not in writes]
    fn, attrs = entry.fn, entry.attrs

    def work():
        fn(attrs, arrays, outs)

    eng.push(work, tuple(reads), tuple(dict.fromkeys(writes)), name=runner.name,
             cost=entry.cost, uses_blas=False)
    if results and _grad.enabled and any_requires_grad(tensors):
        _record(runner, tensors, attr_vals, results)
    if runner.n_results == 1:
        return results[0]
    return tuple(results) if results else None
