"""``Dialect``: the ops of a ``.td`` file with their hooks; ``load_dialect`` and
``standard_dialect``.

>>> d = standard_dialect()
>>> d.lookup("tdflow.leaky_relu").attr("alpha").default
0.0
>>> from tdflow.dialect.types import TensorType
>>> d.infer_result_types("tdflow.matmul", [TensorType((8, 16), "f32"), TensorType((4, 16), "f32")],
...                      {"transpose_b": True})
[TensorType(shape=(8, 4), dtype='f32')]
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .hooks.registry import HOOKS, HookRegistry
from .infer import (
    InferError,
    OpInfo,
    bounded_put,
    cache_key,
    group_inputs,
    holds_constant,
    run_inference,
    typed_attrs,
)
from .lazy_ops import LazyOps
from .op_verify import verify_operation as _verify_operation
from .opdef import FLAG_TO_HOOK, HOOK_TO_FLAG, OpDef
from .paths import INCLUDE_DIR
from .types import TensorType

if TYPE_CHECKING:
    from .ir.core import Operation
    from .patterns.model import Pattern


class Dialect:
    """The ops of one ``.td`` file (by qualified name) and the hook registry they use.

    ``ops`` maps ``"tdflow.relu"`` to its :class:`~tdflow.dialect.opdef.OpDef`, in definition
    order. Lookups, inference and verification go through the methods below.
    """

    #: The hooks modules imported for it (a :class:`~tdflow.dialect.context.Context` has them)
    #: and what they declared, by kind, when it was built (:mod:`tdflow.core.declarations`).
    hook_modules: tuple[str, ...] = ()
    declarations: Mapping[str, Sequence[Any]] = MappingProxyType({})

    def __init__(self, ops: Iterable[OpDef] | LazyOps, *, name: str | None = None, path: str | None = None,
                 registry: HookRegistry | None = None, patterns: Iterable[Pattern] = ()) -> None:
        # the rewrite patterns (DRR `Pat<...>` records) of the library, in definition order
        self.patterns: tuple[Pattern, ...] = tuple(patterns)
        self._by_mnemonic: dict[str, list[str]] = {}
        if isinstance(ops, LazyOps):  # the standard library's: each op made on first lookup
            self.ops: Mapping[str, OpDef] = ops
            for op_name in ops:
                self._by_mnemonic.setdefault(ops.meta(op_name)[0], []).append(op_name)
            dialects = [ops.meta(n)[1] for n in ops] if name is None else []
        else:
            self.ops = {}
            for op in ops:
                self.ops[op.name] = op
            for op in self.ops.values():
                self._by_mnemonic.setdefault(op.mnemonic, []).append(op.name)
            dialects = [op.dialect for op in self.ops.values()] if name is None else []
        if name is None:
            name = max(set(dialects), key=dialects.count) if dialects else "tdflow"
        self.name = name
        self.path = path
        self.registry = registry if registry is not None else HOOKS
        self._infos: dict[str, OpInfo] = {}
        self._results: dict[tuple, list[TensorType]] = {}
        # (name, types, attributes) found valid, and the same by identity (verify_memo.py)
        self._verified: dict[tuple, Any] = {}
        # The verifier calls this once per op: bind it without a Python-level wrapper.
        self.verify_operation = functools.partial(_verify_operation, self)
        self._version = self.registry.version
        # Ops of other dialects served by a standard op of the same shape (a Context fills it):
        # {"oneflow.relu": "tdflow.relu"}. They use its hooks and kernels unless they have own.
        self.served_by: dict[str, str] = {}

    def declared(self, kind: str) -> list:
        """What this dialect's hooks modules declare of ``kind`` (``"kernel"``,
        ``"generator"``, ``"grad_rule"``, ``"composite"``, ``"native"``, ``"hook"``), in
        load order, as they stood when the context was built: what the layers above build the
        context's own tables from.

        >>> standard_dialect().declared("kernel")
        []
        """
        from tdflow.core.declarations import declared_by

        return declared_by(self, kind)

    # -- lookup ---------------------------------------------------------------------------
    def lookup(self, name: str) -> OpDef | None:
        """The op called ``name`` (qualified: ``tdflow.relu``), or ``None``."""
        return self.ops.get(name)

    def __getitem__(self, name: str) -> OpDef:
        op = self.ops.get(name)
        if op is None:
            raise KeyError(self.unknown_op_message(name))
        return op

    def __contains__(self, name: object) -> bool:
        return name in self.ops

    def __iter__(self) -> Iterator[OpDef]:
        return iter(self.ops.values())

    def __len__(self) -> int:
        return len(self.ops)

    def __repr__(self) -> str:
        return f"<Dialect {self.name!r}: {len(self.ops)} ops from {self.path or '<memory>'}>"

    def suggest(self, name: str) -> list[str]:
        """Close op names for "did you mean" (a bare mnemonic finds its qualified name)."""
        if name in self._by_mnemonic:
            return list(self._by_mnemonic[name])
        import difflib  # only for messages (start-up time)

        cands = difflib.get_close_matches(name, list(self.ops), n=2, cutoff=0.6)
        if not cands and "." in name:
            prefix, bare = name.split(".", 1)
            if not self._dialect_loaded(prefix):  # another dialect's op: only the same name
                return list(self._by_mnemonic.get(bare, ()))[:2]
            for m in difflib.get_close_matches(bare, list(self._by_mnemonic), n=2, cutoff=0.6):
                cands.extend(self._by_mnemonic[m])
        return cands[:2]

    def _dialect_loaded(self, prefix: str) -> bool:
        return any(n.startswith(prefix + ".") for n in self.ops)

    def unknown_op_message(self, name: str) -> str:
        msg = f"unknown operation '{name}'"
        prefix = name.split(".", 1)[0] if "." in name else ""
        if prefix and not self._dialect_loaded(prefix):
            msg += f" (no dialect '{prefix}' is loaded)"
        cands = self.suggest(name)
        if cands:
            msg += "; did you mean " + " or ".join(f"'{c}'" for c in cands) + "?"
        return msg

    # -- hooks ----------------------------------------------------------------------------
    def hooks_of(self, op_name: str) -> dict[str, Any]:
        """The hooks ``op_name`` runs, by kind: its own, or those of the standard op serving it."""
        own = self.registry.for_op(op_name)
        serving = self.served_by.get(op_name)
        return own if own or serving is None else self.registry.for_op(serving)

    def hook_op(self, op_name: str) -> OpDef | None:
        """The op whose hooks ``op_name`` runs: the serving standard op when it borrows that
        op's hooks, else its own definition (``None`` for an unknown name).

        >>> standard_dialect().hook_op("tdflow.relu").name
        'tdflow.relu'
        """
        own = self.ops.get(op_name)
        serving = self.served_by.get(op_name)
        if serving is None or own is None or self.registry.for_op(op_name):
            return own
        return self.ops.get(serving, own)

    def hook(self, op_name: str, kind: str):
        """The ``kind`` hook of ``op_name`` or ``None``."""
        return self.hooks_of(op_name).get(kind)

    def contract_problems(self) -> list[tuple[OpDef, str, str, str]]:
        """OneFlow's link-time contract: ``(op, flag, hook kind, message)`` for every declared
        flag without a hook and every hook without its flag."""
        out = []
        for op in self.ops.values():
            hooks = self.hooks_of(op.name)
            # A served op borrows the standard op's hooks: its flags must find one there, but
            # hooks it does not declare are the standard op's business, not a contract breach.
            borrowed = op.name in self.served_by and not self.registry.for_op(op.name)
            # ... and a standard formula op serving it has those of its formula
            formula = self.hook_op(op.name).formula_hooks if borrowed else ()
            for flag in op.hooks:
                kind = FLAG_TO_HOOK[flag]
                if kind not in hooks and kind not in formula:
                    out.append((op, flag, kind,
                                f"op '{op.name}' declares {flag} = 1 but no {kind} hook is "
                                f"registered; register one with @{kind}(\"{op.name}\") "
                                f"(`tdflow gen-hooks` writes a skeleton)"))
            for kind, fn in hooks.items():
                flag = HOOK_TO_FLAG[kind]
                if flag not in op.hooks and not borrowed:
                    where = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}"
                    out.append((op, flag, kind,
                                f"op '{op.name}' has a {kind} hook ({where}) but does not "
                                f"declare it; add `let {flag} = 1;` to its definition"))
        return out

    def contract_diagnostics(self) -> list:
        """:meth:`contract_problems` as IR diagnostics at each op's ``.td`` location."""
        from .ir.core import Location
        from .ir.diagnostics import Diagnostic

        diags = []
        for op, _flag, _kind, message in self.contract_problems():
            loc = op.location
            diags.append(Diagnostic(message, Location(loc.file, loc.line, loc.col) if loc else None))
        return diags

    def check_contract(self) -> None:
        """Raise ``DiagnosticError`` listing every hook-contract violation."""
        diags = self.contract_diagnostics()
        if diags:
            from .ir.diagnostics import DiagnosticError

            raise DiagnosticError(diags)

    # -- inference ------------------------------------------------------------------------
    def op_info(self, op_name: str) -> OpInfo:
        """Cached per-op metadata (defaults, kinds, hooks) for the hot paths."""
        if self._version != self.registry.version:
            self._infos.clear()
            self._results.clear()
            self._verified.clear()
            self._version = self.registry.version
        info = self._infos.get(op_name)
        if info is None:
            op = self.ops.get(op_name)
            if op is None:
                raise InferError(op_name, self.unknown_op_message(op_name))
            info = self._infos[op_name] = OpInfo(op, self.hooks_of(op_name),
                                                 self.hook_op(op_name))
        return info

    def infer_result_types(self, op_name: str, input_types: Sequence[TensorType | None] | dict,
                           attrs: dict[str, Any] | None = None) -> list[TensorType]:
        """The result types of ``op_name`` applied to operands of ``input_types``.

        Runs the op's ``check_attr``, ``infer_logical_tensor_desc`` and ``infer_data_type``
        hooks (OneFlow's order) and returns one :class:`TensorType` per result (``[]`` for
        ``sgd_update``). Shapes may hold unknown dims (``None``) or be unranked; the results
        are then as precise as the hooks can make them.

        ``input_types``: a flat list in operand order, where ``None`` marks an absent optional
        operand and a variadic operand's values are listed in place (``cat(a, b)`` is
        ``[ta, tb]``); or a dict from operand name to a type or a list of types. Without
        ``None`` placeholders, optional operands are filled left to right.

        ``attrs``: attribute values by name, as Python values (``{"alpha": 0.2, "axis": [1]}``)
        or IR attributes (``op.attributes``); absent ones take their ``.td`` defaults, and
        ``operandSegmentSizes`` is honoured when present.

        Raises :class:`~tdflow.dialect.infer.InferError` (a ``ValueError``) naming the op and
        the attribute or operand at fault. Results are cached per (op, types, attributes), so
        repeated eager calls cost a dict lookup.

        >>> from tdflow.dialect.types import TensorType as T
        >>> standard_dialect().infer_result_types("tdflow.reduce_sum", [T((4, 8), "f32")],
        ...                                       {"axis": [-1], "keepdims": True})
        [TensorType(shape=(4, 1), dtype='f32')]
        """
        key = cache_key(op_name, input_types, attrs)
        if key is not None:
            hit = self._results.get(key)
            if hit is not None and self._version == self.registry.version:
                return list(hit)
        info = self.op_info(op_name)
        typed, sizes = typed_attrs(info, attrs)
        inputs = group_inputs(info, input_types, sizes)
        result = run_inference(info, inputs, typed)
        if key is not None:
            bounded_put(self._results, key, result)
        return list(result)

    def make_context(self, op_name: str, input_types=(), attrs: dict[str, Any] | None = None):
        """An :class:`~tdflow.dialect.hooks.InferContext` for running any hook of ``op_name``."""
        from .attr_normalize import normalize_attrs
        from .hooks.context import InferContext

        info = self.op_info(op_name)
        typed, sizes = typed_attrs(info, attrs)
        inputs = group_inputs(info, input_types, sizes) if input_types else {}
        if info.ruled:
            typed = normalize_attrs(info.op, typed, inputs, info.hook_op)
        return InferContext(info.hook_op, inputs, typed)

    def run_hook(self, op_name: str, kind: str, input_types=(), attrs: dict[str, Any] | None = None):
        """Run the ``kind`` hook of ``op_name`` and return what it returns (``None`` when the op
        has no such hook). E.g. ``run_hook("tdflow.matmul", "get_sbp", [ta, tb])`` is the list of
        SBP signatures, ``"compute_complexity"`` a FLOP count."""
        from .hooks.context import HookError

        fn = self.hook(op_name, kind)
        if fn is None:
            return None
        try:
            ctx = self.make_context(op_name, input_types, attrs)
            return fn(ctx)
        except HookError as exc:
            raise InferError(op_name, exc.message, attr=exc.attr, operand=exc.operand) from None

    def sbp_signatures(self, op_name: str, input_types, attrs: dict[str, Any] | None = None) -> list:
        """The op's SBP signatures (``get_sbp``, or derived from its formula when it has no
        such hook), as :class:`SbpSignature` data."""
        op = self.hook_op(op_name)  # a served op: the standard op's hook or formula
        if op is not None and op.formula is not None and self.hook(op_name, "get_sbp") is None:
            from .formula_sbp import formula_sbp_signatures

            types = list(input_types.values()) if isinstance(input_types, dict) else input_types
            return formula_sbp_signatures(op, [t[0] if isinstance(t, (list, tuple)) else t
                                               for t in types], attrs)
        return list(self.run_hook(op_name, "get_sbp", input_types, attrs) or ())

    def input_arg_modifiers(self, op_name: str, attrs: dict[str, Any] | None = None) -> dict:
        """``{operand name: InputArgModifier}`` from the op's ``modify_input_arg`` hook."""
        frozen = _freeze(attrs)
        if frozen is _UNCACHEABLE:
            return dict(self.run_hook(op_name, "modify_input_arg", (), dict(attrs)) or {})
        return _modifiers(self, op_name, frozen, self.registry.version)

    def mutable_operands(self, op: Operation | str) -> tuple[int, ...]:
        """Flat operand indices an op instance (or op name) writes in place.

        Given an IR ``Operation`` the indices follow its actual operand segments; given a name,
        every operand group is assumed present once.
        """
        name = op if isinstance(op, str) else op.name
        # an op instance's own attributes: the hook may need required ones (reduce_sum_like);
        # its discardable ones (infer-sbp's `sbp`) never reach a hook
        attrs = None
        if not isinstance(op, str):
            from .op_verify import declared_attributes

            attrs = declared_attributes(self.ops[name], op.attributes) if name in self.ops \
                else op.attributes
        mods = self.input_arg_modifiers(name, attrs)
        mutable = {n for n, m in mods.items() if m.is_mutable}
        if not mutable:
            return ()
        opdef = self.ops[name]
        if isinstance(op, str):
            return tuple(i for i, d in enumerate(opdef.operands) if d.name in mutable)
        from .op_verify import operand_groups

        groups = operand_groups(opdef, op)
        out, pos = [], 0
        for d in opdef.operands:
            n = len(groups.get(d.name, ())) if groups is not None else 1
            if d.name in mutable:
                out.extend(range(pos, pos + n))
            pos += n
        return tuple(out)

    # -- verification and building ----------------------------------------------------------
    def verify_operation(self, op: Operation, emit) -> None:
        """Op-specific checks of one IR operation (called by the IR's structural verifier)."""
        _verify_operation(self, op, emit)

    @functools.cached_property
    def Builder(self) -> type:  # noqa: N802 - reads as a class: `d.Builder()`
        """A builder class with one method per op (``b.leaky_relu(x, alpha=0.2)``)."""
        from .builder import make_builder_class

        return make_builder_class(self)


