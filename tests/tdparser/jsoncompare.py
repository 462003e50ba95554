"""Compare two ``llvm-tblgen --dump-json`` documents, up to the numbering of anonymous records.

``anonymous_N`` names depend on the order records are created in, which a correct front end need
not reproduce. Each anonymous record is therefore renamed after its *content*: a hash of the
record (everything but ``!name``) in which every mention of another anonymous record is replaced
by that record's current label. Labels are refined until the partition they induce stops
splitting (Weisfeiler-Lehman colour refinement), which handles chains, cycles and any order.
Records that end with the same label are indistinguishable; they share one canonical name and
are compared as a count. Renaming applies everywhere a name can appear: top-level keys, ``def``
references, dag operators, ``!instanceof`` lists (re-sorted), and inside plain or printable
strings (``!cast<string>``, ``NAME`` pastes).

>>> a = {"anonymous_1": {"!name": "anonymous_1", "!anonymous": True, "x": 1},
...      "R": {"!name": "R", "!anonymous": False, "f": {"kind": "def", "def": "anonymous_1",
...                                                   "printable": "anonymous_1"}}}
>>> b = {"anonymous_7": {"!name": "anonymous_7", "!anonymous": True, "x": 1},
...      "R": {"!name": "R", "!anonymous": False, "f": {"kind": "def", "def": "anonymous_7",
...                                                   "printable": "anonymous_7"}}}
>>> diff_documents(a, b)
[]
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

ANON = re.compile(r"\banonymous_\d+\b")
_MISSING = object()


def canonical_names(doc: dict[str, Any]) -> dict[str, str]:
    """Map each anonymous record name of ``doc`` to a name derived from its content."""
    anon = [n for n, r in doc.items() if not n.startswith("!") and isinstance(r, dict)
            and r.get("!anonymous")]
    if not anon:
        return {}
    bodies = {n: {k: v for k, v in doc[n].items() if k != "!name"} for n in anon}
    # Serialise once with a marker in front of each anonymous name, so that each refinement
    # round is a cheap regex substitution over a string rather than a tree walk.
    texts = {n: json.dumps(b, sort_keys=True, ensure_ascii=False) for n, b in bodies.items()}
    labels = dict.fromkeys(anon, "")
    classes = 1
    for _ in range(len(anon) + 1):

        def sub(m: re.Match, labels: dict[str, str] = labels) -> str:
            return "@" + labels.get(m.group(0), m.group(0))

        new = {n: hashlib.sha1((labels[n] + ANON.sub(sub, t)).encode()).hexdigest()
               for n, t in texts.items()}
        count = len(set(new.values()))
        labels = new
        if count == classes:
            break
        classes = count
    return {n: "anonymous#" + labels[n][:16] for n in anon}


def rename(value: Any, names: dict[str, str]) -> Any:
    """``value`` with every anonymous record name replaced through ``names``."""
    if isinstance(value, str):
        if "anonymous_" not in value:
            return value
        return ANON.sub(lambda m: names.get(m.group(0), m.group(0)), value)
    if isinstance(value, list):
        return [rename(v, names) for v in value]
    if isinstance(value, dict):
        return {rename(k, names): rename(v, names) for k, v in value.items()}
    return value


def canonicalize(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with anonymous records renamed by content.

    Records are mapped to ``(count, body)``; ``!instanceof`` lists are sorted after renaming.
    """
    names = canonical_names(doc)
    out: dict[str, Any] = {}
    for key, body in doc.items():
        if key == "!instanceof":
            out[key] = {cls: sorted(rename(v, names) for v in defs)
                        for cls, defs in (body or {}).items()}
            continue
        if key.startswith("!"):
            out[key] = body
            continue
        new_key = names.get(key, key)
        new_body = rename(body, names)
        if isinstance(new_body, dict) and key in names:
            new_body["!name"] = new_key
        if new_key in out:
            count, _ = out[new_key]
            out[new_key] = (count + 1, new_body)
        else:
            out[new_key] = (1, new_body)
    return out


