"""Op libraries at run time: ``tdflow.load_ops(...)`` and ``lib.functional``.

``load_ops`` is :func:`tdflow.dialect.context.load_ops` returning an :class:`OpLibrary`: the same
context of dialects, plus ``functional``, one Python function per op of every dialect in it.
Standard ops keep their ``tdflow.functional`` forms (several signatures, composites); an op of
another dialect is there by mnemonic when no standard function and no other dialect's op has
that name, and always qualified by its dialect (``lib.functional.oneflow.relu``). Eager calls go
through the context's hooks, its kernel registry and the engine, as compiled programs do.

>>> import pathlib, tempfile
>>> import numpy as np, tdflow
>>> src = pathlib.Path(tempfile.mkdtemp()) / "my_ops.td"
>>> _ = src.write_text('include "tdflow/Base.td"\\n'
...     'def My_Dialect : Dialect { let name = "doclib"; }\\n'
...     'def My_HalveOp : Op<My_Dialect, "halve", [NoMemoryEffect, SameOperandsAndResultType]> {\\n'
...     '  let arguments = (ins TDF_Tensor:$x); let results = (outs TDF_Tensor:$y); }\\n')
>>> from tdflow.runtime.kernels.registry import register_kernel
>>> @register_kernel("doclib.halve", dtypes=("f32",))
... def halve(attrs, inputs, outs):
...     return [np.multiply(inputs[0], 0.5, out=outs[0])]
>>> lib = load_ops(src)
>>> lib.functional.halve(tdflow.tensor([2.0, 3.0])).numpy()
array([1. , 1.5], dtype=float32)
>>> lib.functional.doclib.halve is lib.functional.halve, lib.functional.relu is tdflow.functional.relu
(True, True)
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from typing import Any

from tdflow.dialect.context import Context
from tdflow.dialect.context import load_ops as _load_context

__all__ = ["OpLibrary", "Functional", "load_ops"]


class OpLibrary(Context):
    """A :class:`~tdflow.dialect.context.Context` with the functional API of all its ops."""

    @functools.cached_property
    def functional(self) -> Functional:
        """One function per op: ``lib.functional.<mnemonic>`` or ``.<dialect>.<mnemonic>``."""
        return Functional(self)


class _DialectFunctions:
    """``lib.functional.<dialect>``: the functions of one dialect's ops, by mnemonic."""

    def __init__(self, owner: Functional, dialect: str) -> None:
        self._owner, self._dialect = owner, dialect

    def __getattr__(self, mnemonic: str) -> Callable[..., Any]:
        fn = self._owner._qualified(f"{self._dialect}.{mnemonic}")
        if fn is None:
            raise AttributeError(f"dialect '{self._dialect}' has no op '{mnemonic}'")
        return fn

    def __dir__(self) -> list[str]:
        return sorted(op.mnemonic for op in self._owner._ctx if op.dialect == self._dialect)

    def __repr__(self) -> str:
        return f"<functions of dialect {self._dialect!r}>"


class Functional:
    """The functional API of a context; functions are made on first use and kept."""

    def __init__(self, context: Context) -> None:
        from tdflow.runtime import functional as std

        self._ctx = context
        self._std: dict[str, Callable[..., Any]] = (
            dict(std.functions) if context.standard is not None else {})
        self._std_dialect = context.standard.name if context.standard is not None else None
        by_mnemonic: dict[str, list[str]] = {}
        for op in context.user_ops():
            by_mnemonic.setdefault(op.mnemonic, []).append(op.name)
        # A bare name is an op of another dialect only when nothing else claims it.
        self._bare = {m: names[0] for m, names in by_mnemonic.items()
                      if len(names) == 1 and m not in self._std}
        self._ambiguous = {m: names for m, names in by_mnemonic.items() if m not in self._bare}
        self._dialects = set(context.dialect_names())
        self._made: dict[str, Callable[..., Any]] = {}

    def _qualified(self, name: str) -> Callable[..., Any] | None:
        fn = self._made.get(name)
        if fn is not None:
            return fn
        op = self._ctx.lookup(name)
        if op is None:
            return None
        if op.dialect == self._std_dialect and op.mnemonic in self._std:
            fn = self._std[op.mnemonic]
        else:
            from tdflow.runtime.functional import op_function

            fn = op_function(op, self._ctx)
        self._made[name] = fn
        return fn

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name in self._dialects:
            return _DialectFunctions(self, name)
        fn = self._std.get(name)
        if fn is not None:
            return fn
        qualified = self._bare.get(name)
        if qualified is not None:
            return self._qualified(qualified)
        if name in self._ambiguous:
            options = ", ".join(f"functional.{n}" for n in self._ambiguous[name])
            raise AttributeError(f"'{name}' names ops of several dialects; use one of {options}")
        raise AttributeError(f"no op or function named '{name}' in this library")

    def __dir__(self) -> list[str]:
        return sorted(set(self._std) | set(self._bare) | self._dialects)

    def __repr__(self) -> str:
        return f"<functional API of {self._ctx!r}>"


def load_ops(*paths: str | os.PathLike, include_dirs: Iterable[str | os.PathLike] = (),
             defines: Iterable[str] = (), hooks: Iterable[str | os.PathLike] = (),
             std: bool = True) -> OpLibrary:
    """:func:`tdflow.dialect.context.load_ops`, as an :class:`OpLibrary` (with ``functional``).

    ``tdflow.load_ops("my_ops.td", hooks=["my_hooks.py"])``: the standard ops plus the ops of
    ``my_ops.td``, whose hooks and kernels ``my_hooks.py`` registers.
    """
    ctx = _load_context(*paths, include_dirs=include_dirs, defines=defines, hooks=hooks, std=std)
    lib = OpLibrary(ctx.libraries, standard=ctx.standard, registry=ctx.registry)
    for op in lib.user_ops():
        if op.signatures:  # a bad signature field is a load error, located in the .td
            lib.functional._qualified(op.name)
    return lib
