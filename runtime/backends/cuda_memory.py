"""Device memory of the ``cuda`` backend: :class:`DeviceArray` buffers and the
:class:`CachingAllocator` they come from (no pycuda import here: the allocator is handed the
driver's ``mem_alloc``).

>>> CachingAllocator.bucket(1), CachingAllocator.bucket(513), CachingAllocator.bucket(3 << 20)
(512, 1024, 4194304)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tdflow.core.errors import TdflowError

__all__ = ["CachingAllocator", "CudaError", "DeviceArray"]


class CudaError(TdflowError, RuntimeError):
    """A CUDA launch or copy failed, or a buffer was used the backend cannot use."""


class _Flags:
    """What callers ask of a numpy array's ``flags`` that a device buffer also answers."""

    writeable = True
    c_contiguous = True


class DeviceArray:
    """A dense, row-major tensor in device memory: ``shape``, numpy ``dtype``, ``ptr``.

    ``base`` keeps the owning allocation alive for a view; the owner hands its block back to
    the allocator when it is garbage collected.
    """

    __slots__ = ("shape", "dtype", "ptr", "nbytes", "base", "_block", "_allocator",
                 "__weakref__")
    flags = _Flags()

    def __init__(self, shape: Sequence[int], dtype: Any, ptr: int, nbytes: int,
                 base: DeviceArray | None = None, block: Any = None,
                 allocator: CachingAllocator | None = None) -> None:
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.ptr = int(ptr)
        self.nbytes = int(nbytes)
        self.base = base
        self._block = block
        self._allocator = allocator

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def view(self, shape: Sequence[int], dtype: Any = None) -> DeviceArray:
        """The first elements of this buffer seen as ``shape`` (no copy)."""
        dt = self.dtype if dtype is None else np.dtype(dtype)
        n = 1
        for d in shape:
            n *= int(d)
        if n * dt.itemsize > self.nbytes:
            raise CudaError(f"a {tuple(shape)} {dt} view needs {n * dt.itemsize} bytes; the "
                            f"buffer holds {self.nbytes}")
        return DeviceArray(shape, dt, self.ptr, n * dt.itemsize, self.base or self)

    def reshape(self, *shape: Any) -> DeviceArray:
        dims = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], tuple | list) \
            else shape
        if -1 in dims:
            known = 1
            for d in dims:
                if d != -1:
                    known *= d
            dims = tuple(self.size // max(known, 1) if d == -1 else d for d in dims)
        return self.view(dims)

    def __int__(self) -> int:
        return self.ptr

    def __del__(self) -> None:
        if self._block is not None and self._allocator is not None:
            try:
                self._allocator.release(self._block)
            except Exception:  # noqa: BLE001 - interpreter shutdown: the driver may be gone
                pass

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, ptr=0x{self.ptr:x})"


class CachingAllocator:
    """Device memory from ``alloc(nbytes)`` (pycuda's ``mem_alloc``), kept after use.

    Sizes round up to a bucket (512 B steps below 1 MiB, then 2 MiB steps) and a released
    block waits on its bucket's free list for the next request of that bucket. When the
    driver is out of memory, every cached block is freed and the request retried once.
    """

    SMALL = 1 << 20

    def __init__(self, alloc: Callable[[int], Any]) -> None:
        self._alloc = alloc
        self._free: dict[int, list[Any]] = {}
        self._lock = threading.Lock()
        self.allocated = 0  # bytes obtained from the driver and not given back
        self.cached = 0  # bytes of those waiting on free lists
        self.driver_calls = 0

    @classmethod
    def bucket(cls, nbytes: int) -> int:
        n = max(int(nbytes), 1)
        step = 512 if n < cls.SMALL else 2 << 20
        return (n + step - 1) // step * step

    def malloc(self, nbytes: int) -> tuple[int, Any]:
        """``(size, block)`` of a block of at least ``nbytes`` (``int(block)`` its pointer)."""
        size = self.bucket(nbytes)
        with self._lock:
            free = self._free.get(size)
            if free:
                self.cached -= size
                return size, free.pop()
        try:
            block = self._alloc(size)
        except Exception as first:  # noqa: BLE001 - pycuda's MemoryError: drop the cache, retry
            if not self.empty_cache():
                raise CudaError(f"cannot allocate {size} bytes of device memory: {first}") \
                    from first
            try:
                block = self._alloc(size)
            except Exception as e:  # noqa: BLE001
                raise CudaError(f"cannot allocate {size} bytes of device memory: {e}") from e
        self.driver_calls += 1
        with self._lock:
            self.allocated += size
        return size, block

    def release(self, entry: tuple[int, Any]) -> None:
        size, block = entry
        with self._lock:
            self._free.setdefault(size, []).append(block)
            self.cached += size

    def empty_cache(self) -> int:
        """Give every cached block back to the driver; the bytes freed."""
        with self._lock:
            blocks = [(s, b) for s, bs in self._free.items() for b in bs]
            self._free.clear()
            self.cached = 0
            self.allocated -= sum(s for s, _ in blocks)
        for _, b in blocks:
            b.free()
        return sum(s for s, _ in blocks)
