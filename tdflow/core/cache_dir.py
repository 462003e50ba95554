"""Where tdflow keeps its on-disk caches, whether it may, and how they are read back safely.

Every cache tdflow keeps (the record cache of :mod:`.cache`, the grammar cache of
:mod:`.grammar_cache`) lives under one directory and obeys one set of switches:

* the directory is ``$TDFLOW_CACHE_DIR``, else ``$XDG_CACHE_HOME/tdflow``, else
  ``~/.cache/tdflow``; tdflow creates it (and its sub-folders) with mode 0700;
* ``TDFLOW_NO_CACHE=1`` (or :func:`caches_disabled`, which the CLI's ``--no-cache`` uses) turns
  every cache off: nothing is read and nothing is written;
* a directory that is not owned by the current user, or that the group or others may write, is
  refused with a one-line warning (once per directory and process) and tdflow runs uncached,
  since whoever can write there could plant an entry;
* entries are read back with :func:`restricted_loads`, an unpickler that builds only the classes
  a cache names in its allow-list, so even a planted entry cannot run code; anything else is a
  miss and the entry is rebuilt (:func:`atomic_write`);
* every entry carries a MAC (:func:`entry_mac`: HMAC-SHA256 under a random key kept in the cache
  dir, ``.key``, mode 0600) over its bytes, checked before anything in it is used: an entry
  tdflow did not write here (edited, planted, restored from another machine or user) is a miss
  and is rebuilt, so a cache can never change a result or run code. Files are opened once,
  without following a symlink, and their owner and mode are checked on the opened file
  (:func:`read_owned`). The contract and the tests that hold it: ``docs/caches.md``.

>>> import tempfile
>>> from unittest import mock
>>> with mock.patch.dict(os.environ, TDFLOW_CACHE_DIR=tempfile.mkdtemp()):
...     oct(usable_dir("demo").stat().st_mode & 0o777)
'0o700'
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import io
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path

#: The allow-list type of :func:`restricted_loads`: module name -> class names in it.
AllowList = Mapping[str, frozenset[str]]

_disabled = 0  # > 0 inside caches_disabled(): the CLI's --no-cache
_warned: set[str] = set()  # directories already warned about in this process


def cache_dir() -> Path:
    """The cache directory: ``$TDFLOW_CACHE_DIR``, else the user cache dir (not created here).

    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, TDFLOW_CACHE_DIR="/tmp/x"):
    ...     str(cache_dir())
    '/tmp/x'
    """
    env = os.environ.get("TDFLOW_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "tdflow"


def cache_disabled() -> bool:
    """True when ``TDFLOW_NO_CACHE`` is set to anything but ``""``/``0``/``false``/``no``, or
    inside :func:`caches_disabled`.

    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, TDFLOW_NO_CACHE="1"):
    ...     cache_disabled()
    True
    """
    if _disabled:
        return True
    return os.environ.get("TDFLOW_NO_CACHE", "").strip().lower() not in ("", "0", "false", "no")


@contextlib.contextmanager
def caches_disabled() -> Iterator[None]:
    """Every on-disk cache is off inside the block (the CLI's ``--no-cache`` for one command).

    It does not touch ``os.environ``, so child processes are not affected, and it ends with the
    block, so one in-process command does not switch caching off for the rest of the process.

    >>> with caches_disabled():
    ...     cache_disabled()
    True
    """
    global _disabled
    _disabled += 1
    try:
        yield
    finally:
        _disabled -= 1


def usable_dir(*parts: str) -> Path | None:
    """``cache_dir()/parts...``, created 0700 if missing, or ``None`` when caching is off, a
    folder cannot be created, or one is refused (foreign owner, group/world-writable).

    >>> usable_dir("records")  # doctest: +SKIP
    PosixPath('/home/me/.cache/tdflow/records')
    """
    if cache_disabled():
        return None
    folder = cache_dir()
    if not _ensure_private(folder):
        return None
    for part in parts:
        folder = folder / part
        if not _ensure_private(folder):
            return None
    return folder


def _ensure_private(folder: Path) -> bool:
    missing = []
    parent = folder
    while not os.path.lexists(parent) and parent.parent != parent:
        missing.append(parent)
        parent = parent.parent
    # Every folder tdflow creates is private, the cache dir's parents included (Path.mkdir's
    # parents=True would make them with the umask's default mode).
    for new in reversed(missing):
        try:
            new.mkdir(mode=0o700)
            # mkdir's mode is masked by the umask, which may also remove our own rights; the
            # folder is new and ours, so no one else could have entered it in between.
            os.chmod(new, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return False  # unwritable place: just no caching, as before
    try:
        st = os.stat(folder)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        return False
    why = _not_private(st)
    if why is None:
        return True
    key = str(folder)
    if key not in _warned:
        _warned.add(key)
        # logging only on this rare path: importing it costs a cached CLI call several ms
        import logging

        logging.getLogger("tdflow.cache").warning(
            "tdflow: not using cache dir %s: %s; running uncached (fix its owner/mode, or set "
            "TDFLOW_CACHE_DIR to a private directory)", folder, why)
    return False


def _not_private(st: os.stat_result) -> str | None:
    """Why a file or folder with status ``st`` is not private to this user (another owner, or
    writable by its group or others), or ``None`` when it is."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    if uid is not None and st.st_uid != uid:
        return f"it is owned by uid {st.st_uid}, not by the current user (uid {uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"its group or other users may write to it (mode {stat.filemode(st.st_mode)})"
    return None


_unpickler = None


def _restricted_unpickler():
    """The unpickler class of :func:`restricted_loads`, made on first use: a warm
    ``tdflow tblgen`` reads its cached output without importing :mod:`pickle`."""
    global _unpickler
    if _unpickler is not None:
        return _unpickler
    import pickle

    class _RestrictedUnpickler(pickle.Unpickler):
        """An unpickler that can build only allow-listed classes (and never calls anything else).

        A pickle runs code only through the callables ``find_class`` hands it (``__reduce__``
        payloads name ``os.system`` and the like); with no callable outside the allow-list, the
        remaining opcodes can only build plain data."""

        def __init__(self, file, allowed: AllowList):
            super().__init__(file)
            self._allowed = allowed

        def find_class(self, module: str, name: str):
            # exact names only: find_class would otherwise follow dotted names ("A.__init__...")
            if name in self._allowed.get(module, ()):
                return super().find_class(module, name)
            raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a tdflow cache entry")

        def persistent_load(self, pid):
            raise pickle.UnpicklingError("persistent ids are not allowed in a tdflow cache entry")

    _unpickler = _RestrictedUnpickler
    return _unpickler


def restricted_loads(data: bytes | memoryview, allowed: AllowList):
    """Unpickle ``data``, allowing only the classes in ``allowed``; raises
    :class:`pickle.UnpicklingError` for anything else (callers treat that as a cache miss).

    >>> import pickle
    >>> restricted_loads(pickle.dumps({"a": (1, 2.0, b"x")}), {})
    {'a': (1, 2.0, b'x')}
    >>> restricted_loads(pickle.dumps(os.getcwd), {})
    Traceback (most recent call last):
    ...
    _pickle.UnpicklingError: posix.getcwd is not allowed in a tdflow cache entry
    """
    return _restricted_unpickler()(io.BytesIO(data), allowed).load()


def atomic_write(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` through a temporary file and a rename, so readers see the old
    content or the new, never a part; ``False`` if it could not be written.

    The temporary file is named ``.tmp-*`` (pruners may remove stale ones) and, as made by
    ``mkstemp``, readable by the owner only.

    >>> import tempfile
    >>> atomic_write(Path(tempfile.mkdtemp()) / "entry", b"data")
    True
    """
    import tempfile  # here: only writers pay for it (it imports shutil, random; start-up time)

    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=path.suffix, dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
        return True
    except OSError:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False


def read_owned(path: Path) -> bytes | None:
    """The bytes of ``path`` when it is a regular file, not a symlink, owned by the current
    user and not writable by its group or others, all checked on the opened file (no race
    between a check and the open); ``None`` otherwise or when it cannot be read.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "entry"
    >>> _ = p.write_bytes(b"data"); read_owned(p)
    b'data'
    >>> os.chmod(p, 0o666); read_owned(p) is None
    True
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or _not_private(st) is not None:
            return None
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read()
    except OSError:
        return None
    finally:
        os.close(fd)


KEY_NAME = ".key"
_keys: dict[str, bytes | None] = {}


def _secret() -> bytes | None:
    """This cache dir's MAC key (32 random bytes in ``.key``, mode 0600), made on first use;
    ``None`` when caching is off or the key cannot be had (then nothing is cached)."""
    if cache_disabled():
        return None
    root = cache_dir()
    known = _keys.get(str(root), b"")
    if known != b"":
        return known
    key = None
    if _ensure_private(root):
        path = root / KEY_NAME
        for _ in range(2):
            key = read_owned(path)
            if key is not None or os.path.lexists(path):
                break  # ours, or a file we must not trust (a symlink, another owner)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL |
                             getattr(os, "O_NOFOLLOW", 0), 0o600)
            except FileExistsError:
                continue  # another process made it first: read theirs
            except OSError:
                break
            new = os.urandom(32)
            with os.fdopen(fd, "wb") as fh:
                fh.write(new)
            key = new
            break
        if key is not None and len(key) != 32:
            key = None
        if key is None:
            _warn(str(path), "its MAC key is not a private 32-byte file tdflow made")
    _keys[str(root)] = key
    return key


def entry_mac(*parts: bytes | memoryview) -> bytes | None:
    """The MAC (32 bytes) a cache entry made of ``parts`` carries, or ``None`` when entries
    cannot be sealed (caching off, no key): then nothing is written.

    >>> import tempfile
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, TDFLOW_CACHE_DIR=tempfile.mkdtemp()):
    ...     mac = entry_mac(b"head", b"body"); mac_ok(mac, b"head", b"body"), mac_ok(mac, b"x")
    (True, False)
    """
    key = _secret()
    if key is None:
        return None
    h = hmac.new(key, digestmod=hashlib.sha256)
    for part in parts:
        h.update(part)
    return h.digest()


def mac_ok(mac: bytes | memoryview, *parts: bytes | memoryview) -> bool:
    """Whether ``mac`` is this cache dir's MAC of ``parts`` (compared in constant time)."""
    want = entry_mac(*parts)
    return want is not None and hmac.compare_digest(want, bytes(mac))


def _warn(what: str, why: str) -> None:
    if what in _warned:
        return
    _warned.add(what)
    import logging

    logging.getLogger("tdflow.cache").warning("tdflow: %s: %s; not trusting it", what, why)


def warn_rejected(path: Path, why: str) -> None:
    """One warning per entry and process: a cache entry was refused (and is rebuilt)."""
    _warn(f"cache entry {path}", f"{why} (rebuilt)")
