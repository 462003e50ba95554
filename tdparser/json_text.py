"""The ``llvm-tblgen --dump-json`` text of a :class:`RecordKeeper`, written directly.

``json_text(rk)`` is exactly ``dump_json_text(to_json(rk))`` (the CLI's serialiser over the
document of :mod:`.json_export`), without building that document: on X86 the document is
millions of dicts and lists that only live to be serialised, and making them, collecting
them and walking them again in ``json.dumps`` was about a quarter of a cold
``tdflow tblgen --dump-json``. Each value becomes its JSON text at once here.

>>> from .records import Record, RecordKeeper
>>> rk = RecordKeeper(); rk.add_def(Record("A", fields={"x": 1}))
>>> json_text(rk)[:61]
'{"!instanceof":{},"!tablegen_json_version":1,"A":{"!anonymous'
"""

from __future__ import annotations

import json
import os
import re
from json.encoder import encode_basestring as _enc  # json.dumps's own, ensure_ascii=False

from .deep import run_deep
from .json_export import printable
from .limits import deep_guard
from .records import Bits, Code, Dag, DefRef, RecordKeeper, Unresolved

# A bit of a Bits value as JSON: the common case of a bits<n> value, so it avoids a call.
# 0/1 are also False/True (to_json writes bools as ints, as here).
_BIT = {0: "0", 1: "1", None: "null"}


def json_text(rk: RecordKeeper) -> str:
    """``dump_json_text(to_json(rk))``, byte for byte (keys sorted, compact, raw UTF-8).

    Deeply nested values recurse, so this runs on :func:`.deep.run_deep`'s large stack; a
    value too deep for it is a "nesting too deep" error at its record, as in ``to_json``.

    >>> from .records import Record, RecordKeeper, DefRef
    >>> rk = RecordKeeper(); rk.add_def(Record("B", fields={"r": DefRef("B"), "s": "\\f"}))
    >>> json_text(rk).endswith('"r":{"def":"B","kind":"def","printable":"B"},"s":"\\\\u000c"}}\\n')
    True
    """
    return llvm_escapes(run_deep(JsonWriter().document, rk))


def llvm_escapes(text: str) -> str:
    """JSON text from Python's encoder with LLVM's escapes: Python writes ``\\b`` and ``\\f``
    short, LLVM spells them ``\\u0008`` and ``\\u000c`` (the text is only rescanned when it
    holds one of them).

    >>> llvm_escapes('"a\\\\bc\\\\fd"')
    '"a\\\\u0008c\\\\u000cd"'
    """
    if "\\b" in text or "\\f" in text:
        text = _ESCAPE.sub(_llvm_escape, text)
    return text


