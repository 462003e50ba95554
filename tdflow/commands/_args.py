"""Shared plumbing of the subcommands that read ops or programs (``ops``, ``verify``,
``doc``, ``opt``, ``gen-hooks``, ``lower``, ``run``): the op-library options and the context
they name, writing the ``-o`` output, JSON. Reading inputs is :mod:`tdflow.core.files`, user
hook files :mod:`tdflow.dialect.hook_files`."""

from __future__ import annotations

import argparse
import os
import sys

from tdflow.core.errors import TdflowError
from tdflow.core.files import FileAccessError, check_input_file, os_reason

#: The note ``--td`` prints: it used to replace the standard ops, ``--ops`` adds to them.
TD_DEPRECATION = ("note: --td is deprecated; use --ops (which adds to the standard ops; "
                  "--no-std leaves them out)")


class _DeprecatedTd(argparse.Action):
    """``--td FILE.td``: an alias of ``--ops FILE.td`` that remembers to print the note."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        files = list(getattr(namespace, "ops_files", None) or [])
        files.append(values)
        namespace.ops_files = files
        namespace.td_alias_used = True


def add_ops_args(p: argparse.ArgumentParser, *, positional: bool = False) -> None:
    """The op-library options every subcommand that reads programs or ops shares.

    ``--ops FILE.td`` (repeatable) adds a library to the standard ops, ``--no-std`` leaves the
    standard ops out, ``-I``/``-D`` apply to every ``--ops`` file, ``--hooks FILE.py``
    (repeatable) imports the Python modules registering hooks and kernels, and ``--td`` is the
    deprecated alias of ``--ops``. With ``positional`` (``ops``, ``doc``, ``gen-hooks``) an
    optional ``FILE.td`` argument means ``--ops FILE.td``. :func:`context_from_args` turns the
    parsed arguments into a :class:`~tdflow.dialect.context.Context`.

    >>> p = argparse.ArgumentParser(prog="t")
    >>> add_ops_args(p)
    >>> a = p.parse_args(["--ops", "a.td", "--td", "b.td", "-I", "inc"])
    >>> a.ops_files, a.include_dirs, a.td_alias_used
    (['a.td', 'b.td'], ['inc'], True)
    """
    if positional:
        p.add_argument("td", nargs="?", metavar="FILE.td",
                       help="an op library to show (same as --ops FILE.td; default: the "
                            "standard ops)")
    p.add_argument("--ops", dest="ops_files", action="append", default=[], metavar="FILE.td",
                   help="add the ops of FILE.td to the standard ops (repeatable)")
    p.add_argument("--td", dest="ops_files", action=_DeprecatedTd, metavar="FILE.td",
                   help="deprecated alias of --ops")
    p.add_argument("--no-std", action="store_true",
                   help="leave the standard ops out (only the --ops libraries)")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="add DIR to the include search path of the --ops files (repeatable; "
                        "tdflow's own include dir with tdflow/Base.td is always searched)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME",
                   help="define preprocessor macro NAME for the --ops files (repeatable)")
    p.add_argument("--hooks", action="append", default=[], metavar="FILE.py",
                   help="import FILE.py to register the hooks and kernels of your ops "
                        "(repeatable)")


def add_testing_args(p: argparse.ArgumentParser) -> None:
    """MLIR's two testing habits, on ``opt`` and ``verify``: ``--split-input-file`` (each
    ``// -----`` chunk its own module) and ``--verify-diagnostics`` (``expected-*`` comments;
    see :mod:`tdflow.dialect.ir.expected_diagnostics`)."""
    p.add_argument("--split-input-file", action="store_true",
                   help="split the input at '// -----' lines; each chunk is its own module")
    p.add_argument("--verify-diagnostics", action="store_true",
                   help="check the diagnostics against the 'expected-error {{...}}' comments "
                        "of the input (exit 0 when they all match)")


def add_strict_attrs_arg(p: argparse.ArgumentParser) -> None:
    """``--strict-attrs``, on the commands that verify programs (``verify``, ``opt``, ``run``,
    ``lower``): an attribute an op does not declare is an error, not a warning (MLIR keeps
    it as a discardable attribute; ``verify_module(..., strict_attrs=True)``).

    >>> p = argparse.ArgumentParser(); add_strict_attrs_arg(p)
    >>> p.parse_args(["--strict-attrs"]).strict_attrs
    True
    """
    p.add_argument("--strict-attrs", action="store_true",
                   help="an attribute its op does not declare is an error (by default a "
                        "warning: MLIR keeps it as a discardable attribute)")


class UsageError(TdflowError):
    """A mistake in the command line (exit status 2)."""

    exit_code = 2

    def render(self) -> str:
        return f"tdflow: error: {self}"


def usage(message: str) -> int:
    """Print a usage error (``tdflow: error: message``) and return its exit status, 2."""
    sys.stderr.write(f"tdflow: error: {message}\n")
    return 2


def op_files(args: argparse.Namespace) -> list[str]:
    """The op libraries the arguments name: the positional ``FILE.td`` (``ops``, ``doc``,
    ``gen-hooks``) first, then every ``--ops``/``--td``, each once."""
    files = [f for f in [getattr(args, "td", None)] if f is not None]
    files += getattr(args, "ops_files", None) or []
    seen: set[str] = set()
    out = []
    for f in files:  # one file spelled two ways (a.td, ./a.td) is still one library
        key = os.path.realpath(f)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def check_ops_args(args: argparse.Namespace) -> None:
    """Reject option combinations that mean nothing (``UsageError``, exit 2) and print the
    ``--td`` deprecation note; nothing is loaded."""
    if getattr(args, "td_alias_used", False) and not getattr(args, "_td_noted", False):
        sys.stderr.write(TD_DEPRECATION + "\n")
        args._td_noted = True
    files = op_files(args)
    if getattr(args, "no_std", False) and not files:
        raise UsageError("--no-std leaves the standard ops out: name the ops to use with "
                         "--ops FILE.td")
    if not files and (args.include_dirs or args.defines):
        flag = "-I" if args.include_dirs else "-D"
        raise UsageError(f"{flag} applies to the --ops files, and none is given "
                         f"(add --ops FILE.td)")


def _is_standard(path: str) -> bool:
    from tdflow.dialect.dialect import standard_ops_path

    try:
        return os.path.samefile(path, standard_ops_path())
    except OSError:
        return False


def context_from_args(args: argparse.Namespace):
    """The :class:`~tdflow.dialect.context.Context` the arguments name: the standard ops
    (unless ``--no-std``) plus every ``--ops`` library, after importing the ``--hooks`` files.

    Naming the standard ``ops.td`` itself with ``--ops`` adds nothing (it is there already).
    Usage mistakes raise ``UsageError`` (exit 2), unreadable files ``FileAccessError`` (exit
    1), TableGen errors ``TdError`` (exit 1).
    """
    from tdflow.dialect.context import load_ops, standard_context

    check_ops_args(args)
    files = op_files(args)
    for path in files:
        check_input_file(path, "op definitions")
    hooks = getattr(args, "hooks", None) or []
    no_std = getattr(args, "no_std", False)
    libraries = files if no_std else [f for f in files if not _is_standard(f)]
    if not libraries and not no_std and not hooks:
        return standard_context()
    return load_ops(*libraries, include_dirs=args.include_dirs, defines=args.defines,
                    hooks=hooks, std=not no_std)


def shown_library(ctx, args: argparse.Namespace):
    """The ops ``tdflow ops``/``doc``/``gen-hooks`` and the contract check of ``verify`` are
    about: the libraries the arguments name, as one dialect (the standard one when no file is
    named). Ops served by a standard op keep that in ``served_by``, so they are not reported
    as lacking hooks.
    """
    from tdflow.dialect.dialect import Dialect

    files = op_files(args)
    std = getattr(ctx, "standard", None)
    own_hooks = bool(getattr(ctx, "hook_modules", ()))  # its hooks are the context's registry's
    if not files:
        if std is None:
            return ctx
        if not own_hooks:
            return std
    libs = [] if files else [std]
    for path in files:
        if std is not None and _is_standard(path):
            libs.append(std)
            continue
        libs += [lib for lib in ctx.libraries if lib is not std and lib.path == str(path)]
    if len(libs) == 1 and not (set(libs[0].ops) & set(ctx.served_by)) and not own_hooks:
        return libs[0]
    ops = {op.name: op for lib in libs for op in lib}
    view = Dialect(ops.values(), name=libs[-1].name if len(libs) == 1 else None,
                   path=(files[0] if len(files) == 1 else ", ".join(files)) if files
                   else libs[0].path, registry=ctx.registry)
    view.hook_modules, view.declarations = ctx.hook_modules, ctx.declarations
    view.served_by = {name: std_name for name, std_name in ctx.served_by.items()
                      if name in view.ops}
    return view


def write_output(data: str | bytes, output: str) -> None:
    """Write ``data`` to the file ``output`` (``-o``), or to stdout when it is ``"-"``.

    A file that cannot be written (``/nonexistent/x``, a directory, a full disk) is a
    ``FileAccessError`` naming it (exit status 1), never a traceback.
    """
    raw = data.encode("utf-8", errors="surrogateescape") if isinstance(data, str) else data
    if output == "-":
        buffer = getattr(sys.stdout, "buffer", None)  # absent when stdout is a StringIO
        try:
            sys.stdout.flush()
            if buffer is None:
                sys.stdout.write(raw.decode("utf-8", errors="surrogateescape"))
            else:
                buffer.write(raw)
            sys.stdout.flush()
        except BrokenPipeError:
            raise  # the reader went away (`| head`): the CLI exits quietly
        except OSError as exc:
            raise FileAccessError("<stdout>", f"cannot write: {os_reason(exc)}") from None
        return
    try:
        with open(output, "wb") as fh:
            fh.write(raw)
    except OSError as exc:
        raise FileAccessError(output, f"cannot write: {os_reason(exc)}") from None


def console(min_width: int = 0):
    """A rich ``Console`` for the CLI's tables, as wide as the terminal.

    The width is ``COLUMNS`` when set, else the terminal's; when stdout is not a terminal and
    ``COLUMNS`` is unset (output piped to a file) tables get ``min_width`` columns so that
    they are not cut, since nothing there wraps them.
    """
    from rich.console import Console

    c = Console(highlight=False, soft_wrap=False)
    if min_width and not os.environ.get("COLUMNS") and not sys.stdout.isatty():
        c = Console(highlight=False, soft_wrap=False, width=max(min_width, c.width))
    return c


def op_to_json(op, served_by: str | None = None) -> dict[str, object]:
    """A JSON-ready description of an :class:`OpDef` (what ``tdflow ops --json`` prints);
    ``served_by`` names the standard op whose hooks and kernels serve it, if any."""

    def value(v) -> dict[str, object]:
        return {"name": v.name, "constraint": v.constraint, "arity": v.arity,
                "dtypes": list(v.dtypes) if v.dtypes is not None else None}

    def jsonable(x):
        if isinstance(x, tuple):
            return [jsonable(e) for e in x]
        if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf"))):
            return str(x)
        return x if isinstance(x, (bool, int, float, str, type(None))) else str(x)

    return {
        "name": op.name,
        "mnemonic": op.mnemonic,
        "dialect": op.dialect,
        "record": op.record,
        "summary": op.summary,
        "operands": [value(o) for o in op.operands],
        "results": [value(r) for r in op.results],
        "attrs": [{"name": a.name, "kind": a.kind, "constraint": a.constraint,
                   "default": jsonable(a.default), "default_text": a.default_text,
                   "required": a.required, "optional": a.optional} for a in op.attributes],
        "traits": [str(t) for t in op.traits],
        "flags": list(op.hooks),
        "hooks": list(op.hook_kinds),
        "location": str(op.location) if op.location else None,
        "served_by": served_by,
    }
