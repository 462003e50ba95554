"""How the CLI writes what went wrong: a diagnostic (coloured on a terminal) or an internal error.

A leaf the subcommands share with the error boundary (:func:`tdflow.commands.run_command`).

>>> print_diagnostic("x.mlir:1:1: error: bad")  # doctest: +SKIP
"""

from __future__ import annotations

import sys


def report_internal_error(exc: BaseException) -> int:
    """Say that tdflow itself failed (exit 1); the traceback only when ``TDFLOW_DEBUG=1``."""
    import os
    import traceback

    if os.environ.get("TDFLOW_DEBUG") == "1":
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    detail = str(exc).splitlines()[0][:200] if str(exc) else ""
    sys.stderr.write(f"tdflow: internal error, please report: {type(exc).__name__}"
                     f"{': ' + detail if detail else ''}"
                     " (rerun with TDFLOW_DEBUG=1 for the traceback)\n")
    return 1


def print_diagnostic(text: str) -> None:
    """Print diagnostic text to stderr, coloured by rich when stderr is a terminal."""
    if sys.stderr.isatty():
        from rich.console import Console
        from rich.text import Text

        console = Console(stderr=True, highlight=False)
        for line in text.splitlines():
            style = "bold red" if ": error:" in line else ("cyan" if ": note:" in line else None)
            console.print(Text(line, style=style) if style else Text(line))
    else:
        sys.stderr.write(text.rstrip("\n") + "\n")
