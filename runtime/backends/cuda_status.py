"""Why CUDA can or cannot run here, without ever raising (and without importing pycuda early).

>>> s = cuda_status()
>>> isinstance(s.available, bool) and isinstance(s.reason, str)
True
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class CudaStatus:
    available: bool
    reason: str  # "ok" when available
    devices: int = 0
    nvcc: str | None = None  # path to nvcc (CUDA C can be compiled even without a GPU)

    def __str__(self) -> str:
        return "CUDA available" if self.available else f"CUDA unavailable: {self.reason}"


def find_nvcc() -> str | None:
    """``nvcc`` on PATH, under ``$CUDA_HOME/bin`` or ``/usr/local/cuda/bin``."""
    found = shutil.which("nvcc")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and os.path.isfile(os.path.join(root, "bin", "nvcc")):
            return os.path.join(root, "bin", "nvcc")
    return None


# cuInit's results that say why there is no usable driver (CUDA driver API error codes)
_CU_ERRORS = {
    34: "the CUDA driver is a stub (libcuda.so.1 from the toolkit's stubs/ directory, not a "
        "driver): install the NVIDIA driver",
    100: "no CUDA device found",
    999: "cuInit failed (unknown error: is the NVIDIA kernel module loaded?)",
}


def driver_problem(load=None) -> str | None:
    """Why the CUDA driver library cannot run kernels here (``None`` when it can): no
    ``libcuda.so.1``, a stub library, no device. Loaded with ctypes, so pycuda is not needed.

    >>> driver_problem(lambda name: (_ for _ in ()).throw(OSError("not found")))
    'libcuda.so.1 not found (no NVIDIA driver on this machine): not found'
    """
    import ctypes

    try:
        lib = (load or ctypes.CDLL)("libcuda.so.1")
    except OSError as e:
        return f"libcuda.so.1 not found (no NVIDIA driver on this machine): {e}"
    rc = int(lib.cuInit(0))
    if rc == 0:
        return None
    return _CU_ERRORS.get(rc, f"cuInit failed with CUDA error {rc}")


@cache
def cuda_status() -> CudaStatus:
    """Check pycuda, the driver library (present, not a stub), a device; the first failure is
    the reason."""
    nvcc = find_nvcc()
    try:
        if os.environ.get("TDFLOW_DISABLE_CUDA"):
            return CudaStatus(False, "disabled by TDFLOW_DISABLE_CUDA", nvcc=nvcc)
        if importlib.util.find_spec("pycuda") is None:
            return CudaStatus(False, "pycuda is not installed (pip install 'tdflow[cuda]'; "
                              "its build finds CUDA through CUDA_ROOT, e.g. "
                              "CUDA_ROOT=/usr/local/cuda)", nvcc=nvcc)
        driver = driver_problem()
        if driver is not None:
            return CudaStatus(False, driver, nvcc=nvcc)
        import pycuda.driver as drv  # imported only here, on demand

        drv.init()
        n = drv.Device.count()
        if n == 0:
            return CudaStatus(False, "no CUDA device found", nvcc=nvcc)
        return CudaStatus(True, "ok", n, nvcc)
    except Exception as e:  # noqa: BLE001 - this function must never raise
        return CudaStatus(False, f"{type(e).__name__}: {e}".strip(), nvcc=nvcc)
