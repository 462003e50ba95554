"""Compiling generated code: the on-disk cache (keys, hits, corrupt entries, switches) and
compile errors that quote the generated line."""

from __future__ import annotations

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

    monkeypatch.setattr(kernel_build.subprocess, "run", counting)
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
    assert path.parent == folder / "cudasim" and oct(folder.stat().st_mode & 0o777) == "0o700"
    monkeypatch.setattr(kernel_build, "_memory", {})  # a new process: only the disk remains
    assert build_shared_object(SRC) == path and len(calls) == 1  # a hit: no compiler call
    # a truncated or planted entry is not an ELF object: rebuilt. (Replaced, not overwritten in
    # place: this process has the object mapped, and truncating a mapped file is a SIGBUS when
    # the loader runs its finalisers at exit.)
    planted = path.with_suffix(".planted")
    planted.write_bytes(b"garbage")
    planted.replace(path)
    monkeypatch.setattr(kernel_build, "_memory", {})
    path2 = build_shared_object(SRC)
    assert len(calls) == 2 and path2.read_bytes()[:4] == b"\x7fELF"


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
