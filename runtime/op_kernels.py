"""The kernels of a context's ops, as the runtime serves them: the one place where a context
reaches the kernel registry.

An op with a ``formula`` runs with no Python of its own: its CPU kernel (and its generated CUDA
C) is derived from the formula. The derived kernels of a context's ops are registered the first
time the context reaches the runtime — a kernel table asked for with :func:`kernel_table_for`
(``compile``, ``tdflow lower``, ``tdflow opt``, ``tdflow view``), or an eager call of the op
(:class:`~tdflow.runtime.eager.OpRunner`, :func:`prepare_op_kernels`) — so no entry point has to
remember to do it.

>>> from tdflow.dialect.context import standard_context
>>> kernel_table_for(standard_context(), "cpu").select("tdflow.relu", ("f32",), {}).name
'cpu.relu'
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tdflow.dialect.opdef import OpDef
    from tdflow.runtime.kernels.registry import KernelTable

__all__ = ["kernel_table_for", "prepare_kernels", "prepare_op_kernels"]

# Contexts (and dialects) whose formula kernels are registered; weak, so a context's end is not
# delayed. Registration is idempotent, this only spares repeating it.
_READY: weakref.WeakSet = weakref.WeakSet()


def prepare_kernels(context: Iterable[OpDef]) -> None:
    """Register the derived kernels of every formula op of ``context`` (a context or a dialect)
    that lacks a kernel; once per context. A hand-written kernel registered later still wins.

    >>> from tdflow.dialect.context import standard_context
    >>> prepare_kernels(standard_context())
    """
    try:
        if context in _READY:
            return
    except TypeError:  # not weakly referenceable: register every time (idempotent)
        pass
    from tdflow.runtime.kernels.formula import register_formula_kernels

    register_formula_kernels(context)
    try:
        _READY.add(context)
    except TypeError:
        pass


def prepare_op_kernels(opdef: OpDef) -> None:
    """Register the derived kernels of one op when it has a ``formula`` and no kernel: what an
    eager call needs before it selects a kernel (an eager call runs one op, whatever the rest of
    its context holds).

    >>> from tdflow.dialect import standard_dialect
    >>> prepare_op_kernels(standard_dialect().lookup("tdflow.relu"))
    """
    if opdef.formula is not None:
        from tdflow.runtime.kernels.formula import register_formula_kernel

        register_formula_kernel(opdef)


def kernel_table_for(context: Iterable[OpDef] | None, device: str) -> KernelTable:
    """The kernel table of ``device`` for ``context``'s ops: its formula ops' derived kernels
    registered (:func:`prepare_kernels`), its ops served by a standard op (``served_by``)
    resolved to that op's kernels. ``None``: the registered kernels as they are.

    >>> from tdflow.dialect.context import standard_context
    >>> "tdflow.matmul" in kernel_table_for(standard_context(), "cpu").ops()
    True
    """
    from tdflow.runtime.kernels.registry import kernel_table

    if context is not None:
        prepare_kernels(context)
    return kernel_table(device, getattr(context, "served_by", None))
