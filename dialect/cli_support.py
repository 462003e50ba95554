"""Shared plumbing of the dialect subcommands (``ops``, ``verify``, ``doc``, ``opt``,
``gen-hooks``): argument definitions, loading a dialect from them, user hook files, writing
the ``-o`` output, JSON."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from tdflow.tdparser.errors import TdflowError


def add_td_args(p: argparse.ArgumentParser, *, positional: bool) -> None:
    """``FILE.td`` (positional, optional: the standard ops.td) or ``--td``, plus ``-I``/``-D``/``--hooks``."""
    if positional:
        p.add_argument("td", nargs="?", metavar="FILE.td",
                       help="the op definitions (default: the standard ops.td)")
    else:
        p.add_argument("--td", metavar="FILE.td",
                       help="the op definitions (default: the standard ops.td)")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="add DIR to the include search path (repeatable; tdflow's own include "
                        "dir with tdflow/Base.td is always searched)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME",
                   help="define preprocessor macro NAME (repeatable)")
    p.add_argument("--hooks", action="append", default=[], metavar="FILE.py",
                   help="import FILE.py to register the hooks of your ops (repeatable)")


class UsageError(TdflowError):
    """A mistake in the command line (exit status 2)."""

    exit_code = 2

    def render(self) -> str:
        return f"tdflow: error: {self}"


def usage(message: str) -> int:
    """Print a usage error (``tdflow: error: message``) and return its exit status, 2."""
    sys.stderr.write(f"tdflow: error: {message}\n")
    return 2


class FileAccessError(TdflowError):
    """An input that cannot be read or an output that cannot be written (exit status 1).

    Every subcommand reports a missing or unreadable file the same way, naming it like a
    diagnostic without a line: ``prog.mlir: error: cannot open program: no such file or
    directory``.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: error: {message}")
        self.path = path

    def render(self) -> str:
        return str(self)


def os_reason(exc: OSError) -> str:
    """``OSError`` as the end of a message: ``no such file or directory``."""
    reason = exc.strerror or str(exc)
    return reason[:1].lower() + reason[1:]


#: The most read from a pipe or device: ``tdflow verify /dev/zero`` must end, not fill memory.
MAX_STREAM_BYTES = 256 << 20


def read_input(path: str, what: str = "program") -> bytes:
    """The bytes of input file ``path`` (``-``: standard input); ``FileAccessError`` if it
    cannot be read."""
    name = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            fh = sys.stdin.buffer
            regular = False
        else:
            fh = open(path, "rb")  # closed below
            regular = os.path.isfile(path)
        try:
            if regular:  # its size is known: no bound needed
                return fh.read()
            data = fh.read(MAX_STREAM_BYTES + 1)
        finally:
            if path != "-":
                fh.close()
    except OSError as exc:
        raise FileAccessError(name, f"cannot open {what}: {os_reason(exc)}") from None
    if len(data) > MAX_STREAM_BYTES:
        raise FileAccessError(name, f"cannot read {what}: more than {MAX_STREAM_BYTES >> 20} MiB "
                              f"from a pipe or device")
    return data


def check_input_file(path: str, what: str) -> None:
    """``FileAccessError`` unless ``path`` is an existing regular file (or a readable special
    file such as ``/dev/stdin``)."""
    if os.path.isdir(path):
        raise FileAccessError(path, f"cannot open {what}: is a directory")
    if not os.path.exists(path):
        raise FileAccessError(path, f"cannot open {what}: no such file or directory")


def import_hook_files(paths: list[str]) -> None:
    """Import each user hook module (by path) so its decorators register its hooks."""
    import importlib.util

    for i, path in enumerate(paths):
        check_input_file(path, "hook file")
        name = f"_tdflow_user_hooks_{i}_{os.path.splitext(os.path.basename(path))[0]}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise FileAccessError(path, "cannot import hook file: expected a .py file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # noqa: BLE001 - the user's code: report, do not crash
            sys.modules.pop(name, None)
            raise HookFileError(path, exc) from exc


class HookFileError(TdflowError):
    """A user hook file that fails to import; rendered as a diagnostic (exit status 1)."""

    def __init__(self, path: str, exc: BaseException) -> None:
        super().__init__(f"{path}: {exc}")
        self.path = path
        self.exc = exc

    def render(self) -> str:
        import traceback

        frames = [f for f in traceback.extract_tb(self.exc.__traceback__)
                  if os.path.abspath(f.filename) == os.path.abspath(self.path)]
        where = f"{self.path}:{frames[-1].lineno}" if frames else self.path
        if isinstance(self.exc, SyntaxError) and self.exc.lineno:
            where = f"{self.path}:{self.exc.lineno}"
        return (f"{where}: error: cannot import hook file: "
                f"{type(self.exc).__name__}: {self.exc}")


def load_from_args(args: argparse.Namespace):
    """The dialect the arguments name (the standard one when no ``.td`` is given)."""
    td = getattr(args, "td", None)
    import_hook_files(getattr(args, "hooks", []) or [])
    if td is None and not args.include_dirs and not args.defines:
        from tdflow.dialect.dialect import standard_dialect

        return standard_dialect()
    from tdflow.dialect.dialect import load_dialect, standard_ops_path

    path = td if td is not None else str(standard_ops_path())
    check_input_file(path, "op definitions")
    return load_dialect(path, args.include_dirs, args.defines)


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


def op_to_json(op) -> dict[str, Any]:
    """A JSON-ready description of an :class:`OpDef` (what ``tdflow ops --json`` prints)."""

    def value(v) -> dict[str, Any]:
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
    }
