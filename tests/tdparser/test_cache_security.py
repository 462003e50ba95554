"""Caches that cannot run code: planted pickles, the cache dir's owner and mode, the off switches.

Every cache tdflow keeps (records in ``records/``, the grammar's LALR table in
``tablegen-lark.cache``) lives under ``$TDFLOW_CACHE_DIR``; a planted entry must be a miss that
is rebuilt, never code that runs; an unsafe cache dir is refused with one warning; and
``TDFLOW_NO_CACHE=1`` / ``--no-cache`` write nothing anywhere.
"""

from __future__ import annotations

import io
import logging
import os
import pickle
import shlex
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tdflow.tdparser import cache, cache_entry, grammar_cache, parse_file, parse_string
from tdflow.tdparser import parser as tdparser_parser
from tdflow.tdparser.records import Record, RecordKeeper

from tdflow.core import cache_dir

ROOT = Path(__file__).resolve().parents[2]
TD = 'class C<int n> { int v = n; }\ndef A : C<1>;\ndef B : C<2>;\n'


class Evil:
    """Unpickling this runs ``touch MARKER`` (what a planted cache entry would do)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, ("touch " + shlex.quote(str(self.marker)),))


@pytest.fixture
def cdir(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("TDFLOW_CACHE_DIR", str(d))
    monkeypatch.delenv("TDFLOW_NO_CACHE", raising=False)
    monkeypatch.setattr(cache_dir, "_warned", set())
    monkeypatch.setattr(cache_dir, "_disabled", False)
    return d


@pytest.fixture
def td(tmp_path) -> Path:
    p = tmp_path / "src" / "a.td"
    p.parent.mkdir()
    p.write_text(TD)
    return p


@pytest.fixture
def fresh_parser(monkeypatch):
    """Make the next parse build (or load) the Lark parser again, as a new process would."""
    monkeypatch.setattr(tdparser_parser, "_PARSER", None)
    monkeypatch.setattr(tdparser_parser, "_DRIVER", None)


@pytest.fixture
def no_shipped_table(monkeypatch, tmp_path):
    """As if the package shipped no LALR table (or one for another grammar or Lark): the
    grammar cache in the cache dir is what the parser comes from."""
    monkeypatch.setattr(tdparser_parser, "SHIPPED", str(tmp_path / "no-such-table.json"))


def _values(rk) -> dict:
    return {name: rec.fields["v"] for name, rec in rk.defs.items()}


# -- record cache: planted pickles -------------------------------------------------------------


def _replace_payload(entry: Path, payload: bytes, *, key_known: bool = True) -> None:
    """Swap an entry's payload, keeping a valid header and, with ``key_known``, a valid MAC (as
    if the attacker had the cache dir's key): only the unpickler stands between the planted
    bytes and code. Without it the MAC is made with another key."""
    import hashlib
    import hmac

    from tdflow.core.cache_dir import entry_mac

    blob = entry.read_bytes()
    pos = len(cache_entry.MAGIC)
    head_len, _, _ = cache_entry.HEAD.unpack_from(blob, pos)
    header = blob[pos + cache_entry.HEAD.size: pos + cache_entry.HEAD.size + head_len]
    mac = (entry_mac(header, payload) if key_known
           else hmac.new(b"k" * 32, header + payload, hashlib.sha256).digest())
    entry.write_bytes(cache_entry.MAGIC + cache_entry.HEAD.pack(head_len, len(payload), mac)
                      + header + payload)


def test_an_entry_without_the_dirs_mac_is_never_unpickled(cdir, td, tmp_path, monkeypatch):
    """Issue 24: an entry tdflow did not write with this cache dir's key (planted, copied from
    another machine) is a miss before any of its bytes are unpickled."""
    marker = tmp_path / "PWNED"
    assert _values(parse_file(td)) == {"A": 1, "B": 2}
    (entry,) = (cdir / "records").glob("*.rk")
    _replace_payload(entry, pickle.dumps(Evil(marker), protocol=5), key_known=False)
    unpickled = []
    real = cache.restricted_loads
    monkeypatch.setattr(cache, "restricted_loads", lambda *a: unpickled.append(1) or real(*a))
    assert _values(parse_file(td)) == {"A": 1, "B": 2} and cache.last_event == "miss"
    assert not marker.exists() and unpickled == []


@pytest.mark.parametrize("shape", ["bare", "nested"])
def test_planted_record_entry_does_not_run_and_is_rebuilt(cdir, td, tmp_path, shape):
    marker = tmp_path / "PWNED"
    assert _values(parse_file(td)) == {"A": 1, "B": 2} and cache.last_event == "miss"
    (entry,) = (cdir / "records").glob("*.rk")
    evil: object = Evil(marker)
    if shape == "nested":  # an allowed top-level class carrying the payload in a field
        rk = RecordKeeper()
        rk.add_def(Record("A", fields={"v": evil}))
        evil = rk
    _replace_payload(entry, pickle.dumps(evil, protocol=5))

    assert _values(parse_file(td)) == {"A": 1, "B": 2}
    assert not marker.exists()
    assert cache.last_event == "miss"  # the planted entry was not used ...
    assert _values(parse_file(td)) == {"A": 1, "B": 2}
    assert cache.last_event == "hit"  # ... and was rebuilt into one that loads
    assert b"system" not in entry.read_bytes()


def test_restricted_unpickler_refuses_dotted_and_foreign_names():
    allowed = cache.ALLOWED
    for module, name in [("tdflow.tdparser.records", "Record.__init__"),
                         ("tdflow.tdparser.records", "dataclass"), ("builtins", "eval"),
                         ("os", "system"), ("tdflow.tdparser.cache", "pickle")]:
        data = (b"\x80\x04\x8c" + bytes([len(module)]) + module.encode()
                + b"\x8c" + bytes([len(name)]) + name.encode() + b"\x93.")
        with pytest.raises(pickle.UnpicklingError, match="not allowed"):
            cache_dir.restricted_loads(data, allowed)


def test_allow_list_covers_real_keepers(cdir, mlir_include_or_none):
    """Every class a real keeper pickles is in cache.ALLOWED (else every load would miss)."""
    seen: set[tuple[str, str]] = set()

    class Recorder(pickle.Unpickler):
        def find_class(self, module, name):
            seen.add((module, name))
            return super().find_class(module, name)

    keepers = [parse_file(ROOT / "ops.td", [ROOT / "dialect" / "include"], use_cache=False)]
    if mlir_include_or_none is not None:
        keepers.append(parse_file(mlir_include_or_none / "mlir/Dialect/Arith/IR/ArithOps.td",
                                  [mlir_include_or_none], use_cache=False))
    for rk in keepers:
        Recorder(io.BytesIO(pickle.dumps(rk, protocol=5))).load()
    assert seen and all(name in cache.ALLOWED.get(mod, ()) for mod, name in seen), seen


@pytest.fixture
def mlir_include_or_none():
    from tdflow.tdparser.llvm_tools import mlir_include_dir

    return mlir_include_dir()


# -- grammar cache: planted pickles ------------------------------------------------------------


def test_grammar_cache_lives_in_the_cache_dir(cdir, fresh_parser, no_shipped_table):
    assert len(parse_string(TD, "a.td").defs) == 2
    path = cdir / grammar_cache.NAME
    assert path.is_file() and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert tdparser_parser._cache_path() == path


@pytest.mark.parametrize("form", ["lark", "tdflow"])
def test_planted_grammar_cache_does_not_run_and_is_rebuilt(cdir, tmp_path, fresh_parser,
                                                           monkeypatch, form, no_shipped_table):
    marker = tmp_path / "PWNED"
    path = cdir / grammar_cache.NAME
    parse_string(TD, "a.td")  # a valid entry, for its header
    head = path.read_bytes().split(b"\n", 2)
    if form == "lark":  # Lark's own cache= layout: hash line, then pickles it loads blindly
        planted = b"0" * 64 + b"\n" + pickle.dumps(Evil(marker))
    else:  # our layout with the right key: only the restricted unpickler is in the way
        planted = head[0] + b"\n" + head[1] + b"\n" + pickle.dumps(Evil(marker))
    path.write_bytes(planted)
    monkeypatch.setattr(tdparser_parser, "_PARSER", None)
    monkeypatch.setattr(tdparser_parser, "_DRIVER", None)

    rk = parse_string(TD, "a.td")
    assert _values(rk) == {"A": 1, "B": 2}
    assert not marker.exists()
    rebuilt = path.read_bytes()
    assert rebuilt != planted and b"system" not in rebuilt
    key = rebuilt.split(b"\n", 2)[1]
    assert grammar_cache._load(path, key, grammar_cache.Feed, None) is not None  # loads back


# -- the cache dir's mode and owner ------------------------------------------------------------


def test_cache_dir_is_created_private(tmp_path, td, monkeypatch, fresh_parser, no_shipped_table):
    root = tmp_path / "new" / "tdflow"
    monkeypatch.setenv("TDFLOW_CACHE_DIR", str(root))
    monkeypatch.delenv("TDFLOW_NO_CACHE", raising=False)
    old = os.umask(0)  # even with a permissive umask
    try:
        parse_file(td)
    finally:
        os.umask(old)
    for d in (root, root / "records"):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700, d
    assert list((root / "records").glob("*.rk"))
    assert (root / grammar_cache.NAME).is_file()


def _refused(d: Path, how: str, monkeypatch) -> None:
    d.mkdir(parents=True)
    if how == "group-writable":
        os.chmod(d, 0o770)
    elif how == "world-writable":
        os.chmod(d, 0o1777)
    elif hasattr(os, "geteuid") and os.geteuid() == 0:
        os.chown(d, 4242, -1)  # as root: really someone else's
    else:
        monkeypatch.setattr(cache_dir.os, "getuid", lambda: os.stat(d).st_uid + 1)


@pytest.mark.parametrize("how", ["group-writable", "world-writable", "foreign-owned"])
def test_unsafe_cache_dir_is_refused_with_one_warning(cdir, td, how, monkeypatch, caplog,
                                                      fresh_parser, no_shipped_table):
    _refused(cdir, how, monkeypatch)
    with caplog.at_level(logging.WARNING, logger="tdflow.cache"):
        for _ in range(3):
            assert _values(parse_file(td)) == {"A": 1, "B": 2}
        monkeypatch.setattr(tdparser_parser, "_PARSER", None)
        monkeypatch.setattr(tdparser_parser, "_DRIVER", None)
        parse_string(TD, "b.td")  # the grammar cache refuses it too
    warnings = [r for r in caplog.records if r.name == "tdflow.cache"]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    msg = warnings[0].getMessage()
    assert str(cdir) in msg and "uncached" in msg and "\n" not in msg
    assert cache.last_event == "uncacheable"
    assert list(cdir.iterdir()) == []  # nothing read from or written to it


def test_unsafe_records_subdir_is_refused(cdir, td, monkeypatch, caplog):
    (cdir / "records").mkdir(parents=True)
    os.chmod(cdir, 0o700)
    os.chmod(cdir / "records", 0o777)
    with caplog.at_level(logging.WARNING, logger="tdflow.cache"):
        parse_file(td)
    assert cache.last_event == "uncacheable"
    assert list((cdir / "records").iterdir()) == []
    assert any("records" in r.getMessage() for r in caplog.records)


# -- the off switches write nothing anywhere ---------------------------------------------------


def _run_cli(args: list[str], tmp_path: Path, env_extra: dict) -> tuple[Path, Path]:
    home, cdir = tmp_path / "home", tmp_path / "cachedir"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("TDFLOW_CACHE_DIR", "TDFLOW_NO_CACHE", "XDG_CACHE_HOME")}
    env.update(HOME=str(home), TDFLOW_CACHE_DIR=str(cdir), PYTHONDONTWRITEBYTECODE="1",
               **env_extra)
    proc = subprocess.run([sys.executable, "-m", "tdflow", *args], capture_output=True,
                          text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return home, cdir


def _tree(p: Path) -> list[str]:
    return sorted(str(x.relative_to(p)) for x in p.rglob("*")) if p.exists() else []


@pytest.mark.parametrize("switch", ["env", "flag"])
def test_no_cache_writes_nothing_anywhere(tmp_path, td, switch):
    args = ["tblgen", "--dump-json", str(td)]
    env = {}
    if switch == "env":
        env["TDFLOW_NO_CACHE"] = "1"
    else:
        args.append("--no-cache")
    home, cdir = _run_cli(args, tmp_path, env)
    assert _tree(home) == [] and not cdir.exists()


def test_no_cache_env_covers_dialect_commands(tmp_path):
    home, cdir = _run_cli(["gen-hooks", str(ROOT / "ops.td")], tmp_path, {"TDFLOW_NO_CACHE": "1"})
    assert _tree(home) == [] and not cdir.exists()


def test_caches_live_only_under_the_cache_dir(tmp_path, td):
    home, cdir = _run_cli(["tblgen", "--dump-json", str(td)], tmp_path, {})
    # The records are written by a child the command forks (cache_bg); it may outlive the
    # command by a little: wait for its entry (not a timing assertion: 60 s is a hang).
    for _ in range(600):
        names = _tree(cdir)
        if any(n.startswith("records/") for n in names):
            break
        time.sleep(0.1)
    assert _tree(home) == []
    # The grammar's table comes from the package (tablegen_lark.json): no grammar entry here
    # unless that table is for another grammar text.
    assert any(n.startswith("records/") for n in names) and grammar_cache.NAME not in names
    assert stat.S_IMODE(cdir.stat().st_mode) == 0o700
