"""The hook registry: Python functions keyed by (op, hook kind), registered by decorator.

Hook kinds are OneFlow's user-op functions in snake_case (see
:data:`tdflow.dialect.opdef.FLAG_TO_HOOK`); an op declares which ones it provides with its
``has_*_fn`` bits, and loading a dialect checks the two agree (OneFlow's link-time contract).

>>> from tdflow.dialect.hooks import infer_logical_tensor_desc
>>> @infer_logical_tensor_desc("my_dialect.twice")     # doctest: +SKIP
... def _twice(ctx):
...     ctx.set_output_shape("y", ctx.input_shape("x"))

Op names are qualified (``tdflow.relu``); a bare name means the ``tdflow`` dialect.
"""

from __future__ import annotations

import _thread  # threading's RLock without importing threading (start-up time)
from collections.abc import Callable, Sequence
from typing import Any

from tdflow.core.declarations import record

from ..opdef import HOOK_KINDS

Hook = Callable[..., Any]


def qualify(op: str, dialect: str = "tdflow") -> str:
    """``relu`` -> ``tdflow.relu``; qualified names are kept."""
    return op if "." in op else f"{dialect}.{op}"


class HookRegistry:
    """Hooks by (qualified op name, kind)."""

    def __init__(self) -> None:
        self._hooks: dict[tuple[str, str], Hook] = {}
        self._by_op: dict[str, dict[str, Hook]] = {}
        self.version = 0  # bumped on every change, so dialects can drop cached lookups
        # op -> the module that registers its hooks, imported when the op is first looked up
        # (:meth:`defer`); empty once every deferred module is imported
        self._pending: dict[str, str] = {}
        self._importing: set[str] = set()

    def defer(self, modules: dict[str, str]) -> None:
        """Import ``modules[op]`` (which registers ``op``'s hooks here) only when ``op`` is first
        looked up: importing the standard library's thirteen family modules costs a command that
        uses three ops about as much as parsing and verifying its program (start-up time).

        >>> reg = HookRegistry(); reg.defer({"doc.op": "json"})  # imported at the first look-up
        >>> len(reg._pending), reg.for_op("doc.op"), len(reg._pending)
        (1, {}, 0)
        """
        for op, module in modules.items():
            if module not in self._importing:
                self._pending[op] = module

    def _load(self, op: str) -> None:
        """Import the module deferred for ``op`` (and so every op it registers). One thread
        imports while the others wait; the module's own registrations, made while it is being
        imported, do not import it again."""
        with _LOAD_LOCK:
            module = self._pending.get(op)
            if module is None or module in self._importing:
                return
            import importlib

            self._importing.add(module)
            try:
                importlib.import_module(module)
            finally:
                self._importing.discard(module)
            for name in [name for name, m in self._pending.items() if m == module]:
                del self._pending[name]

    def _load_all(self) -> None:
        """Import every deferred module: for what lists or copies all hooks."""
        while self._pending:
            self._load(next(iter(self._pending)))

    def register(self, op: str, kind: str, fn: Hook, *, replace: bool = False) -> Hook:
        """Register ``fn`` as the ``kind`` hook of ``op``.

        Registering a second, different function for the same (op, kind) is an error unless
        ``replace`` is set (reloading the same module re-registers the same qualified function).
        """
        if self._pending and qualify(op) in self._pending:
            self._load(qualify(op))  # its module's hook first: a clash is found now, as before
        if kind not in HOOK_KINDS:
            import difflib

            close = difflib.get_close_matches(kind, HOOK_KINDS, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise ValueError(f"unknown hook kind '{kind}'{hint} (kinds: {', '.join(HOOK_KINDS)})")
        key = (qualify(op), kind)
        old = self._hooks.get(key)
        if old is not None and not replace and definition_id(old) != definition_id(fn):
            raise ValueError(f"op '{key[0]}' already has a {kind} hook ({qualname(old)}); "
                             f"pass replace=True to override it with {qualname(fn)}")
        self._hooks[key] = fn
        self._by_op.setdefault(key[0], {})[kind] = fn
        self.version += 1
        return fn

    def unregister(self, op: str, kind: str) -> None:
        key = (qualify(op), kind)
        if self._pending and key[0] in self._pending:
            self._load(key[0])
        if self._hooks.pop(key, None) is not None:
            self._by_op.get(key[0], {}).pop(kind, None)
            self.version += 1

    def get(self, op: str, kind: str) -> Hook | None:
        if self._pending and op in self._pending:
            self._load(op)
        return self._hooks.get((op, kind))

    def for_op(self, op: str) -> dict[str, Hook]:
        """Every hook of ``op`` by kind (a read-only view; do not mutate)."""
        if self._pending and op in self._pending:
            self._load(op)
        return self._by_op.get(op, {})

    def __contains__(self, key: object) -> bool:
        if self._pending and type(key) is tuple and key and key[0] in self._pending:
            self._load(key[0])
        return key in self._hooks

    def __len__(self) -> int:
        self._load_all()
        return len(self._hooks)

    def items(self) -> list[tuple[tuple[str, str], Hook]]:
        """Every ``((op, kind), hook)``, deferred modules imported first.

        >>> reg = HookRegistry(); _ = reg.register("doc.a", "infer_data_type", len)
        >>> reg.items()
        [(('doc.a', 'infer_data_type'), <built-in function len>)]
        """
        self._load_all()
        return list(self._hooks.items())

    def copy(self) -> HookRegistry:
        self._load_all()
        new = HookRegistry()
        for (op, kind), fn in self._hooks.items():
            new.register(op, kind, fn)
        return new


class LayeredHookRegistry(HookRegistry):
    """A context's hooks: its own hooks modules' (``own``) over the process-wide ones
    (``base``, which keeps growing as tdflow and the user import modules). An (op, kind) in both
    with different definitions is an error, as registering it twice would be; registering on
    this registry adds to ``own``.

    >>> base = HookRegistry(); own = HookRegistry()
    >>> _ = base.register("doc.a", "infer_data_type", len)
    >>> _ = own.register("doc.b", "infer_data_type", abs)
    >>> layered = LayeredHookRegistry(own, base)
    >>> sorted(op for op in ("doc.a", "doc.b") if layered.for_op(op))
    ['doc.a', 'doc.b']
    """

    def __init__(self, own: HookRegistry, base: HookRegistry) -> None:
        super().__init__()
        self._hooks, self._by_op = own._hooks, own._by_op
        self._own, self.base = own, base
        self._merged: dict[str, dict[str, Hook]] = {}
        self._merged_at = -1
        for (op, kind), fn in own._hooks.items():
            old = base.get(op, kind)
            if old is not None and definition_id(old) != definition_id(fn):
                raise ValueError(f"op '{op}' already has a {kind} hook ({qualname(old)}); "
                                 f"its hooks file defines another one ({qualname(fn)})")

    @property  # type: ignore[override]
    def version(self) -> int:
        return self._own.version + self.base.version

    @version.setter
    def version(self, value: int) -> None:  # HookRegistry.__init__ sets it; own keeps count
        pass

    def register(self, op: str, kind: str, fn: Hook, *, replace: bool = False) -> Hook:
        return self._own.register(op, kind, fn, replace=replace)

    def unregister(self, op: str, kind: str) -> None:
        self._own.unregister(op, kind)

    def get(self, op: str, kind: str) -> Hook | None:
        fn = self._own.get(op, kind)
        return fn if fn is not None else self.base.get(op, kind)

    def for_op(self, op: str) -> dict[str, Hook]:
        own = self._own.for_op(op)
        if not own:
            return self.base.for_op(op)
        if self._merged_at != self.version:
            self._merged, self._merged_at = {}, self.version
        merged = self._merged.get(op)
        if merged is None:
            merged = self._merged[op] = {**self.base.for_op(op), **own}
        return merged

    def __contains__(self, key: object) -> bool:
        return key in self._own or key in self.base

    def __len__(self) -> int:
        return len(self.base) + sum(1 for k in self._own._hooks if k not in self.base)

    def items(self) -> list[tuple[tuple[str, str], Hook]]:
        return list({**dict(self.base.items()), **self._own._hooks}.items())

    def copy(self) -> HookRegistry:
        new = self.base.copy()
        for (op, kind), fn in self._own._hooks.items():
            new.register(op, kind, fn, replace=True)
        return new


def hooks_of(decls: Sequence[tuple], base: HookRegistry | None = None) -> HookRegistry:
    """The hook registry of a context whose hooks modules declared ``decls`` (``"hook"``
    declarations): the process-wide registry when there are none, else those hooks layered
    over it.

    >>> hooks_of(()) is HOOKS
    True
    """
    base = base if base is not None else HOOKS
    if not decls:
        return base
    own = HookRegistry()
    for ops, kind, fn, replace in decls:
        for op in ops:
            own.register(op, kind, fn, replace=replace)
    return LayeredHookRegistry(own, base)


def qualname(fn: Hook) -> str:
    """``module.qualname`` of a function, how registries name it in their errors.

    >>> qualname(len)
    'builtins.len'
    """
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def definition_id(fn: Any) -> str:
    """What makes two function objects the same definition: the source file they were written
    in and their qualified name (``module.qualname`` for functions without code). A hooks
    module run twice, once by ``import my_hooks`` and once through ``load_ops(hooks=[...])``,
    has two module names but one file: its hooks and kernels re-register, they do not clash.

    >>> def f(): pass
    >>> definition_id(f) == definition_id(f), definition_id(len)
    (True, 'builtins.len')
    """
    import os

    code = getattr(fn, "__code__", None)
    if code is not None and code.co_filename and not code.co_filename.startswith("<"):
        return f"{os.path.realpath(code.co_filename)}:{getattr(fn, '__qualname__', '?')}"
    return qualname(fn)


# One lock for every registry's deferred imports (an import may register into several).
_LOAD_LOCK = _thread.RLock()

HOOKS = HookRegistry()
"""The process-wide registry the decorators below fill; dialects use it by default."""


def hook(kind: str, *ops: str, registry: HookRegistry | None = None, replace: bool = False):
    """Decorator: register the function as the ``kind`` hook of every op in ``ops``.

    >>> @hook("infer_data_type", "tdflow.my_op")   # doctest: +SKIP
    ... def _dtype(ctx): ctx.set_output_dtype("y", ctx.input_dtype("x"))
    """
    if not ops:
        raise TypeError(f"@{kind}(...) needs at least one op name")

    def deco(fn: Hook) -> Hook:
        if registry is None and record("hook", (ops, kind, fn, replace),
                                       getattr(fn, "__module__", None)):
            return fn  # a hooks module imported for a context: that context's (see below)
        reg = registry if registry is not None else HOOKS
        for op in ops:
            reg.register(op, kind, fn, replace=replace)
        return fn

    return deco


def float_values_unread(fn: Hook) -> Hook:
    """Decorator: promise that the hook's outcome never depends on the *values* of the op's
    float attributes (``f32``/``f64``; their presence and type may matter). The verifier then
    accepts an op that differs from one already found valid only in such a constant without
    running the hooks again (``dialect/verify_memo.py``). Apply it only when true: a hook that
    rejects some values (``alpha > 0``) must not carry it.

    >>> @float_values_unread
    ... def check(ctx): pass
    >>> check.reads_float_values
    False
    """
    fn.reads_float_values = False  # type: ignore[attr-defined]
    return fn


def _kind_decorator(kind: str):
    def deco(*ops: str, registry: HookRegistry | None = None, replace: bool = False):
        return hook(kind, *ops, registry=registry, replace=replace)

    deco.__name__ = kind
    deco.__doc__ = f"Decorator: register the ``{kind}`` hook of the given ops."
    return deco


check_attr = _kind_decorator("check_attr")
infer_logical_tensor_desc = _kind_decorator("infer_logical_tensor_desc")
infer_physical_tensor_desc = _kind_decorator("infer_physical_tensor_desc")
get_sbp = _kind_decorator("get_sbp")
infer_sbp_signature = _kind_decorator("infer_sbp_signature")
infer_data_type = _kind_decorator("infer_data_type")
infer_device = _kind_decorator("infer_device")
modify_input_arg = _kind_decorator("modify_input_arg")
modify_output_arg = _kind_decorator("modify_output_arg")
infer_output_blob_time_shape = _kind_decorator("infer_output_blob_time_shape")
infer_nd_sbp = _kind_decorator("infer_nd_sbp")
compute_complexity = _kind_decorator("compute_complexity")
get_nd_sbp = _kind_decorator("get_nd_sbp")
enumerate_nd_sbp_signatures = _kind_decorator("enumerate_nd_sbp_signatures")
dump_nd_sbp_signature_for_op_conf = _kind_decorator("dump_nd_sbp_signature_for_op_conf")
