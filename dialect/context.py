"""``Context``: several dialects at once — the standard ops plus a user's op libraries.

MLIR's ``MLIRContext`` is the model: a program may use ops of every dialect loaded in the
context (``tdflow.matmul`` next to ``mylib.leaky_relu_yzh`` next to ``oneflow.relu``), and
verify, lower, compile, the functional API and eager calls all take the context. A context is
a :class:`~tdflow.dialect.dialect.Dialect` whose ops are the union of its libraries', so
everything that takes a dialect takes a context.

An op of another dialect that means the same as a standard op — same mnemonic, the same
operands and results (names and arity) and the same attributes (names and kinds) — and that
has no hooks of its own is *served* by the standard op: it runs the standard op's hooks and
kernels (``served_by``), as OneFlow's ``oneflow.relu`` is served by ``tdflow.relu``.

>>> ctx = standard_context()
>>> ctx.lookup("tdflow.relu").mnemonic, ctx.libraries[0].name
('relu', 'tdflow')
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from tdflow.core.declarations import snapshot

from .dialect import Dialect, load_dialect, standard_dialect
from .hooks.registry import HookRegistry, hooks_of
from .lazy_ops import LazyOps
from .opdef import OpDef

__all__ = ["Context", "load_ops", "standard_context", "op_shape"]


def op_shape(op: OpDef) -> tuple:
    """What must agree for one op to serve another: mnemonic, operands and results (names and
    arity) and attributes (names and kinds).

    >>> d = standard_dialect()
    >>> op_shape(d.lookup("tdflow.relu"))
    ('relu', (('x', 'single'),), (('y', 'single'),), ())
    """
    return (op.mnemonic,
            tuple((v.name, v.arity) for v in op.operands),
            tuple((v.name, v.arity) for v in op.results),
            tuple(sorted((a.name, a.kind) for a in op.attributes)))


class Context(Dialect):
    """The ops of several libraries (``Dialect``\\ s) by qualified name, with one hook registry.

    ``libraries`` are the loaded dialects in load order (the standard one first when
    included); ``served_by`` maps each op of another dialect that a standard op serves to that
    op's name. Two libraries defining the same qualified op name is an error naming both.
    """

    def __init__(self, libraries: Sequence[Dialect], *, standard: Dialect | None = None,
                 registry: HookRegistry | None = None,
                 hook_modules: Sequence[str] = ()) -> None:
        # each name's library (the first to define it): names only, so that a library's lazy
        # ops (the standard one's, LazyOps) are made when looked up, not here
        source: dict[str, Dialect] = {}
        digests: dict[str, str | None] = {}  # file -> content digest, read once per context
        for lib in libraries:
            for op_name in lib.ops:
                first_lib = source.get(op_name)
                if first_lib is None:
                    source[op_name] = lib
                    continue
                first, op = first_lib.ops[op_name], lib.ops[op_name]
                if first is not op:
                    standard_op = standard is not None and standard.lookup(op_name) is first
                    if _same_definition(first, op, digests, by_content=standard_op):
                        continue
                    from .ods import defined_twice  # an error's path (start-up time)

                    raise defined_twice(first, op)
        ops = _union_ops(source)
        names = [lib.name for lib in libraries]
        # The Python of the libraries: hooks modules imported for this context, whose hooks,
        # kernels, generators, gradient rules, composites and natives reach only contexts
        # built with them (tdflow.core.declarations); the rest is the process-wide tables'.
        # a library tdflow ships brings its own (SHIPPED_LIBRARIES): first, in library order
        self.hook_modules: tuple[str, ...] = tuple(dict.fromkeys(
            [*(m for lib in libraries for m in lib.hook_modules), *hook_modules]))
        self.declarations = MappingProxyType(snapshot(self.hook_modules))
        if registry is None:
            base = libraries[0].registry if libraries else None
            registry = hooks_of(self.declarations.get("hook", ()), base)
        super().__init__(ops, name=names[-1] if names else "tdflow",
                         path=None, registry=registry, patterns=_union_patterns(libraries))
        self.libraries: tuple[Dialect, ...] = tuple(libraries)
        self.standard = standard
        if standard is not None:
            self.served_by = _served_by(standard, [lib for lib in libraries
                                                   if lib is not standard])

    def __repr__(self) -> str:
        libs = ", ".join(f"{lib.name} ({len(lib)} ops)" for lib in self.libraries)
        return f"<Context: {libs}>"

    @property
    def functional(self) -> Any:
        """The context's functional API (``ctx.functional.relu(x)``, ``ctx.functional.my.op``),
        made once and kept with it by the runtime (:data:`FUNCTIONAL_OF`)."""
        return provided(FUNCTIONAL_OF)(self)

    def user_ops(self) -> list[OpDef]:
        """The ops that are not the standard library's, in load order."""
        std = self.standard
        ops = self.ops  # by name first: a standard op is not made for this (lazy ops)
        return [ops[n] for n in ops if std is None or n not in std.ops]

    def dialect_names(self) -> list[str]:
        """Every dialect namespace an op of the context lives in (``["tdflow", "mylib"]``)."""
        ops = self.ops
        return list(dict.fromkeys(ops.meta(n)[1] for n in ops) if isinstance(ops, LazyOps)
                    else dict.fromkeys(op.dialect for op in ops.values()))


