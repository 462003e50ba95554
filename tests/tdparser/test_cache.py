"""The on-disk record cache (tdparser/cache.py): hits, every kind of miss, damage, concurrency.

Most tests use a fake ``build`` that follows ``include "x"`` lines itself, so they do not depend on
the parser; the last ones run the real ``parse_file`` when it exists.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import time
from pathlib import Path

import pytest
from tdflow.tdparser import cache, cache_entry
from tdflow.tdparser.cache_bg import wait_for_writes
from tdflow.tdparser.records import Code, Dag, DefRef, Record, RecordKeeper


class FakeBuild:
    """Reads ``main`` and its ``include "x"`` lines (searched in ``incs``, then the main file's
    folder) and makes one def per file holding the file's text; counts its calls."""

    def __init__(self, main: Path, incs: list[Path] = (), defines: tuple[str, ...] = ()):
        self.main, self.incs, self.defines, self.calls = Path(main), list(incs), defines, 0

    def __call__(self) -> RecordKeeper:
        self.calls += 1
        rk = RecordKeeper()
        files: list[str] = []
        todo = [self.main]
        while todo:
            path = todo.pop(0)
            if str(path) in files:
                continue
            files.append(str(path))
            text = path.read_text()
            rk.add_def(Record(f"F{len(files)}", ("File",), {
                "text": Code(text), "defines": list(self.defines),
                "dag": Dag(DefRef("ins"), ((1, "x"), (None, None))),
            }))
            for name in re.findall(r'include "([^"]+)"', text):
                for d in [*self.incs, self.main.parent]:
                    if (d / name).is_file():
                        todo.append(d / name)
                        break
        rk.files = tuple(files)
        return rk


