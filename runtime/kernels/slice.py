"""``slice`` and ``slice_grad``: numpy basic slicing, one ``(start, stop, step)`` per dim.

>>> import numpy as np
>>> attrs = {"start": [1, 0], "stop": [9223372036854775807, 3], "step": [1, 2]}
>>> slice_({**attrs}, [np.arange(12).reshape(3, 4)], [None])[0].tolist()
[[4, 6], [8, 10]]
>>> slice_grad({**attrs, "like_shape": [3, 4]}, [np.ones((2, 2))], [None])[0].tolist()
[[0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0, 0.0]]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.runtime.kernels._util import ALL_DTYPES, out_buffer, store
from tdflow.runtime.kernels.registry import register_kernel


def index(attrs: Mapping[str, Any], rank: int) -> tuple[slice, ...]:
    """The numpy index of the slice; ``ValueError`` naming the attribute when the entries do
    not match ``rank`` or a step is not positive (the hooks say the same at verify time)."""
    start, stop, step = (list(attrs[k]) for k in ("start", "stop", "step"))
    for name, vals in (("start", start), ("stop", stop), ("step", step)):
        if len(vals) != rank:
            raise ValueError(f"slice: {name} has {len(vals)} entries but the tensor has rank "
                             f"{rank}")
    for i, s in enumerate(step):
        if int(s) <= 0:
            raise ValueError(f"slice: step[{i}] is {s}; only positive steps are supported")
    return tuple(slice(int(a), int(b), int(c)) for a, b, c in zip(start, stop, step))


@register_kernel("tdflow.slice", "cpu", dtypes=ALL_DTYPES)
def slice_(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """``x[start:stop:step, ...]`` (a copy)."""
    x = inputs[0]
    return [store(outs, x[index(attrs, x.ndim)], x.dtype)]


@register_kernel("tdflow.slice_grad", "cpu", dtypes=ALL_DTYPES)
def slice_grad(attrs: Mapping[str, Any], inputs: Sequence[Any],
               outs: Sequence[Any]) -> list[np.ndarray]:
    """Zeros of ``like_shape`` with ``dy`` written where ``slice`` reads."""
    dy = inputs[0]
    like = tuple(int(d) for d in attrs["like_shape"])
    idx = index(attrs, len(like))
    dx = out_buffer(outs, 0, like, dy.dtype)
    dx.fill(0)
    target = dx[idx]
    if target.shape != dy.shape:
        raise ValueError(f"slice_grad: dy has shape {dy.shape} but the slice of like_shape "
                         f"{list(like)} has shape {target.shape}")
    dx[idx] = dy
    return [dx]
