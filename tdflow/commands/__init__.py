"""Subcommands of the ``tdflow`` CLI, one module each, plus the shared error boundary."""

from __future__ import annotations

import importlib
import sys


def run_command(args) -> int:
    """Run the subcommand ``args.command``; render user errors instead of tracebacks.

    Any exception class with a ``render()`` method (``TdError``, the IR ``Diagnostic``...) is a
    user-facing diagnostic: it is printed to stderr and the exit code is 1.
    """
    module = importlib.import_module(f"tdflow.commands.{args.command.replace('-', '_')}")
    try:
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - the one place errors become diagnostics
        render = getattr(exc, "render", None)
        if render is None:
            raise
        print_diagnostic(render())
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
