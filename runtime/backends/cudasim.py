"""The ``cudasim`` backend: tdflow's generated CUDA C, compiled by g++ and run on the CPU.

Buffers are numpy arrays (C-contiguous). A kernel is the op's generated
:class:`~tdflow.lowering.cuda.KernelCode`: its ``.cu`` text is compiled unchanged after
``cudasim_shim.h`` (threads as fibers, ``__syncthreads`` and warp shuffles as barriers,
divergent barriers detected) and each launch is run block by block through ctypes. It is slow by
design: it exists so machines without a GPU test the numerics of every generated kernel, and so
users can debug theirs (``TDFLOW_CUDASIM_ASAN=1`` builds with AddressSanitizer;
run python with ``LD_PRELOAD=$(g++ -print-file-name=libasan.so)`` then).

>>> import numpy as np
>>> from tdflow.runtime.backends import get_backend
>>> sim = get_backend("cudasim")
>>> k = sim.kernels.select("tdflow.relu", ("f32",), {})
>>> sim.launch(k, {}, [np.array([-1.0, 2.0, -3.0], np.float32)], [np.empty(3, np.float32)])[0]
array([0., 2., 0.], dtype=float32)
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from tdflow.dialect.types import DTYPES
from tdflow.lowering.cuda import KernelCode, LaunchSpec, translation_unit
from tdflow.lowering.cuda.common import prelude
from tdflow.runtime.backends.base import HostBuffers
from tdflow.runtime.backends.gpu import GpuBackend
from tdflow.runtime.backends.kernel_build import CompileError, build_shared_object

from tdflow.core.errors import TdflowError

__all__ = ["CudasimBackend", "BACKEND", "CudasimError", "sim_source"]


class CudasimError(TdflowError, RuntimeError):
    """A simulated kernel stopped: a divergent barrier, or a launch the simulator cannot run."""


def _wrappers(codes: Sequence[KernelCode]) -> str:
    """``tdf_launch_<kernel>`` entry points (C linkage) that ctypes calls."""
    out = ['extern "C" const char* tdf_error_text() { return tdf_last_error(); }']
    done = set()
    for c in codes:
        for name in c.kernels:
            if name in done:
                continue
            done.add(name)
            out.append(
                f'extern "C" int tdf_launch_{name}(unsigned gx, unsigned gy, unsigned gz, '
                f"unsigned bx, unsigned by, unsigned bz, void** args) {{\n"
                f'  return tdf_run("{name}", dim3(gx, gy, gz), dim3(bx, by, bz), '
                f"[](void** a) {{ tdf_call(tdf_{c.digest}::{name}, a); }}, args);\n}}")
    return "\n".join(out) + "\n"


def sim_source(codes: Sequence[KernelCode]) -> str:
    """The C++ file cudasim compiles for ``codes``: shim, generated kernels, launch wrappers."""
    return translation_unit(codes, prelude("sim")) + "\n" + _wrappers(codes)


class _Module:
    """A loaded shared object of generated kernels."""

    def __init__(self, codes: Sequence[KernelCode]) -> None:
        flags = ("-fsanitize=address", "-g") if os.environ.get("TDFLOW_CUDASIM_ASAN") else ()
        n = sum(len(c.kernels) for c in codes)
        path = build_shared_object(sim_source(codes), flags, kernels=n)
        try:
            self.lib = ctypes.CDLL(str(path))
        except OSError as exc:  # built by us and verified, yet the loader refuses it
            raise CompileError(f"cudasim: the kernels built with g++ do not load: {exc}") \
                from exc
        self.lib.tdf_error_text.restype = ctypes.c_char_p
        self.fns: dict[str, Any] = {}

    def fn(self, kernel: str) -> Any:
        f = self.fns.get(kernel)
        if f is None:
            f = self.fns[kernel] = getattr(self.lib, f"tdf_launch_{kernel}")
            f.restype = ctypes.c_int
            f.argtypes = [ctypes.c_uint] * 6 + [ctypes.POINTER(ctypes.c_void_p)]
        return f


class CudasimBackend(HostBuffers, GpuBackend):
    """See the module docstring."""

    name = "cudasim"
    error = CudasimError
    contiguous = True

    def copy_bytes(self, buf: np.ndarray, data: bytes) -> None:
        buf.reshape(-1).view(np.uint8)[:len(data)] = np.frombuffer(data, np.uint8)

    def pointer(self, buf: np.ndarray, what: str) -> int:
        if not buf.flags.c_contiguous:
            raise CudasimError(f"{what}: cudasim buffers must be C-contiguous")
        return buf.ctypes.data

    def scalar(self, dtype: str, value: Any, keep: list[Any]) -> int:
        # the launcher passes the address of the value in its C type
        keep.append(np.array([value], DTYPES[dtype]))
        return keep[-1].ctypes.data

    def scratch(self, nbytes: int) -> np.ndarray:
        return np.zeros(max(1, (nbytes + 7) // 8), np.uint64)  # zeroed, as it always was

    def load(self, codes: Sequence[KernelCode]) -> _Module:
        return _Module(codes)

    def launch_one(self, module: _Module, launch: LaunchSpec, args: Sequence[int],
                   op: str) -> None:
        argv = (ctypes.c_void_p * max(1, len(args)))(*args)
        if module.fn(launch.kernel)(*launch.grid, *launch.block, argv) != 0:
            raise CudasimError(module.lib.tdf_error_text().decode(errors="replace"))


BACKEND = CudasimBackend()