@pytest.fixture
def cdir(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("TDFLOW_CACHE_DIR", str(d))
    monkeypatch.delenv("TDFLOW_NO_CACHE", raising=False)
    return d


@pytest.fixture
def project(tmp_path) -> tuple[Path, Path]:
    src, inc = tmp_path / "src", tmp_path / "inc"
    src.mkdir()
    inc.mkdir()
    (inc / "base.td").write_text('class Base;\ninclude "leaf.td"\n')
    (inc / "leaf.td").write_text("class Leaf;\n")
    (src / "main.td").write_text('include "base.td"\ndef X : Base;\n')
    return src / "main.td", inc


def load(main, incs=(), defines=(), build=None):
    build = build or FakeBuild(main, list(incs), tuple(defines))
    return cache.load_or_build(main, incs, defines, build), build


def entries(cdir: Path) -> list[Path]:
    return sorted((cdir / "records").glob("*")) if (cdir / "records").is_dir() else []


def test_hit_returns_equal_keeper_without_building(cdir, project):
    main, inc = project
    rk1, b1 = load(main, [inc])
    assert (b1.calls, cache.last_event) == (1, "miss")
    rk2, b2 = load(main, [inc])
    assert (b2.calls, cache.last_event) == (0, "hit")
    assert rk2 == rk1 and rk2.files == rk1.files
    assert isinstance(rk2["F1"]["text"], Code)
    assert len(entries(cdir)) == 1


def test_edit_of_included_file_is_a_miss_even_at_same_size(cdir, project):
    main, inc = project
    load(main, [inc])
    leaf = inc / "leaf.td"
    leaf.write_text("class Lea2;\n")  # same size, same timestamp tick: only the hash can tell
    rk, b = load(main, [inc])
    assert (b.calls, cache.last_event) == (1, "miss")
    assert rk["F3"]["text"] == "class Lea2;\n"
    _, b = load(main, [inc])
    assert b.calls == 0


def test_touch_without_change_is_a_hit_and_refreshes_the_entry(cdir, project, monkeypatch):
    main, inc = project
    load(main, [inc])
    os.utime(inc / "leaf.td", ns=(1, 10**18))
    (entry,) = entries(cdir)
    before = entry.read_bytes()
    _, b = load(main, [inc])
    assert (b.calls, cache.last_event) == (0, "hit")
    assert entry.read_bytes() != before  # new stats stored; the next load needs no rehash
    hashed = []
    real = cache_entry.stat_and_hash
    monkeypatch.setattr(cache_entry, "RACY_NS", 0)
    monkeypatch.setattr(cache_entry, "stat_and_hash", lambda p: hashed.append(p) or real(p))
    _, b = load(main, [inc])
    assert b.calls == 0 and str(inc / "leaf.td") not in hashed


def test_unchanged_stat_skips_hashing(cdir, project, monkeypatch):
    main, inc = project
    monkeypatch.setattr(cache_entry, "RACY_NS", 0)  # the files were just written: not racy after all
    load(main, [inc])
    monkeypatch.setattr(cache_entry, "stat_and_hash", lambda p: pytest.fail(f"rehashed {p}"))
    _, b = load(main, [inc])
    assert (b.calls, cache.last_event) == (0, "hit")


def test_defines_include_dirs_and_main_are_part_of_the_key(cdir, project, tmp_path):
    main, inc = project
    load(main, [inc], ["A", "B"])
    _, b = load(main, [inc], ["B", "A", "A"])  # a set: order and repeats do not matter
    assert b.calls == 0
    _, b = load(main, [inc], ["A"])
    assert b.calls == 1
    other = tmp_path / "other"
    other.mkdir()
    _, b = load(main, [other, inc], ["A"])
    assert b.calls == 1
    _, b = load(main, [inc], ["A"])
    assert b.calls == 0  # each configuration keeps its own entry


def test_new_tdflow_version_is_a_miss(cdir, project, monkeypatch):
    main, inc = project
    load(main, [inc])
    monkeypatch.setattr(cache_entry, "_fingerprint", "some-other-version")
    _, b = load(main, [inc])
    assert b.calls == 1


def test_file_created_earlier_on_the_search_path_is_a_miss(cdir, project, tmp_path):
    main, inc = project
    first = tmp_path / "first"
    first.mkdir()
    load(main, [first, inc])
    (first / "leaf.td").write_text("class Shadow;\n")  # now `include "leaf.td"` finds this one
    rk, b = load(main, [first, inc])
    assert b.calls == 1 and rk["F3"]["text"] == "class Shadow;\n"


def test_file_created_in_the_working_directory_is_a_miss(cdir, project, tmp_path, monkeypatch):
    main, inc = project
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    load(main, [inc])
    _, b = load(main, [inc])
    assert b.calls == 0
    (work / "leaf.td").write_text("class Shadow;\n")  # `include "leaf.td"` is tried here first
    _, b = load(main, [inc])
    assert b.calls == 1
    monkeypatch.chdir(tmp_path)
    _, b = load(main, [inc])
    assert b.calls == 1  # another working directory is another configuration


def test_deleted_file_is_a_miss(cdir, project):
    main, inc = project
    load(main, [inc])
    (inc / "leaf.td").unlink()
    _, b = load(main, [inc])
    assert b.calls == 1


@pytest.mark.parametrize("damage", ["garbage", "empty", "truncated", "flipped", "not-a-keeper",
                                    "trailing", "directory"])
def test_damaged_entry_is_rebuilt(cdir, project, damage):
    main, inc = project
    good, _ = load(main, [inc])
    (entry,) = entries(cdir)
    blob = entry.read_bytes()
    if damage == "garbage":
        entry.write_bytes(os.urandom(len(blob)))
    elif damage == "empty":
        entry.write_bytes(b"")
    elif damage == "truncated":
        entry.write_bytes(blob[: len(blob) * 2 // 3])
    elif damage == "flipped":
        entry.write_bytes(blob[:-20] + bytes([blob[-20] ^ 0x40]) + blob[-19:])
    elif damage == "trailing":
        entry.write_bytes(blob + b"\0")
    elif damage == "not-a-keeper":
        import pickle

        from tdflow.core.cache_dir import entry_mac

        payload = pickle.dumps({"not": "a keeper"})
        head_len = cache_entry.HEAD.unpack_from(blob, len(cache_entry.MAGIC))[0]
        header = blob[len(cache_entry.MAGIC) + cache_entry.HEAD.size:][:head_len]
        entry.write_bytes(cache_entry.MAGIC + cache_entry.HEAD.pack(head_len, len(payload),
                                                         entry_mac(header, payload))
                          + header + payload)
    elif damage == "directory":
        entry.unlink()
        entry.mkdir()
    rk, b = load(main, [inc])
    assert b.calls == 1 and rk == good
    if damage != "directory":
        _, b = load(main, [inc])
        assert (b.calls, cache.last_event) == (0, "hit")


def test_disable_switch(cdir, project, monkeypatch):
    main, inc = project
    monkeypatch.setenv("TDFLOW_NO_CACHE", "1")
    for _ in range(2):
        _, b = load(main, [inc])
        assert (b.calls, cache.last_event) == (1, "disabled")
    assert entries(cdir) == []
    monkeypatch.setenv("TDFLOW_NO_CACHE", "0")
    load(main, [inc])
    assert cache.last_event == "miss"


def test_unwritable_cache_dir_still_builds(tmp_path, project, monkeypatch):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the cache dir should be")
    monkeypatch.setenv("TDFLOW_CACHE_DIR", str(blocker / "sub"))
    main, inc = project
    for _ in range(2):
        rk, b = load(main, [inc])
        assert b.calls == 1 and "F1" in rk


def test_build_errors_propagate_and_are_not_cached(cdir, project):
    main, inc = project

    def failing():
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        cache.load_or_build(main, [inc], [], failing)
    assert entries(cdir) == []


def test_file_edited_during_build_is_not_stored(cdir, project):
    main, inc = project
    inner = FakeBuild(main, [inc])

    def build():
        rk = inner()
        time.sleep(0.05)  # more than one tick of the kernel's coarse file-time clock
        (inc / "leaf.td").write_text("class Changed;\n")  # lands after the build read it
        return rk

    cache.load_or_build(main, [inc], [], build)
    assert cache.last_event == "uncacheable" and entries(cdir) == []


def test_entries_of_other_versions_are_pruned_once_unused(cdir, project, monkeypatch):
    main, inc = project
    load(main, [inc])
    folder = cdir / "records"
    old_unused = folder / "0123456789abcdef-deadbeef.rk"
    old_recent = folder / "fedcba9876543210-deadbeef.rk"
    dead_tmp = folder / ".tmp-x.rk"
    for p in (old_unused, old_recent, dead_tmp):
        p.write_bytes(b"x")
    long_ago = time.time() - cache.PRUNE_AFTER_S - 60
    os.utime(old_unused, (long_ago, long_ago))
    os.utime(dead_tmp, (long_ago, long_ago))
    (inc / "leaf.td").write_text("class Changed;\n")
    load(main, [inc])  # a store prunes
    assert not old_unused.exists() and not dead_tmp.exists()
    assert old_recent.exists()  # maybe another installed version still uses it
    assert len(list(folder.glob(cache_entry.code_fingerprint() + "-*"))) == 1


def test_cache_dir_defaults(monkeypatch, tmp_path):
    monkeypatch.delenv("TDFLOW_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "tdflow"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "tdflow"


def _hammer(args: tuple[str, str, str, int]) -> list[int]:
    cdir, main, inc, rounds = args
    os.environ["TDFLOW_CACHE_DIR"] = cdir
    sizes = []
    for i in range(rounds):
        if i % 3 == 0:
            for e in Path(cdir, "records").glob("*.rk"):
                try:
                    e.unlink()  # force rewrites that race with the other processes' reads
                except OSError:
                    pass
        rk, _ = load(Path(main), [Path(inc)])
        sizes.append(len(rk))
    return sizes


def test_concurrent_writers_and_readers_are_safe(cdir, project):
    main, inc = project
    ctx = multiprocessing.get_context("spawn" if os.name == "nt" else "fork")
    with ctx.Pool(4) as pool:
        results = pool.map(_hammer, [(str(cdir), str(main), str(inc), 15)] * 4)
    assert all(n == 3 for sizes in results for n in sizes)
    leftovers = [p.name for p in entries(cdir) if not p.name.endswith(".rk") or p.name[0] == "."]
    assert leftovers == []
    _, b = load(main, [inc])
    assert b.calls == 0


# -- with the real parser ----------------------------------------------------------------------


def _real_parser():
    from tdflow.tdparser import parse_file, to_json

    return parse_file, to_json


def test_real_parse_file_hits_the_cache(cdir, tmp_path):
    parse_file, to_json = _real_parser()
    (tmp_path / "inc.td").write_text("class C<int n = 2> { int v = n; list<int> l = [n, 1]; }\n")
    main = tmp_path / "main.td"
    main.write_text('include "inc.td"\ndef A : C;\ndef B : C<5>;\n#ifdef X\ndef D;\n#endif\n')
    cold = parse_file(main, include_dirs=[tmp_path])
    assert cache.last_event == "miss"
    warm = parse_file(main, include_dirs=[tmp_path])
    assert cache.last_event == "hit"
    assert to_json(warm) == to_json(cold)
    with_x = parse_file(main, include_dirs=[tmp_path], defines=["X"])
    assert cache.last_event == "miss" and "D" in with_x and "D" not in warm
    (tmp_path / "inc.td").write_text("class C<int n = 3> { int v = n; list<int> l = [n, 1]; }\n")
    edited = parse_file(main, include_dirs=[tmp_path])
    assert cache.last_event == "miss" and edited["A"]["v"] == 3
    before = [(p, p.stat().st_mtime_ns) for p in entries(cdir)]
    uncached = parse_file(main, include_dirs=[tmp_path], use_cache=False)
    assert to_json(uncached) == to_json(edited)
    assert [(p, p.stat().st_mtime_ns) for p in entries(cdir)] == before  # nothing written


# -- derived outputs (load_or_render) ------------------------------------------------------------


def test_rendered_output_is_cached_with_the_keeper(cdir, project, monkeypatch):
    main, inc = project
    renders = []

    def render(rk):
        renders.append(1)
        return f"{len(rk)} defs".encode()

    def run(kind="k1"):
        b = FakeBuild(main, [inc])
        out = cache.load_or_render(main, [inc], [], b, render, kind)
        wait_for_writes()  # a miss stores its entries in a forked child
        return out, b

    data, b = run()
    assert (data, b.calls, len(renders), cache.last_event) == (b"3 defs", 1, 1, "miss")
    data, b = run()
    assert (data, b.calls, len(renders), cache.last_event) == (b"3 defs", 0, 1, "hit")
    with monkeypatch.context() as m:
        m.setattr(cache, "_unpickle", lambda p: pytest.fail("a text hit unpickles"))
        run()
    # another kind renders again from the cached keeper, without building
    data, b = run("k2")
    assert (b.calls, len(renders)) == (0, 2)
    # the same validity rules: an edited file invalidates the output too
    (inc / "leaf.td").write_text('include "more.td"\n')
    (inc / "more.td").write_text("class More;\n")
    data, b = run()
    assert (data, b.calls, len(renders)) == (b"4 defs", 1, 3)
    monkeypatch.setenv("TDFLOW_NO_CACHE", "1")
    data, b = run()
    assert (b.calls, len(renders), cache.last_event) == (1, 4, "disabled")


def test_a_rendered_miss_is_stored_after_the_caller_has_its_output(cdir, project, monkeypatch):
    main, inc = project
    slow_store = cache._store

    def store(*a):
        time.sleep(1.5)  # in the forked child: the caller must not wait for it
        return slow_store(*a)

    monkeypatch.setattr(cache, "_store", store)
    import threading

    detached = threading.active_count() == 1  # else run_detached writes in the caller
    data = cache.load_or_render(main, [inc], [], FakeBuild(main, [inc]), lambda rk: b"out", "k")
    if detached:  # (a whole test session has engine threads: the in-place branch runs)
        # the child sleeps before it writes: had the caller waited, the entries would be there
        assert len(entries(cdir)) == 0
    else:
        assert len(entries(cdir)) == 2
    assert (data, cache.last_event) == (b"out", "miss")
    wait_for_writes()
    assert len(entries(cdir)) == 2  # the keeper and the output
    b = FakeBuild(main, [inc])
    assert cache.load_or_render(main, [inc], [], b, lambda rk: b"new", "k") == b"out"
    assert (b.calls, cache.last_event) == (0, "hit")
    # in the foreground the entry is there when the call returns, with nothing to wait for
    cache.load_or_render(main, [inc], [], FakeBuild(main, [inc]), lambda rk: b"out", "k2",
                         background=False)
    assert len(entries(cdir)) == 3


def test_a_detached_write_runs_in_a_child_the_caller_does_not_wait_for(tmp_path):
    """run_detached in a fresh, single-threaded interpreter forks: it returns before the
    write is done, and wait_for_writes waits for it."""
    import subprocess
    import sys

    script = (
        "import pathlib, sys, time\n"
        "from tdflow.tdparser.cache_bg import run_detached, wait_for_writes\n"
        "p = pathlib.Path(sys.argv[1])\n"
        "assert run_detached(lambda: (time.sleep(1.5), p.write_text('x')))\n"
        "assert not p.exists()  # returned before the child's write: it did not wait\n"
        "wait_for_writes()\n"
        "assert p.read_text() == 'x'\n")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_rendered_output_of_an_uncacheable_build_is_not_stored(cdir, project):
    main, inc = project
    inner = FakeBuild(main, [inc])

    def build():
        rk = inner()
        time.sleep(0.05)
        (inc / "leaf.td").write_text("class Changed;\n")
        return rk

    cache.load_or_render(main, [inc], [], build, lambda rk: b"x", "k")
    wait_for_writes()
    assert entries(cdir) == []
