"""CPU kernels of the ops in tdflow/ops/math.td (issue 13).

The elementwise ops (abs, rsqrt, erf, silu, fast_gelu, softplus, scalar_div, where) have
formulas: their kernels are derived in :mod:`.elementwise`. What is left is ``add_n``.

>>> import numpy as np
>>> from tdflow.runtime.kernels.registry import select_kernel
>>> k = select_kernel("tdflow.add_n", "cpu", ("f32", "f32", "f32"), {})
>>> k({}, [np.ones(2, np.float32), np.full(2, 2, np.float32), np.full(2, 3, np.float32)])[0].tolist()
[6.0, 6.0]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.runtime.kernels._util import NUMERIC
from tdflow.runtime.kernels.registry import register_kernel


@register_kernel("tdflow.add_n", "cpu", dtypes=NUMERIC,
                 match=lambda d, a: all(t == d[0] for t in d), inplace={0: 0})
def add_n(attrs: Mapping[str, Any], inputs: Sequence[np.ndarray],
          outs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
    """out = in[0] + in[1] + ... , added left to right in the inputs' type."""
    if len(inputs) < 2:
        raise ValueError(f"tdflow.add_n: needs at least 2 inputs, got {len(inputs)}")
    first = inputs[0]
    for i, a in enumerate(inputs[1:], 1):
        if a.shape != first.shape:
            raise ValueError(f"tdflow.add_n: input {i} has shape {a.shape} but input 0 has "
                             f"{first.shape}")
    out = outs[0] if outs else None
    if out is None:
        out = np.empty(first.shape, first.dtype)
    np.add(first, inputs[1], out=out)
    for a in inputs[2:]:
        np.add(out, a, out=out)
    return [out]
