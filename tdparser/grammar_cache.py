"""The Lark LALR parser for ``tablegen.lark``: from the shipped table, else tdflow's cache dir.

Building the LALR table takes 70-130 ms; loading it back a few. The table ships with the
package as JSON, ``tablegen_lark.json`` (written by :mod:`.grammar_table`, checked by a test
to equal a fresh build), and is used whenever it was made from this very grammar text with this
Lark version, even under ``--no-cache``: it is package data, like the grammar itself. JSON only:
nothing in it can name a class but the token feed, which is given again at load time.

Otherwise (an edited grammar, another Lark) the table is built once and kept in the cache dir.
Lark's own ``cache=`` option cannot be used: it unpickles part of the file before checking its
hash, with the plain unpickler, so a planted file would run code on the next parse. Here the
parser is saved with ``Lark.save`` (a pickle of plain data that names one class, the token
feed) and loaded back with :func:`.cache_dir.restricted_loads`, whose allow-list is exactly that
class. The entry lives in the one cache dir and obeys its switches (:mod:`.cache_dir`); anything
wrong with it (foreign format, other key, other classes, damage) is a miss, and the parser is
built and stored again.

>>> from .parser import GRAMMAR, Feed, ToAst
>>> p = load_parser(GRAMMAR, lexer=Feed, transformer=ToAst())
>>> p.options.parser
'lalr'
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
from pathlib import Path

import lark

from tdflow.core.cache_dir import (
    atomic_write,
    entry_mac,
    mac_ok,
    read_owned,
    restricted_loads,
    usable_dir,
    warn_rejected,
)

#: The LALR table shipped with the package (:mod:`.grammar_table` writes it).
SHIPPED = Path(__file__).with_name("tablegen_lark.json")
TABLE_FORMAT = 1

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

    >>> from .parser import GRAMMAR, Feed, ToAst
    >>> load_parser(GRAMMAR, lexer=Feed, transformer=ToAst()).parse  # doctest: +ELLIPSIS
    <bound method Lark.parse of ...>
    """
    with open(grammar_path, encoding="utf-8") as fh:
        grammar = fh.read()
    parser = load_shipped(SHIPPED, grammar, lexer=lexer, transformer=transformer)
    if parser is not None:
        return parser
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


def build(grammar: str, *, lexer: type, transformer) -> lark.Lark:
    """The LALR parser of ``grammar`` (text) built afresh: no shipped table, no cache.

    >>> build('start: "a"', lexer="basic", transformer=None).parse("a")
    Tree('start', [])
    """
    return lark.Lark(grammar, lexer=lexer, transformer=transformer, **_OPTIONS)


def _lexer_name(lexer: type) -> str:
    return f"{lexer.__module__}.{lexer.__qualname__}"


def table_document(parser: lark.Lark, grammar: str, lexer: type) -> str:
    """The JSON text of ``parser``'s table (Lark's ``memo_serialize``, as ``Lark.save`` takes
    it) with what it was made from: the grammar's SHA-256, Lark's version, the lexer's name.

    Lark's data is dicts (string or integer keys), lists, tuples and scalars plus the lexer
    class; JSON has no tuples, no integer keys and no classes, so every dict is written as
    ``{"d": [[key, value], ...]}``, every tuple as ``{"t": [...]}`` and the lexer class as
    ``{"c": "module.name"}``: each JSON object is one of those, so reading it back is exact.

    >>> p = build('start: "a"', lexer="basic", transformer=None)
    >>> table_document(p, 'start: "a"', type(None))[:30]
    '{"d":[["format",1],["grammar_s'
    """
    data, memo = parser.memo_serialize([lark.lexer.TerminalDef, lark.grammar.Rule])
    data["options"] = {n: v for n, v in data["options"].items() if n not in _NOT_SAVED}
    data["parser"]["parser"] = _canonical(data["parser"]["parser"])
    doc = {"format": TABLE_FORMAT, "grammar_sha256": hashlib.sha256(grammar.encode()).hexdigest(),
           "lark": getattr(lark, "__version__", "?"), "lexer": _lexer_name(lexer),
           "table": {"data": data, "memo": memo}}
    return json.dumps(_encode(doc, lexer), separators=(",", ":"), ensure_ascii=True) + "\n"