@functools.lru_cache(maxsize=64)
def _modifiers(dialect: Dialect, op_name: str, attrs: tuple | None, _version: int) -> dict:
    out = dialect.run_hook(op_name, "modify_input_arg", (), dict(attrs) if attrs else None)
    return dict(out or {})


_UNCACHEABLE = object()


def _freeze(attrs):
    """The attributes as a cache key; ``_UNCACHEABLE`` for unhashable ones and for constants
    (an element attribute pins its module's weights: a cache entry would keep every model
    loaded in the process alive)."""
    if not attrs:
        return None
    if holds_constant(attrs):
        return _UNCACHEABLE
    try:  # (lists, as Python callers pass axes, become tuples: the cache keys on them)
        t = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in attrs.items()))
        hash(t)
        return t
    except TypeError:
        return _UNCACHEABLE


# -- loading -------------------------------------------------------------------------------
def standard_ops_path() -> Path:
    """Where the standard ``ops.td`` is: next to the installed package, else the checkout root."""
    here = Path(__file__).resolve().parent
    candidates = [here.parent / "tdflow" / "ops.td", here.parent / "ops.td"]
    try:
        import tdflow

        candidates.insert(0, Path(tdflow.__file__).resolve().parent / "ops.td")
    except ImportError:  # pragma: no cover
        pass
    for c in candidates:
        if c.is_file():
            return c
    raise FileNotFoundError("the standard ops.td is missing (looked in "
                            + ", ".join(str(c) for c in candidates) + ")")


