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

from collections.abc import Callable
from typing import Any

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

    def register(self, op: str, kind: str, fn: Hook, *, replace: bool = False) -> Hook:
        """Register ``fn`` as the ``kind`` hook of ``op``.

        Registering a second, different function for the same (op, kind) is an error unless
        ``replace`` is set (reloading the same module re-registers the same qualified function).
        """
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
        if self._hooks.pop(key, None) is not None:
            self._by_op.get(key[0], {}).pop(kind, None)
            self.version += 1

    def get(self, op: str, kind: str) -> Hook | None:
        return self._hooks.get((op, kind))

    def for_op(self, op: str) -> dict[str, Hook]:
        """Every hook of ``op`` by kind (a read-only view; do not mutate)."""
        return self._by_op.get(op, {})

    def __contains__(self, key: object) -> bool:
        return key in self._hooks

    def __len__(self) -> int:
        return len(self._hooks)

    def copy(self) -> HookRegistry:
        new = HookRegistry()
        for (op, kind), fn in self._hooks.items():
            new.register(op, kind, fn)
        return new


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
        reg = registry if registry is not None else HOOKS
        for op in ops:
            reg.register(op, kind, fn, replace=replace)
        return fn

    return deco


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
