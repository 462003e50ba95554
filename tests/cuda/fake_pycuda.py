"""A fake ``pycuda.driver`` for testing the cuda backend's bookkeeping without a GPU.

Device memory is host memory (numpy ``uint8`` arrays; a pointer is the array's address), so
the kernels can run for real: ``module_from_buffer`` gets the nvcc translation unit the
backend compiled (the fake ``compile_cubin`` returns the source itself), swaps CUDA's headers
for the cudasim shim and builds it with g++; ``prepared_async_call`` runs the kernel through
cudasim's launch wrapper. Every asynchronous call (kernel launches, ``*_async`` copies and
memsets) is queued on its stream and runs only at ``Stream.synchronize()``, so a read that
forgets to wait sees stale memory and a test catches it; ``memcpy_dtoh`` refuses to run while
a stream has queued work. ``log`` records every call.
"""

from __future__ import annotations

import ctypes
import re
import struct
from types import SimpleNamespace
from typing import Any

import numpy as np
from tdflow.lowering.cuda.common import prelude
from tdflow.runtime.backends.cudasim import _wrappers
from tdflow.runtime.backends.kernel_build import build_shared_object

# the struct format pycuda packs each C scalar type with
_FORMATS = {"float": "f", "double": "d", "int8_t": "b", "int16_t": "h", "int32_t": "i",
            "int64_t": "q", "uint8_t": "B", "uint16_t": "H", "uint32_t": "I", "uint64_t": "Q"}


class FakeAllocation:
    def __init__(self, driver: FakeDriver, nbytes: int) -> None:
        self.array = np.zeros(max(nbytes, 1), np.uint8)
        self.ptr = self.array.ctypes.data
        self.nbytes = nbytes
        self.driver = driver
        driver.live[self.ptr] = self

    def __int__(self) -> int:
        return self.ptr

    def free(self) -> None:
        self.driver.log.append(("free", self.nbytes))
        del self.driver.live[self.ptr]


class FakeStream:
    def __init__(self, driver: FakeDriver) -> None:
        self.driver = driver
        self.queue: list[Any] = []
        driver.streams.append(self)

    def synchronize(self) -> None:
        self.driver.log.append(("sync",))
        queue, self.queue = self.queue, []
        for work in queue:
            work()


class FakeContext:
    def __init__(self, driver: FakeDriver) -> None:
        self.driver = driver

    def push(self) -> None:
        self.driver.log.append(("push",))

    def pop(self) -> None:
        self.driver.log.append(("pop",))


class FakeFunction:
    def __init__(self, driver: FakeDriver, lib: Any, name: str,
                 params: list[str] | None = None) -> None:
        self.driver, self.name, self.params = driver, name, params
        self.fn = getattr(lib, f"tdf_launch_{name}")
        self.fn.restype = ctypes.c_int
        self.fn.argtypes = [ctypes.c_uint] * 6 + [ctypes.POINTER(ctypes.c_void_p)]
        self.lib = lib
        self.signature: str | None = None

    def prepare(self, signature: str) -> None:
        if self.params is not None:  # pycuda packs by this format: it must be the C signature
            assert len(signature) == len(self.params), (signature, self.params)
            for fmt, param in zip(signature, self.params):
                ctype = param.split()[-2] if fmt != "P" else ""
                assert ("*" in param) == (fmt == "P") and (
                    fmt == "P" or _FORMATS[ctype] == fmt), (self.name, signature, self.params)
        self.signature = signature

    def prepared_async_call(self, grid: tuple, block: tuple, stream: FakeStream,
                            *args: int) -> None:
        assert self.signature is not None and len(self.signature) == len(args), \
            (self.signature, args)
        # pycuda takes a non-tuple block for the deprecated stream-first calling convention
        assert isinstance(block, tuple) and isinstance(grid, tuple) and len(grid) <= 3
        ptrs: list[int] = []
        held: list[Any] = []
        for fmt, a in zip(self.signature, args):
            if fmt == "P":
                assert isinstance(a, int) and self.driver.owner(a) is not None, a
                ptrs.append(a)
                continue
            # a scalar: packed as pycuda packs it (struct, native layout), so a value that
            # does not fit its format fails here as it would on a GPU; the launcher reads it
            # through a pointer
            assert fmt in "fdbhiqBHIQ" and not isinstance(a, bool), (fmt, a)
            assert isinstance(a, float) if fmt in "fd" else isinstance(a, int), (fmt, a)
            buf = ctypes.create_string_buffer(struct.pack(fmt, a), struct.calcsize(fmt))
            held.append(buf)
            ptrs.append(ctypes.addressof(buf))
        self.driver.log.append(("launch", self.name, tuple(grid), tuple(block), stream))
        self.driver.scalars.append((self.name, self.signature, tuple(
            a for fmt, a in zip(self.signature, args) if fmt != "P")))
        argv = (ctypes.c_void_p * max(1, len(ptrs)))(*ptrs)

        def work(held: list[Any] = held) -> None:  # the packed scalars live until it runs
            rc = self.fn(*grid, *block, argv)
            assert rc == 0, self.lib.tdf_error_text()

        stream.queue.append(work)


