"""The kernels of a context's ops, as the runtime serves them: the one place where a context
reaches the kernel registry.

Each :class:`~tdflow.dialect.context.Context` (or plain dialect) gets its own
:class:`~tdflow.runtime.kernels._kernel_set.KernelSet` over the process-wide one, built the
first time it reaches the runtime — a kernel table asked for with :func:`kernel_table_for`
(``compile``, ``tdflow lower``, ``tdflow opt``, ``tdflow view``), or an eager call of one of its
ops — from what its libraries declare:

* the kernels its hooks modules register (``@register_kernel`` in a file given to
  ``load_ops(hooks=...)``: :mod:`tdflow.core.declarations`), and their CUDA generators;
* for each of its ops with a ``formula`` and no kernel, the CPU kernel derived from the formula
  and its generated CUDA C, so a user's formula-only op runs with no Python of its own.

Two contexts that define the same op name differently (two formulas, two hooks files) therefore
run their own kernels; tdflow's own kernels, and those a user registers outside a hooks import,
are the process-wide set every context inherits. No entry point has to register anything.

>>> from tdflow.dialect.context import standard_context
>>> kernel_table_for(standard_context(), "cpu").select("tdflow.relu", ("f32",), {}).name
'cpu.relu'
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tdflow.dialect.opdef import OpDef
    from tdflow.runtime.kernels._kernel_set import KernelSet
    from tdflow.runtime.kernels.registry import KernelTable

__all__ = ["kernel_set_for", "kernel_table_for", "selection_table"]

# context -> its KernelSet; weak, so a context's end frees its set
_SETS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()  # eager calls on several threads may build a context's set at once


def kernel_set_for(context: Iterable[OpDef]) -> KernelSet:
    """``context``'s own kernels over the process-wide ones (see the module docstring); built
    once per context, from what its hooks modules declared when it was built.

    >>> from tdflow.dialect.context import standard_context
    >>> ks = kernel_set_for(standard_context())
    >>> ks is kernel_set_for(standard_context()), "cpu.relu" in [k.name for k in ks.kernels_of("tdflow.relu")]
    (True, True)
    """
    try:
        hit = _SETS.get(context)
    except TypeError:  # not weakly referenceable: build every time (cheap for small sets)
        return _build(context)
    if hit is not None:
        return hit
    with _LOCK:
        hit = _SETS.get(context)
        if hit is None:
            hit = _SETS[context] = _build(context)
    return hit


def _build(context: Iterable[OpDef]) -> KernelSet:
    from tdflow.lowering.cuda.code import own_generators
    from tdflow.runtime.kernels._kernel_set import KernelSet
    from tdflow.runtime.kernels.formula import add_formula_kernels
    from tdflow.runtime.kernels.registry import AMBIENT, kernel_table, register_generated

    from tdflow.core.declarations import declared_by

    kernel_table("cpu")  # the built-in kernels first: the context's set sits over them
    own = KernelSet(parent=AMBIENT)
    for kernel in declared_by(context, "kernel"):
        own.add(kernel)
    generators = own_generators(context)
    ops = {op.name: op for op in _ops_of(context)}
    for name in generators:  # an op whose generator the hooks give: its GPU kernels use it
        register_generated(name, ops.get(name), own, generators)
    for op in ops.values():
        if op.formula is not None:
            add_formula_kernels(op, own, generators)
    return own


def _ops_of(context: object) -> Iterable[OpDef]:
    """A context's or dialect's ops; also those of a duck-typed one that only has ``ops``."""
    ops = getattr(context, "ops", None)
    if isinstance(ops, Mapping):
        return ops.values()
    return ops if ops is not None else context  # type: ignore[return-value]


def kernel_table_for(context: Iterable[OpDef] | None, device: str) -> KernelTable:
    """The kernel table of ``device`` for ``context``'s ops: its own kernels over the
    process-wide ones (:func:`kernel_set_for`), its ops served by a standard op
    (``served_by``) resolved to that op's kernels. ``None``: the process-wide kernels.

    >>> from tdflow.dialect.context import standard_context
    >>> "tdflow.matmul" in kernel_table_for(standard_context(), "cpu").ops()
    True
    """
    from tdflow.runtime.kernels.registry import kernel_table

    if context is None:
        return kernel_table(device)
    return kernel_table(device, getattr(context, "served_by", None), kernel_set_for(context))


def selection_table(context: Iterable[OpDef] | None, device: str) -> Any:
    """The kernel table ``compile`` lowers and loads a plan with: :func:`kernel_table_for`,
    except for the standard context on the CPU, where selection reads the shipped table
    (:mod:`tdflow.lowering.kernel_data`, held equal to the registry's by a test) and ``get``
    imports only the module of the kernel asked for
    (:func:`~tdflow.runtime.kernels.registry.builtin_kernel`): a plan of matmul, softmax and a
    fused loop imports three kernel modules of fifteen, no GPU devices' kernels. Anything the
    shipped table cannot answer for (a kernel registered outside tdflow's modules, say) gets
    the full table, as before.

    >>> from tdflow.dialect.context import standard_context
    >>> t = selection_table(standard_context(), "cpu")
    >>> t.select("tdflow.softmax", ("f32",)).name, t.get("cpu.softmax").name
    ('cpu.softmax', 'cpu.softmax')
    """
    from tdflow.dialect.context import standard_context

    if device != "cpu" or context is not standard_context():
        return kernel_table_for(context, device)
    table = _STANDARD_CPU[0] if _STANDARD_CPU else None
    if table is None or table.context is not context:  # compile() and its lowering both ask
        table = _LazyCpuTable(context)
        _STANDARD_CPU[:] = [table]
    return table


# the standard context's (which lives as long as the process): its table, built once
_STANDARD_CPU: list[_LazyCpuTable] = []


class _LazyCpuTable:
    """:func:`selection_table`'s table: ``KernelTable``'s interface (``select``,
    ``candidates``, ``ops``, ``in``, ``get``) over the shipped data, the registry's full table
    once it is built or a foreign kernel exists."""

    device = "cpu"

    def __init__(self, context: Iterable[OpDef]) -> None:
        from tdflow.lowering.kernel_data import DataKernelTable, shipped_cpu_table

        self.context = context
        self._data = DataKernelTable(shipped_cpu_table(), load=self._full)

    def _full(self) -> KernelTable:
        return kernel_table_for(self.context, "cpu")

    def _table(self) -> Any:
        from tdflow.runtime.kernels import registry

        # what the data says holds while only tdflow's kernels are registered
        return self._full() if registry.has_foreign_kernels() else self._data

    def select(self, op: str, input_dtypes: Any, attrs: Any = None, device: str | None = None
               ) -> Any:
        return self._table().select(op, input_dtypes, attrs, device=device)

    def candidates(self, op: str) -> list[Any]:
        return self._table().candidates(op)

    def ops(self) -> list[str]:
        return self._table().ops()

    def __contains__(self, op: str) -> bool:
        return op in self._table()

    def get(self, name: str) -> Any:
        from tdflow.runtime.kernels.registry import builtin_kernel

        module = self._data.module_of(name)
        found = builtin_kernel(name, module) if module is not None else None
        return found if found is not None else self._full().get(name)
