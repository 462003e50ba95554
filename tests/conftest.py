"""Shared test fixtures: paths and the LLVM oracle tools (skipped with a reason when absent)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import settings

# CI must be reproducible: the same examples on every run (`CI=true`, as .ci/run is started).
# On a developer's machine hypothesis explores new examples each run; what it finds there gets
# pinned as an @example.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    settings.load_profile("ci")

ROOT = Path(__file__).resolve().parent.parent


def find_tool(name: str) -> str | None:
    """Locate an LLVM 19 tool: ``NAME-19`` on PATH, /usr/lib/llvm-19/bin/NAME, else a plain
    ``NAME`` on PATH only when it reports LLVM 19 (machines may carry an older unversioned one,
    e.g. Debian's llvm-14 as /usr/bin/llvm-tblgen, whose output differs)."""
    for cand in (f"{name}-19", f"/usr/lib/llvm-19/bin/{name}"):
        path = shutil.which(cand)
        if path:
            return path
    path = shutil.which(name)
    if path:
        try:
            out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        if "version 19." in out.stdout + out.stderr:
            return path
    return None


def mlir_include_dir() -> Path | None:
    """MLIR's installed ``.td`` include dir (Debian's libmlir-19-dev), if present."""
    cfg = find_tool("llvm-config")
    candidates = []
    if cfg:
        try:
            inc = subprocess.run([cfg, "--includedir"], capture_output=True, text=True, check=True)
            candidates.append(Path(inc.stdout.strip()))
        except (OSError, subprocess.CalledProcessError):
            pass
    candidates.append(Path("/usr/lib/llvm-19/include"))
    for c in candidates:
        if (c / "mlir" / "IR" / "OpBase.td").is_file():
            return c
    return None


def _found_or_skip(path, what: str):
    """``path``, or skip the test saying that ``what`` is not installed."""
    if path is None:
        pytest.skip(f"{what} not installed; oracle test skipped")
    return path


@pytest.fixture(scope="session")
def llvm_tblgen() -> str:
    return _found_or_skip(find_tool("llvm-tblgen"), "llvm-tblgen (Debian llvm-19)")


@pytest.fixture(scope="session")
def mlir_opt() -> str:
    return _found_or_skip(find_tool("mlir-opt"), "mlir-opt (Debian mlir-19-tools)")


@pytest.fixture(scope="session")
def mlir_include() -> Path:
    return _found_or_skip(mlir_include_dir(), "MLIR .td files (Debian libmlir-19-dev)")


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory):
    """Keep the on-disk record cache of the test run out of the user's cache dir."""
    os.environ.setdefault("TDFLOW_CACHE_DIR", str(tmp_path_factory.mktemp("tdflow-cache")))
    yield
