"""How the engine and the functional API attach to :class:`~tdflow.runtime.tensor.Tensor`.

A tensor computed by an eager op owns an engine :class:`~tdflow.runtime.engine.Var`, kept in
the tensor's ``_sync`` slot: reading the tensor (``.numpy()``) calls it, which waits for the op
that writes it and raises that op's failure. A tensor made from data has no var until an eager
op first reads it; it gets one then, so later in-place writes are ordered after that read.

>>> from tdflow.runtime.tensor import tensor
>>> t = tensor([1.0])
>>> var_of(t) is var_of(t)
True
"""

from __future__ import annotations

import threading

import numpy as np

from .engine import Var, get_engine
from .tensor import Tensor

__all__ = ["Tensor", "buffer_of", "new_result", "var_of"]

_wrap = Tensor._wrap
_attach_lock = threading.Lock()


def buffer_of(t: Tensor) -> np.ndarray:
    """The tensor's buffer (possibly not yet written: for shapes, dtypes and pushing ops)."""
    return t._buf


def var_of(t: Tensor) -> Var:
    """The tensor's engine var, created on first use."""
    s = t._sync
    if type(s) is Var:
        return s
    if s is not None:  # someone else's pending-work hook: settle it before we track the tensor
        s()
    with _attach_lock:  # two threads reading a fresh tensor at once must agree on one var
        s = t._sync
        if type(s) is not Var:
            s = t._sync = get_engine().new_var()
    return s


def new_result(array: np.ndarray) -> Tensor:
    """A tensor for a result buffer an op is about to be pushed to write."""
    t = _wrap(array)
    t._sync = get_engine().new_var()
    return t
