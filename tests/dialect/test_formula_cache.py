"""The checked-formula cache: an unchanged library loads its formulas without the parser, a
changed or corrupt entry is checked again, errors are never cached, the switches are obeyed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from tdflow.tdparser.errors import TdError

LIB = '''include "tdflow/Base.td"
def Fc_Dialect : Dialect { let name = "fc"; }
def Fc_LeakyOp : Op<Fc_Dialect, "leaky", [NoMemoryEffect, Elementwise]> {
  let arguments = (ins TDF_Tensor:$x, DefaultValuedAttr<F32Attr, "0.25">:$alpha);
  let results = (outs TDF_Tensor:$y);
  let formula = [{ x > 0 ? x : x * alpha }];
}
def Fc_ClipOp : Op<Fc_Dialect, "clip", [NoMemoryEffect, Elementwise]> {
  let arguments = (ins TDF_Tensor:$x, TDF_Tensor:$limit);
  let results = (outs TDF_Tensor:$y);
  let formula = [{ limit * tanh(x / limit) }];
}
'''

PROBE = """
import sys
from tdflow.dialect.dialect import load_dialect
d = load_dialect(sys.argv[1])
print(sorted(repr(op.formula.expr) for op in d if op.formula is not None))
print('lark' in sys.modules)
"""


@pytest.fixture
def lib(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("TDFLOW_CACHE_DIR", str(cache))
    monkeypatch.delenv("TDFLOW_NO_CACHE", raising=False)
    path = tmp_path / "fc.td"
    path.write_text(LIB)
    return path, cache


def _probe(path, cache, **env):
    import os

    proc = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True,
                          text=True, timeout=120,
                          env={**os.environ, "TDFLOW_CACHE_DIR": str(cache), **env})
    assert proc.returncode == 0, proc.stderr
    exprs, lark = proc.stdout.strip().splitlines()
    return exprs, lark == "True"


def test_a_cached_library_loads_its_formulas_without_the_parser(lib):
    path, cache = lib
    first, lark_first = _probe(path, cache)
    again, lark_again = _probe(path, cache)
    assert first == again and "mul(in1, tanh(div(in0, in1)))" in first
    assert lark_first and not lark_again  # the second load never imported Lark
    assert len(list((cache / "formulas").glob("*.json"))) == 1  # one entry per library


@pytest.mark.parametrize("garbage", [b"not json", b'[{"op": 1}]', b"[]",
                                     b'[{"op": "fc.leaky", "operands": ["x"], "results": ["y"],'
                                     b' "exprs": ["__import__(0)"], "attr_kinds": {},'
                                     b' "attr_defaults": []}, {}]'])
def test_a_corrupt_entry_is_checked_again(lib, garbage):
    path, cache = lib
    want, _ = _probe(path, cache)
    for entry in (cache / "formulas").glob("*.json"):
        entry.write_bytes(garbage)
    got, lark = _probe(path, cache)
    assert got == want and lark  # checked again with the parser, and right


def test_an_edited_entry_never_changes_a_result(lib):
    """Issue 24: an entry whose expression was edited (its MAC kept, or recomputed without the
    cache dir's key) is refused and the formulas are checked again: the op computes what its
    record says."""
    import hashlib
    import hmac

    path, cache = lib
    want, _ = _probe(path, cache)
    (entry,) = [p for p in (cache / "formulas").glob("*.json") if b"fc." in p.read_bytes()]
    blob = entry.read_bytes()
    edited = blob[32:].replace(b"tanh(div(in0, in1))", b"tanh(mul(in0, in1))")
    assert edited != blob[32:]
    for mac in (blob[:32], hmac.new(b"x" * 32, edited, hashlib.sha256).digest()):
        entry.write_bytes(mac + edited)
        got, lark = _probe(path, cache)
        assert got == want and lark


def test_a_changed_formula_is_a_new_entry(lib):
    path, cache = lib
    _probe(path, cache)
    path.write_text(LIB.replace("x / limit", "x * limit"))
    got, lark = _probe(path, cache)
    assert "mul(in1, tanh(mul(in0, in1)))" in got and lark


def test_errors_are_not_cached(lib):
    from tdflow.dialect.dialect import load_dialect

    path, cache = lib
    path.write_text(LIB.replace("x * alpha", "x * alhpa"))
    for _ in range(2):
        with pytest.raises(TdError, match="unknown name 'alhpa'"):
            load_dialect(path)
    assert not [p for p in (cache / "formulas").glob("*.json")
                if b"alhpa" in p.read_bytes() or b"fc." in p.read_bytes()]


def test_no_cache_writes_nothing(lib):
    path, cache = lib
    _probe(path, cache, TDFLOW_NO_CACHE="1")
    assert not (cache / "formulas").exists()


def test_entries_are_plain_json_of_expression_text(lib):
    path, cache = lib
    _probe(path, cache)
    # after the 32-byte MAC
    docs = [json.loads(p.read_bytes()[32:]) for p in (cache / "formulas").glob("*.json")]
    ours = next(d for d in docs if d[0]["op"].startswith("fc."))
    assert [e["exprs"] for e in ours] == [["where(gt(in0, 0), in0, mul(in0, @alpha))"],
                                         ["mul(in1, tanh(div(in0, in1)))"]]
