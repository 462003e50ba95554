"""The native float32 erf (``lowering/erf_native.py``) against erf_f32's numpy path: the same
bits for every input (every exponent, both signs, zeros, subnormals, inf, NaN payloads, the
table's interval edges and the cut-off), in place and not, and the cases it hands back."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from native_support import need_native
from tdflow.lowering import erf_native
from tdflow.lowering.erf_f32 import ERF_F32_DEGREE, ERF_F32_SCALE, _coefficients, erf_f32

LIMIT = float(np.nextafter(np.float32(4.0), np.float32(0)))


def _native():
    need_native()
    run = erf_native.native_erf(_coefficients(), ERF_F32_SCALE, ERF_F32_DEGREE, LIMIT)
    assert run is not None, "a compiler and Python.h are here, yet the native erf was not built"
    return run


def _numpy_path(x: np.ndarray) -> np.ndarray:
    with mock.patch.object(erf_native, "USE_NATIVE_ERF", False):
        return erf_f32(x)


def _inputs() -> np.ndarray:
    rng = np.random.default_rng(2026_12_04)
    bits = rng.integers(0, 2**32, 2_000_000, dtype=np.uint64).astype(np.uint32)
    nans = (np.uint32(0x7F800001) + rng.integers(0, 2**23 - 1, 1000).astype(np.uint32))
    edges = np.arange(4 * ERF_F32_SCALE + 2, dtype=np.float32) / ERF_F32_SCALE
    around = (edges.view(np.int32)[:, None] + np.arange(-3, 4, dtype=np.int32)).ravel()
    tail = np.float32(3.9).view(np.int32) + np.arange(50_000, dtype=np.int32)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, np.finfo(np.float32).tiny,
                         np.finfo(np.float32).max, 4.0, LIMIT, 0.5, 1.0], np.float32)
    x = np.concatenate([bits.view(np.float32), nans.view(np.float32),
                        (nans | np.uint32(0x80000000)).view(np.float32),
                        rng.normal(0, 1.5, 500_000).astype(np.float32),
                        around.view(np.float32), tail.view(np.float32), specials])
    return np.concatenate([x, -x])


def test_native_gives_the_numpy_path_s_bits_for_every_kind_of_input():
    run = _native()
    x = _inputs()
    want = _numpy_path(x)
    got = np.empty_like(x)
    assert run(x, got) is True
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    # and erf_f32 itself takes the native path for large arrays, with the same result
    assert np.array_equal(erf_f32(x).view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("n", [1024, 1027, 4099, 65_537])
def test_in_place_and_odd_lengths(n):
    _native()
    x = np.random.default_rng(n).normal(0, 2, n).astype(np.float32)
    x[::97] = np.nan
    x[1::89] = -0.0
    want = _numpy_path(x)
    y = x.copy()
    assert erf_f32(y, out=y) is y
    assert np.array_equal(y.view(np.uint32), want.view(np.uint32))


def test_what_the_native_loop_hands_back_to_numpy():
    run = _native()
    x = np.linspace(-3, 3, 4096, dtype=np.float32)
    out = np.empty_like(x)
    assert run(x[::2], out[:2048]) is False           # not contiguous
    assert run(x, out[:100]) is False                 # sizes differ
    assert run(x[1:], x[:-1]) is False                # overlapping, not in place
    ro = np.empty_like(x)
    ro.flags.writeable = False
    assert run(x, ro) is False                        # read-only out
    # erf_f32 still gives the numpy path's values for all of these
    strided = x[::2]
    assert np.array_equal(erf_f32(strided), _numpy_path(np.ascontiguousarray(strided)))


def test_native_off_means_numpy():
    with mock.patch.dict("os.environ", TDFLOW_NATIVE="0"):
        assert erf_native.native_erf(_coefficients(), ERF_F32_SCALE, ERF_F32_DEGREE,
                                     LIMIT) is None
    with mock.patch.object(erf_native, "USE_NATIVE_ERF", False):
        assert erf_native.native_erf(_coefficients(), ERF_F32_SCALE, ERF_F32_DEGREE,
                                     LIMIT) is None


def test_the_source_holds_the_table_exactly():
    table = _coefficients()
    src = erf_native.c_source(table, ERF_F32_SCALE, ERF_F32_DEGREE, LIMIT)
    assert float(table[2, 7]).hex() in src and float(table[9, 15]).hex() in src
    assert "tdf_erf_loop_avx512" in src  # 16 intervals: the permute loop


def test_every_loop_gives_the_same_bits():
    # the scalar loop, the AVX2 gathers and the AVX-512 permutes (where the CPU has them)
    run = _native()
    x = _inputs()
    want = _numpy_path(x)
    for widest in (0, 1, 2):
        got = np.empty_like(x)
        assert run(x, got, widest) is True
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), widest
        y = x[:4099].copy()  # in place, with a tail under one vector
        assert run(y, y, widest) is True
        assert np.array_equal(y.view(np.uint32), want[:4099].view(np.uint32)), widest


def _gelu_numpy(x: np.ndarray) -> np.ndarray:
    """The gelu formula's numpy steps in float32, the erf on erf_f32's numpy path."""
    with np.errstate(all="ignore"):
        t = np.multiply(x, np.float32(0.7071067811865475))
        return (np.float32(0.5) * x) * (np.float32(1.0) + _numpy_path(t))


@pytest.mark.parametrize("widest", [2, 1, 0])
def test_the_gelu_loop_gives_the_numpy_steps_bits(widest):
    run = _native()
    x = _inputs()
    want = _gelu_numpy(x)
    got = np.empty_like(x)
    assert run(x, got, widest, 1) is True
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    y = x[:70_001].copy()  # in place, an odd length (a partial chunk and lane tail)
    assert run(y, y, widest, 1) is True
    assert np.array_equal(y.view(np.uint32), want[:70_001].view(np.uint32))
    with pytest.raises(ValueError):
        run(x, got, widest, 2)


def test_the_gelu_kernel_takes_the_loop_with_the_rendered_program_s_bits():
    from tdflow.dialect.formula.expr import Input, erf
    from tdflow.lowering import elementwise_native, elementwise_segments
    from tdflow.lowering import erf_f32 as erf_f32_mod
    from tdflow.lowering.elementwise_numpy import render_numpy

    _native()
    expr = 0.5 * Input(0) * (1.0 + erf(Input(0) * 0.7071067811865475))
    assert elementwise_segments._is_gelu(expr)
    assert not elementwise_segments._is_gelu(0.5 * Input(0) * (1.0 + erf(Input(0) * 0.7)))
    x = _inputs()[:1_000_003]
    prog = render_numpy(expr, ["f32"], "f32")
    calls = []
    with mock.patch.object(elementwise_native, "USE_NATIVE", False):
        want = prog.run([x])
    orig = erf_f32_mod.gelu_f32_native

    def counted(a, out):
        calls.append(a.size)
        return orig(a, out)

    with mock.patch.object(erf_f32_mod, "gelu_f32_native", counted):
        prog = render_numpy(expr, ["f32"], "f32")
        got = prog.run([x])
        out = np.empty_like(x)
        assert prog.run([x], out) is out
        y = x.copy()
        prog.run([y], y)
    assert calls == [x.size] * 3  # fresh output, a given one, in place: each the one loop
    for a in (got, out, y):
        assert np.array_equal(a.view(np.uint32), want.view(np.uint32))
    assert np.array_equal(want.view(np.uint32), _gelu_numpy(x).view(np.uint32))
