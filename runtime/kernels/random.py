"""Random ops: ``dropout`` (``dropout_grad`` is a formula op: its kernel is derived).

``dropout(in, _add_to_output?; rate, seed) -> (out, mask)``: ``mask`` (``i1``) keeps an
element with probability ``1 - rate``; ``out = in * mask / (1 - rate) (+ add)``. Each nonzero
``seed`` owns a counter-based stream (:mod:`tdflow.runtime.rng`) that advances call after
call; ``seed = 0`` uses the global one (``manual_seed``).

>>> import numpy as np
>>> out, mask = dropout({"rate": 0.0, "seed": 1}, [np.ones(3, np.float32)], [None, None])
>>> out.tolist(), mask.tolist()
([1.0, 1.0, 1.0], [True, True, True])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.runtime import rng
from tdflow.runtime.kernels._util import FLOATS, operands, out_buffer
from tdflow.runtime.kernels.registry import register_kernel, same_dtype


def manual_seed(seed: int) -> None:
    """Restart the stream ``dropout`` draws from when its ``seed`` attribute is 0
    (:func:`tdflow.runtime.rng.manual_seed`; every backend draws from the same streams)."""
    rng.manual_seed(seed)


@register_kernel("tdflow.dropout", "cpu", dtypes=FLOATS, match=same_dtype(1), num_outputs=2,
                 inplace={0: 0})
def dropout(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """out = in * mask * 1/(1-rate) (+ _add_to_output); mask = uniform >= rate.

    The uniforms are :func:`tdflow.runtime.rng.uniform` over the next ``in.size`` counters of
    the ``seed`` stream, reserved even at rate 0, so a call sequence draws the same masks on
    every backend (the generated CUDA kernel computes the same numbers).
    """
    x, add = operands(inputs, attrs, 2)
    rate = float(attrs["rate"])
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"dropout: rate must be in [0, 1], got {rate}")
    # Every si64 seed is valid (the attribute's kind): rng.take keys a negative one by its
    # two's complement, which no non-negative si64 shares.
    state = rng.take(int(attrs["seed"]), x.size)
    if rate > 0:
        keep = rng.uniform(state, x.size).reshape(x.shape) >= np.float32(rate)
    else:
        keep = np.ones(x.shape, bool)
    scale = 0.0 if rate >= 1.0 else 1.0 / (1.0 - rate)
    mask = out_buffer(outs, 1, x.shape, np.bool_)
    np.copyto(mask, keep, casting="unsafe")
    out = out_buffer(outs, 0, x.shape, x.dtype)
    np.multiply(x, keep, out=out, casting="unsafe")
    if scale != 1.0:
        np.multiply(out, scale, out=out, casting="unsafe")
    if add is not None:
        np.add(out, add, out=out, casting="unsafe")
    return [out, mask]
