"""``tdflow tblgen`` answered from the cache before anything else is imported.

A warm ``tdflow tblgen --dump-json ops.td`` prints bytes it has printed before: the work is
a few ``stat`` calls and one read. Building the argument parser, the error boundary and the
record cache's writer would cost it more than llvm-tblgen's whole run (each tdflow module
compiles afresh where no bytecode is cached), so :func:`tdflow.cli.entry` first offers the
command line to :func:`run_cached`, which reads the simple forms of the command by hand and
answers a cache hit with the standard library and :mod:`tdflow.tdparser.cache_entry` alone.
Everything else (a miss, ``--help``, ``-`` for stdin, an option it does not know, a file that
is not there) is left to the full command, which then does exactly what it always did.

>>> parse_argv(["ops.td", "-Iinc", "-D", "GPU", "--dump-json"])
('ops.td', ['inc'], ['GPU'], 'json', '-')
>>> parse_argv(["ops.td", "--no-cache"]) is None
True
"""

from __future__ import annotations

import os
import sys

_VALUED = {"-I": 1, "-D": 2, "-o": 4}  # option -> its slot in parse_argv's result
_ACTIONS = {"--dump-json": "json", "--print-records": "records"}


def parse_argv(argv: list[str]) -> tuple | None:
    """``(file, include_dirs, defines, action, output)`` of ``tdflow tblgen ARGV`` when it has
    only the simple forms (``-I DIR``/``-IDIR``, ``-D``, ``-o``, one action flag, one file),
    else ``None``: whatever argparse might read another way goes to the full command.

    >>> parse_argv(["a.td", "-o", "out.json", "-I", "x", "-Iy", "--print-records"])
    ('a.td', ['x', 'y'], [], 'records', 'out.json')
    >>> parse_argv(["a.td", "b.td"]), parse_argv(["-I=x", "a.td"]), parse_argv(["-"])
    (None, None, None)
    """
    slots: list = [None, [], [], None, "-"]
    files = []
    i = 0
    while i < len(argv):
        a = argv[i]
        i += 1
        if "=" in a and a.startswith("-"):
            return None  # argparse splits `-I=x` and `--opt=x`
        if a in _ACTIONS:
            if slots[3] not in (None, _ACTIONS[a]):
                return None  # both actions: a usage error, argparse reports it
            slots[3] = _ACTIONS[a]
            continue
        slot = _VALUED.get(a[:2])
        if slot is not None:
            value = a[2:]
            if not value:
                if i >= len(argv) or argv[i].startswith("-"):
                    return None
                value = argv[i]
                i += 1
            if slot == 4:
                slots[4] = value  # the last -o wins, as with argparse
            else:
                slots[slot].append(value)
            continue
        if a.startswith("-"):
            return None  # -, --, --help, --no-cache, abbreviations...
        files.append(a)
    if len(files) != 1:
        return None
    slots[0] = files[0]
    return tuple(slots)


def run_cached(argv: list[str]) -> int | None:
    """Answer ``tdflow tblgen ARGV`` from the cache: the exit status once the cached output is
    written, or ``None`` (nothing written) when the full command must run.

    >>> run_cached(["--help"]) is None
    True
    """
    got = parse_argv(argv)
    if got is None:
        return None
    path, include_dirs, defines, action, output = got
    if not os.path.isfile(path):
        return None
    from tdflow.core.cache_dir import usable_dir

    folder = usable_dir("records")
    if folder is None:
        return None
    from tdflow.tdparser.cache_entry import Key, read_entry

    key = Key(folder, path, [*include_dirs, tdflow_include_dir()], defines, output_kind(action))
    entry = read_entry(key)
    if entry is None or entry[3]:
        return None  # a miss, or a hit whose entry the full command rewrites (new stats)
    return _write(entry[0], output)


def _write(data, output: str) -> int | None:
    """Write the cached output: the exit status, or None when the full command must (an
    unwritable ``-o`` file, which it reports). A reader gone away (``| head``) raises
    BrokenPipeError, handled by the caller as the full command handles it."""
    if output != "-":
        try:
            with open(output, "wb") as fh:
                fh.write(data)
        except OSError:
            return None
        return 0
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        return None
    try:
        buffer.write(data)
        buffer.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:  # a full disk: reported as the full command reports it
        from tdflow.commands.output import print_diagnostic
        from tdflow.core.files import FileAccessError, os_reason

        err = FileAccessError("<stdout>", f"cannot write: {os_reason(exc)}")
        print_diagnostic(err.render())
        return err.exit_code
    return 0


def output_kind(action: str | None) -> str:
    """The cache's name for ``tdflow tblgen``'s output of ``action`` (``"json"``,
    ``"records"`` or None): it changes with :mod:`tdflow.commands.tblgen`'s size and mtime,
    since the JSON writer lives there (the parser's own fingerprint is in every key).

    >>> output_kind("json").startswith("tblgen-json-"), output_kind(None)[:15]
    (True, 'tblgen-records-')
    """
    st = os.stat(os.path.join(os.path.dirname(__file__), "tblgen.py"))
    return f"tblgen-{action or 'records'}-{st.st_size}:{st.st_mtime_ns}"


def tdflow_include_dir() -> str:
    """Where ``tdflow/Base.td`` is, found without importing the dialect package (searched last
    by every command, so ``tdflow tblgen ops.td`` needs no ``-I``).

    >>> os.path.isfile(os.path.join(tdflow_include_dir(), "tdflow", "Base.td"))
    True
    """
    import importlib.util

    spec = importlib.util.find_spec("tdflow.dialect")
    return os.path.join(list(spec.submodule_search_locations)[0], "include")
