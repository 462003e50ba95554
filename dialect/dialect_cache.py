"""A loaded op library (its ``OpDef``\\ s, checked formulas and rewrite patterns) as one cached
artifact, so a warm ``tdflow verify`` neither imports the TableGen front end nor unpickles
records, reads ODS, parses formulas or reads patterns: it reads one JSON document back.
:func:`~tdflow.dialect.dialect.load_dialect` uses it for the standard library, which every
command loads (a user's libraries keep the record and formula caches).

The artifact is a *derived output* of the record cache (:func:`tdflow.tdparser.cache.
load_or_render`): it lives next to the records' entry and is valid under exactly their rules
(every file read by content hash, the include dirs, the defines, the working directory, the
shadowing candidates, tdflow's version and the parser's fingerprint), and, through its
``kind``, the source of the dialect code that reads records (:func:`code_stamp`). Entries carry
the cache dir's MAC and are written through a temporary file and a rename, from this process
(never a forked child): a process group killed as the command exits leaves the whole entry or
none.

Nothing in an entry is executed: the document is JSON, decoded by :func:`decode` into plain
data and the frozen dataclasses of :data:`CLASSES` only, with every class's field list checked
against the code. An entry that does not decode (tampered before sealing, a format from
another tdflow) is reported once and the library is read from its records, as uncached.

>>> from tdflow.dialect.opdef import TraitDef
>>> decode(encode((TraitDef("Elementwise"), 1.5, None)))
(TraitDef(name='Elementwise', args=()), 1.5, None)
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from tdflow.core.errors import TdflowError
from tdflow.core.valueclass import fields, is_value_class

FORMAT = 1
MAGIC = "tdflow-dialect"
_HERE = Path(__file__).resolve().parent
_stamp: str | None = None


class ArtifactError(TdflowError, ValueError):
    """An artifact that does not decode to what tdflow writes (a miss: read the records), or a
    value :func:`encode` cannot store."""


def _classes() -> dict[str, type]:
    """The classes an artifact may build, by name (imported here, at first decode)."""
    from tdflow.tdparser.records import Loc

    from .attr_kinds import EnumInfo
    from .formula.checked import CheckedFormula, Formula
    from .formula.nodes import Attr, Binary, Cast, Const, Input, Select, Unary
    from .opdef import AttrDef, AttrRule, OpDef, SourceLocation, TraitDef, ValueDef
    from .patterns.model import Bind, Constraint, OpNode, Pattern

    found = (Loc, EnumInfo, CheckedFormula, Attr, Binary, Cast, Const, Input, Select, Unary,
             Formula, AttrDef, AttrRule, OpDef, SourceLocation, TraitDef, ValueDef, Bind,
             Constraint, OpNode, Pattern)
    return {c.__name__: c for c in found}


_CLASSES: dict[str, type] | None = None
_FIELDS: dict[type, tuple[str, ...]] = {}
#: Classes whose equal instances are stored once and shared after loading (frozen values that
#: repeat across ops: ``x: TDF_Tensor``, ``NoMemoryEffect``).
SHARED = frozenset({"TraitDef", "ValueDef", "AttrDef", "AttrRule", "EnumInfo"})


def classes() -> dict[str, type]:
    """The classes an artifact may build, by name (imported at first use).

    >>> classes()["OpDef"].__module__
    'tdflow.dialect.opdef'
    """
    global _CLASSES
    if _CLASSES is None:
        _CLASSES = _classes()
    return _CLASSES


def _fields(cls: type) -> tuple[str, ...]:
    """The fields an artifact stores: the init fields, less the private caches a
    ``__post_init__`` derives (``OpDef._attr_index``, ``EnumInfo._by_name``)."""
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(n for n in _init_fields(cls) if not n.startswith("_"))
    return names


def _init_fields(cls: type) -> list[str]:
    """A value class's ``__init__`` fields, in order: a :mod:`tdflow.core.valueclass` class's,
    or the ``field_names`` of a :mod:`tdflow.core.plain` class (``Loc``)."""
    if is_value_class(cls):
        return [f.name for f in fields(cls) if f.init]
    return list(cls.field_names)


# -- encoding --------------------------------------------------------------------------------
# The document is ["tdflow-dialect", FORMAT, [shared node, ...], root node], and holds no JSON
# object (the reader refuses any, so every value is an array or a scalar). Scalars stand for
# themselves; every array is tagged by its first element: "t" tuple, "l" list, "d" dict (keys
# and values alternating), "s" frozenset, "f" a non-finite float, "c" a TableGen code string,
# "e" an EnumCase, "r" the i-th shared value, or a class name of classes() followed by its
# field values.


class _Encoder:
    def __init__(self) -> None:
        self.shared: list = []
        self.index: dict[str, int] = {}

    def enc(self, value: Any) -> Any:
        t = type(value)
        if value is None or t is bool or t is int or t is str:
            return value
        if t is float:
            return value if math.isfinite(value) else ["f", repr(value)]
        if t is tuple:
            return ["t", *map(self.enc, value)]
        if t is list:
            return ["l", *map(self.enc, value)]
        if t is dict:
            out: list = ["d"]
            for k, v in value.items():
                out += [self.enc(k), self.enc(v)]
            return out
        if t is frozenset:
            return ["s", *sorted(map(self.enc, value), key=repr)]
        name = t.__name__
        if name == "Code" and isinstance(value, str):  # a TableGen code value ([{ ... }])
            return ["c", str(value)]
        if name == "EnumCase" and isinstance(value, int):
            return ["e", int(value), value.name, value.enum]
        if classes().get(name) is not t:
            raise ArtifactError(f"cannot store a {t.__module__}.{name} in a dialect artifact")
        fields = _fields(t)
        if name == "Formula":
            # A checked formula keeps its source text and place; its syntax tree is not stored
            # (the formula cache's entries do the same: nothing reads a library formula's body).
            values = [["t"], *(self.enc(getattr(value, f)) for f in fields[1:])]
        else:
            values = [self.enc(getattr(value, f)) for f in fields]
        node = [name, *values]
        if name not in SHARED:
            return node
        key = json.dumps(node, separators=(",", ":"))
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.shared)
            self.shared.append(node)
        return ["r", i]


def encode(value: Any) -> bytes:
    """``value`` (plain data and instances of :func:`classes`) as the artifact's JSON bytes;
    :class:`ArtifactError` for anything else.

    >>> encode((1, [2.0, float("inf")], {"a": None}))
    b'["tdflow-dialect",1,[],["t",1,["l",2.0,["f","inf"]],["d","a",null]]]'
    """
    e = _Encoder()
    root = e.enc(value)
    return json.dumps([MAGIC, FORMAT, e.shared, root], separators=(",", ":"),
                      allow_nan=False).encode()


def _constructors() -> dict[str, tuple[type, int, tuple[str, ...] | None]]:
    """tag -> (class, field count, names when the stored fields are not the leading positional
    init parameters and must be passed by keyword)."""
    out = {}
    for name, cls in classes().items():
        names = _fields(cls)
        init = _init_fields(cls)
        out[name] = (cls, len(names), None if tuple(init[:len(names)]) == names else names)
    return out


def _decoder(shared_nodes: list) -> Any:
    """The node decoder of one document: shared values decoded when first referred to (a
    reference to one being decoded, a cycle, is refused)."""
    table = _constructors()
    shared: list = [_UNSET] * len(shared_nodes)

    # The JSON holds arrays and scalars only (json_loads refuses objects): a scalar is itself.
    def dec(node: Any) -> Any:
        if type(node) is not list:
            return node
        tag = node[0] if node else None
        if tag == "t":
            return tuple([dec(x) if type(x) is list else x for x in node[1:]])
        if tag == "r":
            if len(node) != 2 or type(node[1]) is not int or not 0 <= node[1] < len(shared):
                raise ArtifactError("a bad shared reference in a dialect artifact")
            value = shared[node[1]]
            if value is _UNSET:
                shared[node[1]] = _BUSY
                value = shared[node[1]] = dec(shared_nodes[node[1]])
            elif value is _BUSY:
                raise ArtifactError("a shared value that refers to itself in a dialect artifact")
            return value
        entry = table.get(tag) if type(tag) is str else None
        if entry is not None:
            cls, n, names = entry
            if len(node) != n + 1:
                raise ArtifactError(f"a {tag} with {len(node) - 1} fields (expected {n})")
            args = [dec(x) if type(x) is list else x for x in node[1:]]
            try:
                return cls(*args) if names is None else cls(**dict(zip(names, args)))
            except (TypeError, ValueError) as exc:  # a __post_init__ refusing a value
                raise ArtifactError(f"a bad {tag} in a dialect artifact: {exc}") from None
        return _dec_other(tag, node, dec)

    return dec


_UNSET, _BUSY = object(), object()


def _check_header(doc: Any) -> None:
    if type(doc) is not list or len(doc) != 4 or doc[:2] != [MAGIC, FORMAT] \
            or type(doc[2]) is not list:
        raise ArtifactError("not a dialect artifact of this format")


def _decode_doc(doc: Any) -> Any:
    _check_header(doc)
    dec = _decoder(doc[2])
    for i in range(len(doc[2])):  # every shared value, used or not, as the format requires
        dec(["r", i])
    return dec(doc[3])


def _dec_other(tag: Any, node: list, dec) -> Any:
    """The rarer tags (lists, dicts, sets, non-finite floats, code strings, enum cases)."""
    if tag == "l":
        return [dec(x) for x in node[1:]]
    if tag == "d":
        items = node[1:]
        if len(items) % 2:
            raise ArtifactError("a dict with an odd item list in a dialect artifact")
        try:
            return {dec(k): dec(v) for k, v in zip(items[::2], items[1::2])}
        except TypeError:  # an unhashable key
            raise ArtifactError("a bad dict key in a dialect artifact") from None
    if tag == "s":
        try:
            return frozenset(dec(x) for x in node[1:])
        except TypeError:
            raise ArtifactError("a bad set member in a dialect artifact") from None
    if tag == "f":
        if len(node) != 2 or node[1] not in ("inf", "-inf", "nan"):
            raise ArtifactError("a bad non-finite float in a dialect artifact")
        return float(node[1])
    if tag == "c":
        from tdflow.tdparser.records import Code

        if len(node) != 2 or type(node[1]) is not str:
            raise ArtifactError("a bad code value in a dialect artifact")
        return Code(node[1])
    if tag == "e":
        from .attr_kinds import EnumCase

        if len(node) != 4 or type(node[1]) is not int or not all(
                type(x) is str for x in node[2:]):
            raise ArtifactError("a bad enum case in a dialect artifact")
        return EnumCase(node[1], node[2], node[3])
    raise ArtifactError(f"unknown tag {tag!r} in a dialect artifact")


def _no_object(pairs: list) -> Any:
    raise ValueError("a JSON object")


def _loads(data: bytes) -> Any:
    try:
        return json.loads(data, object_pairs_hook=_no_object)
    except RecursionError:
        raise ArtifactError("nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ArtifactError(f"not JSON: {exc}") from None


def decode(data: bytes) -> Any:
    """The value :func:`encode` wrote; :class:`ArtifactError` for anything it would not write.

    >>> decode(b'["tdflow-dialect",1,[],["os.system","x"]]')
    Traceback (most recent call last):
    ...
    tdflow.dialect.dialect_cache.ArtifactError: unknown tag 'os.system' in a dialect artifact
    """
    try:
        return _decode_doc(json.loads(data, object_pairs_hook=_no_object))
    except RecursionError:
        raise ArtifactError("nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as exc:  # ArtifactError is a ValueError too
        if isinstance(exc, ArtifactError):
            raise
        raise ArtifactError(f"not JSON: {exc}") from None


# -- the library's artifact ------------------------------------------------------------------


def code_stamp() -> str:
    """What the artifact's bytes depend on besides the records: the format, the class fields,
    and (name, size, mtime) of the dialect's record-reading sources, so editing the ODS reader
    in a checkout rebuilds artifacts (the version covers installed copies).

    >>> len(code_stamp())
    16
    """
    global _stamp
    if _stamp is None:
        import hashlib

        parts = [str(FORMAT)]
        for folder in (_HERE, _HERE / "formula", _HERE / "patterns"):
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            for e in entries:
                if e.name.endswith((".py", ".lark")):
                    st = e.stat()
                    parts.append(f"{folder.name}/{e.name}:{st.st_size}:{st.st_mtime_ns}")
        _stamp = hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]
    return _stamp


def _check(ops: object, patterns: object) -> None:
    """The decoded document is a list of OpDefs and a tuple of Patterns (else a miss)."""
    from .opdef import OpDef
    from .patterns.model import Pattern

    if not (type(ops) is list and all(type(o) is OpDef for o in ops)
            and type(patterns) is tuple and all(type(p) is Pattern for p in patterns)):
        raise ArtifactError("an artifact that is not (ops, patterns)")


def read_library(records, path: str, search_dirs: list[str]) -> tuple[list, tuple]:
    """``(ops, patterns)`` read from a library's records (no cache): the ODS reader (formulas
    checked) and the rewrite-pattern reader. Raises the library's ``TdError``\\ s."""
    from .ods import read_ops
    from .patterns.reader import read_patterns

    return (read_ops(records, file_hint=path, search_dirs=search_dirs),
            tuple(read_patterns(records)))


