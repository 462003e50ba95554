"""The Lark LALR parser for ``tablegen.lark``, when the shipped table cannot serve.

The parser normally runs from ``tablegen_lark.json``, the table shipped with the package
(:mod:`.lalr`, written by :mod:`.grammar_table`), without importing Lark. This module is for
when that table was made from another grammar text (the grammar was edited): Lark builds the
table (70-130 ms) and :func:`table_from_lark` turns it into the driver's form.

The built parser is kept in tdflow's cache dir. Lark's own ``cache=`` option cannot be used: it
unpickles part of the file before checking its hash, with the plain unpickler, so a planted
file would run code on the next parse. Here the parser is saved with ``Lark.save`` (a pickle of
plain data that names one class, the token feed) and loaded back with
:func:`.cache_dir.restricted_loads`, whose allow-list is exactly that class. The entry lives in
the one cache dir and obeys its switches (:mod:`.cache_dir`); anything wrong with it (foreign
format, other key, other classes, damage) is a miss, and the parser is built and stored again.

>>> from .parser import GRAMMAR
>>> p = load_parser(GRAMMAR, lexer=Feed, transformer=None)
>>> p.options.parser
'lalr'
"""

from __future__ import annotations

import hashlib
import io
import sys
from pathlib import Path

import lark
from lark.lexer import Lexer as _LarkLexer

from tdflow.core.cache_dir import (
    atomic_write,
    entry_mac,
    mac_ok,
    read_owned,
    restricted_loads,
    usable_dir,
    warn_rejected,
)

from .lalr import driver_table

FORMAT = 2  # 2: a MAC after the key
MAGIC = b"TDFLARK%d\n" % FORMAT
NAME = "tablegen-lark.cache"

# Options that change the table; the transformer and positions are passed again at load time
# (Lark refuses the others when loading, and they are not saved).
_OPTIONS = {"parser": "lalr", "propagate_positions": False, "maybe_placeholders": False}
_LOAD_OPTIONS = ("propagate_positions",)
# What Lark.save leaves out because it is given again at load time (lark.lark's own list).
_NOT_SAVED = getattr(lark.lark, "_LOAD_ALLOWED_OPTIONS",
                     {"postlex", "transformer", "lexer_callbacks", "use_bytes", "debug",
                      "g_regex_flags", "regex", "propagate_positions", "tree_class", "_plugins"})


class Feed(_LarkLexer):
    """The lexer Lark is given: tdflow's own lexer hands the parser its tokens."""

    def __init__(self, conf):
        pass

    def lex(self, data):
        return data


def build(grammar: str, *, lexer: type, transformer) -> lark.Lark:
    """The LALR parser of ``grammar`` (text) built afresh: no shipped table, no cache.

    >>> build('start: "a"', lexer="basic", transformer=None).parse("a").children
    []
    """
    return lark.Lark(grammar, lexer=lexer, transformer=transformer, **_OPTIONS)


def table_from_lark(parser: lark.Lark) -> dict:
    """``parser``'s table in the driver's form (:func:`.lalr.driver_table`), from Lark's own
    serialization of it (what ``Lark.save`` writes).

    >>> table_from_lark(build('start: "a" /b/', lexer="basic", transformer=None))["rules"]
    [['start', 2, 'start', False, [[1, False]]]]
    """
    data, memo = parser.memo_serialize([lark.lexer.TerminalDef, lark.grammar.Rule])
    return driver_table(data, memo)


def cache_path() -> Path | None:
    """The grammar cache file, or ``None`` when caching is off or the cache dir is refused.

    >>> cache_path()  # doctest: +SKIP
    PosixPath('/home/me/.cache/tdflow/tablegen-lark.cache')
    """
    folder = usable_dir()
    return None if folder is None else folder / NAME


def load_parser(grammar_path: str, *, lexer: type, transformer) -> lark.Lark:
    """The LALR parser of the grammar at ``grammar_path`` (custom ``lexer`` class, inline
    ``transformer``), from the cache when it holds this grammar's table, else built and stored.

    >>> from .parser import GRAMMAR
    >>> load_parser(GRAMMAR, lexer=Feed, transformer=None).parse  # doctest: +ELLIPSIS
    <bound method Lark.parse of ...>
    """
    with open(grammar_path, encoding="utf-8") as fh:
        grammar = fh.read()
    # The key covers everything the saved table depends on: grammar text, options, the lexer
    # class by name, and the versions of Lark and Python (pickle and Lark's layout).
    key = hashlib.sha256(repr((
        FORMAT, grammar, sorted(_OPTIONS.items()), lexer.__module__, lexer.__qualname__,
        getattr(lark, "__version__", "?"), sys.version_info[:2],
    )).encode()).hexdigest().encode()
    path = cache_path()
    if path is not None:
        parser = _load(path, key, lexer, transformer)
        if parser is not None:
            return parser
    parser = build(grammar, lexer=lexer, transformer=transformer)
    if path is not None:
        _store(path, key, parser)
    return parser


def _load(path: Path, key: bytes, lexer: type, transformer) -> lark.Lark | None:
    blob = read_owned(path)
    if blob is None:
        return None
    head = MAGIC + key + b"\n"
    if not blob.startswith(head):
        return None  # another format (Lark's own cache file), grammar or version
    mac, table = memoryview(blob)[len(head):len(head) + 32], memoryview(blob)[len(head) + 32:]
    if not mac_ok(mac, head, table):
        warn_rejected(path, "its content is not what tdflow wrote (MAC mismatch)")
        return None  # an edited table would parse TableGen differently
    # Only the token feed class may be named: Lark.save writes plain data plus the lexer class.
    allowed = {lexer.__module__: frozenset({lexer.__qualname__})}
    try:
        data = restricted_loads(table, allowed)
        # Lark's loader, given the unpickled dict (it would otherwise unpickle by itself).
        return lark.Lark.__new__(lark.Lark)._load(
            data, transformer=transformer, **{k: _OPTIONS[k] for k in _LOAD_OPTIONS})
    except Exception:  # noqa: BLE001 - a planted, damaged or other-Lark entry is a miss
        return None


def _store(path: Path, key: bytes, parser: lark.Lark) -> None:
    buf = io.BytesIO()
    try:
        parser.save(buf, _NOT_SAVED)
    except Exception:  # noqa: BLE001 - a Lark that cannot save: just no cache
        return
    head, table = MAGIC + key + b"\n", buf.getvalue()
    mac = entry_mac(head, table)
    if mac is not None:
        atomic_write(path, head + mac + table)
