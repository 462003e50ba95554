"""On-disk cache of resolved record keepers.

Parsing and resolving MLIR's ``.td`` files takes seconds in Python; loading the result back takes
milliseconds. :func:`load_or_build` is what :func:`tdflow.tdparser.parse_file` calls::

    rk = load_or_build("ops.td", ["include"], ["GPU"], build=lambda: uncached_parse(...))

**What is valid.** An entry answers for one *configuration* (absolute main path, include dirs in
order, the set of defines, the working directory, the tdflow version and a fingerprint of the
parser's own source files) and records every file the build read with the SHA-256 of its
content. A hit requires every recorded file to still have that content, so the effective key is
the content hash of every file read, the defines and the version. Editing any included file,
changing a ``-D`` or upgrading tdflow (or editing the parser in a checkout) rebuilds.

**Why it is fast.** Hashing a few hundred kilobytes costs about a millisecond, but it is still
skipped when a file's ``stat`` is unchanged: next to each hash the entry keeps the file's
(size, mtime_ns, ctime_ns, inode) as seen when the hash was taken. If they all match, the content
is taken to be the hashed one (as git and make do); if any differs (a ``touch``, a checkout, an
editor replacing the file) the content is hashed again and only a different *hash* is a miss. A
file whose timestamps are within :data:`RACY_NS` of the moment the entry was written is always
re-hashed, since a same-size edit inside one timestamp tick would not change its ``stat``
("racy git"). After the build, a file whose mtime is later than the start of the build was edited
while being parsed, so nothing is stored. The payload is the keeper pickled with protocol 5; on the
records MLIR produces that loads 2-3x faster than ``marshal`` of a tuple encoding followed by
rebuilding the records in Python (measured on SPIRVOps.td's 3442 defs: 22 ms vs 61 ms). A CRC-32 of the payload
catches bit rot before unpickling.

**Derived outputs.** :func:`load_or_render` caches a text rendered from the records (the
``--dump-json`` document of ``tdflow tblgen``) in an entry of its own with the same header, so a
warm command-line call reads bytes back without importing the parser or unpickling anything.

**Shadowing.** ``include "x.td"`` is looked up relative to the working directory, then in each
include dir, then next to the including file. A file created in a place searched *before* the
one a file was found in would change what ``include`` resolves to without changing any file
read; the entry therefore lists those earlier candidate paths, which must still be absent for a
hit, and the working directory is part of the configuration.

**Robustness.** Writes go to a temporary file in the cache dir, then ``os.replace``: readers see
the old entry or the new one, never half of one, and concurrent writers of the same entry simply
race to the last rename. A truncated, corrupt, foreign or stale entry is a miss and is rebuilt;
nothing in here raises except the build itself (whose ``TdError`` propagates, uncached). An
unwritable cache dir just means no caching. Entry names start with the parser's fingerprint; a
store removes entries of other versions that have not been used for a week, so a development
checkout (new fingerprint at every edit of the parser) does not fill the disk.

**Safety.** The cache dir and its policy are :mod:`.cache_dir`'s: ``TDFLOW_CACHE_DIR`` (else
``$XDG_CACHE_HOME/tdflow``, else ``~/.cache/tdflow``), created 0700; ``TDFLOW_NO_CACHE=1`` (or the
CLI's ``--no-cache``) disables reading and writing; a dir owned by someone else or writable by
the group or others is refused with a warning and tdflow runs uncached. The payload is unpickled
by an unpickler that can build only the record classes in :data:`ALLOWED` (nothing that could
run code); an entry naming anything else is a miss and is rebuilt.
"""

from __future__ import annotations

import marshal
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from tdflow.core.cache_dir import (
    atomic_write,
    cache_dir,
    cache_disabled,
    entry_mac,
    restricted_loads,
    usable_dir,
)
from tdflow.core.gc_pause import gc_paused

from . import cache_entry
from .cache_entry import HEAD, MAGIC, code_fingerprint, read_entry
from .cache_entry import Key as _Key
from .records import RecordKeeper

PRUNE_AFTER_S = 7 * 24 * 3600  # entries of other parser versions unused this long are removed