def load_library(path: str, include_dirs: list[str], defines: list[str], *,
                 lazy: bool = False) -> tuple[Any, tuple]:
    """``(ops, patterns)`` of the library ``path`` (``include_dirs`` complete, tdflow's own
    included): from its artifact when valid, else read from its records (then stored). A
    library with errors raises them (``TdError``) and stores nothing.

    ``ops`` is a list of ``OpDef``\\ s; with ``lazy``, when it comes from the artifact, a
    :class:`~tdflow.dialect.lazy_ops.LazyOps` that makes each op when first looked up
    (start-up time: a command uses few of the ~150 standard ops). An op that then does not
    decode is reported once and the library's records are read for it, as uncached.

    >>> from tdflow.dialect.dialect import standard_ops_path, include_dirs_for
    >>> ops, pats = load_library(str(standard_ops_path()), include_dirs_for(), [])
    >>> ops[0].dialect, len(pats) > 0
    ('tdflow', True)
    """
    from tdflow.tdparser.cache import load_or_render

    def parse():
        from tdflow.tdparser import parse_file

        return parse_file(path, include_dirs=include_dirs, defines=defines, use_cache=False)

    built: list = []

    def render(records) -> bytes:
        ops, patterns = read_library(records, path, include_dirs)
        built.append((ops, patterns))
        try:
            return encode((ops, tuple(patterns)))
        except (ArtifactError, RecursionError):
            return b""  # a library holding something unencodable: read it each time

    data = load_or_render(path, include_dirs, defines, parse, render,
                          f"dialect-{code_stamp()}", background=False)
    if built:
        return built[0]
    if data and lazy:
        try:
            return _lazy_library(_loads(data), path, include_dirs, defines, parse)
        except ArtifactError as exc:
            _warn(path, str(exc))
            data = b""
    if data:
        try:
            doc = decode(data)
            if type(doc) is not tuple or len(doc) != 2:
                raise ArtifactError("not a pair (ops, patterns)")
            _check(*doc)
            return doc
        except ArtifactError as exc:
            _warn(path, str(exc))
    from tdflow.tdparser.cache import load_or_build

    return read_library(load_or_build(path, include_dirs, defines, parse), path, include_dirs)


