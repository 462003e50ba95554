"""The CPU backend: numpy arrays as buffers, the registered ``cpu`` kernels, direct calls.

>>> import numpy as np
>>> b = BACKEND
>>> buf = b.allocate((2, 3), "f32"); buf.shape, buf.dtype
((2, 3), dtype('float32'))
>>> k = b.kernels.select("tdflow.relu", ("f32",), {})
>>> b.launch(k, {}, [np.array([-1.0, 2.0], np.float32)])[0].tolist()
[0.0, 2.0]

BLAS threads: numpy's OpenBLAS starts one thread per core; next to the engine's threads (or
other jobs) that oversubscribes small machines, and spinning OpenBLAS threads then make a
matmul several times slower (measured: 5x on a loaded 2-core machine). When the kernel table
first loads, :func:`configure_blas_threads` sets ``cores - 1`` threads (1 on 2 cores) through
OpenBLAS's own ``openblas_set_num_threads``; ``TDFLOW_BLAS_THREADS=N`` overrides, and a user's
``OPENBLAS_NUM_THREADS``/``OMP_NUM_THREADS`` is respected.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

from tdflow.runtime.backends.base import Backend, HostBuffers


class CpuBackend(HostBuffers, Backend):
    """numpy arrays as buffers (any layout), the ``cpu`` kernels called directly."""

    name = "cpu"


BACKEND = CpuBackend()


def _openblas() -> tuple[Any, Any] | None:
    """(set, get) functions of the OpenBLAS numpy loaded, if it is OpenBLAS."""
    try:
        with open("/proc/self/maps") as f:
            paths = {ln.split()[-1] for ln in f if "openblas" in ln.lower() and "/" in ln}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for suffix in ("", "64_", "_64_"):
            for prefix in ("openblas", "scipy_openblas"):
                setter = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                getter = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                if setter is not None and getter is not None:
                    return setter, getter
    return None


def set_blas_threads(n: int) -> bool:
    """Limit BLAS to ``n`` threads; ``False`` when the BLAS is not one we can control."""
    fns = _openblas()
    if fns is None:
        return False
    fns[0](ctypes.c_int(int(n)))
    return True


def blas_threads() -> int | None:
    """Threads BLAS uses now (``None`` if unknown)."""
    fns = _openblas()
    return int(fns[1]()) if fns is not None else None


_configured: list[int | None] = []


def default_blas_threads() -> int:
    """One BLAS thread per usable core but one (the engine's calling thread keeps working).

    On 2 cores that is 1: OpenBLAS threads spin while they wait, and two of them next to a
    busy Python thread (or other jobs) make a matmul several times slower, not faster.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


def configure_blas_threads() -> int | None:
    """Apply the BLAS thread policy once per process; returns the count set (or ``None``).

    ``TDFLOW_BLAS_THREADS=N`` wins; a user's own ``OPENBLAS_NUM_THREADS``/``OMP_NUM_THREADS``
    is left alone; otherwise :func:`default_blas_threads`. Called when the kernel table loads.
    """
    if _configured:
        return _configured[0]
    env = os.environ.get("TDFLOW_BLAS_THREADS")
    n: int | None
    if env:
        n = int(env)
    elif os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS"):
        n = None
    else:
        n = default_blas_threads()
    if n is not None and not set_blas_threads(n):
        n = None
    _configured.append(n)
    return n
