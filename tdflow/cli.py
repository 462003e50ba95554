"""The ``tdflow`` command line.

Each subcommand lives in its own module under :mod:`tdflow.commands` exposing
``register(subparsers)`` (argparse set-up only, cheap) and ``run(args) -> int`` (imports what
it needs). Exit codes: 0 success, 1 diagnostics, 2 usage errors. User mistakes are printed as
diagnostics on stderr, never as a Python traceback.

>>> main(["--version"])  # doctest: +SKIP
tdflow 0.1.0
"""

from __future__ import annotations

import argparse
import importlib
import sys

# Subcommand modules in the order `tdflow --help` lists them.
COMMANDS = ("tblgen", "ops", "verify", "doc", "opt", "gen_hooks", "lower", "run")


def build_parser() -> argparse.ArgumentParser:
    from tdflow import __version__

    parser = argparse.ArgumentParser(
        prog="tdflow",
        description="Define tensor operators once in TableGen; verify, lower and run programs.",
    )
    parser.add_argument("--version", action="version", version=f"tdflow {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"tdflow.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"tdflow.commands.{name}":
                raise
            continue  # not built yet
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return 2
    from tdflow.commands import run_command

    return run_command(args)
