"""What a library's Python modules declare, kept per module: the seam between the decorators
(``@infer_logical_tensor_desc``, ``@register_kernel``, ``@cuda_generator``, ``@grad_rule``,
``@composite``, ``@native``) and the :class:`~tdflow.dialect.context.Context` that uses them.

MLIR registers a dialect's interfaces with one ``MLIRContext``, not with the process; tdflow does
the same for the Python of a user's op library. While a library's hooks module is imported for a
context (``load_ops(hooks=[...])``, the CLI's ``--hooks``), every decorator it runs is *recorded
for that module* (:func:`record` returns ``True``) instead of filling a process-wide table, and the
contexts that load the module build their registries from its declarations
(:func:`declared`). Two contexts may therefore load two hooks files that give the same op
different kernels or hooks, and neither sees the other's.

Declarations made anywhere else — tdflow's own family modules, a module the user imports
themselves, a decorator in a test — are *ambient*: the decorators put them in the process-wide
tables every context consults after its own, as before.

>>> with declaring("my_hooks"):
...     record("kernel", "k1", "my_hooks")
True
>>> snapshot(["my_hooks"])
{'kernel': ['k1']}
>>> record("kernel", "k2", "some_module")     # not inside a hooks import: ambient
False
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

__all__ = ["Declaring", "ambient", "declare", "declared_by", "declaring", "forget", "record",
           "snapshot"]


class Declaring(Protocol):
    """What the layers build a context's own tables from: a
    :class:`~tdflow.dialect.context.Context` (or dialect) and its ``declared(kind)``."""

    def declared(self, kind: str) -> list[Any]: ...

# The hooks module being imported for a context, or None (ambient).
_OWNER: contextvars.ContextVar[str | None] = contextvars.ContextVar("tdflow_owner", default=None)
# module name -> [(kind, item)] in declaration order (the module's latest import only)
_BY_MODULE: dict[str, list[tuple[str, Any]]] = {}


@contextlib.contextmanager
def declaring(module: str) -> Iterator[None]:
    """Record the declarations made inside the block as ``module``'s, replacing what an earlier
    import of ``module`` declared (an edited hooks file runs again).

    >>> with declaring("doc_hooks"):
    ...     _ = record("hook", ("doc.op", "infer_data_type", len), "doc_hooks")
    >>> len(snapshot(["doc_hooks"])["hook"])
    1
    """
    _BY_MODULE[module] = []
    token = _OWNER.set(module)
    try:
        yield
    finally:
        _OWNER.reset(token)


@contextlib.contextmanager
def ambient() -> Iterator[None]:
    """Make the declarations inside the block ambient even during a hooks import: tdflow's own
    modules, imported lazily the first time a user's hooks file touches them, register for every
    context (their kernels are the standard library's).

    >>> with declaring("doc_hooks2"), ambient():
    ...     record("kernel", "k", "doc_hooks2")
    False
    """
    token = _OWNER.set(None)
    try:
        yield
    finally:
        _OWNER.reset(token)


def record(kind: str, item: Any, defined_in: str | None) -> bool:
    """Record ``item`` as a ``kind`` declaration of the hooks module being imported, when one is
    and ``defined_in`` (the module of the decorated function) is not tdflow's own; ``False``
    when the declaration is ambient (the caller then fills its process-wide table).

    >>> record("kernel", "k", "tdflow.runtime.kernels.elementwise")
    False
    """
    owner = _OWNER.get()
    if owner is None or (defined_in or "").split(".", 1)[0] == "tdflow":
        return False
    _BY_MODULE[owner].append((kind, item))
    return True


def declare(module: str, kind: str, items: Iterable[Any]) -> str:
    """Set ``module``'s ``kind`` declarations to ``items`` and return ``module``: how a library
    tdflow ships declares the Python of its ops (the onnx dialect's inference hooks), which
    :func:`record` would take for ambient, being tdflow's own. Only contexts built with that
    library see them.

    >>> declare("doc_lib", "kernel", ["k"])
    'doc_lib'
    >>> snapshot(["doc_lib"])
    {'kernel': ['k']}
    """
    kept = [(k, item) for k, item in _BY_MODULE.get(module, ()) if k != kind]
    _BY_MODULE[module] = kept + [(kind, item) for item in items]
    return module


def declared_by(context: object, kind: str) -> list[Any]:
    """What ``context``'s hooks modules declared of ``kind`` when it was built (its
    ``declarations``, :func:`snapshot`), in load order; ``[]`` for anything without them (a
    plain dialect, ``None``): what the layers build a context's own tables from.

    >>> declared_by(None, "kernel")
    []
    """
    return list((getattr(context, "declarations", None) or {}).get(kind, ()))


def snapshot(modules: Iterable[str]) -> dict[str, list[Any]]:
    """Every declaration of ``modules`` by kind, as they stand now: what a context is built
    from. A hooks file edited and loaded again later serves the contexts loaded after that;
    those built before keep what they were built with.

    >>> with declaring("doc_snap"):
    ...     _ = record("kernel", "k", "doc_snap")
    >>> snapshot(["doc_snap"])
    {'kernel': ['k']}
    """
    out: dict[str, list[Any]] = {}
    for m in modules:
        for kind, item in _BY_MODULE.get(m, ()):
            out.setdefault(kind, []).append(item)
    return out


def forget(module: str) -> None:
    """Drop ``module``'s declarations (its import failed: nothing of it may be used).

    >>> forget("never_imported")
    """
    _BY_MODULE.pop(module, None)
