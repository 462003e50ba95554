"""What the native-loop tests share: the precondition that a native build is possible here, and
float arrays sown with the values where C and numpy could part ways.

>>> import numpy as np
>>> v = special_mix("f32", np.random.default_rng(0), 64, [0.0, -0.0])
>>> v.dtype, v.size
(dtype('float32'), 64)
"""

from __future__ import annotations

import shutil
import sysconfig
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

UINT = {"f32": np.uint32, "f64": np.uint64}
FLOAT = {"f32": np.float32, "f64": np.float64}


def need_native() -> None:
    """Skip without a C++ compiler or Python's headers; where both are here, a failed native
    build is a test failure, not a skip."""
    import tdflow.runtime.kernels.elementwise  # noqa: F401 - installs the runtime's builder
    from tdflow.dialect.formula.expr import Input
    from tdflow.lowering.elementwise_native import native_kernel

    if not (shutil.which("g++") or shutil.which("c++")) or not Path(
            sysconfig.get_paths()["include"], "Python.h").is_file():
        pytest.skip("no C++ compiler or no Python headers: the native path is off")
    if native_kernel(Input(0) * Input(1) + 1.0, ["f32", "f32"], "f32") is None:
        raise AssertionError("a compiler and Python.h are here, yet the native build failed")


def special_mix(dtype: str, rng: np.random.Generator, n: int,
                specials: Sequence[float]) -> np.ndarray:
    """``n`` normal values (sd 3) of ``dtype``, a quarter replaced by ``specials`` and a tenth
    by quiet NaNs with random payloads and signs."""
    v = (rng.standard_normal(n) * 3).astype(FLOAT[dtype])
    k = n // 4
    v[rng.integers(0, n, k)] = rng.choice(np.array(specials, FLOAT[dtype]), k)
    bits = v.view(UINT[dtype])
    nan_at = rng.integers(0, n, n // 10)
    quiet = np.array(0x7FC00000 if dtype == "f32" else 0x7FF8000000000000, UINT[dtype])
    sign = np.array(1 << (31 if dtype == "f32" else 63), UINT[dtype])
    payload = rng.integers(0, 1 << 20, nan_at.size).astype(UINT[dtype])
    bits[nan_at] = quiet | payload | (sign * rng.integers(0, 2, nan_at.size).astype(UINT[dtype]))
    return v


def numpy_then_native(prog, inputs, out=None):
    """``prog(inputs, out)`` run first with the native loop off (numpy's reference, on a copy of
    ``out``) and then as it is: ``(reference, result)``."""
    from tdflow.lowering import elementwise_native

    elementwise_native.USE_NATIVE = False
    try:
        ref = prog(inputs, None if out is None else out.copy())
    finally:
        elementwise_native.USE_NATIVE = True
    return ref, prog(inputs, out)
