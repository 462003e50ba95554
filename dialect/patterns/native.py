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

>>> reg = NativeRegistry()
>>> @native("IsPositive", registry=reg)
... def _pos(x):
...     return x > 0
>>> reg.get("IsPositive")(3), "IsPositive" in reg, reg.get("Nope")
(True, True, None)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..hooks.registry import definition_id, qualname

__all__ = ["NATIVES", "NativeRegistry", "native", "missing_natives", "load_standard_natives"]

Native = Callable[..., Any]


class NativeRegistry:
    """Python functions by the DRR record name they stand in for."""

    def __init__(self) -> None:
        self._fns: dict[str, Native] = {}

    def register(self, name: str, fn: Native, *, replace: bool = False) -> Native:
        """Register ``fn`` for record ``name``; a different function already there is an
        error unless ``replace`` (the same definition, re-imported, just re-registers).

        >>> reg = NativeRegistry()
        >>> f = reg.register("A", len)
        >>> reg.register("A", abs)
        Traceback (most recent call last):
        ...
        ValueError: native 'A' is already registered (builtins.len); pass replace=True to override it with builtins.abs
        """
        if not isinstance(name, str) or not name:
            raise TypeError(f"@native needs the record's name as a string, got {name!r}")
        old = self._fns.get(name)
        if old is not None and not replace and definition_id(old) != definition_id(fn):
            raise ValueError(f"native '{name}' is already registered ({qualname(old)}); "
                             f"pass replace=True to override it with {qualname(fn)}")
        self._fns[name] = fn
        return fn

    def unregister(self, name: str) -> None:
        self._fns.pop(name, None)

    def get(self, name: str) -> Native | None:
        return self._fns.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._fns

    def names(self) -> list[str]:
        return sorted(self._fns)


NATIVES = NativeRegistry()
"""The process-wide registry ``@tdflow.native`` fills; the applier looks natives up here."""


def native(name: str, *, registry: NativeRegistry | None = None,
           replace: bool = False) -> Callable[[Native], Native]:
    """Decorator: ``fn`` serves the DRR record ``name`` (a ``NativeCodeCall`` or a
    ``Constraint`` whose predicate is a ``CPred``).

    >>> reg = NativeRegistry()
    >>> @native("SameShape", registry=reg)
    ... def _same_shape(a, b):
    ...     return a.type.shape == b.type.shape
    >>> reg.names()
    ['SameShape']
    """
    def deco(fn: Native) -> Native:
        (registry if registry is not None else NATIVES).register(name, fn, replace=replace)
        return fn

    return deco


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
