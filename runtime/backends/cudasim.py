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
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

import numpy as np
from tdflow.dialect.types import DTYPES, dtype_from_numpy
from tdflow.lowering.cuda import KernelCode, TensorSpec, translation_unit
from tdflow.lowering.cuda.common import prelude
from tdflow.runtime.backends.kernel_build import CompileError, build_shared_object

from tdflow.core.errors import TdflowError

__all__ = ["CudasimBackend", "BACKEND", "CudasimError", "specs_of"]


class CudasimError(TdflowError, RuntimeError):
    """A simulated kernel stopped: a divergent barrier, or a launch the simulator cannot run."""


def specs_of(arrays: Sequence[Any]) -> tuple[TensorSpec, ...]:
    """The :class:`TensorSpec` of each present buffer (``None`` entries are absent operands)."""
    return tuple(TensorSpec(a.shape, dtype_from_numpy(a.dtype)) for a in arrays if a is not None)


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


def _pointer(a: np.ndarray, what: str) -> int:
    if not a.flags.c_contiguous:
        raise CudasimError(f"{what}: cudasim buffers must be C-contiguous")
    return a.ctypes.data


class CudasimBackend:
    """See the module docstring."""

    name = "cudasim"

    def __init__(self) -> None:
        self._modules: dict[str, _Module] = {}  # KernelCode digest -> its loaded module

    # -- buffers ------------------------------------------------------------------------------
    def allocate(self, shape: Sequence[int], dtype: str) -> np.ndarray:
        return np.empty(tuple(shape), DTYPES[dtype])

    def zeros(self, shape: Sequence[int], dtype: str) -> np.ndarray:
        return np.zeros(tuple(shape), DTYPES[dtype])

    def from_numpy(self, array: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(array)

    def to_numpy(self, buffer: np.ndarray) -> np.ndarray:
        return buffer

    def synchronize(self) -> None:
        """Simulated kernels finish before ``launch`` returns."""

    @cached_property
    def kernels(self) -> Any:
        from tdflow.runtime.kernels.registry import kernel_table

        return kernel_table("cudasim")

    def launch(self, kernel: Any, attrs: Mapping[str, Any], inputs: Sequence[Any],
               outs: Sequence[Any] | None = None) -> list[np.ndarray]:
        return kernel(attrs, inputs, outs)

    # -- generated code -----------------------------------------------------------------------
    def code_for(self, op: str, attrs: Mapping[str, Any], inputs: Sequence[Any],
                 outs: Sequence[Any], opdef: Any = None) -> KernelCode:
        """The generated code of ``op`` for these buffers' shapes and dtypes (one memo for
        every GPU device: :func:`tdflow.runtime.kernels.device.generated_code`)."""
        from tdflow.runtime.kernels.device import generated_code

        return generated_code(op, attrs, inputs, outs, opdef)

    def prepare(self, codes: Sequence[KernelCode]) -> None:
        """Compile every not yet loaded code object in one g++ call (a plan's kernels)."""
        todo = list({c.digest: c for c in codes if c.digest not in self._modules}.values())
        if todo:
            module = _Module(todo)
            for c in todo:
                self._modules[c.digest] = module

    def run(self, code: KernelCode, inputs: Sequence[Any], outs: Sequence[Any],
            rng: tuple[int, int] | None = None) -> list[np.ndarray]:
        """Run ``code``'s launches over numpy buffers (``outs`` preallocated)."""
        self.prepare([code])
        module = self._modules[code.digest]
        present = [a for a in inputs if a is not None]
        bufs: dict[str, int] = {}
        for i, a in enumerate(present):
            bufs[f"in{i}"] = _pointer(a, f"{code.op} input {i}")
        for k in code.zero_outputs:
            outs[k].fill(0)
        for k, data in code.uploads:
            outs[k].reshape(-1).view(np.uint8)[:] = np.frombuffer(data, np.uint8)
        for k, a in enumerate(outs):
            bufs[f"out{k}"] = _pointer(a, f"{code.op} result {k}")
        keep = [np.zeros(max(1, (n + 7) // 8), np.uint64) for n in code.scratch]
        for i, a in enumerate(keep):
            bufs[f"tmp{i}"] = a.ctypes.data
        if rng is not None:
            state = np.array(rng, np.uint64)
            keep.append(state)
            bufs["rng"] = state.ctypes.data
        for k, (dt, value) in enumerate(code.scalars):
            # a scalar argument: the launcher passes the address of the value in its C type
            held = np.array([value], DTYPES[dt])
            keep.append(held)
            bufs[f"s{k}"] = held.ctypes.data
        for ln in code.launches:
            args = (ctypes.c_void_p * max(1, len(ln.args)))(*[bufs[a] for a in ln.args])
            rc = module.fn(ln.kernel)(*ln.grid, *ln.block, args)
            if rc != 0:
                raise CudasimError(module.lib.tdf_error_text().decode(errors="replace"))
        return list(outs)

    def run_op(self, op: str, attrs: Mapping[str, Any], inputs: Sequence[Any],
               outs: Sequence[Any], opdef: Any = None, rng: tuple[int, int] | None = None
               ) -> list[np.ndarray]:
        """Generate (once per types), compile (once per code) and run ``op``."""
        if any(o is None for o in outs):
            raise CudasimError(f"{op}: cudasim kernels write into preallocated results")
        code = self.code_for(op, attrs, inputs, outs, opdef)
        if rng is None and any("rng" in ln.args for ln in code.launches):
            rng = rng_for(code, attrs, outs)
        return self.run(code, inputs, outs, rng)

    def __repr__(self) -> str:
        return "<CudasimBackend>"


def with_segments(attrs: Mapping[str, Any], inputs: Sequence[Any], opdef: Any = None
                  ) -> Mapping[str, Any]:
    """``attrs`` plus ``operandSegmentSizes`` when some optional operands are absent (``None``
    in ``inputs``, as eager calls pass them), so a generator, which sees only the present
    operands, knows which they are. A compiled program's op carries the attribute already.

    >>> with_segments({}, [1, None, 2])["operandSegmentSizes"]
    [1, 0, 1]
    """
    operands = getattr(opdef, "operands", None)
    padded = list(inputs)
    if operands is not None and not any(o.is_variadic for o in operands):
        padded += [None] * (len(operands) - len(padded))  # trailing absent operands left off
    if "operandSegmentSizes" in attrs or all(a is not None for a in padded):
        return attrs
    return {**attrs, "operandSegmentSizes": [0 if a is None else 1 for a in padded]}


def rng_for(code: KernelCode, attrs: Mapping[str, Any], outs: Sequence[Any]) -> tuple[int, int]:
    """The ``(stream, offset)`` a random op's launch reads: its ``seed`` attribute's stream
    advanced by the elements of its first result (:mod:`tdflow.runtime.rng`), exactly as the
    numpy kernel draws them."""
    from tdflow.runtime.rng import take

    n = int(outs[0].size) if outs else 0
    return take(int(attrs.get("seed", 0)), n)


def attrs_key(attrs: Mapping[str, Any]) -> tuple:
    """A hashable form of kernel attributes (lists become tuples, arrays their bytes, floats
    their exact ``hex``: ``-0.0 == 0.0`` would share a memoised code's scalars, and a NaN would
    never be found).

    >>> attrs_key({"a": -0.0}) == attrs_key({"a": 0.0})
    False
    """

    def h(v: Any) -> Any:
        if isinstance(v, float):
            return ("float", float(v).hex())
        if isinstance(v, np.ndarray):
            return ("ndarray", v.shape, str(v.dtype), v.tobytes())
        if isinstance(v, list | tuple):
            return tuple(h(x) for x in v)
        if isinstance(v, dict):
            return tuple(sorted((k, h(x)) for k, x in v.items()))
        try:
            hash(v)
        except TypeError:
            return repr(v)
        return v

    return tuple(sorted((k, h(v)) for k, v in attrs.items()))


BACKEND = CudasimBackend()