def include_dirs_for(include_dirs: Iterable[str | os.PathLike] = ()) -> list[str]:
    """The given include dirs plus tdflow's own (for ``include "tdflow/Base.td"``)."""
    dirs = [str(d) for d in include_dirs]
    if str(INCLUDE_DIR) not in dirs:
        dirs.append(str(INCLUDE_DIR))
    return dirs


def load_records(path: str | os.PathLike, include_dirs: Iterable[str] = (),
                 defines: Iterable[str] = ()):
    """Parse ``path`` with tdflow's TableGen front end (cached on disk by the front end)."""
    if os.environ.get("TDFLOW_DIALECT_LLVM_TBLGEN"):
        # Private debugging switch: read LLVM's records instead (needs llvm-tblgen).
        return _records_from_llvm_tblgen(path, include_dirs, defines)
    from tdflow.tdparser.cache import load_or_build

    dirs, defs = list(include_dirs), list(defines)

    def parse():  # imported here: a cache hit never imports the parser (start-up time)
        from tdflow.tdparser import parse_file

        return parse_file(str(path), include_dirs=dirs, defines=defs, use_cache=False)

    return load_or_build(str(path), dirs, defs, parse)


def _records_from_llvm_tblgen(path, include_dirs, defines):
    import json
    import subprocess

    from tdflow.tdparser.llvm_tools import find_llvm_tool
    from tdflow.tdparser.records import RecordKeeper

    tool = find_llvm_tool("llvm-tblgen")
    if tool is None:
        raise RuntimeError("TDFLOW_DIALECT_LLVM_TBLGEN is set but LLVM 19's llvm-tblgen is not "
                           "installed")
    cmd = [tool, "--dump-json", str(path)]
    for d in include_dirs:
        cmd += ["-I", str(d)]
    for d in defines:
        cmd += ["-D", str(d)]
    return RecordKeeper.from_json(json.loads(subprocess.check_output(cmd)))


