"""tdflow.runtime.kernels: the CPU kernels by op family, and the kernels of the GPU devices.

Layers, each importing only those below it:

* :mod:`.registry` keeps the kernels (``register_kernel``, ``kernel_table``, ``select_kernel``);
  :mod:`.device` is what a GPU device's kernel is (the op's generated or a user's CUDA C, run by
  the device's backend); ``_``-prefixed modules hold helpers the families share.
* ``<family>.py`` (``reduce``, ``softmax``, ``pool``, ...: one per op family, the name the op's
  ``.td`` file, hooks and CUDA generators share) and :mod:`.formula` (the kernels derived from
  formulas) register their kernels into the registry when they are imported; a module that
  defines ``register_builtin(name=None)`` (``formula``: 71 kernels) registers only the kernel a
  plan asks for when :func:`~.registry.builtin_kernel` imports it for that one
  (:func:`~.registry.on_demand`), the rest at the full load.
* This package fills the registry: :func:`load_builtin_kernels` runs before the registry first
  answers a query, and finds the kernel modules by listing the package, so a new family module
  needs no list.

>>> from tdflow.runtime.kernels.registry import kernel_table
>>> kernel_table("cpu").select("tdflow.reduce_min", ("f32",), {}).fn.__module__
'tdflow.runtime.kernels.reduce'
"""

from __future__ import annotations

import importlib

from tdflow.runtime.kernels import registry


def kernel_modules() -> list[str]:
    """The modules of this package that register kernels when imported: every module but the
    ``_``-prefixed helpers (the registry and device modules register nothing by themselves).

    >>> "tdflow.runtime.kernels.softmax" in kernel_modules()
    True
    """
    import pkgutil  # here: a plan that loads its kernels one module at a time never lists them

    return [f"{__name__}.{m.name}" for m in pkgutil.iter_modules(__path__)
            if not m.name.startswith("_")]


def load_builtin_kernels() -> None:
    """Register the built-in kernels: every kernel module of this package, the boxing ops'
    (which live with the communicators they call, in ``tdflow.distributed``), and the GPU
    devices' generated kernels of the standard ops, mirroring the CPU kernels' constraints.
    Run once, by the registry, before its first query (importing twice is harmless)."""
    from tdflow.dialect import standard_dialect
    from tdflow.lowering.cuda import generated_ops
    from tdflow.lowering.elementwise_ops import ELEMENTWISE_OPS

    from tdflow.distributed import boxing_kernels  # noqa: F401

    for name in kernel_modules():
        register = getattr(importlib.import_module(name), "register_builtin", None)
        if register is not None:  # what an earlier import for one kernel left unregistered
            register()
    std = standard_dialect()
    for op in sorted(set(generated_ops()) | set(ELEMENTWISE_OPS)):
        registry.register_generated(op, std.lookup(op))


registry.add_builtin_loader(load_builtin_kernels)