class FakeModule:
    def __init__(self, driver: FakeDriver, source: str) -> None:
        head = prelude("nvcc").rstrip()
        assert source.startswith(head), "the backend compiles the nvcc prelude first"
        # the code objects the translation unit holds: namespace digest -> kernel names
        codes = []
        for digest, body in re.findall(r"namespace tdf_(\w+) \{\n(.*?)\n\}  // namespace",
                                       source, re.S):
            names = re.findall(r'extern "C" __global__\s+(?:__launch_bounds__\([^)]*\)\s+)?'
                               r'void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\s*\(', body)
            codes.append(SimpleNamespace(digest=digest, kernels=tuple(names)))
        # each kernel's parameter list, to check the format pycuda is prepared with against it
        self.params = {name: [p.strip() for p in plist.split(",") if p.strip()]
                       for name, plist in re.findall(r'extern "C" __global__\s+(?:__launch_bounds__'
                                                     r'\([^)]*\)\s+)?void\s+(\w+)\s*\(([^)]*)\)',
                                                     source)}
        sim = prelude("sim").rstrip() + source[len(head):] + "\n" + _wrappers(codes)
        self.lib = ctypes.CDLL(str(build_shared_object(sim)))
        self.lib.tdf_error_text.restype = ctypes.c_char_p
        self.driver = driver

    def get_function(self, name: str) -> FakeFunction:
        self.driver.log.append(("get_function", name))
        return FakeFunction(self.driver, self.lib, name, self.params.get(name))


class FakeDriver:
    """The subset of ``pycuda.driver`` the backend calls."""

    def __init__(self) -> None:
        self.log: list[tuple] = []
        self.live: dict[int, FakeAllocation] = {}
        self.streams: list[FakeStream] = []
        self.compiled: list[str] = []
        self.scalars: list[tuple] = []  # (kernel, signature, scalar values) of each launch

    # the backend's compile_cubin (no nvcc): the "cubin" is the source text
    def compile_cubin(self, source: str, kernels: int = 1) -> bytes:
        self.compiled.append(source)
        return source.encode()

    def init(self) -> None:
        self.log.append(("init",))

    def Device(self, index: int) -> Any:  # noqa: N802 - pycuda's spelling
        return SimpleNamespace(retain_primary_context=lambda: FakeContext(self))

    def Stream(self) -> FakeStream:  # noqa: N802
        return FakeStream(self)

    def mem_alloc(self, nbytes: int) -> FakeAllocation:
        self.log.append(("mem_alloc", nbytes))
        return FakeAllocation(self, nbytes)

    def owner(self, ptr: int) -> tuple[FakeAllocation, int] | None:
        for base, a in self.live.items():
            if base <= ptr < base + max(a.nbytes, 1):
                return a, ptr - base
        return None

    def _bytes(self, ptr: int, n: int) -> np.ndarray:
        found = self.owner(ptr)
        assert found is not None, f"0x{ptr:x} is not device memory"
        a, off = found
        assert off + n <= a.nbytes, "out of bounds device access"
        return a.array[off:off + n]

    def memcpy_htod_async(self, dest: int, src: np.ndarray, stream: FakeStream) -> None:
        data = np.frombuffer(np.ascontiguousarray(src).tobytes(), np.uint8)  # staged now
        self.log.append(("htod", data.size, stream))
        stream.queue.append(lambda: self._bytes(int(dest), data.size).__setitem__(
            slice(None), data))

    def memset_d8_async(self, dest: int, value: int, count: int, stream: FakeStream) -> None:
        self.log.append(("memset", count, stream))
        stream.queue.append(lambda: self._bytes(int(dest), count).fill(value))

    def memcpy_dtoh(self, dest: np.ndarray, src: int) -> None:
        assert all(not s.queue for s in self.streams), "dtoh while work is still queued"
        self.log.append(("dtoh", dest.nbytes))
        dest.reshape(-1).view(np.uint8)[:] = self._bytes(int(src), dest.nbytes)

    def module_from_buffer(self, cubin: bytes) -> FakeModule:
        self.log.append(("module_from_buffer",))
        return FakeModule(self, cubin.decode())

    def calls(self, kind: str) -> list[tuple]:
        return [e for e in self.log if e[0] == kind]