def _canonical(table: dict) -> dict:
    """Lark's serialized parse table numbered independently of string hashing: tokens in name
    order, states in breadth-first order from the start state (transitions in token-name
    order), each state's actions in token-name order. Lark numbers them as its sets iterate,
    which differs from process to process; the table itself (what each state does) does not."""
    names = table["tokens"]
    states = table["states"]
    start = table["start_states"]["start"]
    order, seen = [start], {start}
    for st in order:  # grows while it is walked: breadth first
        for _, (action, arg) in sorted(states[st].items(), key=lambda kv: names[kv[0]]):
            if action == 0 and arg not in seen:
                seen.add(arg)
                order.append(arg)
    if len(order) != len(states):
        raise ValueError("grammar table: unreachable states")
    new = {old: i for i, old in enumerate(order)}
    tokens = sorted({names[t] for row in states.values() for t in row})
    tok = {name: i for i, name in enumerate(tokens)}
    out_states = {}
    for old in order:
        row = {}
        for t, (action, arg) in sorted(states[old].items(), key=lambda kv: names[kv[0]]):
            row[tok[names[t]]] = (action, new[arg] if action == 0 else arg)
        out_states[new[old]] = row
    return {**table, "tokens": dict(enumerate(tokens)), "states": out_states,
            "start_states": {k: new[v] for k, v in table["start_states"].items()},
            "end_states": {k: new[v] for k, v in table["end_states"].items()}}


def _encode(x, lexer: type):
    if x is None or isinstance(x, (bool, int, str)):
        return x
    if isinstance(x, list):
        return [_encode(v, lexer) for v in x]
    if isinstance(x, tuple):
        return {"t": [_encode(v, lexer) for v in x]}
    if isinstance(x, dict):
        for k in x:
            if not isinstance(k, (int, str)) or isinstance(k, bool):
                raise TypeError(f"grammar table: a {type(k).__name__} key")
        return {"d": [[k, _encode(v, lexer)] for k, v in x.items()]}
    if x is lexer:
        return {"c": _lexer_name(lexer)}
    raise TypeError(f"grammar table: cannot write a {type(x).__name__}")


def decode_table(text: str, lexer: type) -> dict:
    """The document :func:`table_document` wrote, read back; ``ValueError`` for anything else
    (an object of another shape, another lexer class named).

    >>> p = build('start: "a"', lexer="basic", transformer=None)
    >>> decode_table(table_document(p, 'start: "a"', type(None)), type(None))["format"]
    1
    """
    name = _lexer_name(lexer)

    def hook(obj: dict):
        if len(obj) == 1:
            ((tag, v),) = obj.items()
            if tag == "d" and isinstance(v, list):
                return dict(v)
            if tag == "t" and isinstance(v, list):
                return tuple(v)
            if tag == "c" and v == name:
                return lexer
        raise ValueError("not a tdflow grammar table")

    doc = json.loads(text, object_hook=hook)
    if not isinstance(doc, dict):
        raise ValueError("not a tdflow grammar table")
    return doc


def load_shipped(path: Path, grammar: str, *, lexer: type, transformer) -> lark.Lark | None:
    """The parser from the table at ``path`` when it was made from ``grammar`` (text) with
    this Lark and this ``lexer``; ``None`` otherwise (missing, stale, damaged).

    >>> from .parser import GRAMMAR, Feed, ToAst
    >>> text = open(GRAMMAR, encoding="utf-8").read()
    >>> load_shipped(SHIPPED, text, lexer=Feed, transformer=ToAst()).options.parser
    'lalr'
    >>> load_shipped(SHIPPED, text + " ", lexer=Feed, transformer=ToAst()) is None
    True
    """
    try:
        doc = decode_table(path.read_text(encoding="utf-8"), lexer)
        if (doc.get("format") != TABLE_FORMAT
                or doc.get("grammar_sha256") != hashlib.sha256(grammar.encode()).hexdigest()
                or doc.get("lark") != getattr(lark, "__version__", "?")
                or doc.get("lexer") != _lexer_name(lexer)):
            return None
        return lark.Lark.__new__(lark.Lark)._load(
            doc["table"], transformer=transformer, **{k: _OPTIONS[k] for k in _LOAD_OPTIONS})
    except Exception:  # noqa: BLE001 - missing, damaged or other-Lark table: build it instead
        return None
