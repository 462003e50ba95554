"""The ``llvm-tblgen --dump-json`` text straight from the evaluator's records (:mod:`.rec`).

``rec_json_text(ev)`` is exactly ``json_text(to_keeper(ev, files))``, without the frozen
records in between: when nothing else wants them (``tdflow tblgen --dump-json --no-cache``),
converting X86's 68k records, ~4M field values, only to serialise them at once was about a
tenth of the command's time. Values are written from the evaluator's ``Init`` objects, and
the text of a list or bits value is kept by the value's identity: records share many of
them with their classes, so each is written once.

>>> from .evaluator import Evaluator
>>> from .lexer import Lexer
>>> from .parser import parse_tokens
>>> from .preprocessor import Preprocessor
>>> ev = Evaluator()
>>> ev.run(parse_tokens(Lexer(Preprocessor()).tokens_of_text("def A { int x = 1; }", "t")))
>>> rec_json_text(ev)[:61]
'{"!instanceof":{},"!tablegen_json_version":1,"A":{"!anonymous'
"""

from __future__ import annotations

import os
from json.encoder import encode_basestring as _enc  # json.dumps's own, ensure_ascii=False

from .convert import plain, to_keeper, to_record
from .json_export import printable
from .json_text import (
    JsonWriter,
    json_text,
    llvm_escapes,
    record_plan,
    root_text,
    strings_text,
)
from .values import (
    FALSE,
    TRUE,
    UNSET,
    BitInit,
    BitsInit,
    DagInit,
    DefInit,
    IntInit,
    ListInit,
    StringInit,
)

# The text of a known bit by identity (as convert._KNOWN_BITS): other bits take the slow path.
_BIT_TEXT = {TRUE: "1", FALSE: "0", UNSET: "null"}


def rec_json_text(ev, files=()) -> str:
    """``json_text(to_keeper(ev, files))``, byte for byte, for a finished
    :class:`~.evaluator.Evaluator` ``ev`` (not yet released).

    Deeply nested values recurse, so this is meant for :func:`.deep.run_deep`'s large stack
    (where the evaluator runs). A value too deep for it is written by that slower path
    instead, which reports the "nesting too deep" error at the record ``to_keeper`` stops
    at (or finishes, if it happens to recurse less deeply).

    >>> from .evaluator import Evaluator
    >>> rec_json_text(Evaluator())
    '{"!instanceof":{},"!tablegen_json_version":1}\\n'
    """
    try:
        text = _RecWriter().document(ev)
    except RecursionError:
        return json_text(to_keeper(ev, files))
    return llvm_escapes(text)


