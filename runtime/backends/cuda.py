"""The ``cuda`` backend: tdflow's generated CUDA C compiled by nvcc and run through pycuda.

pycuda is imported only when the backend is first built (``get_backend("cuda")``, which first
asks :func:`~tdflow.runtime.backends.cuda_status.cuda_status` and raises
``BackendUnavailableError("CUDA unavailable: <reason>")`` when it cannot run), never at
``import tdflow``.

* Buffers are :class:`DeviceArray` objects (shape, numpy dtype, device pointer, byte size);
  a view of the first elements of a larger buffer serves the executor's reused buffers.
* Memory comes from a :class:`CachingAllocator`: freed blocks go back to size-bucketed free
  lists and are reused, as PyTorch's allocator does, so a plan called in a loop or eager ops
  allocate from the driver only at first. Reuse is safe because every kernel and copy of the
  backend runs on its one stream, in order.
* One CUDA stream per backend (the engine's device context): kernels of an op are enqueued on
  it in the order the engine runs them, so the engine's dependency tracking holds on the GPU;
  :meth:`CudaBackend.to_numpy` (``Tensor.numpy()``) synchronises the stream, then copies back.
* :meth:`CudaBackend.prepare` compiles many ops' kernels in one nvcc call
  (:func:`~tdflow.runtime.backends.kernel_build.compile_cubin`, cached on disk) and loads the
  cubin with ``pycuda.driver.module_from_buffer``.

Launch arguments follow the contract of :mod:`tdflow.lowering.cuda.code`: ``in<i>``/``out<i>``
the buffers, ``tmp<i>`` scratch from the allocator, ``rng`` a ``uint64_t[2]`` ``(seed, offset)``
written before the launches, exactly as cudasim does, and ``s<k>`` a scalar passed by value
(:func:`signature` gives pycuda each one's C type).

>>> CachingAllocator.bucket(1), CachingAllocator.bucket(513), CachingAllocator.bucket(3 << 20)
(512, 1024, 4194304)
"""

from __future__ import annotations

import atexit
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from tdflow.dialect.types import DTYPES
from tdflow.lowering.cuda import KernelCode, LaunchSpec, translation_unit
from tdflow.lowering.cuda.code import SCALAR_FORMATS
from tdflow.lowering.cuda.common import prelude
from tdflow.runtime.backends.base import c_contiguous
from tdflow.runtime.backends.cuda_memory import CachingAllocator, CudaError, DeviceArray
from tdflow.runtime.backends.gpu import GpuBackend

if TYPE_CHECKING:
    from tdflow.dialect.opdef import OpDef

__all__ = ["CudaBackend", "CudaError", "CachingAllocator", "DeviceArray", "backend", "signature"]


def signature(code: KernelCode, args: Sequence[str]) -> str:
    """pycuda's ``prepare`` format of a launch's arguments: ``P`` for each device pointer, the
    ``struct`` format of each scalar ``s<k>`` (``f`` a float, ``d`` a double, ``q`` an int64).

    >>> from tdflow.lowering.cuda import KernelCode
    >>> signature(KernelCode("op", "", (), scalars=(("f32", 0.5), ("i64", 3))),
    ...           ("in0", "out0", "s0", "s1"))
    'PPfq'
    """
    return "".join(SCALAR_FORMATS[code.scalars[int(a[1:])][0]] if a[0] == "s" else "P"
                   for a in args)


class _Loaded:
    """Functions of one loaded cubin, prepared with their launches' signatures."""

    def __init__(self, module: Any, codes: Sequence[KernelCode]) -> None:
        self.module = module
        self.fns: dict[str, Any] = {}
        for c in codes:
            for ln in c.launches:
                if ln.kernel not in self.fns:
                    fn = module.get_function(ln.kernel)
                    fn.prepare(signature(c, ln.args))
                    self.fns[ln.kernel] = fn