class JsonWriter:
    """One document's writer: memos of texts that repeat across records."""

    def __init__(self):
        self.defrefs: dict[str, str] = {}  # record name -> its {"def": ...} object
        self.bits: dict[Bits, str] = {}  # X86: 237k bits values, 19k distinct
        self.supers: dict[tuple, str] = {}
        # The layout of a record's object by its field names (X86: 194 distinct name lists
        # for 68k records): the '"key":' texts in sorted key order, and for each the index
        # of its value in [field values..., the five "!" values].
        self.plans: dict[tuple, tuple | None] = {}

    def document(self, rk: RecordKeeper) -> str:
        instances: dict[str, list[str]] = {name: [] for name in sorted(rk.classes)}
        root = {"!tablegen_json_version": "1"}
        record = self.record
        for name in sorted(rk.defs):
            rec = rk.defs[name]
            root[name] = deep_guard(rec, lambda r=rec: record(r))
            for sc in rec.superclasses:
                instances.setdefault(sc, []).append(name)
        root["!instanceof"] = _obj({k: strings_text(v) for k, v in instances.items()})
        return root_text(root)

    def record(self, rec) -> str:
        fields = rec.fields
        sig = tuple(fields)
        plan = self.plans.get(sig, False)
        if plan is False:
            plan = self.plans[sig] = record_plan(sig)
        if plan is None:
            return self.record_generic(rec)
        value = self.value
        # ints are more than half of X86's values: written here, without a call
        vals = [str(v) if type(v) is int else value(v) for v in fields.values()]
        nc = rec.nonconcrete
        vals.append("[]" if not nc else strings_text([k for k in fields if k in nc]))
        scs = rec.superclasses
        s = self.supers.get(scs)
        if s is None:
            s = self.supers[scs] = strings_text(scs)
        vals.append(s)
        vals.append(_enc(rec.name))
        vals.append("true" if rec.anonymous else "false")
        vals.append(strings_text([f"{os.path.basename(loc.file)}:{loc.line}" for loc in rec.locs]))
        keytexts, perm = plan
        return "{" + ",".join(map(str.__add__, keytexts, map(vals.__getitem__, perm))) + "}"

    def record_generic(self, rec) -> str:
        """A record with a field named like one of the "!" keys (as to_json: the "!" wins)."""
        value = self.value
        fields = rec.fields
        obj = {k: value(v) for k, v in fields.items()}
        obj["!fields"] = strings_text([k for k in fields if k in rec.nonconcrete])
        obj["!superclasses"] = strings_text(rec.superclasses)
        obj["!name"] = _enc(rec.name)
        obj["!anonymous"] = "true" if rec.anonymous else "false"
        obj["!locs"] = strings_text([f"{os.path.basename(loc.file)}:{loc.line}"
                                 for loc in rec.locs])
        return _obj(obj)

    def defref_text(self, name: str) -> str:
        """A reference to the def ``name`` (remembered: the writers look in ``defrefs`` first).

        >>> JsonWriter().defref_text("X")
        '{"def":"X","kind":"def","printable":"X"}'
        """
        e = _enc(name)
        s = self.defrefs[name] = '{"def":' + e + ',"kind":"def","printable":' + e + "}"
        return s

    def value(self, v) -> str:
        """The JSON text of one field value (what ``json_value`` makes, serialised)."""
        t = type(v)
        if t is str:
            return _enc(v)
        if t is int:
            return int.__repr__(v)
        if t is DefRef:
            s = self.defrefs.get(v.name)
            return self.defref_text(v.name) if s is None else s
        if t is Bits:
            try:
                s = self.bits.get(v)
                if s is None:
                    s = self.bits[v] = "[" + ",".join([_BIT[b] for b in v]) + "]"
                return s
            except (KeyError, TypeError):  # an unresolved bit (or not a plain 0/1)
                value = self.value
                return "[" + ",".join([value(b) for b in v]) + "]"
        if v is None:
            return "null"
        if t is list:
            value = self.value
            return "[" + ",".join([value(x) for x in v]) + "]"
        if t is Dag:
            return self.dag(v)
        if t is Code:
            return _enc(v)
        if t is bool:
            return "1" if v else "0"
        if t is Unresolved:
            obj = {"kind": _enc(v.kind), "printable": _enc(v.printable)}
            if v.kind in ("var", "varbit"):
                obj["var"] = self.value(v.name)
            if v.kind == "varbit":
                obj["index"] = self.value(v.index)
            return _obj(obj)
        # Anything else is written as json.dumps would write it in the document.
        return json.dumps(v, sort_keys=True, ensure_ascii=False, separators=(",", ":"))

    def dag(self, v: Dag) -> str:
        value = self.value
        args = ",".join(["[" + value(a) + "," + ("null" if n is None else _enc(n)) + "]"
                         for a, n in v.args])
        s = '{"args":[' + args + '],"kind":"dag",'
        if v.operator_name is not None:
            s += '"name":' + _enc(v.operator_name) + ","
        return s + '"operator":' + value(v.operator) + ',"printable":' + _enc(printable(v)) + "}"


_BANG = ("!fields", "!superclasses", "!name", "!anonymous", "!locs")  # record() appends these


def record_plan(names: tuple) -> tuple | None:
    """The '"key":' texts of a record with these field names, sorted, and the index of each
    key's value; None when a field is named like a "!" key (record_generic handles that)."""
    keys = (*names, *_BANG)
    if len(set(keys)) != len(keys):
        return None
    perm = sorted(range(len(keys)), key=keys.__getitem__)
    return [_enc(keys[i]) + ":" for i in perm], perm


def root_text(root: dict[str, str]) -> str:
    """The whole document: ``root``'s written values under sorted keys, then a newline.

    One join of the pieces, the final newline included: X86's text is 140 MB, and each
    ``key + ":" + record`` or ``text + "\\n"`` would be another copy of it in memory.

    >>> root_text({"b": "1", "a": "[]"})
    '{"a":[],"b":1}\\n'
    """
    if not root:
        return "{}\n"
    pieces = ["{"]
    for k in sorted(root):
        pieces += (_enc(k), ":", root[k], ",")
    pieces[-1] = "}\n"
    return "".join(pieces)


def _obj(items: dict[str, str]) -> str:
    """A JSON object of already written values, keys sorted as ``sort_keys`` sorts them."""
    return "{" + ",".join([_enc(k) + ":" + items[k] for k in sorted(items)]) + "}"


def strings_text(xs) -> str:
    return "[" + ",".join([_enc(x) for x in xs]) + "]"


_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|.)")


def _llvm_escape(m: re.Match) -> str:
    esc = m.group(1)
    if esc == "b":
        return "\\u0008"
    if esc == "f":
        return "\\u000c"
    if esc[0] == "u":
        return "\\" + esc.lower()
    return m.group(0)
