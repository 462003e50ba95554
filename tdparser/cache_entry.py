"""The read side of the record cache (:mod:`.cache`): an entry's key, name and validity check.

Kept apart from the writer so that a warm ``tdflow tblgen`` (``tdflow.commands.tblgen_warm``)
can answer from an entry importing nothing else of the parser: this module needs only the
standard library and :mod:`tdflow.core.cache_dir`'s checks. What makes an entry valid is
explained in :mod:`.cache`.

>>> key = Key(Path("/tmp"), "ops.td", ["include"], ["GPU"])
>>> key.path.name.startswith(code_fingerprint() + "-"), key.path.suffix
(True, '.rk')
"""

from __future__ import annotations

import hashlib
import marshal
import os
import struct
import time
from pathlib import Path

from tdflow.core.cache_dir import mac_ok, read_owned, warn_rejected

FORMAT = 2  # 2: a MAC (cache_dir.entry_mac) instead of a crc32
MAGIC = b"TDFRK%d\n" % FORMAT
RACY_NS = 2_000_000_000  # covers 2 s timestamp granularity (FAT) as well as ext4's ticks
HEAD = struct.Struct("<QQ32s")  # header length, payload length, MAC of header + payload


class Key:
    """One configuration: its key text and its entry's path (``kind`` names a derived output).

    >>> Key(Path("/c"), "/a/x.td", [], []).main
    '/a/x.td'
    """

    def __init__(self, folder: Path, main_path, include_dirs, defines, kind: str = ""):
        self.main = os.path.abspath(main_path)
        self.incs = tuple(os.path.abspath(d) for d in include_dirs)
        defs = tuple(sorted(set(defines)))
        # The working directory is part of the configuration because `include "x.td"` is
        # looked up relative to it first (as llvm-tblgen does), before the include dirs.
        self.cwd = os.getcwd()
        self.text = repr((FORMAT, code_fingerprint(), self.main, self.incs, defs, self.cwd,
                          kind))
        # The name starts with the parser's fingerprint so that entries of other versions can
        # be recognised (and pruned once unused) without opening them.
        digest = hashlib.sha256(self.text.encode()).hexdigest()[:32]
        self.path = folder / f"{code_fingerprint()}-{digest}.rk"


def read_entry(key: Key) -> tuple[memoryview, list, tuple, bool] | None:
    """(payload, files, absent, refreshed) of a valid entry, else ``None``.

    ``files`` carries fresh stats when ``refreshed`` (the caller should rewrite the entry).

    >>> read_entry(Key(Path("/nonexistent"), "x.td", [], [])) is None
    True
    """
    blob = read_owned(key.path)
    if blob is None:
        return None
    try:
        if not blob.startswith(MAGIC):
            return None
        pos = len(MAGIC)
        head_len, payload_len, mac = HEAD.unpack_from(blob, pos)
        pos += HEAD.size
        body = memoryview(blob)[pos:]
        if len(body) != head_len + payload_len:
            return None  # truncated or trailing junk
        if not mac_ok(mac, body):
            # not written by tdflow with this cache dir's key: edited, planted or copied in
            warn_rejected(key.path, "its content is not what tdflow wrote (MAC mismatch)")
            return None
        header = marshal.loads(body[:head_len])
        payload = body[head_len:]
        stored_key, written_ns, files, absent = header
        if stored_key != key.text:
            return None  # hash collision on the entry name, or a foreign file
        refreshed = check_files(files, written_ns)
        if refreshed is None:
            return None
        if any(os.path.lexists(p) for p in absent):
            return None
        if not refreshed:
            _mark_used(key.path)
        return payload, (refreshed or list(files)), tuple(absent), bool(refreshed)
    except Exception:  # noqa: BLE001 - any damage to an entry just means "rebuild"
        return None


def check_files(files, written_ns: int) -> list | None:
    """``None`` if a file's content changed; else ``[]``, or every file's new (stat, hash) when a
    stat had changed (so the entry should be rewritten).

    >>> check_files([("/nonexistent/x.td", 1, 0, 0, 0, b"")], 0) is None
    True
    """
    changed = False
    now = time.time_ns()
    fresh: list = []
    for path, size, mtime, ctime, ino, digest in files:
        try:
            st = os.stat(path)
        except OSError:
            return None
        if st.st_size != size:
            return None
        same_stat = st.st_mtime_ns == mtime and st.st_ctime_ns == ctime and st.st_ino == ino
        racy = max(st.st_mtime_ns, st.st_ctime_ns) + RACY_NS >= written_ns
        if not same_stat or racy:
            got = stat_and_hash(path)
            if got is None or got[4] != digest:
                return None
            # Rewrite on a stat change, or once the file is no longer racy, so that later loads
            # take the fast path again.
            if not same_stat or max(st.st_mtime_ns, st.st_ctime_ns) + RACY_NS < now:
                changed = True
            fresh.append((path, *got))
        else:
            fresh.append((path, size, mtime, ctime, ino, digest))
    return fresh if changed else []


def stat_and_hash(path: str) -> tuple[int, int, int, int, bytes] | None:
    """(size, mtime_ns, ctime_ns, inode, sha256) with the stat taken around the read, or
    ``None`` if the file changed while it was read.

    >>> stat_and_hash("/nonexistent/x.td") is None
    True
    """
    try:
        with open(path, "rb") as fh:
            before = os.fstat(fh.fileno())
            data = fh.read()
            after = os.fstat(fh.fileno())
    except OSError:
        return None
    if (before.st_mtime_ns, before.st_size) != (after.st_mtime_ns, after.st_size):
        return None
    if len(data) != after.st_size:
        return None
    return (after.st_size, after.st_mtime_ns, after.st_ctime_ns, after.st_ino,
            hashlib.sha256(data).digest())


def _mark_used(entry: Path) -> None:
    """Bump the entry's mtime (at most daily) so pruning sees it as in use."""
    try:
        if os.stat(entry).st_mtime < time.time() - 86400:
            os.utime(entry)
    except OSError:
        pass


_fingerprint: str | None = None


def code_fingerprint() -> str:
    """tdflow's version plus (name, size, mtime) of the parser's sources, so that editing the
    parser in a development checkout invalidates entries its older self wrote.

    >>> len(code_fingerprint())
    16
    """
    global _fingerprint
    if _fingerprint is None:
        try:
            from tdflow import __version__ as version
        except Exception:  # noqa: BLE001
            version = "unknown"
        here = os.path.dirname(os.path.realpath(__file__))
        parts = [version]
        try:
            names = os.listdir(here)
        except OSError:
            names = []
        # the sources, then the grammar, each sorted by name
        for name in sorted(n for n in names if n.endswith(".py")) + \
                sorted(n for n in names if n.endswith(".lark")):
            try:
                st = os.stat(os.path.join(here, name))
                parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
            except OSError:
                pass
        _fingerprint = hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]
    return _fingerprint