def _short(value: Any, limit: int = 160) -> str:
    text = "<absent>" if value is _MISSING else json.dumps(value, ensure_ascii=False,
                                                             sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def diff_documents(ours: dict[str, Any], theirs: dict[str, Any], *, limit: int = 50,
                   ours_label: str = "tdflow", theirs_label: str = "llvm-tblgen") -> list[str]:
    """Readable differences between two documents (empty when they match), at most ``limit``.

    Each line names the record and the field: ``Foo.bar: tdflow 1 != llvm-tblgen 2``.
    """
    if ours == theirs:  # same numbering too: nothing to canonicalise
        return []
    a, b = _pair_changed(canonicalize(ours), canonicalize(theirs))
    out: list[str] = []

    def add(line: str) -> bool:
        out.append(line)
        return len(out) >= limit

    for key in ("!tablegen_json_version",):
        if a.get(key) != b.get(key):
            add(f"{key}: {ours_label} {_short(a.get(key))} != {theirs_label} {_short(b.get(key))}")
    ia, ib = a.get("!instanceof", {}), b.get("!instanceof", {})
    theirs_order = [n for n in b if not n.startswith("!")]
    rank = {n: i for i, n in enumerate(theirs_order)}
    names = sorted(set(a) | set(b), key=lambda n: (rank.get(n, len(rank)), n))
    for name in names:
        if name.startswith("!"):
            continue
        ra, rb = a.get(name), b.get(name)
        if ra is None:
            if add(f"{name}: missing in {ours_label} ({_loc(rb[1])})"):
                return out
            continue
        if rb is None:
            if add(f"{name}: extra in {ours_label} ({_loc(ra[1])})"):
                return out
            continue
        if ra[0] != rb[0]:
            add(f"{name}: {ours_label} has {ra[0]} identical copies, {theirs_label} {rb[0]}")
        fa, fb = ra[1], rb[1]
        where = f" [{_loc(fb)}]" if name.startswith("anonymous#") else ""
        if not (isinstance(fa, dict) and isinstance(fb, dict)):
            if fa != fb and add(f"{name}: {ours_label} {_short(fa)} != {theirs_label} "
                                f"{_short(fb)}"):
                return out
            continue
        for field in list(fb) + [f for f in fa if f not in fb]:
            va, vb = fa.get(field, _MISSING), fb.get(field, _MISSING)
            if va != vb and add(f"{name}{where}.{field}: {ours_label} {_short(va)} != "
                                f"{theirs_label} {_short(vb)}{_where(va, vb)}"):
                return out
    for cls in sorted(set(ia) | set(ib)):
        la, lb = ia.get(cls), ib.get(cls)
        if la != lb:
            if la is None or lb is None:
                line = f"!instanceof.{cls}: only in {ours_label if lb is None else theirs_label}"
            else:
                extra, missing = sorted(set(la) - set(lb)), sorted(set(lb) - set(la))
                line = (f"!instanceof.{cls}: extra {_short(extra, 100)}, missing "
                        f"{_short(missing, 100)}")
            if add(line):
                return out
    return out


_CANON = re.compile(r"anonymous#[0-9a-f]{16}")


def _pair_changed(a: dict[str, Any], b: dict[str, Any]) -> tuple[dict, dict]:
    """Give an anonymous record of ``a`` whose content differs from its counterpart in ``b`` the
    counterpart's name, so that the diff shows the changed fields once instead of a cascade of
    changed references. Counterparts are records whose bodies become equal once the records they
    refer to are paired, else the unique record with the same (``!locs``, ``!superclasses``)."""

    def sig(entry: tuple) -> tuple:
        body = entry[1] if isinstance(entry[1], dict) else {}
        return (json.dumps(body.get("!locs")), json.dumps(body.get("!superclasses")))

    def body_key(entry: tuple) -> str:
        body = dict(entry[1]) if isinstance(entry[1], dict) else {"": entry[1]}
        body.pop("!name", None)
        return json.dumps([entry[0], body], sort_keys=True)

    alias: dict[str, str] = {}

    def sub(v: Any) -> Any:
        if isinstance(v, str):
            return _CANON.sub(lambda m: alias.get(m.group(0), m.group(0)), v) if "#" in v else v
        if isinstance(v, list):
            return [sub(x) for x in v]
        if isinstance(v, dict):
            return {sub(k): sub(x) for k, x in v.items()}
        if isinstance(v, tuple):
            return (v[0], sub(v[1]))
        return v

    for _ in range(50):
        extra = [k for k in a if k.startswith("anonymous#") and k not in b]
        missing = [k for k in b if k.startswith("anonymous#") and k not in a]
        if not extra or not missing:
            break
        found: dict[str, str] = {}
        by_body: dict[str, list[str]] = {}
        for k in missing:
            by_body.setdefault(body_key(b[k]), []).append(k)
        for k in extra:
            cands = by_body.get(body_key(a[k]), [])
            if len(cands) == 1:
                found[k] = cands[0]
        if not found:
            by_sig: dict[tuple, list[str]] = {}
            for k in missing:
                by_sig.setdefault(sig(b[k]), []).append(k)
            ours_sig: dict[tuple, list[str]] = {}
            for k in extra:
                ours_sig.setdefault(sig(a[k]), []).append(k)
            found = {ks[0]: by_sig[s][0] for s, ks in ours_sig.items()
                     if len(ks) == 1 and len(by_sig.get(s, ())) == 1}
        if not found:
            break
        alias = found
        renamed: dict[str, Any] = {}
        for k, v in a.items():
            if k == "!instanceof":
                renamed[k] = {c: sorted(sub(x) for x in defs) for c, defs in v.items()}
            elif k.startswith("!"):
                renamed[k] = v
            else:
                renamed[alias.get(k, k)] = sub(v)
        a = renamed
    return a, b


def _loc(body: Any) -> str:
    locs = body.get("!locs") if isinstance(body, dict) else None
    return ", ".join(locs) if locs else "no location"


def _where(va: Any, vb: Any) -> str:
    """For two long strings, where they first differ (the start of the strings can hide it)."""
    if isinstance(va, str) and isinstance(vb, str) and len(va) > 60:
        i = next((i for i, (x, y) in enumerate(zip(va, vb)) if x != y), min(len(va), len(vb)))
        return f" (first difference at char {i}: {va[i:i + 40]!r} vs {vb[i:i + 40]!r})"
    return ""


def first_difference(ours: dict[str, Any], theirs: dict[str, Any]) -> str | None:
    """The first line of :func:`diff_documents`, or ``None`` when the documents match."""
    diffs = diff_documents(ours, theirs, limit=1)
    return diffs[0] if diffs else None


# -- --print-records text ---------------------------------------------------------------------

_BLOCK = re.compile(r"^(?=(?:class|def) )", re.M)


def _blocks(text: str, names: dict[str, str]) -> tuple[list[str], list[str]]:
    """(class blocks in order, def blocks sorted) of a ``--print-records`` text, with anonymous
    records renamed through ``names``."""
    text = ANON.sub(lambda m: names.get(m.group(0), m.group(0)), text)
    classes_part, _, defs_part = text.partition("------------- Defs -----------------\n")
    classes_part = classes_part.partition("------------- Classes -----------------\n")[2]
    classes = [b for b in _BLOCK.split(classes_part) if b]
    defs = sorted(b for b in _BLOCK.split(defs_part) if b)
    return classes, defs


def diff_print_records(ours_text: str, theirs_text: str, ours_doc: dict, theirs_doc: dict, *,
                       limit: int = 20) -> list[str]:
    """Differences between two ``--print-records`` outputs, block by block.

    Anonymous records are renamed by content, using each side's ``--dump-json`` document (the
    same program's) to compute the names; def blocks are then compared as sorted multisets,
    since llvm-tblgen prints defs sorted by name and the names depend on the numbering.
    """
    if ours_text == theirs_text:
        return []
    ca, da = _blocks(ours_text, canonical_names(ours_doc))
    cb, db = _blocks(theirs_text, canonical_names(theirs_doc))
    out: list[str] = []

    def header(block: str) -> str:
        return block.split("\n", 1)[0].split(" {", 1)[0]

    def compare_lists(kind: str, xs: list[str], ys: list[str]) -> None:
        by_head = {header(b): b for b in xs}
        seen = set()
        for y in ys:
            h = header(y)
            seen.add(h)
            x = by_head.get(h)
            if x is None:
                out.append(f"{kind} {h!r}: missing in tdflow")
            elif x != y:
                lx, ly = x.splitlines(), y.splitlines()
                i = next((i for i, (a, b) in enumerate(zip(lx, ly)) if a != b),
                         min(len(lx), len(ly)))
                out.append(f"{kind} {h!r} line {i + 1}: tdflow "
                           f"{lx[i] if i < len(lx) else '<end>'!r} != llvm-tblgen "
                           f"{ly[i] if i < len(ly) else '<end>'!r}")
            if len(out) >= limit:
                return
        for x in xs:
            if header(x) not in seen and len(out) < limit:
                out.append(f"{kind} {header(x)!r}: extra in tdflow")

    compare_lists("class", ca, cb)
    if len(out) < limit:
        compare_lists("def", da, db)
    if not out and (ca, da) != (cb, db):
        out.append("same blocks, different order or count")
    return out[:limit]
