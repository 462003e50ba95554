"""Compiling generated code: the on-disk cache (keys, hits, corrupt entries, switches) and
compile errors that quote the generated line."""

from __future__ import annotations

import os
import subprocess

import pytest
from cuda_harness import need_gxx
from tdflow.runtime.backends import kernel_build
from tdflow.runtime.backends.cuda_status import find_nvcc
from tdflow.runtime.backends.kernel_build import CompileError, build_shared_object, cache_key

SRC = 'extern "C" int tdf_answer() { return 42; }\n'


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TDFLOW_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TDFLOW_NO_CACHE", raising=False)
    monkeypatch.setattr(kernel_build, "_memory", {})
    calls = []
    real = subprocess.run

    def counting(cmd, *a, **k):
        if "--version" not in cmd:
            calls.append(cmd)
        return real(cmd, *a, **k)

    monkeypatch.setattr(subprocess, "run", counting)
    return tmp_path / "cache", calls


def test_keys_depend_on_source_compiler_and_flags() -> None:
    base = cache_key(SRC, "g++ 12", ("-O2",))
    assert base == cache_key(SRC, "g++ 12", ("-O2",))
    assert len({base, cache_key(SRC + " ", "g++ 12", ("-O2",)), cache_key(SRC, "g++ 13", ("-O2",)),
                cache_key(SRC, "g++ 12", ("-O3",))}) == 4


def test_disk_cache_hit_and_corrupt_entry(fresh_cache, monkeypatch) -> None:
    need_gxx()
    folder, calls = fresh_cache
    import ctypes

    path = build_shared_object(SRC)
    assert ctypes.CDLL(str(path)).tdf_answer() == 42 and len(calls) == 1
    entry = _entry(folder)
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    assert path.parent != entry.parent  # loaded from a private copy, not from the cache
    monkeypatch.setattr(kernel_build, "_memory", {})  # a new process: only the disk remains
    assert build_shared_object(SRC).read_bytes() == entry.read_bytes() and len(calls) == 1
    # a truncated or planted entry is not an ELF object: rebuilt. (Replaced, not overwritten in
    # place: a process may have the object mapped.)
    planted = entry.with_suffix(".planted")
    planted.write_bytes(b"garbage")
    planted.replace(entry)
    monkeypatch.setattr(kernel_build, "_memory", {})
    path2 = build_shared_object(SRC)
    assert len(calls) == 2 and path2.read_bytes()[:4] == b"\x7fELF"


def _entry(folder):
    (entry,) = (folder / "cudasim").glob("*.so")
    assert (folder / "cudasim" / (entry.name + ".mac")).is_file()
    return entry


HOSTILE = ('#include <stdio.h>\nextern "C" int tdf_answer() {{ return 666; }}\n'
           '__attribute__((constructor)) static void planted() {{\n'
           '  FILE* f = fopen("{marker}", "w"); if (f) fclose(f);\n}}\n')


def _hostile_object(tmp_path, marker):
    """A real shared object whose constructor leaves ``marker``: what a planted entry runs."""
    src = tmp_path / "hostile.cpp"
    src.write_text(HOSTILE.format(marker=marker))
    out = tmp_path / "hostile.so"
    subprocess.run(["g++", "-shared", "-fPIC", str(src), "-o", str(out)], check=True)
    return out