class CudaBackend(GpuBackend):
    """See the module docstring. ``driver`` is ``pycuda.driver`` (tests pass a fake)."""

    name = "cuda"
    error = CudaError
    host_memory = False  # buffers live on the device: the executor copies arguments in

    def __init__(self, driver: Any = None, device: int = 0,
                 compile_cubin: Callable[..., bytes] | None = None) -> None:
        if driver is None:
            import pycuda.driver as driver  # noqa: PLC0415 - lazily, never at import tdflow

            driver.init()
        if compile_cubin is None:
            from tdflow.runtime.backends.kernel_build import compile_cubin
        super().__init__()
        self.drv = driver
        self._compile = compile_cubin
        self.context = driver.Device(device).retain_primary_context()
        self._tls = threading.local()
        self._make_current()
        self.stream = driver.Stream()
        self.allocator = CachingAllocator(driver.mem_alloc)
        # pycuda aborts the process when a thread's context stack is not empty as its module is
        # torn down ("PyCUDA ERROR: The context stack was not empty upon module cleanup"), so
        # the context this thread pushed is popped at exit, after the queued work is done (a
        # weak reference: a backend dropped before then has nothing to close)
        ref = weakref.ref(self)
        atexit.register(lambda: (b := ref()) is not None and b.close())

    def close(self) -> None:
        """Finish the queued work, give cached memory back and pop this thread's context (at
        exit; the backend is usable again afterwards: the next call pushes it again)."""
        if not getattr(self._tls, "current", False):
            return
        try:
            self.stream.synchronize()
            self.allocator.empty_cache()
        finally:
            self.context.pop()
            self._tls.current = False

    def _make_current(self) -> None:
        # a context is current per thread: engine workers push it on their first CUDA call
        if not getattr(self._tls, "current", False):
            self.context.push()
            self._tls.current = True

    # -- buffers ------------------------------------------------------------------------------
    def allocate(self, shape: Sequence[int], dtype: str) -> DeviceArray:
        self._make_current()
        dt = DTYPES[dtype] if isinstance(dtype, str) else np.dtype(dtype)
        n = 1
        for d in shape:
            n *= int(d)
        entry = self.allocator.malloc(n * dt.itemsize)
        return DeviceArray(shape, dt, int(entry[1]), n * dt.itemsize, block=entry,
                           allocator=self.allocator)

    def zeros(self, shape: Sequence[int], dtype: str) -> DeviceArray:
        buf = self.allocate(shape, dtype)
        self.fill_zero(buf)
        return buf

    def fill_zero(self, buf: DeviceArray) -> None:
        if buf.nbytes:
            self._make_current()
            self.drv.memset_d8_async(buf.ptr, 0, buf.nbytes, self.stream)

    def from_numpy(self, array: np.ndarray) -> DeviceArray:
        """A device copy of ``array`` (enqueued on the stream), of its shape (0-d too)."""
        a = c_contiguous(array)
        buf = self.allocate(a.shape, a.dtype)
        self.copy_from_host(buf, a)
        return buf

    def copy_from_host(self, buf: DeviceArray, array: np.ndarray) -> None:
        a = np.ascontiguousarray(array, dtype=buf.dtype)
        if a.nbytes != buf.nbytes:
            raise CudaError(f"copying {a.nbytes} bytes into a {buf.nbytes}-byte device buffer")
        if a.nbytes:
            self._make_current()
            # pageable host memory: the driver stages the copy before the call returns, so the
            # array may go away afterwards; the copy stays ordered on the stream
            self.drv.memcpy_htod_async(buf.ptr, a, self.stream)

    def to_numpy(self, buf: Any) -> np.ndarray:
        """The buffer's values on the host: waits for the stream, then copies."""
        if isinstance(buf, np.ndarray):
            return buf
        out = np.empty(buf.shape, buf.dtype)
        self.synchronize()
        if buf.nbytes:
            self.drv.memcpy_dtoh(out, buf.ptr)
        return out

    def synchronize(self) -> None:
        self._make_current()
        self.stream.synchronize()

    # -- generated code -----------------------------------------------------------------------
    def source_of(self, codes: Sequence[KernelCode]) -> str:
        """The ``.cu`` translation unit nvcc compiles for ``codes``."""
        return translation_unit(codes, prelude("nvcc"))

    def load(self, codes: Sequence[KernelCode]) -> _Loaded:
        """One nvcc call for ``codes`` (cached on disk), the cubin loaded."""
        cubin = self._compile(self.source_of(codes), kernels=sum(len(c.kernels) for c in codes))
        self._make_current()
        return _Loaded(self.drv.module_from_buffer(cubin), codes)

    def copy_bytes(self, buf: DeviceArray, data: bytes) -> None:
        self.copy_from_host(buf.view((len(data),), np.uint8), np.frombuffer(data, np.uint8))

    def scalar(self, dtype: str, value: Any, keep: list[Any]) -> Any:
        return value  # by value, packed by pycuda in the prepared format

    def run(self, code: KernelCode, inputs: Sequence[Any], outs: Sequence[Any],
            rng: tuple[int, int] | None = None) -> list[Any]:
        """Enqueue ``code``'s launches on the stream over device buffers (``outs`` given)."""
        self._make_current()
        return super().run(code, inputs, outs, rng)

    def launch_one(self, module: _Loaded, launch: LaunchSpec, args: Sequence[Any],
                   op: str) -> None:
        try:
            module.fns[launch.kernel].prepared_async_call(launch.grid, launch.block,
                                                          self.stream, *args)
        except Exception as e:  # noqa: BLE001 - pycuda's LaunchError and friends
            raise CudaError(f"{op}: launching {launch.kernel} failed: {e}") from e

    def run_op(self, op: str, attrs: Mapping[str, Any], inputs: Sequence[Any],
               outs: Sequence[Any], opdef: OpDef | None = None, rng: tuple[int, int] | None = None,
               generator: Any = None) -> list[Any]:
        """Generate (once per types), compile (once per code) and enqueue ``op``.

        Host (numpy) buffers are accepted too, for tests and debugging: they are copied to the
        device, the op runs, and the results (and operands, which an op without results
        updates in place) are copied back before this returns."""
        if all(o is not None for o in outs) and any(
                isinstance(a, np.ndarray) for a in (*inputs, *outs)):
            return self._on_host_buffers(op, attrs, inputs, outs, opdef, rng, generator)
        return super().run_op(op, attrs, inputs, outs, opdef, rng, generator)

    def _on_host_buffers(self, op: str, attrs: Mapping[str, Any], inputs: Sequence[Any],
                         outs: Sequence[Any], opdef: OpDef | None, rng: tuple[int, int] | None,
                         generator: Any) -> list[Any]:
        def dev(a: Any) -> Any:
            return self.from_numpy(a) if isinstance(a, np.ndarray) else a

        d_in = [None if a is None else dev(a) for a in inputs]
        d_out = [dev(o) for o in outs]
        self.run_op(op, attrs, d_in, d_out, opdef, rng, generator)
        for host, d in (*zip(inputs, d_in), *zip(outs, d_out)):
            if isinstance(host, np.ndarray) and host.flags.writeable:
                host[...] = self.to_numpy(d).reshape(host.shape)
        return list(outs)

    @staticmethod
    def pointer(a: Any, what: str) -> int:
        if isinstance(a, DeviceArray):
            return a.ptr
        raise CudaError(f"{what}: a {type(a).__name__} is not a cuda device buffer "
                        f"(move it with tdflow.tensor(x, device='cuda') or .to('cuda'))")

    def __repr__(self) -> str:
        return f"<CudaBackend stream={self.stream!r}>"


_instance: list[CudaBackend] = []


def backend() -> CudaBackend:
    """The process's cuda backend (device 0), built on first use."""
    if not _instance:
        _instance.append(CudaBackend())
    return _instance[0]
