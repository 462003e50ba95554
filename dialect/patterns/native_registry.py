"""The registry of Python natives by DRR record name, and the ``@native`` decorator that fills it.

A leaf below :mod:`.native` (which looks natives up across patterns and registers the standard
library's) and :mod:`.std_natives` (which registers with the decorator). See :mod:`.native` for
what a native is.

>>> reg = NativeRegistry(); _ = reg.register("A", len); reg.names()
['A']
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from typing import Any

from tdflow.core.declarations import Declaring, declared_by, record

from ..hooks.registry import definition_id, qualname

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


class LayeredNatives(NativeRegistry):
    """A context's natives: its hooks modules' (``own``) over the process-wide ones.

    >>> base, own = NativeRegistry(), NativeRegistry()
    >>> _ = base.register("A", len); _ = own.register("B", abs)
    >>> LayeredNatives(own, base).names()
    ['A', 'B']
    """

    def __init__(self, own: NativeRegistry, base: NativeRegistry) -> None:
        super().__init__()
        self._fns = own._fns
        self.base = base

    def get(self, name: str) -> Native | None:
        fn = self._fns.get(name)
        return fn if fn is not None else self.base.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._fns or name in self.base

    def names(self) -> list[str]:
        return sorted(set(self._fns) | set(self.base.names()))


NATIVES = NativeRegistry()


def natives_of(dialect: Declaring | None) -> NativeRegistry:
    """The natives ``dialect`` (a context) sees: what its hooks modules declare with
    ``@native`` over the process-wide ones (:data:`NATIVES` when they declare none).

    >>> natives_of(None) is NATIVES
    True
    """
    own = declared_by(dialect, "native")
    if not own:
        return NATIVES
    reg = NativeRegistry()
    for name, fn, replace in own:
        reg.register(name, fn, replace=replace)
    return LayeredNatives(reg, NATIVES)


_CURRENT: contextvars.ContextVar[NativeRegistry | None] = contextvars.ContextVar(
    "tdflow_natives", default=None)


@contextlib.contextmanager
def using_natives(registry: NativeRegistry) -> Iterator[None]:
    """Make ``registry`` the one :func:`current_natives` answers inside the block (the pattern
    driver applies a context's rules with that context's natives).

    >>> with using_natives(NativeRegistry()):
    ...     "TDF_SameType" in current_natives()
    False
    """
    token = _CURRENT.set(registry)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current_natives() -> NativeRegistry:
    """The natives of the rules being applied (:func:`using_natives`), else :data:`NATIVES`."""
    reg = _CURRENT.get()
    return reg if reg is not None else NATIVES
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
        if registry is None and record("native", (name, fn, replace),
                                       getattr(fn, "__module__", None)):
            return fn  # a hooks module imported for a context: that context's
        (registry if registry is not None else NATIVES).register(name, fn, replace=replace)
        return fn

    return deco


