"""The standard library's dialect artifact (issue 23, lever 6): one cached JSON document with
every OpDef, checked formula and rewrite pattern, read back equal to what the records give,
rebuilt when a file changes, and refused (never executed, never a crash) when damaged."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from tdflow.dialect import dialect_cache
from tdflow.dialect.dialect import include_dirs_for, standard_ops_path
from tdflow.dialect.dialect_cache import ArtifactError, decode, encode, load_library, read_library
from tdflow.dialect.paths import INCLUDE_DIR
from tdflow.tdparser import cache as record_cache
from tdflow.tdparser import parse_file

STD = str(standard_ops_path())


def _uncached(path=STD, dirs=None):
    dirs = dirs or include_dirs_for()
    return read_library(parse_file(path, include_dirs=dirs, use_cache=False), path, dirs)


def _same(got, want) -> None:
    """Equal ops (the fields OpDef compares and those it does not) and equal patterns."""
    (ops, pats), (wops, wpats) = got, want
    assert ops == wops and tuple(pats) == tuple(wpats)
    for a, b in zip(ops, wops):
        assert (a.signatures, a.grad_code, a.grad_loc, a.foreign) == \
               (b.signatures, b.grad_code, b.grad_loc, b.foreign), a.name
        assert (a.formula is None) == (b.formula is None), a.name
        if a.formula is not None:
            fa, fb = a.formula, b.formula
            assert (fa.exprs, fa.operands, fa.results, dict(fa.attr_kinds),
                    dict(fa.attr_defaults)) == (fb.exprs, fb.operands, fb.results,
                                                dict(fb.attr_kinds), dict(fb.attr_defaults))
            assert (fa.formula.file, fa.formula.line, fa.formula.col, fa.formula.text) == \
                   (fb.formula.file, fb.formula.line, fb.formula.col, fb.formula.text)
            assert [repr(fa.bind({}, i)) for i in range(len(fa.exprs)) if not fa.attr_kinds] \
                == [repr(fb.bind({}, i)) for i in range(len(fb.exprs)) if not fb.attr_kinds]


def _artifacts(folder):
    return [p for p in (folder / "records").glob("*.rk") if b"tdflow-dialect" in p.read_bytes()]


def test_the_artifact_loads_what_the_records_say(cache):
    want = _uncached()
    first = load_library(STD, include_dirs_for(), [])
    assert record_cache.last_event == "miss"
    again = load_library(STD, include_dirs_for(), [])
    assert record_cache.last_event == "hit"
    _same(first, want)
    _same(again, want)
    assert len(_artifacts(cache)) == 1
    # decoding gives back exactly what was encoded
    assert encode((again[0], again[1])) == encode((first[0], tuple(first[1])))


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_a_damaged_artifact_is_rejected_and_rebuilt(cache, damage):
    want = load_library(STD, include_dirs_for(), [])
    (entry,) = _artifacts(cache)
    blob = entry.read_bytes()
    bad = {"truncate": blob[: len(blob) // 2],
           "flip": blob[:-200] + bytes([blob[-200] ^ 1]) + blob[-199:],
           "garbage": b"\0" * len(blob), "empty": b""}[damage]
    entry.write_bytes(bad)
    _same(load_library(STD, include_dirs_for(), []), want)
    assert entry.read_bytes() == blob or b"tdflow-dialect" in entry.read_bytes()  # rewritten
    load_library(STD, include_dirs_for(), [])
    assert record_cache.last_event == "hit"


def test_a_sealed_artifact_that_does_not_decode_is_read_from_the_records(
        cache, caplog):
    """An entry with this cache dir's MAC but content tdflow would not write (a format bug):
    a warning, and the library comes from its records, right."""
    from unittest import mock

    want = _uncached()
    with mock.patch.object(dialect_cache, "encode", lambda value:
                           b'["tdflow-dialect",1,[],["os.system","echo pwned"]]'):
        load_library(STD, include_dirs_for(), [])
    with caplog.at_level(logging.WARNING, logger="tdflow.cache"):
        got = load_library(STD, include_dirs_for(), [])
    _same(got, want)
    assert "unknown tag 'os.system'" in caplog.text


@pytest.mark.parametrize("doc", [
    b'{"a": 1}', b'["tdflow-dialect",1,[],{"a":1}]', b'["tdflow-dialect",2,[],1]',
    b'["tdflow-dialect",1,[],["r",0]]', b'["tdflow-dialect",1,[],["TraitDef"]]',
    b'["tdflow-dialect",1,[],["Input",-1]]', b'["tdflow-dialect",1,[],["f","1e400"]]',
    b'["tdflow-dialect",1,[],["d",1]]', b'["tdflow-dialect",1,[],["d",["l"],1]]',
    b'["tdflow-dialect",1,[],["__class__"]]', b'["tdflow-dialect",1,[],[]]',
    b'["tdflow-dialect",1,[],' + b'["t",' * 100000 + b'1' + b']' * 100000 + b']',
    b'\xff\xfe', b'',
])
def test_decode_refuses_what_encode_would_not_write(doc):
    with pytest.raises(ArtifactError):
        decode(doc)


def test_values_round_trip():
    from tdflow.dialect.attr_kinds import EnumCase
    from tdflow.tdparser.records import Code

    value = (None, True, 3, -0.0, float("inf"), float("-inf"), "s", Code("c"), [1, (2,)],
             {"k": frozenset({1, 2})}, EnumCase(2, "DT_Float", "DataType"))
    got = decode(encode(value))
    assert got[:5] == value[:5] and str(got[3]) == "-0.0" and got[5:] == value[5:]
    assert type(got[7]) is Code and type(got[10]) is EnumCase and got[10].name == "DT_Float"
    nan = decode(encode(float("nan")))
    assert nan != nan
    with pytest.raises(ArtifactError):
        encode(object())


def _copy_library(tmp_path):
    """The standard library in a folder of its own (its include dir beside it)."""
    inc = tmp_path / "include"
    shutil.copytree(INCLUDE_DIR, inc)
    main = tmp_path / "ops.td"
    shutil.copy(STD, main)
    return str(main), [str(inc)]


def test_an_edited_file_rebuilds_the_artifact(cache, tmp_path):
    main, dirs = _copy_library(tmp_path)
    ops, _ = load_library(main, dirs, [])
    relu = next(o for o in ops if o.name == "tdflow.relu")
    load_library(main, dirs, [])
    assert record_cache.last_event == "hit"
    math_td = tmp_path / "include" / "tdflow" / "ops" / "math.td"
    text = math_td.read_text()
    assert relu.summary in text
    math_td.write_text(text.replace(relu.summary, "rectified, edited"))
    ops2, _ = load_library(main, dirs, [])
    assert record_cache.last_event == "miss"
    assert next(o for o in ops2 if o.name == "tdflow.relu").summary == "rectified, edited"
    load_library(main, dirs, [])
    assert record_cache.last_event == "hit"


def test_no_cache_stores_nothing(cache, monkeypatch):
    monkeypatch.setenv("TDFLOW_NO_CACHE", "1")
    _same(load_library(STD, include_dirs_for(), []), _uncached())
    assert not (cache / "records").exists()


PROGRAM = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""

PROBE = """
import sys, tdflow.cli
status = tdflow.cli.main(sys.argv[1:])
print(status, sorted(m for m in sys.modules if m in (
    "lark", "tdflow.tdparser.parser", "tdflow.dialect.patterns.reader",
    "tdflow.dialect.formula.parse", "tdflow.dialect.formula.cache")))
