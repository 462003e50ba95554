"""The CPU backend: numpy arrays as buffers, the registered ``cpu`` kernels, direct calls.

>>> import numpy as np
>>> b = BACKEND
>>> buf = b.allocate((2, 3), "f32"); buf.shape, buf.dtype
((2, 3), dtype('float32'))
>>> k = b.kernels.select("tdflow.relu", ("f32",), {})
>>> b.launch(k, {}, [np.array([-1.0, 2.0], np.float32)])[0].tolist()
[0.0, 2.0]

BLAS threads: the kernels that call numpy's BLAS set tdflow's thread count for their calls
only (:mod:`tdflow.runtime.kernels._blas`).
"""

from __future__ import annotations

from tdflow.runtime.backends.base import Backend, HostBuffers


class CpuBackend(HostBuffers, Backend):
    """numpy arrays as buffers (any layout), the ``cpu`` kernels called directly."""

    name = "cpu"


BACKEND = CpuBackend()
