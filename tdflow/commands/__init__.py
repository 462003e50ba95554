"""Subcommands of the ``tdflow`` CLI, one module each, plus the shared error boundary."""

from __future__ import annotations

import importlib

from .index import module_of
from .output import print_diagnostic, report_internal_error

__all__ = ["print_diagnostic", "report_internal_error", "run_command"]


def run_command(args) -> int:
    """Run the subcommand ``args.command``: the one place errors become exit codes.

    A :class:`~tdflow.core.errors.TdflowError` (``TdError``, the IR's ``DiagnosticError``,
    ``UsageError``...) is printed with its ``render()`` and exits with its ``exit_code`` (1 for
    diagnostics, 2 for usage). Anything else is a bug in tdflow: one "internal error, please
    report" line, and the traceback only under ``TDFLOW_DEBUG=1``.
    """
    from tdflow.core.errors import TdflowError

    module = importlib.import_module(module_of(args.command))
    try:
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
