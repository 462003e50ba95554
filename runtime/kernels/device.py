"""Kernels of the GPU devices (``cuda``, ``cudasim``): every op is its generated CUDA code.

For each op with a CUDA generator (``tdflow.lowering.cuda``), a kernel is registered on each
GPU device with the same constraints as the op's CPU kernel (dtypes and match predicate; for
elementwise kernels also ``inplace``), so ``select-kernels{device=cudasim}`` accepts exactly
what the CPU accepts. Calling one asks the device's backend to generate (once per shapes,
dtypes and attributes), compile (once per source) and launch the op's code:
``backend.run_op(op, attrs, inputs, outs, opdef)``.

>>> from tdflow.runtime.kernels.registry import kernel_table
>>> kernel_table("cudasim").select("tdflow.relu", ("f32",), {}).name
'cudasim.relu'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tdflow.lowering.cuda import generated_ops, generator_for
from tdflow.runtime.kernels.registry import Kernel, add_kernel, kernel_table

GPU_DEVICES = ("cudasim", "cuda")


class GeneratedKernel:
    """``fn(attrs, inputs, outs)`` of a GPU device: the backend runs the op's generated code."""

    def __init__(self, op: str, device: str, opdef: Any = None) -> None:
        self.op, self.device, self.opdef = op, device, opdef
        self.__module__ = __name__
        self.__qualname__ = f"GeneratedKernel[{device}:{op}]"
        self.__doc__ = f"{op} on {device}: generated CUDA C"
        self._backend: Any = None

    @property
    def backend(self) -> Any:
        backend = self._backend
        if backend is None:
            from tdflow.runtime.backends import get_backend

            backend = self._backend = get_backend(self.device)
        return backend

    def __call__(self, attrs: Mapping[str, Any], inputs: Sequence[Any],
                 outs: Sequence[Any]) -> list[Any]:
        return self.backend.run_op(self.op, attrs, inputs, outs, self.opdef)

    def code_for(self, attrs: Mapping[str, Any], inputs: Sequence[Any],
                 outs: Sequence[Any]) -> Any:
        """The :class:`KernelCode` a call with buffers of these shapes and dtypes runs
        (anything with ``.shape`` and a numpy ``.dtype`` will do): what a plan's loader
        compiles in one go (``backend.prepare``)."""
        return generated_code(self.op, attrs, inputs, outs, self.opdef)


_CODES: dict[Any, Any] = {}


def generated_code(op: str, attrs: Mapping[str, Any], inputs: Sequence[Any],
                   outs: Sequence[Any], opdef: Any = None) -> Any:
    """``op``'s generated code for buffers of these shapes and dtypes (memoised); needs no
    backend, so ``tdflow lower --emit cuda`` works on machines without CUDA."""
    from tdflow.lowering.cuda import generate
    from tdflow.runtime.backends.cudasim import attrs_key, specs_of

    ins, res = specs_of(inputs), specs_of(outs)
    key = (op, ins, res, attrs_key(attrs), id(opdef))
    code = _CODES.get(key)
    if code is None:
        code = _CODES[key] = generate(op, ins, res, attrs, opdef)
    return code


def register_generated(op: str, opdef: Any = None, devices: Sequence[str] = GPU_DEVICES) -> bool:
    """Register ``op``'s generated kernel on each GPU device (mirroring its CPU kernel's
    constraints); False when the op has no CUDA generator. Idempotent."""
    if generator_for(op, opdef) is None:
        return False
    cpu = kernel_table("cpu").candidates(op)
    model = cpu[0] if cpu else None
    for device in devices:
        table = kernel_table(device)
        if table.candidates(op):
            continue
        from tdflow.runtime.kernels.registry import default_kernel_name

        num_outputs = len(opdef.results) if opdef is not None else (
            model.num_outputs if model is not None else 1)
        add_kernel(Kernel(
            name=default_kernel_name(op, device), op=op, device=device,
            fn=GeneratedKernel(op, device, opdef), num_outputs=num_outputs,
            dtypes=model.dtypes if model is not None else None,
            match=model.match if model is not None else None,
            inplace=dict(model.inplace) if model is not None and model.elementwise is not None
            else {},
            doc=f"generated CUDA C for {op}"))
    return True


def register_standard() -> None:
    """The standard library's ops that have generators."""
    from tdflow.dialect import standard_dialect
    from tdflow.lowering.elementwise_ops import ELEMENTWISE_OPS

    std = standard_dialect()
    for op in sorted(set(generated_ops()) | set(ELEMENTWISE_OPS)):
        register_generated(op, std.lookup(op))