def _same_definition(a: OpDef, b: OpDef, digests: dict[str, str | None], *,
                     by_content: bool) -> bool:
    """True when two OpDefs are one definition: the same place of one file however it was
    reached (a library that does `include "tdflow/ops.td"`), or, with ``by_content`` (the
    standard library's ops), the same record at the same line and column of files with the
    same content (the standard ``ops.td`` of a checkout next to an installed tdflow, or a
    copy). Two copies of a user's library stay an error: loading one twice is a mistake
    worth naming. ``digests`` caches each file's content digest for one context."""
    la, lb = a.location, b.location
    if la is None or lb is None or (la.line, la.col) != (lb.line, lb.col):
        return False
    if la.file == lb.file or os.path.realpath(la.file) == os.path.realpath(lb.file):
        return True
    if not by_content or a.record != b.record:
        return False
    for f in (la.file, lb.file):
        if f not in digests:
            try:
                digests[f] = hashlib.sha256(Path(f).read_bytes()).hexdigest()
            except OSError:
                digests[f] = None
    return digests[la.file] == digests[lb.file] is not None


def _union_ops(source: dict[str, Dialect]) -> Iterable[OpDef] | LazyOps:
    """The ops of ``source`` (name -> its library): the library's own mapping when one library
    has them all in its order, else lazy when any library's ops are, else the OpDefs."""
    libs = list(dict.fromkeys(source.values()))
    if len(libs) == 1 and isinstance(libs[0].ops, LazyOps) and len(libs[0].ops) == len(source):
        return libs[0].ops
    if not any(isinstance(lib.ops, LazyOps) for lib in libs):
        return [source[n].ops[n] for n in source]

    def meta(name: str, lib: Dialect) -> tuple[str, str, str | None]:
        if isinstance(lib.ops, LazyOps):
            return lib.ops.meta(name)
        op = lib.ops[name]
        return op.mnemonic, op.dialect, op.location.file if op.location is not None else None

    return LazyOps({n: meta(n, lib) for n, lib in source.items()},
                   lambda name: source[name].ops[name])


def _union_patterns(libraries: Sequence[Dialect]) -> tuple:
    """Every library's patterns in load order, a pattern reached by two libraries once (a
    rules file that includes ``tdflow/ops.td`` reads the standard library's rules again)."""
    real = functools.lru_cache(maxsize=None)(os.path.realpath)
    out, seen = [], set()
    for lib in libraries:
        for p in lib.patterns:
            key = (real(p.loc.file), p.loc.line, p.loc.col) if p.loc else id(p)
            if key not in seen:
                seen.add(key)
                out.append(p)
    return tuple(out)


def _served_by(standard: Dialect, others: Iterable[Dialect]) -> dict[str, str]:
    out: dict[str, str] = {}
    by_shape: dict | None = None  # made for the first op of another dialect (start-up time)
    for lib in others:
        for op in lib:
            if op.dialect == standard.name:
                continue
            if by_shape is None:
                by_shape = {op_shape(op): op.name for op in standard}
            name = by_shape.get(op_shape(op))
            if name is not None:
                out[op.name] = name
    return out


@functools.lru_cache(maxsize=1)
def standard_context() -> Context:
    """The context of the standard library alone (``ops.td`` and its hooks), built once."""
    std = standard_dialect()
    return Context([std], standard=std)