#: Every class a pickled :class:`RecordKeeper` may name (field values are otherwise plain
#: ``None``/``int``/``str``/``list``/``tuple``/``dict``, which a pickle builds without naming
#: a class). ``tests/tdparser/test_cache_security.py`` checks this against real keepers.
ALLOWED = {
    "tdflow.tdparser.records": frozenset(
        {"RecordKeeper", "Record", "Loc", "Code", "Bits", "Dag", "DefRef", "Unresolved"}),
}

#: What the last :func:`load_or_build` call did: ``"hit"``, ``"miss"``, ``"disabled"`` or
#: ``"uncacheable"`` (built, but nothing could be stored). For tests and benchmarks.
last_event = ""


# cache_dir() and cache_disabled() live in .cache_dir (one policy for every cache); callers
# that import them from here keep working.


def clear_cache() -> int:
    """Delete every cache entry (records, rendered outputs, the grammar's table); returns how
    many files were removed.

    >>> clear_cache()  # doctest: +SKIP
    3
    """
    from .grammar_cache import NAME

    removed = 0
    folder = cache_dir() / "records"
    grammar = cache_dir() / NAME
    for p in [*(folder.glob("*") if folder.is_dir() else ()), *([grammar] if grammar.exists() else [])]:
        try:
            p.unlink()
            removed += 1
        except OSError:
            pass
    return removed


def load_or_build(
    main_path: str | os.PathLike,
    include_dirs: Iterable[str | os.PathLike],
    defines: Iterable[str],
    build: Callable[[], RecordKeeper],
) -> RecordKeeper:
    """The cached keeper for this configuration if still valid, else ``build()`` (and store it).

    ``build`` does an uncached parse and returns a keeper whose ``files`` lists every file read.

    >>> rk = load_or_build("ops.td", [], [], build=lambda: RecordKeeper())  # doctest: +SKIP
    """
    global last_event
    folder = _records_dir()
    if folder is None:
        last_event = "disabled" if cache_disabled() else "uncacheable"
        return build()
    rk, _ = _keeper(_Key(folder, main_path, include_dirs, defines), build)
    return rk


def load_or_render(
    main_path: str | os.PathLike,
    include_dirs: Iterable[str | os.PathLike],
    defines: Iterable[str],
    build: Callable[[], RecordKeeper],
    render: Callable[[RecordKeeper], bytes],
    kind: str,
    background: bool = True,
) -> bytes:
    """``render(keeper)``, itself cached next to the keeper under the name ``kind``.

    For outputs derived from the records alone, such as ``tdflow tblgen --dump-json``'s text: a
    hit returns the stored bytes without unpickling anything, under exactly the validity rules
    of the keeper (the same files, hashes and shadowing checks). ``kind`` must change whenever
    ``render`` would produce different bytes (name a format version in it); the parser's own
    fingerprint is already part of the key.

    With ``background`` (the default), a miss stores the keeper and the output in a forked child
    (:func:`.cache_bg.run_detached`) after rendering, so filling the cache costs the caller
    (a ``tdflow tblgen`` process) nothing; the entries appear once the child is done.
    """
    global last_event
    folder = _records_dir()
    if folder is None:
        last_event = "disabled" if cache_disabled() else "uncacheable"
        return render(build())
    key = _Key(folder, main_path, include_dirs, defines)
    derived = _Key(folder, main_path, include_dirs, defines, kind)
    got = read_entry(derived)
    if got is not None:
        payload, files, absent, refreshed = got
        data = bytes(payload)
        if refreshed:
            _write(derived, data, files, absent)
        last_event = "hit"
        return data
    if background and read_entry(key) is None:
        start_ns = time.time_ns()
        rk = build()
        data = render(rk)
        from .cache_bg import run_detached

        run_detached(lambda: _store_rendered(key, derived, rk, data, start_ns), hold=rk)
        last_event = "miss"
        return data
    rk, header = _keeper(key, build)
    event = last_event
    data = render(rk)
    if header is not None:
        _write(derived, data, *header)
    last_event = event
    return data


def _records_dir() -> Path | None:
    """The entries' folder, or ``None`` when caching is off or the cache dir is refused."""
    return usable_dir("records")


