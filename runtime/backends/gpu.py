"""The base of the GPU backends (``cuda`` and ``cudasim``): generated code, compiling a plan's
codes once, binding launch arguments and running an op.

A subclass says only how its device allocates, copies, compiles and launches:
``allocate``/``zeros``/``fill_zero``/``from_numpy``/``to_numpy``/``copy_bytes`` (buffers),
``pointer(buf, what)`` (a buffer as a kernel argument), ``scalar(dtype, value, keep)`` (a
scalar argument), ``load(codes)`` (compile codes into one loaded module) and
``launch_one(module, launch, args, op)``.

Launch arguments follow the contract of :mod:`tdflow.lowering.cuda.code`: ``in<i>``/``out<i>``
the buffers (absent optional operands skipped), ``tmp<i>`` scratch, ``rng`` a
``uint64_t[2]`` ``(stream, offset)``, ``s<k>`` a scalar.

>>> from tdflow.runtime.backends import get_backend
>>> import numpy as np
>>> sim = get_backend("cudasim")
>>> out = np.empty(2, np.float32)
>>> sim.run_op("tdflow.relu", {}, [np.array([-1.0, 2.0], np.float32)], [out])[0].tolist()
[0.0, 2.0]
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from tdflow.lowering.cuda import KernelCode, LaunchSpec
from tdflow.runtime.backends.base import Backend
from tdflow.runtime.kernels.device import generated_code
from tdflow.runtime.rng import take

from tdflow.core.errors import TdflowError

if TYPE_CHECKING:
    from tdflow.dialect.opdef import OpDef


class GpuBackend(Backend):
    """See the module docstring. ``error`` is the backend's error type."""

    error: type[TdflowError] = TdflowError

    def __init__(self) -> None:
        self._modules: dict[str, Any] = {}  # KernelCode digest -> its loaded module
        self._lock = threading.Lock()

    # -- what a subclass provides ----------------------------------------------------------
    def allocate(self, shape: Sequence[int], dtype: Any) -> Any:
        raise NotImplementedError

    def fill_zero(self, buf: Any) -> None:
        raise NotImplementedError

    def from_numpy(self, array: np.ndarray) -> Any:
        raise NotImplementedError

    def copy_bytes(self, buf: Any, data: bytes) -> None:
        """Write ``data`` over the first bytes of ``buf``."""
        raise NotImplementedError

    def pointer(self, buf: Any, what: str) -> Any:
        """``buf`` as a kernel's pointer argument (``what`` names it in an error)."""
        raise NotImplementedError

    def scalar(self, dtype: str, value: Any, keep: list[Any]) -> Any:
        """A scalar argument of C type ``dtype`` (what must live until the launch: ``keep``)."""
        raise NotImplementedError

    def load(self, codes: Sequence[KernelCode]) -> Any:
        """Compile ``codes`` in one compiler call and load them: the module ``launch_one``
        takes."""
        raise NotImplementedError

    def launch_one(self, module: Any, launch: LaunchSpec, args: Sequence[Any], op: str) -> None:
        """Run (or enqueue) one launch of a loaded module (``op`` names it in an error)."""
        raise NotImplementedError

    def scratch(self, nbytes: int) -> Any:
        """A scratch buffer of at least ``nbytes`` (8 at least)."""
        return self.allocate((max(8, nbytes),), "i8")

    # -- shared --------------------------------------------------------------------------------
    def code_for(self, op: str, attrs: Mapping[str, Any], inputs: Sequence[Any],
                 outs: Sequence[Any], opdef: OpDef | None = None, generator: Any = None) -> KernelCode:
        """The generated code of ``op`` for these buffers' shapes and dtypes (one memo for
        every GPU device: :func:`tdflow.runtime.kernels.device.generated_code`)."""
        return generated_code(op, attrs, inputs, outs, opdef, generator)

    def prepare(self, codes: Sequence[KernelCode]) -> None:
        """Compile every code object not loaded yet in one compiler call (a plan's kernels)."""
        with self._lock:
            todo = list({c.digest: c for c in codes if c.digest not in self._modules}.values())
            if todo:
                module = self.load(todo)
                for c in todo:
                    self._modules[c.digest] = module

    def bind(self, code: KernelCode, inputs: Sequence[Any], outs: Sequence[Any],
             rng: tuple[int, int] | None, keep: list[Any]) -> dict[str, Any]:
        """Each launch argument's value by name; zeroes and uploads the outputs the code asks
        for. What must outlive the launches (scratch, the rng state, scalars) goes to ``keep``:
        scratch goes back to the allocator after the launches are enqueued, and a later user
        of the block runs after them on the same stream."""
        args: dict[str, Any] = {}
        for i, a in enumerate(x for x in inputs if x is not None):
            args[f"in{i}"] = self.pointer(a, f"{code.op} input {i}")
        for k, a in enumerate(outs):
            args[f"out{k}"] = self.pointer(a, f"{code.op} result {k}")
        for k in code.zero_outputs:
            self.fill_zero(outs[k])
        for k, data in code.uploads:
            self.copy_bytes(outs[k], data)
        for i, n in enumerate(code.scratch):
            keep.append(self.scratch(n))
            args[f"tmp{i}"] = self.pointer(keep[-1], f"{code.op} scratch {i}")
        if rng is not None:
            keep.append(self.from_numpy(np.array(rng, np.uint64)))
            args["rng"] = self.pointer(keep[-1], f"{code.op} rng state")
        for k, (dt, value) in enumerate(code.scalars):
            args[f"s{k}"] = self.scalar(dt, value, keep)
        return args

    def run(self, code: KernelCode, inputs: Sequence[Any], outs: Sequence[Any],
            rng: tuple[int, int] | None = None) -> list[Any]:
        """Run (or enqueue) ``code``'s launches over the device's buffers (``outs`` given)."""
        self.prepare([code])
        module = self._modules[code.digest]
        keep: list[Any] = []
        args = self.bind(code, inputs, outs, rng, keep)
        for ln in code.launches:
            self.launch_one(module, ln, [args[a] for a in ln.args], code.op)
        del keep
        return list(outs)

    def run_op(self, op: str, attrs: Mapping[str, Any], inputs: Sequence[Any],
               outs: Sequence[Any], opdef: OpDef | None = None, rng: tuple[int, int] | None = None,
               generator: Any = None) -> list[Any]:
        """Generate (once per types), compile (once per code) and run ``op`` (with
        ``generator``, a context's own generator of it, when given)."""
        if any(o is None for o in outs):
            raise self.error(f"{op}: {self.name} kernels write into preallocated results")
        code = self.code_for(op, attrs, inputs, outs, opdef, generator)
        if rng is None and any("rng" in ln.args for ln in code.launches):
            rng = rng_for(code, attrs, outs)
        return self.run(code, inputs, outs, rng)


def rng_for(code: KernelCode, attrs: Mapping[str, Any], outs: Sequence[Any]) -> tuple[int, int]:
    """The ``(stream, offset)`` a random op's launch reads: its ``seed`` attribute's stream
    advanced by the elements of its first result (:mod:`tdflow.runtime.rng`), exactly as the
    numpy kernel draws them.

    >>> first, second = (rng_for(None, {"seed": 12345}, [np.empty(3)]) for _ in range(2))
    >>> second[1] - first[1]  # the first call reserved 3 numbers of the stream
    3
    """
    n = int(outs[0].size) if outs else 0
    return take(int(attrs.get("seed", 0)), n)