"""


def test_a_killed_process_group_leaves_the_whole_entry(cache, tmp_path):
    """A caller that kills the command's process group as soon as the command exits (timing
    tools, CI runners) still finds the entry written: the artifact is written by the command
    itself, through a temporary file and a rename, before it exits."""
    prog = tmp_path / "p.mlir"
    prog.write_text(PROGRAM)
    env = {**os.environ, "TDFLOW_CACHE_DIR": str(cache)}
    proc = subprocess.Popen([sys.executable, "-m", "tdflow", "verify", str(prog)], env=env,
                            start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    assert proc.wait(timeout=120) == 0, proc.stderr.read()
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    assert len(_artifacts(cache)) == 1
    assert not list((cache / "records").glob(".tmp-*"))
    r = subprocess.run([sys.executable, "-c", PROBE, "verify", str(prog)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.stdout.splitlines()[-1] == "0 []", r.stdout + r.stderr  # a warm run: no parsing


def test_killed_while_writing_leaves_the_whole_entry_or_none(cache, tmp_path, monkeypatch):
    """Killed at any moment of a cold run, the group leaves no partial entry: the next run
    reads a valid one or rebuilds, and is right either way."""
    prog = tmp_path / "p.mlir"
    prog.write_text(PROGRAM)
    want = _uncached()
    for delay in (0.3, 0.6, 0.9, 1.2):
        # a fresh cache dir each time (not one emptied: this process keeps each dir's MAC key)
        cache = tmp_path / f"cache-{delay}"
        monkeypatch.setenv("TDFLOW_CACHE_DIR", str(cache))
        env = {**os.environ, "TDFLOW_CACHE_DIR": str(cache)}
        proc = subprocess.Popen([sys.executable, "-m", "tdflow", "verify", str(prog)], env=env,
                                start_new_session=True, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(delay)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=120)
        for entry in _artifacts(cache) if (cache / "records").exists() else ():
            # a complete entry: it loads, as written, without a rebuild
            data = entry.read_bytes()
            _same(load_library(STD, include_dirs_for(), []), want)
            assert record_cache.last_event == "hit" and entry.read_bytes() == data
        r = subprocess.run([sys.executable, "-m", "tdflow", "verify", str(prog)], env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and "verified" in r.stdout, r.stderr
