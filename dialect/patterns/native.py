"""Python natives for DRR's C++ pieces: ``NativeCodeCall`` and ``Constraint<CPred<...>>``.

A rewrite rule in ``.td`` may call C++ (``NativeCodeCall<"...">``) or test a C++ predicate
(``Constraint<CPred<"...">>``). tdflow never runs that text: a Python function registered
under the *record's name* stands in for it, from a hooks module (``--hooks h.py``)::

    import tdflow

    @tdflow.native("TypesAreIdentical")          # Constraint<CPred<"$0.getType() == $1.getType()">>
    def same_type(a, b):
        return a.type == b.type

    @tdflow.native("ReshapeConstant")            # NativeCodeCall<"$0.reshape(...)">
    def reshape_constant(value, res): ...

A constraint's function receives the bound IR values (with ``.type``) and attributes (as
Python values: ``float``, ``tuple`` of ints, ...) and returns a bool; a ``NativeCodeCall``'s
returns an IR ``Value`` (a detached op's result is inserted before the matched op) or an
attribute's Python value. Registering is idempotent like hooks (the same function from the
same file re-registers; a different function under a taken name is an error unless
``replace=True``).

The registry and the decorator are in :mod:`.native_registry` (re-exported here); this module
adds what looks across patterns: :func:`missing_natives`, and the standard library's natives.

>>> reg = NativeRegistry()
>>> @native("IsPositive", registry=reg)
... def _pos(x):
...     return x > 0
>>> reg.get("IsPositive")(3), "IsPositive" in reg, reg.get("Nope")
(True, True, None)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .native_registry import NATIVES, Native, NativeRegistry, native

__all__ = ["NATIVES", "Native", "NativeRegistry", "native", "missing_natives",
           "load_standard_natives"]

def missing_natives(patterns: Iterable[Any],
                    registry: NativeRegistry | None = None) -> list[tuple[Any, str]]:
    """Every ``(pattern, record name)`` whose native has no Python function registered.

    >>> from tdflow.dialect.patterns.model import Bind, OpNode, Pattern
    >>> p = Pattern("P", "t.a", 1, OpNode("op", "t.a", (Bind("x", "any"),)), (Bind("x", "any"),),
    ...             natives=("IsSmall",))
    >>> [(q.name, rec) for q, rec in missing_natives([p], NativeRegistry())]
    [('P', 'IsSmall')]
    """
    reg = registry if registry is not None else NATIVES
    load_standard_natives()
    return [(p, rec) for p in patterns for rec in p.natives if rec not in reg]


def load_standard_natives() -> None:
    """Register the natives the standard library's rules use (``ops/canonical.td``).

    >>> load_standard_natives(); "TDF_SameType" in NATIVES
    True
    """
    from . import std_natives  # noqa: F401 - registers by decorator (once: a module import)
