"""The ``ExecutablePlan``: what the runtime executes, and nothing else.

A plan is plain data (frozen value classes): numbered buffers, an ordered list of kernel
launches over those buffers, which buffers receive the function's arguments and which hold its
results. Buffer reuse and in-place execution are already decided; the executor only allocates
one array per buffer and calls kernels in order.

>>> b0 = Buffer(0, (2, 3), "f32")
>>> b0.nbytes
24
>>> plan = ExecutablePlan(
...     name="f", device="cpu",
...     buffers=(b0, Buffer(1, (2, 3), "f32")),
...     launches=(Launch("cpu.relu.f32", (0,), (1,), {}, "tdflow.relu", "f.mlir:2:3"),),
...     arguments=(Argument("x", 0, (2, 3), "f32"),),
...     results=(Result(1, (2, 3), "f32"),),
...     peak_bytes_before=48, peak_bytes_after=48)
>>> [l.kernel for l in plan.launches]
['cpu.relu.f32']
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from tdflow.dialect.element_types import INT_TYPES

from tdflow.core.valueclass import field, value_class

#: Bytes per element as the CPU holds it (``dialect.types.DTYPES[d].itemsize``: bf16 is computed
#: in f32), written out so that planning never imports numpy (``tdflow lower``'s start-up; a
#: test holds it equal to ``DTYPES``).
ITEMSIZE = {"f16": 2, "bf16": 4, "f32": 4, "f64": 8, "i1": 1,
            "si8": 1, "si16": 2, "si32": 4, "si64": 8,
            **{n: t.bits // 8 for n, t in INT_TYPES.items()}}


def nbytes_of(shape: tuple[int, ...], dtype: str) -> int:
    """Bytes of a dense tensor: ``nbytes_of((2, 3), "f32") == 24``."""
    n = 1
    for d in shape:
        n *= d
    return n * ITEMSIZE[dtype]


@value_class(frozen=True, slots=True)
class Buffer:
    """One allocation. Several SSA values may share it when their lifetimes do not overlap."""

    id: int
    shape: tuple[int, ...]
    dtype: str

    @property
    def nbytes(self) -> int:
        return nbytes_of(self.shape, self.dtype)


@value_class(frozen=True, slots=True)
class Launch:
    """One kernel call: ``kernel(inputs..., outputs..., **attrs)`` on buffer ids.

    ``in_place`` lists ``(output_index, input_index)`` pairs that share a buffer because the
    kernel declared it can write that output over that input. ``input_shapes`` and
    ``output_shapes`` are the shapes the kernel sees: a reused buffer may be larger than the
    value it holds, and the executor hands the kernel a view of its first elements. ``tile``
    (elements, 0 for none) lets the executor run an elementwise launch over consecutive
    slices of that many elements, so each slice's intermediates stay in cache.
    """

    kernel: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    attrs: Mapping[str, Any]
    op: str
    loc: str
    in_place: tuple[tuple[int, int], ...] = ()
    input_shapes: tuple[tuple[int, ...], ...] = ()
    output_shapes: tuple[tuple[int, ...], ...] = ()
    tile: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.attrs, MappingProxyType):
            object.__setattr__(self, "attrs", MappingProxyType(dict(self.attrs)))

    def describe(self) -> str:
        """``buf2 = cpu.relu(buf1) in-place [(0, 0)]  ; tdflow.relu @ f.mlir:3:5``."""
        ins = ", ".join(f"buf{b}" for b in self.inputs)
        outs = ", ".join(f"buf{b}" for b in self.outputs) or "()"
        extra = f" in-place {list(self.in_place)}" if self.in_place else ""
        extra += f" tiles of {self.tile}" if self.tile else ""
        return f"{outs} = {self.kernel}({ins}){extra}  ; {self.op} @ {self.loc}"


@value_class(frozen=True, slots=True)
class Argument:
    """A function argument bound to a buffer. Donated arguments may be overwritten in place."""

    name: str
    buffer: int
    shape: tuple[int, ...]
    dtype: str
    donated: bool = False


@value_class(frozen=True, slots=True)
class Result:
    """A function result read from a buffer after the last launch."""

    buffer: int
    shape: tuple[int, ...]
    dtype: str


@value_class(frozen=True)
class ExecutablePlan:
    """Ordered launches over numbered buffers; see the module docstring.

    ``prologue`` launches run once, when the plan is loaded: ops that depend on no argument
    (constants and what is computed from them only). Their buffers are never reused.
    """

    name: str
    device: str
    buffers: tuple[Buffer, ...]
    launches: tuple[Launch, ...]
    arguments: tuple[Argument, ...]
    results: tuple[Result, ...]
    peak_bytes_before: int
    peak_bytes_after: int
    prologue: tuple[Launch, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def total_bytes(self) -> int:
        """Bytes of every buffer the plan allocates (arguments included)."""
        return sum(b.nbytes for b in self.buffers)

    def argument(self, name: str) -> Argument:
        for a in self.arguments:
            if a.name == name:
                return a
        raise KeyError(name)

    def describe(self) -> str:
        """A plain-text listing of the plan (the CLI renders a richer one).

        >>> print(ExecutablePlan("f", "cpu", (), (), (), (), 0, 0).describe())
        plan @f on cpu: 0 buffers, 0 launches, peak 0 B (before planning 0 B)
        """
        lines = [
            f"plan @{self.name} on {self.device}: {len(self.buffers)} buffers, "
            f"{len(self.launches)} launches, peak {format_bytes(self.peak_bytes_after)} "
            f"(before planning {format_bytes(self.peak_bytes_before)})"
        ]
        for b in self.buffers:
            lines.append(f"  buf{b.id}: {'x'.join(map(str, b.shape)) or 'scalar'} {b.dtype} "
                         f"({format_bytes(b.nbytes)})")
        for a in self.arguments:
            lines.append(f"  arg %{a.name} -> buf{a.buffer}{' (donated)' if a.donated else ''}")
        for tag, launches in (("init", self.prologue), ("", self.launches)):
            for i, ln in enumerate(launches):
                lines.append(f"  {tag}{i:3d}: {ln.describe()}")
        if self.results:
            lines.append("  return " + ", ".join(f"buf{r.buffer}" for r in self.results))
        return "\n".join(lines)


def format_bytes(n: int) -> str:
    """``format_bytes(1536) == '1.5 KiB'``."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError

