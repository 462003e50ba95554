"""The generated CUDA of the elementwise and math families (ops/elementwise.td, ops/math.td) at the values where C and numpy part:
integer remainders by 0 and -1 (C traps on x86, where cudasim runs), shifts by counts outside
the type's width (undefined in C), halves for ``round``, NaN and signed zeros for ``sign`` and
the float remainders, ``~`` on bool. cudasim must equal the numpy backend exactly there (random
inputs are covered by test_cuda_elementwise.py); then everything compiles with nvcc for sm_90."""

from __future__ import annotations

import numpy as np
import pytest
from cuda_harness import check, nvcc_compile_all, prebuild


def _ints(dtype) -> tuple[np.ndarray, np.ndarray]:
    """Dividend and divisor pairs with zeros, -1 and the minimum (every sign combination)."""
    low = np.iinfo(dtype).min
    x = np.array([7, -7, 7, -7, 5, low, low, 0, -1, 3], dtype)
    y = np.array([3, 3, -3, -3, 0, -1, 0, 0, 0, -1], dtype)
    return x, y


def _shifts(dtype) -> tuple[np.ndarray, np.ndarray]:
    bits = np.iinfo(dtype).bits
    x = np.array([1, -1, 5, -100, 100, -7, 3, 3, np.iinfo(dtype).min], dtype)
    n = np.array([0, 3, bits - 1, 1, bits, bits + 4, -1, 2, 1], dtype)
    return x, n


FLOAT_X = np.array([5.0, -5.0, 6.0, -6.0, 1.0, np.inf, 3.0, -0.0, np.nan], np.float32)
FLOAT_Y = np.array([3.0, 3.0, -3.0, 3.0, 0.0, 2.0, np.inf, 2.0, 1.0], np.float32)
SPECIAL = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.0, -0.0, np.inf, -np.inf, np.nan, 3.49, -1e-3])

CASES: list[tuple[str, list[np.ndarray]]] = []
for _dt in (np.int8, np.int32, np.int64):
    CASES += [("tdflow.broadcast_fmod", list(_ints(_dt))),
              ("tdflow.broadcast_floor_mod", list(_ints(_dt))),
              ("tdflow.broadcast_bitwise_left_shift", list(_shifts(_dt))),
              ("tdflow.broadcast_bitwise_right_shift", list(_shifts(_dt))),
              ("tdflow.sign", [_ints(_dt)[0]]),
              ("tdflow.bitwise_not", [_ints(_dt)[0]])]
for _dt in (np.float16, np.float32, np.float64):
    CASES += [("tdflow.broadcast_fmod", [FLOAT_X.astype(_dt), FLOAT_Y.astype(_dt)]),
              ("tdflow.broadcast_floor_mod", [FLOAT_X.astype(_dt), FLOAT_Y.astype(_dt)])]
    CASES += [(f"tdflow.{op}", [SPECIAL.astype(_dt)])
              for op in ("round", "sign", "isnan", "isinf", "floor", "ceil", "logical_not")]
_A = np.array([True, True, False, False])
_B = np.array([True, False, True, False])
CASES += [("tdflow.bitwise_not", [_A]), ("tdflow.broadcast_bitwise_xor", [_A, _B]),
          ("tdflow.broadcast_logical_xor", [_A, _B]),
          ("tdflow.broadcast_logical_xor", [SPECIAL, SPECIAL[::-1].copy()])]


@pytest.fixture(scope="module", autouse=True)
def _compiled_together() -> None:
    prebuild([(op, inputs, {}) for op, inputs in CASES])


@pytest.mark.parametrize("op, inputs", CASES,
                         ids=[f"{op.split('.')[1]}-{ins[0].dtype}" for op, ins in CASES])
def test_edge_values_equal_numpy(op, inputs):
    got = check(op, inputs, exact=True)[0]
    if op.endswith("floor_mod") and got.dtype.kind == "f":
        # a zero remainder takes the divisor's sign, as numpy's does (-0.0 == 0.0 for equality)
        want_sign = np.signbit(inputs[1])[(got == 0)]
        assert np.array_equal(np.signbit(got[got == 0]), want_sign)


def test_all_compile_with_nvcc() -> None:
    # runs last in this module: every kernel generated above, in one nvcc call
    assert "Compiling entry function" in nvcc_compile_all()
