"""Shared test fixtures: paths and the LLVM oracle tools (skipped with a reason when absent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings
from tdflow.tdparser.llvm_tools import find_llvm_tool, mlir_include_dir

# CI must be reproducible: the same examples on every run (`CI=true`, as .ci/run is started).
# On a developer's machine hypothesis explores new examples each run; what it finds there gets
# pinned as an @example.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    settings.load_profile("ci")

ROOT = Path(__file__).resolve().parent.parent


# The oracle lookups live in the package so tests, benchmarks and the dialect's debug switch
# agree on which tool counts as LLVM 19.
find_tool = find_llvm_tool


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
