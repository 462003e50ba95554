"""``KernelSet``: kernels by op and by unique name, optionally over a parent set.

The process has one ambient set (tdflow's kernels and those the user registers outside a hooks
import); a :class:`~tdflow.dialect.context.Context` whose hooks modules register kernels, or
whose user ops have formulas, gets its own set over the ambient one
(:func:`tdflow.runtime.op_kernels.kernel_set_for`), so two contexts never see each other's.

>>> from tdflow.runtime.kernels.registry import Kernel
>>> base = KernelSet()
>>> _ = base.add(Kernel(name="cpu.doc.k", op="doc.k", device="cpu", fn=len))
>>> mine = KernelSet(parent=base)
>>> _ = mine.add(Kernel(name="cpu.doc.k2", op="doc.k", device="cpu", fn=abs))
>>> [k.name for k in mine.kernels_of("doc.k")], [k.name for k in base.kernels_of("doc.k")]
(['cpu.doc.k2', 'cpu.doc.k'], ['cpu.doc.k'])
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

__all__ = ["KernelSet"]


class Kernel(Protocol):
    """What a set needs of a :class:`tdflow.runtime.kernels.registry.Kernel` (which imports
    this module, so it is not imported here)."""

    name: str
    op: str
    fn: Any


class KernelSet:
    """Kernels by op (registration order) and by name; ``parent``'s follow this set's own."""

    def __init__(self, parent: KernelSet | None = None) -> None:
        self.parent = parent
        self.by_op: dict[str, list[Kernel]] = {}
        self.by_name: dict[str, Kernel] = {}

    def add(self, kernel: Kernel) -> Kernel:
        """Add ``kernel`` (names are unique across this set and its parents).

        Adding again a kernel of the same name, op and function (same source file and
        qualified name: a hooks module imported twice, under any module names) replaces the
        first, so re-importing is idempotent; a different function under a taken name is an
        error.
        """
        old = self.named(kernel.name)
        if old is not None and (old.op != kernel.op or _fn_id(old.fn) != _fn_id(kernel.fn)):
            raise ValueError(f"a kernel named {kernel.name!r} is already registered "
                             f"(for {old.op}, by {_fn_id(old.fn)})")
        own = self.by_name.get(kernel.name)
        if own is not None:
            ks = self.by_op[own.op]
            ks[ks.index(own)] = kernel
        else:
            self.by_op.setdefault(kernel.op, []).append(kernel)
        self.by_name[kernel.name] = kernel
        return kernel

    def kernels_of(self, op: str) -> Sequence[Kernel]:
        """``op``'s kernels: this set's, then its parents' (a parent's kernel of a name this
        set redefines is left out)."""
        own = self.by_op.get(op, ())
        if self.parent is None:
            return own
        inherited = self.parent.kernels_of(op)
        if not own:
            return inherited
        return [*own, *(k for k in inherited if k.name not in self.by_name)]

    def named(self, name: str) -> Kernel | None:
        """The kernel called ``name`` here or in a parent, or ``None``."""
        k = self.by_name.get(name)
        if k is None and self.parent is not None:
            return self.parent.named(name)
        return k

    def op_names(self) -> set[str]:
        """Every op with a kernel here or in a parent."""
        names = set(self.by_op)
        return names | self.parent.op_names() if self.parent is not None else names

    def __iter__(self) -> Iterator[Kernel]:
        seen: set[str] = set()
        s: KernelSet | None = self
        while s is not None:
            for ks in s.by_op.values():
                for k in ks:
                    if k.name not in seen:
                        seen.add(k.name)
                        yield k
            s = s.parent


def _fn_id(fn: Any) -> str:
    from tdflow.dialect.hooks.registry import definition_id

    return definition_id(inspect.unwrap(fn))  # a BLAS-scoped kernel is its function's
