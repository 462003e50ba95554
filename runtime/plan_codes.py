"""The generated CUDA C of a GPU plan's launches, before any data exists."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tdflow.dialect.types import DTYPES
from tdflow.lowering.plan import ExecutablePlan

__all__ = ["BufferSpec", "launch_codes", "plan_codes"]


class BufferSpec:
    """A buffer's shape and numpy dtype: what code generation needs before any data exists.

    >>> BufferSpec([2, 3], "f32").dtype
    dtype('float32')
    """

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple[int, ...], dtype: str) -> None:
        self.shape, self.dtype = tuple(shape), DTYPES[dtype]


def launch_codes(plan: ExecutablePlan, resolve: Callable[[str], Callable[..., Any]]
                 ) -> list[tuple[Any, Any]]:
    """``(launch, KernelCode)`` for every launch of a GPU plan (prologue first) whose kernel
    generates code, in launch order; ``resolve`` maps a kernel name to its function (the
    kernel table's ``get(name).fn``). Launches whose kernel is no generated one are left out."""
    dtypes = {b.id: b.dtype for b in plan.buffers}
    codes = []
    for ln in (*plan.prologue, *plan.launches):
        code_for = getattr(resolve(ln.kernel), "code_for", None)
        if code_for is None:
            continue
        ins = [None if b is None else BufferSpec(s, dtypes[b])
               for b, s in zip(ln.inputs, ln.input_shapes)]
        outs = [BufferSpec(s, dtypes[b]) for b, s in zip(ln.outputs, ln.output_shapes)]
        codes.append((ln, code_for(ln.attrs, ins, outs)))
    return codes


def plan_codes(plan: ExecutablePlan, resolve: Callable[[str], Callable[..., Any]]) -> list[Any]:
    """The generated :class:`~tdflow.lowering.cuda.KernelCode` of every launch of a GPU plan
    (prologue first), in launch order: what ``backend.prepare`` compiles in one call and
    ``tdflow lower --emit cuda`` prints (:func:`launch_codes` without the launches)."""
    return [code for _, code in launch_codes(plan, resolve)]