@pytest.mark.parametrize("how", ["planted", "symlink", "planted-with-old-mac", "world-writable"])
def test_a_planted_object_never_runs(fresh_cache, monkeypatch, tmp_path, caplog, how) -> None:
    """Issue 24: an object in the kernel cache that tdflow did not write there (a planted ELF,
    a symlink to one, one given another entry's MAC, one others may write) is not loaded: it is
    rebuilt, with a warning, and its constructor never runs."""
    need_gxx()
    import ctypes

    folder, calls = fresh_cache
    build_shared_object(SRC)
    entry = _entry(folder)
    marker = tmp_path / "constructor-ran"
    hostile = _hostile_object(tmp_path, marker)
    if how == "symlink":
        entry.unlink()
        entry.symlink_to(hostile)
    elif how == "world-writable":
        entry.chmod(0o666)
    else:
        entry.write_bytes(hostile.read_bytes())
        if how == "planted-with-old-mac":
            other = build_shared_object(SRC + "// another entry\n")
            mac = (folder / "cudasim" / (kernel_build.cache_key(
                SRC + "// another entry\n", kernel_build.compiler_identity("g++"),
                kernel_build.GXX_FLAGS) + ".so.mac"))
            assert other.is_file() and mac.is_file()
            (folder / "cudasim" / (entry.name + ".mac")).write_bytes(mac.read_bytes())
    monkeypatch.setattr(kernel_build, "_memory", {})
    n = len(calls)
    with caplog.at_level("WARNING", logger="tdflow.cache"):
        path = build_shared_object(SRC)
    assert ctypes.CDLL(str(path)).tdf_answer() == 42
    assert not marker.exists(), "the planted object's constructor ran"
    assert len(calls) == n + 1, "the entry was not rebuilt"
    assert any("not trusting it" in r.getMessage() for r in caplog.records)
    assert not entry.is_symlink() and entry.read_bytes() == path.read_bytes()


def test_parents_of_the_cache_dir_are_made_private(tmp_path, monkeypatch) -> None:
    from tdflow.core.cache_dir import usable_dir

    monkeypatch.setenv("TDFLOW_CACHE_DIR", str(tmp_path / "a" / "b" / "cache"))
    monkeypatch.delenv("TDFLOW_NO_CACHE", raising=False)
    old = os.umask(0o022)
    try:
        assert usable_dir("cudasim") is not None
    finally:
        os.umask(old)
    for d in (tmp_path / "a", tmp_path / "a" / "b", tmp_path / "a" / "b" / "cache"):
        assert oct(d.stat().st_mode & 0o777) == "0o700", d


def test_no_cache_switch(fresh_cache, monkeypatch) -> None:
    need_gxx()
    folder, calls = fresh_cache
    monkeypatch.setenv("TDFLOW_NO_CACHE", "1")
    path = build_shared_object(SRC)
    assert not (folder / "cudasim").exists() and path.is_file()


def test_gxx_error_names_the_generated_line(fresh_cache) -> None:
    need_gxx()
    with pytest.raises(CompileError) as e:
        build_shared_object('extern "C" int f() {\n  return undefined_name;\n}\n')
    text = str(e.value)
    assert "<generated>.cu:2" in text and "undefined_name" in text


def test_nvcc_error_quotes_the_generated_line(fresh_cache) -> None:
    if find_nvcc() is None:
        pytest.skip("nvcc not found on PATH or under /usr/local/cuda/bin")
    src = '__global__ void k(float* y) {\n  y[0] = no_such_thing;\n}\n'
    with pytest.raises(CompileError) as e:
        kernel_build.compile_cubin(src)
    text = str(e.value)
    assert "<generated>.cu(2)" in text and "2 | y[0] = no_such_thing;" in text
    cubin = kernel_build.compile_cubin('extern "C" __global__ void k(float* y) { y[0] = 1; }\n')
    assert cubin[:4] == b"\x7fELF"
    _, calls = fresh_cache
    n = len(calls)
    kernel_build.compile_cubin('extern "C" __global__ void k(float* y) { y[0] = 1; }\n')
    assert len(calls) == n  # the memory cache answers within a process


def test_a_cached_gxx_build_runs_no_compiler_process(fresh_cache, monkeypatch, tmp_path) -> None:
    """Issue 23: the g++ key is the compiler file's identity (path, size, mtime), so a cache hit
    in a new process starts no process at all (``g++ --version`` was ~20 ms of every
    ``tdflow run``); a replaced compiler (another size or mtime) keys a new build."""
    need_gxx()
    import shutil

    folder, _ = fresh_cache
    build_shared_object(SRC)
    monkeypatch.setattr(kernel_build, "_memory", {})  # a new process: only the disk remains
    kernel_build.compiler_identity.cache_clear()
    started = []
    monkeypatch.setattr(subprocess, "run", lambda cmd, *a, **k: started.append(cmd))
    assert build_shared_object(SRC).read_bytes()[:4] == b"\x7fELF" and started == []
    # a copy of the compiler with another mtime is another identity, so another key
    gxx = tmp_path / "bin" / "g++"
    gxx.parent.mkdir()
    shutil.copy2(shutil.which("g++"), gxx)
    os.utime(gxx, ns=(1, 1))
    assert kernel_build.compiler_identity(str(gxx)) != kernel_build.compiler_identity("g++")
    assert kernel_build.compiler_identity(str(gxx)).startswith(str(gxx.resolve()))


