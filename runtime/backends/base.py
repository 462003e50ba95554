"""What every backend shares: its kernel table and the launch of a kernel; and numpy buffers,
which the ``cpu`` and ``cudasim`` backends both use.

>>> class Demo(HostBuffers, Backend):
...     name = "cpu"
>>> b = Demo()
>>> b.allocate((2,), "f32").dtype, b.kernels.select("tdflow.relu", ("f32",)).name
(dtype('float32'), 'cpu.relu')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

import numpy as np
from tdflow.dialect.types import DTYPES
from tdflow.runtime.kernels.registry import KernelTable, kernel_table


class Backend:
    """A device: ``name``, its :class:`KernelTable` and ``launch``; subclasses add buffers."""

    name: str

    @cached_property
    def kernels(self) -> KernelTable:
        """The registered kernels of this device (the built-ins loaded)."""
        return kernel_table(self.name)

    def launch(self, kernel: Any, attrs: Mapping[str, Any], inputs: Sequence[Any],
               outs: Sequence[Any] | None = None) -> list[Any]:
        """Run ``kernel`` (``outs`` preallocated or ``None``): the kernel calling convention."""
        return kernel(attrs, inputs, outs)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


def c_contiguous(array: np.ndarray) -> np.ndarray:
    """``array`` in C order, its shape kept (``np.ascontiguousarray`` makes a 0-d array 1-d).

    >>> c_contiguous(np.array(5.0)).shape, c_contiguous(np.ones((2, 3)).T).flags.c_contiguous
    ((), True)
    """
    return array if array.flags.c_contiguous else np.ascontiguousarray(array)


class HostBuffers:
    """Buffers that are numpy arrays in host memory (C-contiguous where ``contiguous``: a
    kernel sees raw pointers); work finishes before a call returns, so nothing to wait for."""

    contiguous = False

    def allocate(self, shape: Sequence[int], dtype: str) -> np.ndarray:
        return np.empty(tuple(shape), DTYPES[dtype] if isinstance(dtype, str) else dtype)

    def zeros(self, shape: Sequence[int], dtype: str) -> np.ndarray:
        return np.zeros(tuple(shape), DTYPES[dtype] if isinstance(dtype, str) else dtype)

    def fill_zero(self, buf: np.ndarray) -> None:
        buf.fill(0)

    def from_numpy(self, array: np.ndarray) -> np.ndarray:
        return c_contiguous(array) if self.contiguous else array

    def to_numpy(self, buffer: np.ndarray) -> np.ndarray:
        return buffer

    def synchronize(self) -> None:
        """Host kernels finish before ``launch`` returns."""
