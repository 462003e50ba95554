"""Op libraries at run time: ``lib.functional`` on every context, and the load checks the
functional API owns.

There is one ``load_ops``, :func:`tdflow.dialect.context.load_ops` (``tdflow.load_ops``): it
builds a :class:`~tdflow.dialect.context.Context` of the standard ops and the user's libraries.
Importing the runtime (``tdflow.runtime`` imports this module) gives every context
``functional``, one Python function per op of every dialect in it, and adds the check of the
user's ``signature`` fields to ``load_ops`` (a bad line is a load error at its place in the
``.td``). Standard ops keep their ``tdflow.functional`` forms (several signatures,
composites); an op of another dialect is there by mnemonic when no standard function and no
other dialect's op has that name, and always qualified by its dialect
(``lib.functional.oneflow.relu``). Eager calls go through the context's hooks, its kernel
registry and the engine, as compiled programs do; a formula op's derived kernel is registered
when the context first reaches the runtime (:mod:`~tdflow.runtime.op_kernels`).

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

import weakref
from collections.abc import Callable
from typing import Any

from tdflow.dialect.context import Context, load_ops

__all__ = ["Functional", "check_signature_fields", "functional_of", "load_ops"]


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


_FUNCTIONAL: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def functional_of(context: Context) -> Functional:
    """``context.functional``: the context's functional API, made once and kept with it.

    >>> from tdflow.dialect.context import standard_context
    >>> ctx = standard_context()
    >>> ctx.functional is ctx.functional, ctx.functional.relu.__name__
    (True, 'relu')
    """
    fn = _FUNCTIONAL.get(context)
    if fn is None:
        fn = _FUNCTIONAL[context] = Functional(context)
    return fn


def check_signature_fields(context: Context) -> None:
    """Build the function of every user op with a ``signature`` field, so a bad line is a
    ``TdError`` located in the ``.td`` when the library loads (one of ``load_ops``'s checks,
    :data:`~tdflow.dialect.context.LOAD_CHECKS`).

    >>> from tdflow.dialect.context import standard_context
    >>> check_signature_fields(standard_context())  # no user ops: nothing to check
    """
    for op in context.user_ops():
        if op.signatures:
            functional_of(context)._qualified(op.name)
