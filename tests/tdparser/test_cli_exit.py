"""``tdflow tblgen`` as a whole process leaves the finished evaluation for the exit instead of
taking it apart (``Evaluator.release``), with the collector frozen so that no collection walks
it; the output is the same either way, and an in-process ``main()`` still releases."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref

from tdflow.tdparser import api
from tdflow.tdparser.api import json_of_file, parse_file
from tdflow.tdparser.json_text import json_text

# Classes, defs, a multiclass and a defm, an anonymous class instance: records that refer to
# each other in cycles, as a target's do.
_TD = """
class C<int n> { int N = n; C self_ref = ?; list<C> more = []; }
def A : C<1>;
def B : C<2> { let self_ref = A; let more = [A, C<7>]; }
multiclass M<int k> { def _x : C<k>; def _y : C<!add(k, 1)> { let self_ref = A; } }
defm P : M<3>;
defm Q : M<5>;
"""


def _td(tmp_path) -> str:
    p = tmp_path / "a.td"
    p.write_text(_TD)
    return str(p)


def test_json_and_records_are_the_same_without_release(tmp_path) -> None:
    p = _td(tmp_path)
    assert json_of_file(p, release=False) == json_of_file(p)
    assert (json_text(parse_file(p, use_cache=False, release=False))
            == json_text(parse_file(p, use_cache=False)) == json_of_file(p))


def _evaluators(monkeypatch) -> list:
    """Weak references to every Evaluator the next parse makes."""
    made: list = []
    real = api.Evaluator

    def spy():
        ev = real()
        made.append(weakref.ref(ev))
        return ev

    monkeypatch.setattr(api, "Evaluator", spy)
    return made


def test_release_frees_the_evaluation_without_the_collector(tmp_path, monkeypatch) -> None:
    p = _td(tmp_path)
    made = _evaluators(monkeypatch)
    was_on = gc.isenabled()
    gc.disable()  # only reference counting may free it
    try:
        json_of_file(p)
        assert len(made) == 1 and made[0]() is None
        json_of_file(p, release=False)
        assert len(made) == 2 and made[1]() is not None  # left in its cycles
    finally:
        if was_on:
            gc.enable()
    gc.collect()
    assert made[1]() is None  # still garbage the collector frees


def test_in_process_main_releases(tmp_path, monkeypatch) -> None:
    from tdflow.cli import main

    p = _td(tmp_path)
    made = _evaluators(monkeypatch)
    frozen = gc.get_freeze_count()
    was_on = gc.isenabled()
    gc.disable()
    try:
        for extra in ([], ["--no-cache"]):
            out = tmp_path / f"out{len(extra)}.json"
            assert main(["tblgen", *extra, "--dump-json", p, "-o", str(out)]) == 0
            assert out.read_text() == json_of_file(p)
    finally:
        if was_on:
            gc.enable()
    assert made and all(ref() is None for ref in made)
    assert gc.get_freeze_count() == frozen  # the caller's collector is left as it was


# In a fresh interpreter (freezing the collector is for the whole process): main() as entry()
# calls it. Left in its cycles, the evaluation is frozen, so a full collection finds none of it
# (unfrozen, the same collection frees it: see the second run).
_ENDING = """
import gc, sys, weakref
from tdflow.cli import main
from tdflow.tdparser import api
made = []
real = api.Evaluator
def spy():
    ev = real(); made.append(weakref.ref(ev)); return ev
api.Evaluator = spy
path, out, freeze = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
if not freeze:
    gc.freeze = lambda: None  # what the command would be without its freeze
assert main(["tblgen", "--no-cache", "--dump-json", path, "-o", out], process_ends=True) == 0
gc.collect()
print(len(made), sum(ref() is not None for ref in made))
"""


def test_ending_process_leaves_the_evaluation_frozen(tmp_path) -> None:
    p = _td(tmp_path)
    env = {**os.environ, "TDFLOW_CACHE_DIR": str(tmp_path / "cache")}
    outs = []
    for freeze in ("1", "0"):
        out = tmp_path / f"out{freeze}.json"
        r = subprocess.run([sys.executable, "-c", _ENDING, p, str(out), freeze],
                           capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout.split())
        assert out.read_text() == json_of_file(p)
    assert outs == [["1", "1"], ["1", "0"]]


def test_tdflow_command_output(tmp_path) -> None:
    # The whole command, as a user runs it, cold and filling the cache, then warm.
    p = _td(tmp_path)
    env = {**os.environ, "TDFLOW_CACHE_DIR": str(tmp_path / "cache")}
    want = json_of_file(p)
    for extra in (["--no-cache"], [], []):
        r = subprocess.run([sys.executable, "-m", "tdflow", "tblgen", *extra, "--dump-json", p],
                           capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 0 and r.stdout == want, r.stderr