def _warn(path: str, why: str) -> None:
    import logging

    logging.getLogger("tdflow.cache").warning(
        "tdflow: the cached dialect of %s is unusable (%s); reading its records", path, why)


def _lazy_library(doc: Any, path: str, include_dirs: list[str], defines: list[str],
                  parse) -> tuple[Any, tuple]:
    """``(LazyOps, patterns)`` of a decoded JSON document: each op's node is checked for its
    shape and its name, mnemonic, dialect and file read now; the op is made on first lookup."""
    from .lazy_ops import LazyOps
    from .opdef import OpDef
    from .patterns.model import Pattern

    _check_header(doc)
    root = doc[3]
    if not (type(root) is list and len(root) == 3 and root[0] == "t"
            and type(root[1]) is list and root[1][:1] == ["l"]):
        raise ArtifactError("not a pair (ops, patterns)")
    dec = _decoder(doc[2])
    try:
        patterns = dec(root[2])
    except RecursionError:
        raise ArtifactError("nested too deeply") from None
    if not (type(patterns) is tuple and all(type(p) is Pattern for p in patterns)):
        raise ArtifactError("an artifact that is not (ops, patterns)")
    names = _fields(OpDef)
    n, im, idl, iloc = (len(names), names.index("mnemonic") + 1, names.index("dialect") + 1,
                        names.index("location") + 1)
    file_first = _fields(classes()["SourceLocation"])[0] == "file"
    nodes: dict[str, list] = {}
    meta: dict[str, tuple[str, str, str | None]] = {}
    for node in root[1][1:]:
        if type(node) is not list or len(node) != n + 1 or node[0] != "OpDef":
            raise ArtifactError("an op that is not an OpDef in a dialect artifact")
        m, d, loc = node[im], node[idl], node[iloc]
        if type(m) is not str or type(d) is not str:
            raise ArtifactError("an op without a name in a dialect artifact")
        if loc is None:
            file = None
        elif (type(loc) is list and len(loc) == 4 and loc[0] == "SourceLocation" and file_first
              and type(loc[1]) is str):
            file = loc[1]
        else:
            raise ArtifactError("an op with a bad location in a dialect artifact")
        name = f"{d}.{m}"
        if name in meta:
            raise ArtifactError(f"op '{name}' twice in a dialect artifact")
        meta[name], nodes[name] = (m, d, file), node
    from_records: list = []

    def load(name: str) -> OpDef:
        if not from_records:
            try:
                op = dec(nodes[name])
                if type(op) is OpDef and op.name == name:
                    return op
                raise ArtifactError(f"op '{name}' does not decode to itself")
            except RecursionError:
                why = "nested too deeply"
            except ArtifactError as exc:
                why = str(exc)
            _warn(path, why)
            from tdflow.tdparser.cache import load_or_build

            ops, _ = read_library(load_or_build(path, include_dirs, defines, parse), path,
                                  include_dirs)
            from_records.append({op.name: op for op in ops})
        return from_records[0][name]

    return LazyOps(meta, load), patterns
