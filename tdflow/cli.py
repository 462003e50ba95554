"""The ``tdflow`` command line.

Each subcommand lives in its own module under :mod:`tdflow.commands` exposing
``register(subparsers, summary)`` (argparse set-up only) and ``run(args) -> int`` (imports what
it needs); :mod:`tdflow.commands.index` lists them with their one line of help, so only the
module of the command that runs is imported. The subcommands that read ops or programs share the op-library options
(``--ops``, ``--no-std``, ``-I``, ``-D``, ``--hooks``) of
:func:`tdflow.commands._args.add_ops_args`. Exit codes: 0 success, 1 diagnostics, 2 usage
errors. User mistakes are printed as diagnostics on stderr, never as a Python traceback.

>>> main(["--version"])  # doctest: +SKIP
tdflow 0.1.0
"""

from __future__ import annotations

import importlib
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    import argparse


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser: every subcommand of :data:`~tdflow.commands.index.COMMANDS` is listed
    (with its one line of help), but only ``command``'s module is imported to add its options,
    so ``tdflow --help`` and ``tdflow verify x.mlir`` load no other command's code.

    >>> p = build_parser("ops"); p.parse_args(["ops", "--json"]).json
    True
    """
    import argparse  # here, not above: a warm `tdflow tblgen` never builds a parser

    from tdflow import __version__
    from tdflow.cli_parser import Parser, catalogue
    from tdflow.commands.index import COMMANDS, module_of

    translate = argparse._
    argparse._ = catalogue()
    try:
        parser = Parser(
            prog="tdflow",
            description="Define tensor operators once in TableGen; verify, lower and run "
                        "programs.",
        )
        parser.add_argument("--version", action="version", version=f"tdflow {__version__}")
        sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
        for name, (_, summary) in COMMANDS.items():
            if name == command:
                importlib.import_module(module_of(name)).register(sub, summary)
            else:  # listed, and named in "invalid choice" errors; never parses anything
                sub.add_parser(name, help=summary, add_help=False)
    finally:
        argparse._ = translate
    return parser


def command_of(argv: list[str]) -> str | None:
    """The subcommand ``argv`` names: its first word that is not an option (the top-level
    options, ``--help`` and ``--version``, take no value).

    >>> command_of(["--version"]), command_of(["verify", "-I", "x", "p.mlir"])
    (None, 'verify')
    """
    return next((a for a in argv if not a.startswith("-")), None)


#: The young generation's threshold in a ``tdflow`` process (Python's default is 700).
CLI_GC_THRESHOLD = 100_000


def entry() -> int:
    """The ``tdflow`` command (and ``python -m tdflow``): :func:`main`, then, when a forked
    cache writer still shares this process's memory (``tdflow tblgen`` filling the record
    cache), an exit that frees nothing: freeing the records object by object would first copy
    each page the writer shares (X86: ~1.5 s).

    First of all, before anything imports numpy, numpy's BLAS thread pool is set to start with
    one thread, unless the user sized it; tdflow's BLAS kernels grow it to their count at their
    first product (:mod:`tdflow.core.blas_pool`: each pool thread started at import spins,
    ~50 ms of CPU a thread)."""
    import gc

    from tdflow.core.blas_pool import size_blas_pool

    size_blas_pool()
    # A command starts by importing ~200-380 modules and decoding the op library: tens of
    # thousands of long-lived containers, on which the collector's young generation (every 700
    # allocations) ran ~75 times in a `tdflow run` (~10% of its CPU) and found no garbage. This
    # process only (`import tdflow` leaves the user's settings alone) collects every 100,000:
    # cyclic garbage is still freed, at most that many objects later.
    gc.set_threshold(CLI_GC_THRESHOLD, *gc.get_threshold()[1:])
    argv = sys.argv[1:]
    if argv[:1] == ["tblgen"]:
        # A warm `tdflow tblgen` is answered from the cache before the CLI is even built.
        from tdflow.commands.tblgen_warm import run_cached

        try:
            status = run_cached(argv[1:])
        except BrokenPipeError:
            _silence_stdout()
            status = 0
        if status is not None:
            return status
    status = main(process_ends=True)
    # The process ends now: a last collection would walk every object the command left (a
    # parsed 100k-op program: ~1 s) only to free what the exit frees anyway.
    gc.freeze()
    bg = sys.modules.get("tdflow.tdparser.cache_bg")
    if bg is not None and bg.holding():
        import os

        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(status)
    return status


def main(argv: list[str] | None = None, *, process_ends: bool = False) -> int:
    """Parse ``argv`` and run the subcommand; returns the exit status.

    ``process_ends``: the caller (:func:`entry`) ends the process right after, so a command
    may leave what it made for the exit instead of freeing it (``tdflow tblgen``).

    >>> main(["tblgen", "no-such-file.td"])  # the diagnostic goes to stderr
    1
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(command_of(argv))
    args = parser.parse_args(argv)
    args.process_ends = process_ends
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return 2
    from tdflow.commands import run_command
    from tdflow.commands.output import print_diagnostic

    stdout = sys.stdout
    reconfigure = getattr(stdout, "reconfigure", None)
    if reconfigure is not None:
        # Paths from argv hold undecodable bytes as surrogates: print them back as those bytes.
        reconfigure(errors="surrogateescape")
    sys.stdout = _GuardedStdout(stdout)
    try:
        status = run_command(args)
        try:
            stdout.flush()  # what the interpreter would flush at exit, where errors are lost
        except BrokenPipeError:
            _silence_stdout()
        except OSError as exc:
            from tdflow.core.files import FileAccessError, os_reason

            print_diagnostic(FileAccessError("<stdout>", f"cannot write: {os_reason(exc)}")
                             .render())
            _silence_stdout()
            status = status or 1
    finally:
        sys.stdout = stdout
    return status


class _GuardedStdout:
    """``sys.stdout`` while a subcommand runs: a write that fails (a full disk, ``> /dev/full``)
    raises a ``FileAccessError`` naming ``<stdout>``, which the CLI reports like any unwritable
    ``-o`` (exit 1) instead of as an internal error. Everything else is the real stream."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def _guard(self, fn, *args):
        try:
            return fn(*args)
        except BrokenPipeError:
            raise  # the reader went away (`| head`): the CLI stops quietly
        except OSError as exc:
            from tdflow.core.files import FileAccessError, os_reason

            raise FileAccessError("<stdout>", f"cannot write: {os_reason(exc)}") from None

    def write(self, text: str) -> int:
        return self._guard(self._stream.write, text)

    def flush(self) -> None:
        self._guard(self._stream.flush)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _silence_stdout() -> None:
    """Point file descriptor 1 at /dev/null so that the interpreter's final flush of a broken
    stdout does not print 'Exception ignored ...' after tdflow has reported (or ignored) it."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno())
        os.close(devnull)
    except (OSError, AttributeError, ValueError):
        pass
