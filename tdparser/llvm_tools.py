"""Finding LLVM 19's own tools, the reference tdflow is checked against.

``llvm-tblgen`` and ``mlir-opt`` are never needed to use tdflow; tests, benchmarks and a debug
switch of the dialect loader compare with them. Only LLVM 19 counts: machines may also carry an
older unversioned tool (Debian's llvm-14 as ``/usr/bin/llvm-tblgen``) whose output differs.

>>> find_llvm_tool("no-such-tool-anywhere") is None
True
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def find_llvm_tool(name: str) -> str | None:
    """Path of LLVM 19's ``name``: ``NAME-19`` on PATH, ``/usr/lib/llvm-19/bin/NAME``, else a
    plain ``NAME`` on PATH only when its ``--version`` reports LLVM 19; ``None`` otherwise."""
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
    """MLIR 19's installed ``.td`` include dir (Debian's libmlir-19-dev), if present."""
    candidates = []
    cfg = find_llvm_tool("llvm-config")
    if cfg:
        try:
            inc = subprocess.run([cfg, "--includedir"], capture_output=True, text=True, check=True)
            candidates.append(Path(inc.stdout.strip()))
        except (OSError, subprocess.CalledProcessError):
            pass
    candidates.append(Path("/usr/lib/llvm-19/include"))
    return next((c for c in candidates if (c / "mlir" / "IR" / "OpBase.td").is_file()), None)