class _RecWriter(JsonWriter):
    """:class:`.json_text.JsonWriter` over evaluator records and values."""

    def __init__(self):
        super().__init__()
        self.shared: dict[int, tuple] = {}  # id(value) -> (value, its text)
        self.locs: dict[int, tuple] = {}  # id(location token) -> (token, "file:line")

    def document(self, ev) -> str:
        # Keyed by each record's name now, as to_keeper's RecordKeeper keys them.
        classes = {c.name: c for c in ev.classes.values()}
        for c in classes.values():
            # Not written, but converted by to_keeper, where a value too deep for the
            # conversion is an error: so here too (RecursionError, see rec_json_text).
            to_record(c)
        defs = {d.name: d for d in ev.defs.values()}
        instances: dict[str, list[str]] = {name: [] for name in sorted(classes)}
        root = {"!tablegen_json_version": "1"}
        record = self.rec_record
        for name in sorted(defs):
            rec = defs[name]
            root[name] = record(rec)
            for sc in rec.supers:
                instances.setdefault(sc.name, []).append(name)
        root["!instanceof"] = "{" + ",".join([_enc(k) + ":" + strings_text(instances[k])
                                              for k in sorted(instances)]) + "}"
        return root_text(root)

    def rec_record(self, rec) -> str:
        """One def's object: ``record(to_record(rec))``."""
        if rec.targs:
            items = [(n, rv) for n, rv in rec.values.items() if not rv.targ]
            names = tuple([n for n, _ in items])
            rvs = [rv for _, rv in items]
        else:  # a def: every value is a field
            rvs = rec.values.values()
            names = tuple(rec.values)
        plan = self.plans.get(names, False)
        if plan is False:
            plan = self.plans[names] = record_plan(names)
        value = self.init_text
        defrefs = self.defrefs
        vals = []
        append = vals.append
        for rv in rvs:
            # bits, strings, ints, records by name and `?` are most of the values (X86: 2.2M
            # of 2.6M, half of them bit fields): written here, as init_text writes them
            v = rv.value
            t = type(v)
            if t is BitInit:
                append("1" if v.value else "0")
            elif t is StringInit:
                append(_enc(v.value))
            elif t is IntInit and type(v.value) is int:
                append(int.__repr__(v.value))
            elif t is DefInit and v.rec.name in defrefs:
                append(defrefs[v.rec.name])
            elif v is UNSET:
                append("null")
            else:
                append(value(v))
        nc = [n for n, rv in zip(names, rvs) if rv.field]
        scs = tuple([c.name for c in rec.supers])
        s = self.supers.get(scs)
        if s is None:
            s = self.supers[scs] = strings_text(scs)
        locs = strings_text([self.loc(t) for t in rec.locs])
        if plan is None:  # a field named like a "!" key: the "!" one wins, as in to_json
            obj = dict(zip(names, vals))
            obj["!fields"] = strings_text(nc)
            obj["!superclasses"] = s
            obj["!name"] = _enc(rec.name)
            obj["!anonymous"] = "true" if rec.anonymous else "false"
            obj["!locs"] = locs
            return "{" + ",".join([_enc(k) + ":" + obj[k] for k in sorted(obj)]) + "}"
        vals.append(strings_text(nc))
        vals.append(s)
        vals.append(_enc(rec.name))
        vals.append("true" if rec.anonymous else "false")
        vals.append(locs)
        keytexts, perm = plan
        return "{" + ",".join(map(str.__add__, keytexts, map(vals.__getitem__, perm))) + "}"

    def loc(self, tok) -> str:
        got = self.locs.get(id(tok))
        if got is None:  # the token kept, so that its id stays its own
            got = self.locs[id(tok)] = (tok, f"{os.path.basename(tok.file)}:{tok.line}")
        return got[1]

    def init_text(self, v) -> str:
        """The JSON text of an ``Init``: ``value(plain(v))``."""
        t = type(v)
        if t is StringInit:
            return _enc(v.value)  # a code value is written as a string too
        if t is IntInit:
            x = v.value
            return int.__repr__(x) if type(x) is int else self.value(x)
        if t is DefInit:
            s = self.defrefs.get(v.rec.name)
            return self.defref_text(v.rec.name) if s is None else s
        if t is BitInit:
            return "1" if v.value else "0"
        if v is UNSET:
            return "null"
        if t is DagInit:
            # Not kept: a dag's text holds its whole printable form, so keeping the text of
            # each dag nested in another would take space cubic in the depth.
            init_text = self.init_text
            args = ",".join(["[" + init_text(a) + "," + ("null" if n is None else _enc(n)) + "]"
                             for a, n in v.args])
            s = '{"args":[' + args + '],"kind":"dag",'
            if v.op_name is not None:
                s += '"name":' + _enc(v.op_name) + ","
            return s + '"operator":' + init_text(v.op) + ',"printable":' + \
                _enc(init_printable(v)) + "}"
        got = self.shared.get(id(v))
        if got is not None and got[0] is v:
            return got[1]
        if t is ListInit:
            init_text = self.init_text
            s = "[" + ",".join([init_text(x) for x in v.items]) + "]"
        elif t is BitsInit:
            try:
                s = "[" + ",".join(map(_BIT_TEXT.__getitem__, v.bits)) + "]"
            except KeyError:  # an unresolved bit
                init_text = self.init_text
                s = "[" + ",".join([init_text(b) for b in v.bits]) + "]"
        else:
            s = self.value(plain(v))
        if len(s) <= 4096:  # a long one is a deep one: kept, texts nested in it would add up
            self.shared[id(v)] = (v, s)  # v kept, so that its id stays its own
        return s


def init_printable(v) -> str:
    """``printable(plain(v))`` (llvm-tblgen's ``getAsString``) of an evaluator value.

    >>> from . import types as T
    >>> init_printable(ListInit([IntInit(1), UNSET], T.INT))
    '[1, ?]'
    """
    t = type(v)
    if t is DefInit:
        return v.rec.name
    if t is IntInit:
        return str(int(v.value))
    if t is StringInit:
        return "[{" + v.value + "}]" if v.code else '"' + v.value + '"'
    if t is BitInit:
        return "1" if v.value else "0"
    if v is UNSET:
        return "?"
    if t is DagInit:
        s = "(" + init_printable(v.op)
        if v.op_name is not None:
            s += ":" + v.op_name
        if v.args:
            s += " " + ", ".join([init_printable(a) + (":$" + n if n is not None else "")
                                  for a, n in v.args])
        return s + ")"
    if t is ListInit:
        return "[" + ", ".join([init_printable(x) for x in v.items]) + "]"
    if t is BitsInit:
        return "{ " + ", ".join([init_printable(b) for b in reversed(v.bits)]) + " }"
    return printable(plain(v))
