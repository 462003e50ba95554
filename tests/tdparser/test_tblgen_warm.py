"""The warm path of ``tdflow tblgen`` (``tdflow.commands.tblgen_warm``): a cache hit answered
before the CLI is built, with the same bytes and the same reading of the command line."""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
import time

import pytest
from tdflow.tdparser import cache_entry

from tdflow.cli import build_parser
from tdflow.commands.tblgen_warm import parse_argv, run_cached

SOURCE = """\
class C<int n> { int v = n; string s = "x" # n; }
def a : C<1>;
def b : C<2> { let v = 7; }
#ifdef MORE
def c : C<3>;
#endif
"""

# What the warm path must not import on a hit: the argument parser, the record cache's
# writer (pickle) and the parser itself.
HEAVY = ("argparse", "pickle", "tdflow.tdparser.cache", "tdflow.tdparser.parser",
         "tdflow.tdparser.records", "tdflow.commands.tblgen")

TOKENS = ["a.td", "b.td", "-I", "inc", "-Ix", "-D", "GPU", "-DCPU", "-o", "out.json", "-oy",
          "--dump-json", "--print-records", "--no-cache", "-", "--", "-I=z", "--dump",
          "-h", "-Ia=b", "-x"]


def _argparse_reading(argv):
    """What the real parser makes of ``tdflow tblgen ARGV``, or None when it rejects it."""
    parser = build_parser("tblgen")
    try:
        ns = parser.parse_args(["tblgen", *argv])
    except SystemExit:
        return None
    if ns.no_cache:
        return "no-cache"
    return (ns.file, ns.include_dirs, ns.defines, ns.action, ns.output)


def test_parse_argv_reads_the_command_line_as_argparse_does(capsys):
    # Every form parse_argv accepts must mean what argparse makes of it; what it declines
    # goes to the full command, so only its answers are compared.
    rng = random.Random(23)
    lines = [list(p) for n in range(4) for p in itertools.permutations(TOKENS[:8], n)]
    lines += [rng.sample(TOKENS, rng.randint(1, 6)) for _ in range(3000)]
    accepted = 0
    for argv in lines:
        ours = parse_argv(argv)
        if ours is None:
            continue
        accepted += 1
        assert _argparse_reading(argv) == ours, argv
    capsys.readouterr()  # argparse's usage messages
    assert accepted > 300  # the common forms are taken


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("TDFLOW_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TDFLOW_NO_CACHE", raising=False)
    src = tmp_path / "x.td"
    src.write_text(SOURCE)
    # Past the cache's "racy" window (its ctime is now whatever utime sets), so that the entry
    # the first run writes is final: a hit then needs no re-hash and no rewrite.
    time.sleep(cache_entry.RACY_NS / 1e9 + 0.2)
    return src


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "tdflow", "tblgen", *args],
                          capture_output=True, cwd=cwd, timeout=120, env=dict(os.environ))


def _run_entry(*args, cwd):
    """``tdflow tblgen ARGS`` through tdflow.cli.entry in a fresh process; returns its stdout
    and the heavy modules it imported (None when it left with os._exit: after a miss whose
    cache writer it forked)."""
    code = ("import json, sys; sys.argv = ['tdflow', 'tblgen', *sys.argv[1:]]\n"
            "from tdflow.cli import entry\n"
            "rc = entry()\n"
            f"sys.stderr.write(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
            "raise SystemExit(rc)\n")
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, cwd=cwd,
                          timeout=120, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.decode().splitlines()
    return proc.stdout, (json.loads(lines[-1]) if lines else None)


def _until_hit(*args, cwd):
    """Run ``tdflow tblgen ARGS`` through entry() until the warm path answers it (the entry is
    written by a child after the first run's output; a run after that may still rewrite it
    once, with the source's settled timestamps); returns every output and the last imports."""
    outs = []
    for _ in range(120):  # up to ~30 s: the child writing the entry is slow on a loaded machine
        out, imported = _run_entry(*args, cwd=cwd)
        outs.append(out)
        if imported == []:  # None is a miss that left with os._exit, not a hit
            return outs, imported
        time.sleep(0.25)
    return outs, imported


@pytest.mark.parametrize("action", ["--dump-json", "--print-records"])
def test_a_hit_prints_the_same_bytes_without_the_parser(project, action):
    cold = _cli(action, "--no-cache", "-DMORE", str(project), cwd=project.parent)
    assert cold.returncode == 0 and b"x3" in cold.stdout  # def c, under -DMORE
    first, imported = _run_entry(action, "-DMORE", str(project), cwd=project.parent)
    assert first == cold.stdout
    assert imported is None or "tdflow.tdparser.parser" in imported  # a miss: parsed
    outs, imported = _until_hit(action, "-DMORE", str(project), cwd=project.parent)
    assert imported == [], "never answered by the warm path"
    assert all(out == cold.stdout for out in outs)


def test_a_hit_writes_the_output_file(project, monkeypatch):
    monkeypatch.chdir(project.parent)
    assert _until_hit("--dump-json", str(project), cwd=project.parent)[1] == []
    out = project.parent / "out.json"
    assert run_cached(["--dump-json", str(project), "-o", str(out)]) == 0
    cold = _cli("--dump-json", "--no-cache", str(project), cwd=project.parent)
    assert out.read_bytes() == cold.stdout
    # a different configuration is a miss: nothing written, the full command runs
    assert run_cached(["--dump-json", "-DMORE", str(project), "-o", str(out) + "2"]) is None
    assert not os.path.exists(str(out) + "2")


def test_an_edited_file_is_not_answered_from_the_cache(project, monkeypatch):
    monkeypatch.chdir(project.parent)
    assert _until_hit("--dump-json", str(project), cwd=project.parent)[1] == []
    assert run_cached(["--dump-json", str(project), "-o", "o.json"]) == 0
    project.write_text(SOURCE.replace("let v = 7", "let v = 8"))
    assert run_cached(["--dump-json", str(project), "-o", "o2.json"]) is None
    proc = _cli("--dump-json", str(project), cwd=project.parent)
    assert b'"v":8' in proc.stdout and b'"v":7' not in proc.stdout