def _keeper(key: _Key, build: Callable[[], RecordKeeper]) -> tuple[RecordKeeper, tuple | None]:
    """The keeper (cached or built) and the (files, absent) it is valid for, if stored."""
    global last_event
    got = read_entry(key)
    if got is not None:
        payload, files, absent, refreshed = got
        rk = _unpickle(payload)
        if rk is not None:
            if refreshed:
                # Some stat changed but no content: store the new stats so that the next load
                # takes the fast path again.
                _write(key, bytes(payload), files, absent)
            last_event = "hit"
            return rk, (files, absent)
    start_ns = time.time_ns()
    rk = build()
    header = _store(key, rk, start_ns)
    if header is not None:
        _prune(key.path.parent)
    last_event = "miss" if header is not None else "uncacheable"
    return rk, header


# -- reading -----------------------------------------------------------------------------------


def _unpickle(payload: memoryview) -> RecordKeeper | None:
    # unpickling allocates many small objects; the cyclic GC only slows it
    with gc_paused():
        try:
            # Never pickle.loads: a planted entry could name os.system; an entry that names
            # anything but the record classes is a miss (and is rebuilt).
            rk = restricted_loads(payload, ALLOWED)
        except Exception:  # noqa: BLE001 - a payload that does not unpickle is a miss
            return None
    return rk if isinstance(rk, RecordKeeper) else None


# -- writing -----------------------------------------------------------------------------------


def _store(key: _Key, rk: RecordKeeper, start_ns: int) -> tuple[list, tuple] | None:
    """Store ``rk``; returns the (files, absent) it was stored as valid for, or ``None``."""
    try:
        paths = list(dict.fromkeys(os.path.abspath(f) for f in rk.files)) or [key.main]
        files = []
        for p in paths:
            got = cache_entry.stat_and_hash(p)
            if got is None or got[1] > start_ns:
                return None  # vanished, or edited while we parsed it: the build may be stale
            files.append((p, *got))
        absent = tuple(_shadow_candidates(paths, key.main, (key.cwd, *key.incs)))
        import pickle  # here: a warm command reads entries, it never writes one (start-up)

        payload = pickle.dumps(rk, protocol=5)
    except Exception:  # noqa: BLE001 - an unpicklable keeper is simply not cached
        return None
    return (files, absent) if _write(key, payload, files, absent) else None


def _store_rendered(key: _Key, derived: _Key, rk: RecordKeeper, data: bytes,
                    start_ns: int) -> None:
    """Store the keeper and its rendered output (the background half of a miss)."""
    header = _store(key, rk, start_ns)
    if header is not None:
        _write(derived, data, *header)
        _prune(key.path.parent)


def _prune(folder: Path) -> None:
    """Remove entries written by other versions of the parser and unused for
    :data:`PRUNE_AFTER_S` (a development checkout changes its fingerprint at every edit), and
    temporary files left by writers that died."""
    mine = code_fingerprint() + "-"
    cutoff = time.time() - PRUNE_AFTER_S
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for n in names:
        if n.startswith(mine):
            continue
        p = folder / n
        try:
            if p.stat().st_mtime < cutoff:
                p.unlink()
        except OSError:
            pass


def _write(key: _Key, payload: bytes, files: list, absent: tuple) -> bool:
    entry = key.path
    header = marshal.dumps((key.text, time.time_ns(), tuple(files), tuple(absent)))
    mac = entry_mac(header, payload)
    if mac is None:
        return False
    blob = b"".join((MAGIC, HEAD.pack(len(header), len(payload), mac), header, payload))
    # The folder was checked (and created 0700) by usable_dir() when the key was made.
    return atomic_write(entry, blob)


def _shadow_candidates(paths: list[str], main: str, incs: tuple) -> list[str]:
    """Paths that, if created, would shadow a file found via a later search directory.

    ``incs`` is the search order (working directory first); the main file's folder stands in
    for "next to the including file"."""
    search = [*incs, os.path.dirname(main)]
    out: list[str] = []
    for p in paths[1:] if paths and paths[0] == main else paths:
        for i, d in enumerate(search):
            prefix = d.rstrip(os.sep) + os.sep
            if not p.startswith(prefix):
                continue
            rel = p[len(prefix):]
            for earlier in search[:i]:
                cand = os.path.join(earlier, rel)
                if cand != p and not os.path.lexists(cand):
                    out.append(cand)
            # no break: with nested search dirs (the working directory above an include dir)
            # the include name is ambiguous, so every reading is guarded
    return list(dict.fromkeys(out))
