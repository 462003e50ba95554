"""A disk cache of checked formulas, so loading an op library whose records are cached does not
import Lark, build the formula parser and check every formula again.

One JSON entry per library load, keyed by everything the check depends on: each formula's text,
its op's operands, results and attributes (names, arities, element types, kinds, defaults), the
formula package's own source (sizes and modification times) and tdflow's version. An entry
holds each formula's expression trees in the text form the fused op uses
(:mod:`.text`, read back by a small parser, never ``eval``'d), after the cache dir's MAC of them
(an entry tdflow did not write, an edited expression say, is a miss); anything unexpected in it
is a miss. Only formulas that checked are stored: a library with an error is checked (and reports
it) on every load. The cache lives in tdflow's cache dir and obeys its switches
(``TDFLOW_NO_CACHE``, ``--no-cache``, refused unsafe dirs), see
:mod:`tdflow.core.cache_dir`.

>>> from tdflow.dialect import standard_dialect
>>> op = standard_dialect().lookup("tdflow.relu")
>>> entry = to_entry(op.formula)
>>> from_entry(entry, op.formula.formula).exprs == op.formula.exprs
True
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .check import CheckedFormula
from .syntax import Formula
from .text import format_expr, parse_expr

if TYPE_CHECKING:
    from tdflow.dialect.opdef import OpDef

__all__ = ["load", "store", "key_of", "to_entry", "from_entry"]

FORMAT = 2  # 2: entries carry a MAC
_HERE = Path(__file__).resolve().parent


def _code_stamp() -> list:
    """The formula package's files by size and mtime: editing the checker invalidates entries."""
    out = []
    for p in sorted(_HERE.iterdir()):
        if p.suffix in (".py", ".lark"):
            st = p.stat()
            out.append([p.name, st.st_size, st.st_mtime_ns])
    return out


def _op_shape(op: OpDef) -> list:
    return [op.name,
            [[v.name, v.arity, list(v.dtypes) if v.dtypes else None] for v in op.operands],
            [v.name for v in op.results],
            [[a.name, a.kind, repr(a.default), a.default_text] for a in op.attributes]]


def key_of(jobs: Sequence[tuple[Any, str]]) -> str:
    """The entry key of ``(opdef, formula text)`` pairs, in load order."""
    from tdflow import __version__

    doc = [FORMAT, __version__, _code_stamp(), [[_op_shape(op), code] for op, code in jobs]]
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def to_entry(checked: CheckedFormula) -> dict:
    """The JSON-able form of one checked formula."""
    return {"op": checked.op, "operands": list(checked.operands),
            "results": list(checked.results),
            "exprs": [format_expr(e) for e in checked.exprs],
            "attr_kinds": dict(checked.attr_kinds),
            "attr_defaults": [[k, v] for k, v in checked.attr_defaults.items()]}


def from_entry(entry: dict, formula: Formula) -> CheckedFormula:
    """A :class:`CheckedFormula` back from :func:`to_entry`'s form (``ValueError`` if malformed)."""
    defaults = {}
    for k, v in entry["attr_defaults"]:
        if not isinstance(k, str) or not (v is None or isinstance(v, (bool, int, float, str))):
            raise ValueError("bad attribute default in a formula cache entry")
        defaults[k] = v
    kinds = entry["attr_kinds"]
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in kinds.items()):
        raise ValueError("bad attribute kind in a formula cache entry")
    return CheckedFormula(
        op=str(entry["op"]), formula=formula,
        operands=tuple(map(str, entry["operands"])), results=tuple(map(str, entry["results"])),
        exprs=tuple(parse_expr(str(e)) for e in entry["exprs"]),
        attr_kinds=dict(kinds), attr_defaults=defaults)


def _path(key: str) -> Path | None:
    from tdflow.core.cache_dir import usable_dir

    folder = usable_dir("formulas")
    return None if folder is None else folder / f"{key}.json"


def load(key: str, formulas: Sequence[Formula]) -> list[CheckedFormula] | None:
    """The checked formulas stored under ``key`` (one per job, each given its unparsed
    ``Formula`` header), or ``None`` on a miss."""
    path = _path(key)
    if path is None:
        return None
    from tdflow.core.cache_dir import mac_ok, read_owned, warn_rejected

    blob = read_owned(path)
    if blob is None:
        return None
    if not mac_ok(blob[:32], blob[32:]):
        # edited or not written here: an expression in it would change what the op computes
        warn_rejected(path, "its content is not what tdflow wrote (MAC mismatch)")
        return None
    try:
        entries = json.loads(blob[32:])
        if not isinstance(entries, list) or len(entries) != len(formulas):
            return None
        return [from_entry(e, f) for e, f in zip(entries, formulas)]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # absent, corrupt or from an incompatible writer: check again


def store(key: str, checked: Sequence[CheckedFormula]) -> None:
    """Remember ``checked`` under ``key`` (quietly skipped when caching is off or fails)."""
    from tdflow.core.cache_dir import atomic_write, entry_mac

    path = _path(key)
    if path is None:
        return
    data = json.dumps([to_entry(c) for c in checked]).encode()
    mac = entry_mac(data)
    if mac is not None:
        atomic_write(path, mac + data)
