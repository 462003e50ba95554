"""The hooks of the standard ops: one module per op family (``dialect/hooks/<family>.py``; the
family's ``.td`` is ``dialect/include/tdflow/ops/<family>.td``). The math family's ops are all
formula ops and need none.

A command that verifies three ops should not import thirteen hook modules (start-up time), so
loading a library *defers* the modules of its standard ops (:func:`defer_standard_hooks`): the
registry imports a family's module the first time an op of that family is looked up, and every
deferred one before it lists or copies all hooks. :func:`register_all` imports every one now.

>>> sorted(set(family_modules([])))
[]
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from ..paths import INCLUDE_DIR
from .registry import HOOKS, HookRegistry

#: The families that have a hooks module (``math`` has none: its ops are formula ops).
FAMILIES = ("boxing", "conv", "elementwise", "index", "linalg", "norm", "optim", "pool",
            "random", "reduce", "shape", "slice", "softmax")
#: Where the standard ops' family files are; an op defined elsewhere is not a family's.
FAMILY_DIR = str(INCLUDE_DIR / "tdflow" / "ops")
# The family modules are this package's (``tdflow.dialect.hooks``): named from it, they register
# into this package's registry even when the checkout's folders are imported by another name.
_PACKAGE = __name__.rpartition(".")[0]


def family_modules(ops: Iterable) -> dict[str, str] | None:
    """``{op name: hooks module}`` for the ``ops`` (``OpDef``\\ s) of a library that are standard
    ops of a family with a hooks module, read from the family file each op is defined in (a
    library that includes ``tdflow/ops.td`` has them too); ``None`` when a ``tdflow.`` op is
    defined anywhere else (no location, another file): it may reuse any standard op's hooks,
    so only importing every module is safe. Other dialects' ops have no standard hooks.

    >>> from tdflow.dialect.dialect import standard_dialect
    >>> family_modules(standard_dialect())["tdflow.matmul"]  # doctest: +ELLIPSIS
    '...hooks.linalg'
    >>> "tdflow.relu" in family_modules(standard_dialect())   # math: a formula op
    False
    """
    out: dict[str, str] = {}
    for op in ops:
        loc = op.location
        folder, name = os.path.split(loc.file if loc is not None else "")
        if folder != FAMILY_DIR or not name.endswith(".td"):
            if op.name.startswith("tdflow."):
                return None
            continue
        family = name[:-3]
        if family in FAMILIES:
            out[op.name] = f"{_PACKAGE}.{family}"
    return out


def defer_standard_hooks(ops: Iterable, registry: HookRegistry = HOOKS) -> None:
    """Let ``registry`` import the hooks module of each of the standard ``ops`` when one of its
    ops is first looked up (all of them now when the ops' families cannot be told).

    >>> from tdflow.dialect.dialect import standard_dialect
    >>> defer_standard_hooks(standard_dialect())
    >>> HOOKS.for_op("tdflow.matmul")["infer_data_type"].__module__  # doctest: +ELLIPSIS
    '...hooks.linalg'
    """
    modules = family_modules(ops)
    if modules is None:
        register_all()
    else:
        registry.defer(modules)


def register_all() -> None:
    """Import every family's hooks module now (each registers its ops' hooks in ``HOOKS``).

    >>> register_all(); "tdflow.conv2d" in {op for op, _ in HOOKS._hooks}
    True
    """
    import importlib

    for family in FAMILIES:
        importlib.import_module(f"{_PACKAGE}.{family}")
