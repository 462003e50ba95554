"""``LazyOps``: a library's ops by qualified name, each made when first looked up.

The standard library's cached artifact holds ~150 op definitions; a command looks up a few
(``verify`` of a small program: the ops it uses). Decoding all of them at load was ~5 ms of
every command's start, so :func:`~tdflow.dialect.dialect_cache.load_library` (``lazy=True``)
hands the :class:`~tdflow.dialect.dialect.Dialect` a read-only mapping that knows each op's
name, mnemonic, dialect and defining file up front (read from the artifact without making the
op) and makes the ``OpDef`` on its first lookup. It is a ``Mapping``: iteration is in definition
order, ``in``/``len``/``keys()`` make nothing, ``values()``/``items()`` make every op.

>>> from tdflow.dialect.opdef import OpDef
>>> made = []
>>> ops = LazyOps({"my.a": ("a", "my", None), "my.b": ("b", "my", None)},
...               lambda name: made.append(name) or OpDef(*ops.meta(name)[:2]))
>>> list(ops), "my.b" in ops, made
(['my.a', 'my.b'], True, [])
>>> ops["my.b"].name, made
('my.b', ['my.b'])
"""

from __future__ import annotations

import _thread
from collections.abc import Callable, Iterator, Mapping
from typing import Any


class LazyOps(Mapping):
    """Ops by qualified name made on first lookup by ``load(name)`` (then kept).

    ``meta`` maps each name, in definition order, to ``(mnemonic, dialect, file)`` (``file``:
    where the op is defined, ``None`` when unknown): what a dialect needs of every op at load.
    """

    __slots__ = ("_meta", "_done", "_load", "_lock")

    def __init__(self, meta: dict[str, tuple[str, str, str | None]],
                 load: Callable[[str], Any]) -> None:
        self._meta = meta
        self._done: dict[str, Any] = {}
        self._load = load
        # One op made at a time: threads asking for one op get one object (hooks' and
        # kernels' caches key on it), and the artifact's decoder, whose shared values are
        # made on first reference, is never entered twice. (_thread: always loaded, where
        # threading is not on a command's path.)
        self._lock = _thread.allocate_lock()

    def __getitem__(self, name: str) -> Any:
        op = self._done.get(name)
        if op is None:
            if name not in self._meta:
                raise KeyError(name)
            with self._lock:
                op = self._done.get(name)
                if op is None:
                    op = self._done[name] = self._load(name)
        return op

    def get(self, name: str, default: Any = None) -> Any:
        """The op called ``name`` (made now if need be), or ``default``.

        >>> LazyOps({}, print).get("my.a", 0)
        0
        """
        op = self._done.get(name)
        if op is not None:
            return op
        return self[name] if name in self._meta else default

    def __contains__(self, name: object) -> bool:
        return name in self._meta

    def __iter__(self) -> Iterator[str]:
        return iter(self._meta)

    def __len__(self) -> int:
        return len(self._meta)

    def __repr__(self) -> str:
        return f"<LazyOps: {len(self._meta)} ops, {len(self._done)} made>"

    def meta(self, name: str) -> tuple[str, str, str | None]:
        """``(mnemonic, dialect, defining file or None)`` of the op ``name`` (made or not).

        >>> LazyOps({"my.a": ("a", "my", "my.td")}, print).meta("my.a")
        ('a', 'my', 'my.td')
        """
        return self._meta[name]

    def made(self) -> int:
        """How many ops were made so far (for tests and benchmarks).

        >>> LazyOps({"my.a": ("a", "my", None)}, print).made()
        0
        """
        return len(self._done)

    def stubs(self) -> list:
        """Light stand-ins with ``.name`` and ``.location.file`` (``location`` ``None`` when
        unknown), one per op in order: what picking the ops' hooks modules reads.

        >>> [(s.name, s.location.file) for s in LazyOps({"my.a": ("a", "my", "x.td")}, print).stubs()]
        [('my.a', 'x.td')]
        """
        return [_Stub(name, None if f is None else _File(f))
                for name, (_m, _d, f) in self._meta.items()]


class _File:
    __slots__ = ("file",)

    def __init__(self, file: str) -> None:
        self.file = file


class _Stub:
    __slots__ = ("name", "location")

    def __init__(self, name: str, location: _File | None) -> None:
        self.name = name
        self.location = location
