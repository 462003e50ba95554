"""Subcommands of the ``tdflow`` CLI, one module each, plus the shared error boundary."""

from __future__ import annotations

import importlib
import sys


def run_command(args) -> int:
    """Run the subcommand ``args.command``: the one place errors become exit codes.

    A :class:`~tdflow.core.errors.TdflowError` (``TdError``, the IR's ``DiagnosticError``,
    ``UsageError``...) is printed with its ``render()`` and exits with its ``exit_code`` (1 for
    diagnostics, 2 for usage). Anything else is a bug in tdflow: one "internal error, please
    report" line, and the traceback only under ``TDFLOW_DEBUG=1``.
    """
    from tdflow.core.errors import TdflowError

    module = importlib.import_module(f"tdflow.commands.{args.command.replace('-', '_')}")
    try:
        from .programs import register_library_hooks

        register_library_hooks(args)
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except TdflowError as exc:
        print_diagnostic(exc.render())
        return exc.exit_code
    except Exception as exc:  # noqa: BLE001 - an internal bug: short report, no traceback
        return report_internal_error(exc)


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
