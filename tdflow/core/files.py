"""Reading a user's input files the same way everywhere: a missing, unreadable or endless input
is a :class:`FileAccessError` naming the file, never a traceback or a hang.

>>> try:
...     read_input("/no/such/prog.mlir")
... except FileAccessError as e:
...     print(e.render())
/no/such/prog.mlir: error: cannot open program: no such file or directory
"""

from __future__ import annotations

import os
import sys

from tdflow.core.errors import TdflowError


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
