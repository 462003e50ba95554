"""``llvm-tblgen --dump-json`` and ``--print-records`` output for a :class:`RecordKeeper`.

>>> from .records import Record, RecordKeeper
>>> rk = RecordKeeper(); rk.add_def(Record("A", fields={"x": 1}))
>>> to_json(rk)["A"]["x"]
1
"""

from __future__ import annotations

import gc
import os

from tdflow.core.gc_pause import gc_paused

from .deep import run_deep
from .limits import deep_guard
from .records import Bits, Code, Dag, DefRef, RecordKeeper, Unresolved


def printable(v) -> str:
    """llvm-tblgen's ``getAsString`` spelling of a resolved value."""
    if v is None:
        return "?"
    t = type(v)
    if t is int or t is bool:
        return str(int(v))
    if t is Code:
        return "[{" + v + "}]"
    if t is str:
        return '"' + v + '"'
    if t is DefRef:
        return v.name
    if t is Unresolved:
        return v.printable
    if t is Bits:
        return "{ " + ", ".join(printable(b) for b in reversed(v)) + " }"
    if t is list:
        return "[" + ", ".join(printable(x) for x in v) + "]"
    if t is Dag:
        s = "(" + printable(v.operator)
        if v.operator_name is not None:
            s += ":" + v.operator_name
        if v.args:
            s += " " + ", ".join(printable(a) + (":$" + n if n is not None else "")
                                 for a, n in v.args)
        return s + ")"
    return str(v)


def json_value(v):
    """The JSON encoding of one field value."""
    if v is None:
        return None
    t = type(v)
    if t is int or t is str or t is Code:
        return v if t is not Code else str(v)
    if t is bool:
        return int(v)
    if t is Bits or t is list:
        return [json_value(x) for x in v]
    if t is DefRef:
        return {"def": v.name, "kind": "def", "printable": v.name}
    if t is Dag:
        out = {"kind": "dag", "operator": json_value(v.operator), "printable": printable(v),
               "args": [[json_value(a), n] for a, n in v.args]}
        if v.operator_name is not None:
            out["name"] = v.operator_name
        return out
    if t is Unresolved:
        out = {"kind": v.kind, "printable": v.printable}
        if v.kind in ("var", "varbit"):
            out["var"] = v.name
        if v.kind == "varbit":
            out["index"] = v.index
        return out
    return v


LARGE_DOCUMENT = 10_000  # records; see to_json


def to_json(rk: RecordKeeper) -> dict:
    """The document ``llvm-tblgen --dump-json`` writes for the same program.

    Deeply nested values recurse, so this runs on :func:`.deep.run_deep`'s large stack."""
    # Every container made here survives, so the collector would only walk the whole heap
    # again and again for nothing: on X86 that was three quarters of this function's time.
    gc_was_on = gc.isenabled()
    with gc_paused():
        doc = run_deep(_to_json, rk)
        if gc_was_on and len(rk.defs) >= LARGE_DOCUMENT:
            # One full collection now moves the document's millions of containers to the
            # oldest generation; left young, they are walked by several collections while
            # the caller serialises them (X86: 2.4 s here saves 4.5 s in json.dumps). Only
            # for large documents: a full collection costs as much as the whole heap, which
            # a small document's serialisation would never pay (many small calls in a big
            # process would).
            gc.collect()
        return doc


def _to_json(rk: RecordKeeper) -> dict:
    root: dict = {"!tablegen_json_version": 1}
    instances: dict[str, list[str]] = {name: [] for name in sorted(rk.classes)}
    for name in sorted(rk.defs):
        rec = rk.defs[name]
        obj = deep_guard(rec, lambda r=rec: {k: json_value(v) for k, v in r.fields.items()})
        obj["!fields"] = [k for k in rec.fields if k in rec.nonconcrete]
        obj["!superclasses"] = list(rec.superclasses)
        obj["!name"] = rec.name
        obj["!anonymous"] = rec.anonymous
        obj["!locs"] = [f"{os.path.basename(loc.file)}:{loc.line}" for loc in rec.locs]
        for sc in rec.superclasses:
            instances.setdefault(sc, []).append(name)
        root[name] = obj
    root["!instanceof"] = instances
    return root


def print_records(rk: RecordKeeper) -> str:
    """The text of ``llvm-tblgen --print-records`` (classes, then defs, each sorted by name).

    Deeply nested values recurse, so this runs on :func:`.deep.run_deep`'s large stack."""
    return run_deep(_print_records, rk)


def _print_records(rk: RecordKeeper) -> str:
    out = ["------------- Classes -----------------\n"]
    for name in sorted(rk.classes):
        rec = rk.classes[name]
        out.append("class " + deep_guard(rec, lambda r=rec: _record_text(r)))
    out.append("------------- Defs -----------------\n")
    for name in sorted(rk.defs):
        rec = rk.defs[name]
        out.append("def " + deep_guard(rec, lambda r=rec: _record_text(r)))
    return "".join(out)


def _print_type(ty: str, v) -> str:
    return "code" if ty == "string" and type(v) is Code else ty


def _record_text(rec) -> str:
    head = rec.name
    if rec.template_args:
        info = {n: (t, d) for n, t, d in rec.template_arg_info}
        parts = []
        for n in rec.template_args:
            t, d = info.get(n, ("?", None))
            parts.append(f"{_print_type(t, d)} {n} = {printable(d)}")
        head += "<" + ", ".join(parts) + ">"
    head += " {"
    if rec.superclasses:
        head += "\t//" + "".join(" " + s for s in rec.superclasses)
    lines = [head + "\n"]
    for nonconcrete in (True, False):
        for k, v in rec.fields.items():
            if (k in rec.nonconcrete) != nonconcrete:
                continue
            ty = _print_type(rec.field_types.get(k, ""), v)
            field = "field " if nonconcrete else ""
            lines.append(f"  {field}{ty} {k} = {printable(v)};\n")
    lines.append("}\n")
    return "".join(lines)