def load_dialect(path: str | os.PathLike, include_dirs: Iterable[str | os.PathLike] = (),
                 defines: Iterable[str] = (), *, registry: HookRegistry | None = None,
                 standard_hooks: bool = True) -> Dialect:
    """Read the op definitions of a ``.td`` file into a :class:`Dialect`.

    ``include_dirs`` are searched for ``include``\\ s (tdflow's own include dir, with
    ``tdflow/Base.td``, is always added); ``defines`` are ``-D`` names. The standard ops' hooks
    are registered (``standard_hooks``; a family's module is imported when one of its ops is
    first looked up, :mod:`.hooks.standard`) so files reusing their names get them; check the
    hook contract with :meth:`Dialect.check_contract`.

    The file's rewrite patterns (``Pat<...>`` records, see ``tdflow/Patterns.td``) become
    :attr:`Dialect.patterns`.

    Raises ``TdError`` for TableGen errors, for op definitions tdflow cannot read (a
    default that does not parse, at the op's location) and for malformed patterns (at the
    pattern's record, every one at once).
    """
    dirs = include_dirs_for(include_dirs)
    if _is_standard_library(path, dirs, defines) and not os.environ.get(
            "TDFLOW_DIALECT_LLVM_TBLGEN"):
        # the standard library's ops, formulas and patterns from one cached artifact: what
        # every command loads first (start-up time)
        from .dialect_cache import load_library

        ops, patterns = load_library(str(path), dirs, [], lazy=True)
    else:
        from .dialect_cache import read_library

        ops, patterns = read_library(load_records(path, dirs, defines), str(path), dirs)
    if standard_hooks:
        from .hooks.standard import defer_standard_hooks

        defer_standard_hooks(ops.stubs() if isinstance(ops, LazyOps) else ops)
    return Dialect(ops, path=str(path), registry=registry, patterns=patterns)


def _is_standard_library(path, dirs: list[str], defines: Iterable[str]) -> bool:
    """``path`` is the standard ``ops.td``, read as tdflow reads it (its own include dir only,
    no ``-D``)."""
    if dirs != [str(INCLUDE_DIR)] or list(defines):
        return False
    std = standard_ops_path()
    return str(path) == str(std) or os.path.realpath(path) == os.path.realpath(std)


@functools.lru_cache(maxsize=1)
def standard_dialect() -> Dialect:
    """The dialect of the standard ``ops.td`` with its hooks (loaded once per process)."""
    return load_dialect(standard_ops_path())
