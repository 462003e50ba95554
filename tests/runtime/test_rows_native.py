"""The C row loops (``lowering/rows_native.py``) against numpy's operations: layer norm's
forward, softmax's bound launch and the bound last-axis ``reduce_sum``, each run with the loops
and with :data:`~tdflow.lowering.rows_native.USE_NATIVE_ROWS` off (numpy), bit for bit: row
lengths below 8, at numpy's 8-number blocks and past its 128-number pairwise split, signed
zeros (a row of -0 sums to +0), subnormals, infs, overflow, NaNs (where one NaN meets another
the payload may differ: those places are compared as NaN only)."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from native_support import need_native
from tdflow.lowering import elementwise_native_build, rows_native
from tdflow.runtime.kernels import norm, reduce, softmax

SPECIALS = np.array([0.0, -0.0, 1e-45, -1e-45, 1.2e-38, 3.0e38, -3.0e38, np.inf, -np.inf],
                    np.float32)
LENGTHS = [1, 5, 8, 13, 64, 127, 128, 129, 200, 1000]


@pytest.fixture(autouse=True)
def _built():
    need_native()
    run = rows_native.native_rows()
    assert run is not None, "a compiler and Python.h are here, yet the row loops were not built"
    x = np.ones((1, 8), np.float32)
    run(3, x, np.empty(1, np.float32), 1, 8)  # starts the build
    assert elementwise_native_build.wait_all(300)
    assert run(3, x, np.empty(1, np.float32), 1, 8), "the row loops refuse a plain call"


def _rows(rng: np.random.Generator, rows: int, n: int, nan: bool) -> np.ndarray:
    scale = rng.choice(np.array([1e-40, 1e-3, 1.0, 1e3, 1e37], np.float32), (rows, 1))
    x = (rng.standard_normal((rows, n)) * scale).astype(np.float32)
    m = rng.random((rows, n)) < 0.05
    x[m] = rng.choice(SPECIALS, int(m.sum()))
    if nan:
        m = rng.random((rows, n)) < 0.02
        x[m] = np.float32(np.nan)
    x[0] = -0.0
    x[1, ::2] = np.inf
    return x


def _same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(np.isnan(got), np.isnan(want))
    keep = ~np.isnan(want)
    assert np.array_equal(got[keep].view(np.uint32), want[keep].view(np.uint32))


def _numpy(fn, *args):
    with mock.patch.object(rows_native, "USE_NATIVE_ROWS", False):
        return fn(*args)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("nan", [False, True])
def test_layer_norm_bits(n, nan):
    rng = np.random.default_rng(n)
    x = _rows(rng, 300, n, nan)
    g, b = rng.standard_normal((2, n)).astype(np.float32)
    attrs = {"begin_norm_axis": 1, "begin_params_axis": 1, "epsilon": 1e-5,
             "center": True, "scale": True}

    def run():
        outs = [np.empty_like(x), np.empty(300, np.float32), np.empty(300, np.float32)]
        got = norm.layer_norm(attrs, [x, b, g], outs)
        assert all(a is o for a, o in zip(got, outs))
        return got

    with np.errstate(all="ignore"):
        assert norm._native_layer_norm(attrs, x, b, g, 1, [None] * 3) is not None
        for got, want in zip(run(), _numpy(run)):
            _same(got, want)


@pytest.mark.parametrize("scale,center", [(False, False), (True, False), (False, True)])
def test_layer_norm_without_params_and_new_outputs(scale, center):
    rng = np.random.default_rng(7)
    x = _rows(rng, 40, 96, False).reshape(4, 10, 96)
    g, b = rng.standard_normal((2, 96)).astype(np.float32)
    attrs = {"begin_norm_axis": 2, "begin_params_axis": 2, "epsilon": 1e-3,
             "center": center, "scale": scale}
    with np.errstate(all="ignore"):
        got = norm.layer_norm(attrs, [x, b, g], [None] * 3)
        want = _numpy(norm.layer_norm, attrs, [x, b, g], [None] * 3)
    for a, w in zip(got, want):
        _same(a, w)


def test_layer_norm_leaves_other_layouts_to_numpy():
    x = np.ones((4, 8), np.float32)
    attrs = {"begin_norm_axis": 1, "begin_params_axis": 1, "epsilon": 1e-5,
             "center": False, "scale": False}
    assert norm._native_layer_norm(attrs, x[:, ::2], None, None, 1, [None] * 3) is None
    assert norm._native_layer_norm(attrs, x.astype(np.float64), None, None, 1, [None] * 3) is None
    overlap = [x, np.empty(4, np.float32), np.empty(4, np.float32)]  # y on x: numpy decides
    assert norm._native_layer_norm(attrs, x, None, None, 1, overlap) is None


def _bound_softmax(x: np.ndarray, in_place: bool) -> np.ndarray:
    run = softmax.softmax.bind({}, [(x.shape, x.dtype)], [(x.shape, x.dtype)])
    buf = x.copy()
    out = buf if in_place else np.empty_like(x)
    run({}, [buf], [out])
    return out


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("nan", [False, True])
@pytest.mark.parametrize("in_place", [False, True])
def test_bound_softmax_bits(n, nan, in_place):
    rng = np.random.default_rng(100 + n)
    x = _rows(rng, 240, n, nan).reshape(4, 3, 20, n)
    with np.errstate(all="ignore"):
        _same(_bound_softmax(x, in_place), _numpy(_bound_softmax, x, in_place))


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("keepdims", [False, True])
def test_bound_row_sum_bits(n, keepdims):
    rng = np.random.default_rng(200 + n)
    x = _rows(rng, 300, n, True).reshape(3, 100, n)
    attrs = {"axis": [2], "keepdims": keepdims}
    shape = (3, 100, 1) if keepdims else (3, 100)

    def run():
        fn = reduce.reduce_sum.bind(attrs, [(x.shape, x.dtype)], [(shape, x.dtype)])
        out = np.empty(shape, np.float32)
        fn(attrs, [x], [out])
        return out

    with np.errstate(all="ignore"):
        got, want = run(), _numpy(run)
    # a NaN meeting another NaN: which payload survives may differ, so NaN-ness only there
    _same(got, want)
    with np.errstate(all="ignore"):
        assert np.array_equal(got, np.add.reduce(x, axis=2, keepdims=keepdims), equal_nan=True)
    assert np.signbit(got.reshape(300)[0]) == np.signbit(np.float32(0.0))  # -0 rows sum to +0
