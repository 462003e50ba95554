"""Golden tests for the TableGen front end: ``golden/<name>.td`` with the expected
``<name>.json`` (made by ``llvm-tblgen-19 --dump-json``) or ``<name>.err`` (the first line of the
expected diagnostic). ``<name>.includes`` / ``<name>.defines`` hold extra ``-I`` / ``-D`` values.

They need no LLVM installation; regenerate an expected file with
``llvm-tblgen-19 --dump-json [-I inc] [-D X] name.td`` from inside ``golden/``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pytest
from tdflow.tdparser import TdError, parse_file, to_json

GOLDEN = Path(__file__).parent / "golden"
_ANON = re.compile(r"anonymous_\d+")


def _extra(td: Path, suffix: str) -> list[str]:
    f = td.with_suffix(suffix)
    return f.read_text().split() if f.exists() else []


def _sub(obj, f):
    if isinstance(obj, str):
        return _ANON.sub(lambda m: f(m.group()), obj)
    if isinstance(obj, list):
        return [_sub(x, f) for x in obj]
    if isinstance(obj, dict):
        return {k: _sub(v, f) for k, v in obj.items()}
    return obj


def canonical(doc: dict) -> dict:
    """Rename anonymous records by content so numbering differences do not matter."""
    anon = [k for k, v in doc.items() if isinstance(v, dict) and v.get("!anonymous")]
    label = {k: "A" for k in anon}
    for _ in range(3):
        new = {}
        for k in anon:
            body = {f: v for f, v in doc[k].items() if f != "!name"}
            body = _sub(body, lambda n, lab=label: lab.get(n, n))
            new[k] = hashlib.sha1(json.dumps(body, sort_keys=True).encode()).hexdigest()
        label = new
    names, seen = {}, {}
    for k in sorted(anon, key=lambda k: (label[k], k)):
        i = seen.get(label[k], 0)
        seen[label[k]] = i + 1
        names[k] = f"anon#{label[k]}#{i}"
    out = {names.get(k, k): _sub(v, lambda n: names.get(n, n)) for k, v in doc.items()}
    if "!instanceof" in out:
        out["!instanceof"] = {c: sorted(v) for c, v in out["!instanceof"].items()}
    return out


def _cases(suffix):
    return sorted(p.with_suffix(".td") for p in GOLDEN.glob(f"*{suffix}"))


@pytest.mark.parametrize("td", _cases(".json"), ids=lambda p: p.stem)
def test_json_matches_llvm_tblgen(td: Path, monkeypatch):
    monkeypatch.chdir(GOLDEN)
    rk = parse_file(td.name, include_dirs=_extra(td, ".includes"),
                    defines=_extra(td, ".defines"), use_cache=False)
    expected = json.loads(td.with_suffix(".json").read_text())
    got = json.loads(json.dumps(to_json(rk)))
    exp_c, got_c = canonical(expected), canonical(got)
    assert sorted(got_c) == sorted(exp_c)
    for name in exp_c:
        assert got_c[name] == exp_c[name], name


@pytest.mark.parametrize("td", _cases(".err"), ids=lambda p: p.stem)
def test_error_matches_llvm_tblgen(td: Path, monkeypatch):
    monkeypatch.chdir(GOLDEN)
    with pytest.raises(TdError) as info:
        parse_file(td.name, include_dirs=_extra(td, ".includes"),
                   defines=_extra(td, ".defines"), use_cache=False)
    e = info.value
    got = f"{os.path.basename(e.file)}:{e.line}:{e.col}: error: {e.message}"
    assert got == td.with_suffix(".err").read_text().splitlines()[0]
    assert e.render()  # renders with the source line and caret, never raises


def test_several_errors_are_reported(monkeypatch):
    monkeypatch.chdir(GOLDEN)
    with pytest.raises(TdError) as info:
        parse_file("err_several.td", use_cache=False)
    assert len(info.value.all_errors()) == 2


def test_records_pickle_and_files(monkeypatch):
    import pickle

    monkeypatch.chdir(GOLDEN)
    rk = parse_file("include.td", include_dirs=["inc"], use_cache=False)
    assert rk.files[0] == "include.td" and rk.files[1].endswith("helper.td")
    again = pickle.loads(pickle.dumps(rk))
    assert to_json(again) == to_json(rk)
    assert rk["Included"].superclasses == ("FromInclude",)
