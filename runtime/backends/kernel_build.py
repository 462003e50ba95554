"""Compile generated CUDA C: ``nvcc`` to cubins for GPUs, ``g++`` to shared objects for cudasim.

Both keep their outputs on disk under tdflow's cache dir (``cuda/`` and ``cudasim/``; the
directory policy of :mod:`tdflow.core.cache_dir`: private, refused when others can write
it, off with ``TDFLOW_NO_CACHE``), keyed by the SHA-256 of the source, the compiler's version
string and the flags. Writes are atomic (temporary file, then rename). A built object is code,
so it is used only when it is what tdflow wrote there: each object has a ``.mac`` beside it (the
cache dir's MAC of its bytes, :func:`~tdflow.core.cache_dir.entry_mac`), and the object is
read once, without following symlinks, owner and mode checked on the opened file; a shared object
is then loaded from a process-private copy of those verified bytes, never from the cache path
(an anonymous, sealed in-memory file where Linux offers one: no folder to make or clean up).
Anything else (planted, edited, a symlink, not an ELF object) is a miss: rebuilt, with one
warning. Within a process, results are also kept in memory.

A compile error shows the compiler's message with the generated source line it points at, so
a bad kernel can be read without finding the temporary file.

>>> key = cache_key("__global__ void k() {}", "nvcc 13.0", ("-arch=sm_90",))
>>> len(key)
64
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path

from tdflow.core.cache_dir import (
    atomic_write,
    entry_mac,
    mac_ok,
    read_owned,
    usable_dir,
    warn_rejected,
)
from tdflow.core.errors import TdflowError

__all__ = ["CompileError", "cache_key", "compile_cubin", "build_shared_object",
           "cached_shared_object", "nvcc_version",
           "DEFAULT_ARCH", "NVCC_FLAGS"]

DEFAULT_ARCH = os.environ.get("TDFLOW_CUDA_ARCH", "sm_90")
# No --use_fast_math: it flushes f32 subnormals to zero and approximates division and square
# roots, so the GPU would differ from numpy and cudasim; fast exp is chosen per expression
# (render_cuda's fast_math renders __expf) instead.
NVCC_FLAGS = ("-O3", "-std=c++17")
# -O1: a large unit of kernels builds in 60% of -O2's time, and simulated kernels run about as
# fast (their cost is the fibers' switching, not the arithmetic)
GXX_FLAGS = ("-O1", "-std=c++17", "-shared", "-fPIC", "-w", "-fno-strict-aliasing")
ELF_MAGIC = b"\x7fELF"


class CompileError(TdflowError, RuntimeError):
    """The compiler rejected generated code; the message quotes the offending source lines."""

    def render(self) -> str:
        return f"error: {self}"


def cache_key(source: str, compiler: str, flags: Sequence[str]) -> str:
    """The cache key: SHA-256 over the source, the compiler's version text (nvcc) or identity
    (g++: :func:`compiler_identity`) and the flags."""
    h = hashlib.sha256()
    for part in (source, compiler, "\0".join(flags)):
        h.update(part.encode())
        h.update(b"\0\0")
    return h.hexdigest()


@cache
def _version(tool: str) -> str:
    import subprocess  # here: a cached build's load (tdflow run) starts no process

    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{tool}: {e}"
    return out.stdout.strip()


@cache
def compiler_identity(tool: str) -> str:
    """What stands for a C++ compiler's version in the cache key: its resolved path, size and
    modification time. Running ``g++ --version`` cost ~20 ms on every process's first cached
    native load (``tdflow run`` builds the fused loops' module); an upgraded or replaced
    compiler changes the file, so it still keys a new build. ``--version`` only for a tool
    that cannot be found (the key then names the tool and why).

    >>> gxx = which("g++")
    >>> gxx is None or compiler_identity(gxx).startswith("/")
    True
    """
    found = which(tool)
    if found is None:
        return _version(tool)
    path = os.path.realpath(found)
    st = os.stat(path)
    return f"{path} {st.st_size} {st.st_mtime_ns}"


def which(tool: str) -> str | None:
    """``shutil.which(tool)``: the executable a command name runs, or ``None``. On POSIX the
    same search as shutil's (a name with a folder is checked as given, else each ``PATH``
    entry in turn, once each; ``PATH`` unset: ``CS_PATH``), without importing ``shutil``
    (with ``bz2`` and ``lzma``, ~2 ms of every warm ``tdflow run``, which asks for ``g++``
    to key its cached native loops).

    >>> import shutil
    >>> which("sh") == shutil.which("sh") and which("no-such-tool-tdflow") is None
    True
    """
    if os.name != "posix":
        import shutil

        return shutil.which(tool)
    if os.path.dirname(tool):
        return tool if _executable(tool) else None
    path = os.environ.get("PATH", None)
    if path is None:
        try:
            path = os.confstr("CS_PATH")
        except (AttributeError, ValueError):
            path = os.defpath
    if not path:
        return None
    seen = set()
    for folder in os.fsdecode(path).split(os.pathsep):
        if folder not in seen:
            seen.add(folder)
            name = os.path.join(folder, tool)
            if _executable(name):
                return name
    return None


def _executable(path: str) -> bool:
    return os.path.exists(path) and os.access(path, os.F_OK | os.X_OK) and not os.path.isdir(path)


def nvcc_version(nvcc: str) -> str:
    """``nvcc --version``'s text (part of every cubin's cache key)."""
    return _version(nvcc)


def _quote_errors(stderr: str, source: str, file: str) -> str:
    """The compiler's messages, each with the generated line it names; warnings are left out
    when there are errors (nvcc warns about every template constant a user body leaves unused,
    which buried the error).

    >>> src = "int a;\\nint b = c;\\n"
    >>> print(_quote_errors("/t/k.cu(1): warning: a unused\\n/t/k.cu(2): error: c undefined",
    ...                     src, "/t/k.cu"))
    <generated>.cu(2): error: c undefined
        2 | int b = c;
    """
    lines = source.splitlines()
    # nvcc writes "file(LINE): error"; g++ "file:LINE:COL: error" and prints the line itself
    # A message may name another file: a user's kernel body compiles under the #line of its
    # hooks file, and only lines of the generated file are quoted from ``source``.
    start = re.compile(r"(\S+?)(?:\((\d+)\)|:(\d+)(?::\d+)?)?: *(\w[\w ]*?)[:\s]")
    blocks: list[tuple[str, int, list[str]]] = []  # (kind, line in source or 0, messages)
    for msg in stderr.strip().splitlines():
        m = None if msg.startswith("Remark: ") else start.match(msg)
        if m:
            line = int(m.group(2) or m.group(3) or 0) if m.group(1) == file else 0
            blocks.append((m.group(4), line, [msg]))
        elif msg.startswith("Remark: The warnings can be suppressed"):
            continue
        elif blocks:
            blocks[-1][2].append(msg)
        else:
            blocks.append(("", 0, [msg]))
    if any(kind.endswith("error") for kind, _, _ in blocks):
        blocks = [b for b in blocks if not b[0].endswith("warning")]
    out: list[str] = []
    for _, n, msgs in blocks:
        text = [m.replace(file, "<generated>.cu") for m in msgs]
        out.append(text[0])
        rest = text[1:]
        if 0 < n <= len(lines) and not any(f"{n} | " in t for t in rest):  # g++ quotes itself
            code = lines[n - 1].strip()
            quote = f"    {n} | {code}"
            # recent nvcc echoes the bare line with a caret under it: ours replaces the echo
            # and the caret moves right with it
            echo = next((i for i, t in enumerate(rest) if t.strip() == code), None)
            if echo is None:
                out.append(quote)
            else:
                shift = len(quote) - len(code) - (len(rest[echo]) - len(rest[echo].lstrip()))
                rest[echo] = quote
                if echo + 1 < len(rest) and rest[echo + 1].strip().startswith("^"):
                    rest[echo + 1] = " " * max(shift, 0) + rest[echo + 1]
        out.extend(rest)
    return "\n".join(out[:60])


_LINE_DIRECTIVE = re.compile(r'#line (\d+) "((?:[^"\\]|\\.)*)"$')


def _code_of(stderr: str, source: str, file: str) -> str:
    """What the compiler's messages point into: "the generated code of OP(...)" for the ops
    (translation_unit's ``// ---- KEY`` headers) whose code holds a line they name, so a user
    kernel's error names its op even though the compiler only knows a mangled kernel name.

    >>> src = "// ---- my.op((3,):f32) -> ((3,):f32)\\nnamespace n {\\nbad;\\n}"
    >>> _code_of("/t/k.cu:3:1: error: 'bad' was not declared", src, "/t/k.cu")
    'the generated code of my.op((3,):f32) -> ((3,):f32)'
    >>> _code_of("nvcc fatal   : Unsupported gpu architecture 'x'", src, "/t/k.cu")
    'generated code'
    >>> body = '// ---- u.op((3,):f32)\\n#line 7 "h.py"\\nbad;\\n'  # a user body under #line
    >>> _code_of("h.py(7): error: identifier bad", body, "/t/k.cu")
    'the generated code of u.op((3,):f32)'
    """
    lines = source.splitlines()
    # Lines of a user's kernel body carry their hooks file's name (``#line N "hooks.py"``):
    # a message there points into the code after each such directive for that file.
    remapped: dict[str, list[int]] = {}
    for k, text in enumerate(lines):
        d = _LINE_DIRECTIVE.match(text)
        if d:
            remapped.setdefault(d.group(2).replace('\\"', '"').replace("\\\\", "\\"),
                                []).append(k + 2)
    pat = re.compile(r"(\S+?)(?::(\d+):|\((\d+)\))")
    keys: list[str] = []
    for m in pat.finditer(stderr):
        if m.group(1) == file:
            places = [int(m.group(2) or m.group(3))]
        else:
            places = remapped.get(m.group(1), [])
        for n in places:
            for k in range(min(n, len(lines)) - 1, -1, -1):
                if lines[k].startswith("// ---- "):
                    key = lines[k][len("// ---- "):].strip()
                    if key not in keys:
                        keys.append(key)
                    break
    if not keys:
        return "generated code"
    return "the generated code of " + "; ".join(keys[:4]) + (" ..." if len(keys) > 4 else "")


@contextlib.contextmanager
def _progress(what: str, count: int) -> Iterator[None]:
    """A rich spinner while a compiler runs (only on a terminal; CI logs stay clean)."""
    from tdflow.tdparser.progress import spinner

    with spinner(f"{what} {count} kernel{'s' if count != 1 else ''}"):
        yield


def _compile(cmd: list[str], source: str, suffix: str, out_suffix: str, what: str,
             count: int) -> bytes:
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tdflow-cuda-") as tmp:
        src = os.path.join(tmp, "kernels" + suffix)
        out = os.path.join(tmp, "kernels" + out_suffix)
        Path(src).write_text(source)
        from tdflow.runtime import tracing

        with _progress(what, count), tracing.span(f"{os.path.basename(cmd[0])} build", "build",
                                                  kernels=count, bytes_of_source=len(source)):
            try:
                done = subprocess.run(cmd + [src, "-o", out], capture_output=True, text=True,
                                      timeout=900)
            except subprocess.TimeoutExpired:
                raise CompileError(f"{cmd[0]} did not finish within 900 s") from None
        if done.returncode != 0:
            msgs = done.stderr or done.stdout
            raise CompileError(f"{os.path.basename(cmd[0])} failed on {_code_of(msgs, source, src)}"
                               f":\n" + _quote_errors(msgs, source, src))
        return Path(out).read_bytes()


_memory: dict[str, bytes] = {}


def _cached(folder: str, key: str, suffix: str, valid, build) -> bytes | None:
    data = _memory.get(key)
    d = usable_dir(folder)
    path = d / f"{key}{suffix}" if d is not None else None
    if data is None and path is not None:
        data = _read_verified(path, valid)
    if data is None and build is None:  # asked only whether it is there
        return None
    if data is None:
        data = build()
        mac = entry_mac(data) if path is not None else None
        # the object first, then its MAC: a reader in between sees a mismatch (a miss)
        if mac is not None and atomic_write(path, data):
            atomic_write(_mac_path(path), mac)
    _memory[key] = data
    return data


def _mac_path(path: Path) -> Path:
    return path.with_name(path.name + ".mac")


def _read_verified(path: Path, valid) -> bytes | None:
    """The entry's bytes when tdflow wrote them there, else ``None`` (warned once when an
    entry exists but is refused)."""
    if not os.path.lexists(path):
        return None
    data = read_owned(path)
    mac = read_owned(_mac_path(path))
    if data is None:
        why = "a symlink, not a file, or not private to this user"
    elif mac is None or not mac_ok(mac, data):
        why = "its content is not what tdflow built (MAC mismatch or missing)"
    elif not valid(data):
        why = "not an ELF object"
    else:
        return data
    warn_rejected(path, why)
    return None


def compile_cubin(source: str, arch: str = DEFAULT_ARCH, flags: Sequence[str] = (),
                  nvcc: str | None = None, kernels: int = 1) -> bytes:
    """The cubin of ``source`` for ``arch`` (cached); :class:`CompileError` on failure."""
    nvcc = _nvcc(nvcc)
    all_flags = (f"-arch={arch}", "--cubin", *NVCC_FLAGS, *flags)
    key = cache_key(source, nvcc_version(nvcc), all_flags)
    data = _cached("cuda", key, ".cubin", lambda b: b[:4] == ELF_MAGIC,
                      lambda: _compile([nvcc, *all_flags], source, ".cu", ".cubin",
                                       "nvcc: compiling", kernels))
    return data


def _nvcc(given: str | None) -> str:
    """``given`` or the nvcc found; :class:`CompileError` when there is none."""
    from tdflow.runtime.backends.cuda_status import find_nvcc

    nvcc = given or find_nvcc()
    if nvcc is None:
        raise CompileError("nvcc not found on PATH, under $CUDA_HOME/bin or /usr/local/cuda/bin")
    return nvcc


def ptxas_report(source: str, arch: str = DEFAULT_ARCH, nvcc: str | None = None) -> str:
    """``ptxas -v``'s resource report (registers, shared memory, spills) for ``source``."""
    import subprocess
    import tempfile

    nvcc = _nvcc(nvcc)
    with tempfile.TemporaryDirectory(prefix="tdflow-cuda-") as tmp:
        src = os.path.join(tmp, "kernels.cu")
        Path(src).write_text(source)
        done = subprocess.run([nvcc, f"-arch={arch}", "--cubin", *NVCC_FLAGS, "-Xptxas", "-v",
                               src, "-o", os.path.join(tmp, "k.cubin")],
                              capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise CompileError(f"nvcc failed on {_code_of(done.stderr, source, src)}:\n"
                           + _quote_errors(done.stderr, source, src))
    return done.stderr


def build_shared_object(source: str, flags: Sequence[str] = (), cxx: str | None = None,
                        kernels: int = 1) -> Path:
    """A shared object built from ``source`` by ``g++`` (cached); the path to load.

    The returned path is in a private temporary directory that lives as long as the process
    (the cache dir holds the verified bytes, not what is loaded).
    """
    return _shared_object(source, flags, cxx, kernels, True)  # type: ignore[return-value]


def cached_shared_object(source: str, flags: Sequence[str] = (),
                         cxx: str | None = None) -> Path | None:
    """:func:`build_shared_object`'s path when the object is in memory or in the cache (the same
    checks), else ``None``, having started no compiler: whoever asks can build it elsewhere
    (the native loops build theirs on a pool of workers).

    >>> cached_shared_object("int tdflow_doc_never_built;", ("-DX",)) is None
    True
    """
    return _shared_object(source, flags, cxx, 1, False)


def _shared_object(source: str, flags: Sequence[str], cxx: str | None, kernels: int,
                   build: bool) -> Path | None:
    cxx = cxx or os.environ.get("CXX") or which("g++") or which("c++")
    if cxx is None:
        raise CompileError("no C++ compiler (g++) found: cudasim needs one")
    all_flags = (*GXX_FLAGS, *flags)
    key = cache_key(source, compiler_identity(cxx), all_flags)
    data = _cached("cudasim", key, ".so", lambda b: b[:4] == ELF_MAGIC,
                   (lambda: _compile([cxx, *all_flags], source, ".cpp", ".so",
                                     "g++: compiling (cudasim)", kernels)) if build else None)
    if data is None:
        return None
    return _loadable(key, data)


_private_lock = threading.Lock()
_loadable_paths: dict[str, Path] = {}
# The in-memory files' descriptors: never closed, since the loader dedupes by path name and a
# reused descriptor number would name another object
_memfds: list[int] = []


def _loadable(key: str, data: bytes) -> Path:
    """A path the loader can open that holds ``data`` (the verified bytes) and only this
    process wrote, whatever happens in the cache dir meanwhile: an in-memory file
    (:func:`_memory_file`), else a file in a private temporary folder. One per ``key``."""
    path = _loadable_paths.get(key)
    if path is None:
        with _private_lock:  # builds run on several threads: one file per key, written whole
            path = _loadable_paths.get(key)
            if path is None:
                path = _memory_file(key, data) or _private_file(key, data)
                _loadable_paths[key] = path
    return path


def _memory_file(key: str, data: bytes) -> Path | None:
    """``data`` in an anonymous in-memory file (Linux's ``memfd_create``), sealed against any
    change, as ``/proc/self/fd/N``; ``None`` where that is not available (no ``memfd_create``,
    refused, no ``/proc``). Nothing is written to disk: no temporary folder to make, and none
    left behind by a process that is killed."""
    create = getattr(os, "memfd_create", None)
    if create is None:
        return None
    try:
        fd = create(f"tdflow-{key[:16]}.so", os.MFD_CLOEXEC | getattr(os, "MFD_ALLOW_SEALING", 0))
    except OSError:
        return None
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        path = f"/proc/self/fd/{fd}"
        if not os.path.exists(path):
            raise OSError("no /proc")
    except OSError:
        os.close(fd)
        return None
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SHRINK
                    | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
    except (ImportError, AttributeError, OSError):
        pass  # sealing is a second guard: only this process holds the descriptor anyway
    _memfds.append(fd)
    return Path(path)


def _private_file(key: str, data: bytes) -> Path:
    # The loader opens a path; the verified bytes go to a folder only this process writes.
    path = Path(_private_dir()) / f"{key}.so"
    if not path.is_file():
        tmp = path.with_name(f"{key}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return path


@cache
def _private_dir() -> str:
    import atexit
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="tdflow-cudasim-")  # mode 0700
    # unlinking a loaded object is safe (its mapping stays); the folder goes with the process
    atexit.register(shutil.rmtree, folder, True)
    return folder