#: Checks the layers above the dialect add to :func:`load_ops`, each ``check(context)`` raising a
#: located error, named ``(module, function, field)`` and run when a user op has the ``OpDef``
#: ``field``: the runtime's check of the ``signature`` fields, whose grammar it owns. They are
#: imported by name when needed, as a plugin's entry point is, so the dialect never imports those
#: layers, no caller has to import them first, and a library without signatures never loads the
#: runtime.
LOAD_CHECKS: tuple[tuple[str, str, str], ...] = (
    ("tdflow.runtime.library", "check_signature_fields", "signatures"),
)
#: The libraries tdflow ships whose ops have Python hooks of tdflow's own, named likewise: the
#: file name, the ``(module, name)`` of its path, and the function that declares its hooks
#: (:mod:`tdflow.core.declarations`) and returns the name they are declared under. A context
#: that loads such a file gets those hooks; no other context of the process sees them, and no
#: entry point has to remember them.
SHIPPED_LIBRARIES: tuple[tuple[str, tuple[str, str], tuple[str, str]], ...] = (
    ("onnx.td", ("tdflow.onnx.schema", "ONNX_TD"), ("tdflow.onnx.infer", "declare_hooks")),
)
#: The function that makes a context's ``functional`` API (the runtime's), named likewise.
FUNCTIONAL_OF = ("tdflow.runtime.library", "functional_of")


def provided(entry: tuple[str, ...]) -> Callable[..., Any]:
    """The function an ``(module, name)`` entry names (:data:`LOAD_CHECKS`,
    :data:`FUNCTIONAL_OF`), its module imported on first use.

    >>> provided(("os.path", "join"))("a", "b")
    'a/b'
    """
    import importlib

    return getattr(importlib.import_module(entry[0]), entry[1])


def load_ops(*paths: str | os.PathLike, include_dirs: Iterable[str | os.PathLike] = (),
             defines: Iterable[str] = (), hooks: Iterable[str | os.PathLike] = (),
             std: bool = True) -> Context:
    """Load op libraries into a :class:`Context`: the standard ops (unless ``std=False``) plus
    the ops of every ``.td`` in ``paths``, after importing the Python ``hooks`` modules (files)
    that register their hooks and kernels.

    ``include_dirs`` and ``defines`` apply to every file (tdflow's own include dir, with
    ``tdflow/Base.td``, is always searched). Raises ``TdError`` for TableGen errors and for an
    op defined twice; the hook contract is checked by :meth:`Context.check_contract`.

    >>> import pathlib, tempfile
    >>> src = pathlib.Path(tempfile.mkdtemp()) / "my_ops.td"
    >>> _ = src.write_text('include "tdflow/Base.td"\\n'
    ...     'def My_Dialect : Dialect { let name = "my"; }\\n'
    ...     'def My_TwiceOp : Op<My_Dialect, "twice", [NoMemoryEffect]> {\\n'
    ...     '  let arguments = (ins TDF_Tensor:$x); let results = (outs TDF_Tensor:$y); }\\n')
    >>> lib = load_ops(src)
    >>> [op.name for op in lib.user_ops()], "tdflow.matmul" in lib
    (['my.twice'], True)
    """
    from tdflow.dialect.hook_files import import_hook_files

    hook_modules = import_hook_files([str(h) for h in hooks])
    libraries: list[Dialect] = []
    standard = standard_dialect() if std else None
    if standard is not None:
        libraries.append(standard)
    dirs, defs = list(include_dirs), list(defines)
    for path in paths:
        lib = load_dialect(path, dirs, defs)
        lib.hook_modules = shipped_hook_modules(path)
        libraries.append(lib)
    ctx = Context(libraries, standard=standard, hook_modules=hook_modules)
    _check_grad_fields(ctx)
    for check in LOAD_CHECKS:
        if any(getattr(op, check[2], None) for op in ctx.user_ops()):
            provided(check)(ctx)
    return ctx


def shipped_hook_modules(path: str | os.PathLike) -> tuple[str, ...]:
    """The hooks a library tdflow ships declares when ``path`` is that library
    (:data:`SHIPPED_LIBRARIES`), else ``()``; only a file of that name is compared, so other
    libraries import nothing.

    >>> shipped_hook_modules("my_ops.td")
    ()
    """
    name = os.path.basename(os.fspath(path))
    for file_name, where, declare in SHIPPED_LIBRARIES:
        if name == file_name and os.path.realpath(path) == os.path.realpath(provided(where)):
            return (provided(declare)(),)
    return ()


def _check_grad_fields(ctx: Context) -> None:
    """Parse and check every ``grad`` field of the user's libraries now, against the whole
    context, so a bad one is a located load error rather than a surprise at the first
    backward (the standard library's are checked by its tests and on first use)."""
    from .grad import gradient_of

    for op in ctx.user_ops():
        if op.grad_code:
            gradient_of(ctx, op)
