"""The CLI's ``argparse`` parser class: help laid out to the terminal's width without importing
``shutil``, and argparse's message catalogue looked up once per parser. Imported only when a
parser is built (a warm ``tdflow tblgen`` never builds one).

>>> Parser(prog="x").format_usage().strip()
'usage: x [-h]'
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

__all__ = ["Formatter", "Parser", "catalogue", "terminal_columns"]


def catalogue() -> Callable[[str], str]:
    """What ``gettext.gettext`` translates argparse's strings with, looked up once: argparse
    calls it for each of its strings while a parser is built, and each call searches the
    locale folders for the catalogue again (about thirty searches for one command's parser).

    >>> catalogue()("usage: ")
    'usage: '
    """
    import gettext

    domain = gettext.textdomain()
    try:
        return gettext.translation(domain, gettext.bindtextdomain(domain)).gettext
    except OSError:  # no catalogue: gettext returns each message as it is
        return _untranslated


def _untranslated(message: str) -> str:
    return message


class Formatter(argparse.HelpFormatter):
    """argparse's help formatter, with the terminal's width read as ``shutil`` reads it but
    without importing ``shutil`` (and zlib, bz2, lzma with it): argparse makes a formatter for
    every option it adds, so every command paid for that import."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        if width is None:
            width = terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: ``$COLUMNS``, else the terminal of stdout, else 80.

    >>> import os; from unittest import mock
    >>> with mock.patch.dict(os.environ, COLUMNS="123"):
    ...     terminal_columns()
    123
    """
    import os

    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose default help formatter is :class:`Formatter`."""

    def __init__(self, *args, formatter_class=Formatter, **kwargs) -> None:
        super().__init__(*args, formatter_class=formatter_class, **kwargs)
