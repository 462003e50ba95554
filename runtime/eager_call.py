"""What every eager op path shares (:mod:`~tdflow.runtime.eager` on the CPU,
:mod:`~tdflow.runtime.eager_device` on GPU devices): the cache key of attribute values, the
questions asked of the call's tensors, and the error a rejected call raises.

>>> from tdflow.runtime.tensor import tensor
>>> device_of((tensor([1.0]), None)), any_requires_grad((tensor([1.0], requires_grad=True),))
(None, True)
"""

from __future__ import annotations

from math import copysign as _copysign
from typing import Any

from tdflow.core.errors import TdflowError

from .kernels._util import settle as _settle
from .tensor_glue import var_of

__all__ = ["EagerError", "any_requires_grad", "attrs_cache_key", "device_of", "distinct_vars",
           "settled_result", "settled_results"]


def attrs_cache_key(attr_vals: tuple) -> tuple:
    """``attr_vals`` as a cache key that tells every float apart: ``-0.0 == 0.0`` and a NaN
    equals nothing, so the plain tuple would give ``t * 0.0`` the cached entry of ``t * -0.0``
    and miss (and grow the cache) on every NaN. Only such values are rewritten (the exact
    ``float.hex``), so the common call keys on the tuple itself.

    >>> attrs_cache_key((0.5, 3)), attrs_cache_key((-0.0,)) == attrs_cache_key((0.0,))
    ((0.5, 3), False)
    >>> attrs_cache_key((float("nan"),)) == attrs_cache_key((float("nan"),))
    True
    """
    for v in attr_vals:
        t = type(v)
        if t is float:  # the common kinds first, without a call
            if v == v and (v != 0.0 or _copysign(1.0, v) > 0.0):
                continue
        elif t is bool or t is int or t is str:
            continue
        elif t is tuple:  # (axes, shapes: a loop, not a generator per call)
            for x in v:
                if isinstance(x, float) and (x != x or x == 0.0 and _copysign(1.0, x) < 0.0):
                    break
            else:
                continue
        elif not _inexact(v):
            continue
        return tuple(_exact(v) for v in attr_vals)
    return attr_vals


def _inexact(v: Any) -> bool:
    """A float that equality would confuse: -0.0 (equal to 0.0) or a NaN (equal to nothing)."""
    return isinstance(v, float) and (v != v or v == 0.0 and _copysign(1.0, v) < 0.0)


def _exact(v: Any) -> Any:
    if isinstance(v, float):
        return ("float", float(v).hex())
    if type(v) is tuple:
        return tuple(_exact(x) for x in v)
    return v


def any_requires_grad(tensors: tuple) -> bool:
    """Whether a tensor among ``tensors`` (``None``, tensors and tuples of them) requires a
    gradient: the call is then recorded on the tape.

    >>> any_requires_grad((None, ()))
    False
    """
    for t in tensors:
        if t is None:
            continue
        if type(t) is tuple:
            if any(e.requires_grad for e in t):
                return True
        elif t.requires_grad:
            return True
    return False


def device_of(tensors: tuple) -> str | None:
    """The first non-CPU device among ``tensors`` (None when all are on the CPU).

    >>> device_of((None,)) is None
    True
    """
    for t in tensors:
        if t is None:
            continue
        if type(t) is tuple:
            for e in t:
                if e.device != "cpu":
                    return e.device
        elif t.device != "cpu":
            return t.device
    return None


class EagerError(TdflowError, ValueError):
    """An eager call the op's hooks reject (shapes, dtypes, attributes); names the op."""


def settled_result(fn: Any, attrs: dict) -> Any:
    """``run(inputs, out)`` of a one-result kernel ``fn(attrs, inputs, outs)``: its result
    settled into ``out``.

    >>> import numpy as np
    >>> out = np.zeros(2)
    >>> settled_result(lambda attrs, ins, outs: [ins[0] * 2], {})([np.ones(2)], out)
    >>> out.tolist()
    [2.0, 2.0]
    """
    def run(ins, out):
        outs = [out]  # a fresh list per call: a kernel may keep or change what it is given
        _settle(fn(attrs, ins, outs), outs, fn)

    return run


def settled_results(fn: Any, attrs: dict) -> Any:
    """``run(inputs, outs)`` of a kernel of several results: its results settled into
    ``outs`` (the buffers the caller wraps as results).

    >>> import numpy as np
    >>> outs = [np.zeros(1), np.zeros(1)]
    >>> settled_results(lambda attrs, ins, o: [ins[0] + 1, ins[0] - 1], {})([np.ones(1)], outs)
    >>> [o.tolist() for o in outs]
    [[2.0], [0.0]]
    """
    def run(ins, outs):
        given = list(outs)  # a copy: a kernel may keep or change the list it is given
        _settle(fn(attrs, ins, given), given, fn)

    return run


def distinct_vars(tensors: tuple) -> tuple:
    """The distinct engine vars of the tensors among ``tensors`` (``None`` skipped), in
    order; a tensor without one gets one.

    >>> from tdflow.runtime.tensor import tensor
    >>> t = tensor([1.0])
    >>> len(distinct_vars((t, None, t)))
    1
    """
    out: list = []
    for t in tensors:
        if t is not None:
            v = var_of(t)
            if v not in out:
                out.append(v)
    return tuple(out)