def _tools(tmp_path):
    """Folders for PATH: an executable ``tool`` in ``b`` and ``c``; in ``a`` a ``tool`` that
    is not executable and a folder named ``tool2``."""
    for name in "abc":
        (tmp_path / name).mkdir()
    (tmp_path / "a" / "tool").write_text("#!/bin/sh\n")
    (tmp_path / "a" / "tool2").mkdir()
    for name in "bc":
        exe = tmp_path / name / "tool"
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    return [str(tmp_path / n) for n in "abc"]


@pytest.mark.parametrize("tool", ["tool", "tool2", "sh", "no-such-tool", "./tool", "tool/x"])
def test_which_finds_what_shutils_which_finds(tmp_path, monkeypatch, tool) -> None:
    """Issue 23: kernel_build's own ``which`` (no ``shutil`` on a warm ``tdflow run``) answers
    as ``shutil.which`` over PATHs with empty, repeated, missing and relative entries, a
    non-executable file, a folder, an absolute or relative name, and no PATH at all."""
    import shutil

    a, b, c = _tools(tmp_path)
    monkeypatch.chdir(tmp_path / "b")
    paths = [f"{a}:{b}:{c}", f"{c}:{b}", f"::{b}", f"{a}:{a}:/nonexistent", "", ".",
             f"/usr/bin:{b}", None]
    for path in paths:
        if path is None:
            monkeypatch.delenv("PATH", raising=False)
        else:
            monkeypatch.setenv("PATH", path)
        for name in (tool, os.path.join(b, tool), os.path.join(a, tool)):
            assert kernel_build.which(name) == shutil.which(name), (path, name)


def test_a_loaded_object_is_a_sealed_file_in_memory(fresh_cache, monkeypatch) -> None:
    """Issue 23: where Linux offers ``memfd_create``, the verified bytes are loaded from an
    anonymous in-memory file, sealed: no temporary folder is made (nor left behind by a
    killed process), and the file the loader opens cannot be changed."""
    need_gxx()
    if not hasattr(os, "memfd_create") or not os.path.isdir("/proc/self/fd"):
        pytest.skip("no memfd_create or /proc")
    import ctypes

    def no_folder():
        raise AssertionError("a private folder was made")

    monkeypatch.setattr(kernel_build, "_private_dir", no_folder)
    monkeypatch.setattr(kernel_build, "_loadable_paths", {})
    source = SRC + "// in memory\n"
    path = build_shared_object(source)
    assert str(path).startswith("/proc/self/fd/")
    assert ctypes.CDLL(str(path)).tdf_answer() == 42
    assert path.read_bytes() == _entry_of(fresh_cache[0], source).read_bytes()
    with pytest.raises(PermissionError):  # refused at open, or at the write
        with open(path, "r+b") as f:
            f.write(b"\0")
    assert build_shared_object(source) == path  # one file per object within a process


def test_without_memfd_the_object_is_loaded_from_a_private_folder(fresh_cache, monkeypatch):
    """Where there is no ``memfd_create`` (or it is refused), a private temporary folder (mode
    0700) holds the verified bytes, as before."""
    need_gxx()
    import ctypes

    monkeypatch.delattr(os, "memfd_create", raising=False)
    monkeypatch.setattr(kernel_build, "_loadable_paths", {})
    source = SRC + "// in a folder\n"
    path = build_shared_object(source)
    assert not str(path).startswith("/proc/")
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
    assert ctypes.CDLL(str(path)).tdf_answer() == 42
    assert path.read_bytes() == _entry_of(fresh_cache[0], source).read_bytes()


def _entry_of(folder, source):
    key = cache_key(source, kernel_build.compiler_identity(kernel_build.which("g++")),
                    kernel_build.GXX_FLAGS)
    return folder / "cudasim" / f"{key}.so"
