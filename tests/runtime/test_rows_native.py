"""The C row loops (``lowering/rows_native.py``) against numpy's operations: layer norm's
forward, softmax's bound launch and the bound last-axis ``reduce_sum``, each run with the loops
and with :data:`~tdflow.lowering.rows_native.USE_NATIVE_ROWS` off (numpy), bit for bit: row
lengths below 8, at numpy's 8-number blocks and past its 128-number pairwise split, signed
zeros (a row of -0 sums to +0), subnormals, overflow; with infs and NaNs the loops hand the
launch to numpy (checked), so its NaN bits hold too."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from native_support import need_native
from tdflow.lowering import elementwise_native_build, rows_native
from tdflow.runtime.kernels import index, norm, reduce, softmax
from tdflow.runtime.kernels import slice as slice_

SPECIALS = np.array([0.0, -0.0, 1e-45, -1e-45, 1.2e-38, 3.0e38, -3.0e38, np.inf, -np.inf],
                    np.float32)
LENGTHS = [1, 5, 8, 13, 64, 127, 128, 129, 200, 1000]


@pytest.fixture(autouse=True)
def done():
    """The kinds of the row loops' calls that did the work (returned True), in order."""
    need_native()
    run = rows_native.native_rows()
    assert run is not None, "a compiler and Python.h are here, yet the row loops were not built"
    x = np.ones((1, 8), np.float32)
    run(3, x, np.empty(1, np.float32), 1, 8)  # starts the build
    assert elementwise_native_build.wait_all(300)
    assert run(3, x, np.empty(1, np.float32), 1, 8), "the row loops refuse a plain call"
    kinds: list[int] = []

    def counted(kind, *args):
        ok = run(kind, *args)
        if ok:
            kinds.append(kind)
        return ok

    # MIN_SIZE 1: the small cases below run the loops too (test_small_plans_keep_numpy)
    with mock.patch.object(rows_native, "native_rows",
                           lambda: counted if rows_native.USE_NATIVE_ROWS else None), \
            mock.patch.object(rows_native, "MIN_SIZE", 1):
        yield kinds


def _rows(rng: np.random.Generator, rows: int, n: int, nan: bool) -> np.ndarray:
    """Rows at scales from subnormal to near overflow, with signed zeros and subnormals; with
    ``nan``, infs and NaNs too (which the loops leave to numpy where they meet a sum)."""
    scale = rng.choice(np.array([1e-40, 1e-3, 1.0, 1e3, 1e36], np.float32), (rows, 1))
    x = (rng.standard_normal((rows, n)) * scale).astype(np.float32)
    m = rng.random((rows, n)) < 0.05
    x[m] = rng.choice(SPECIALS if nan else SPECIALS[:5], int(m.sum()))
    if nan:
        m = rng.random((rows, n)) < 0.02
        x[m] = np.float32(np.nan)
        x[min(1, rows - 1), ::2] = np.inf
    x[0] = -0.0
    return x


def _same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))  # NaN bits included


def _numpy(fn, *args):
    with mock.patch.object(rows_native, "USE_NATIVE_ROWS", False):
        return fn(*args)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("nan", [False, True])
def test_layer_norm_bits(n, nan, done):
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
        got, want = run(), _numpy(run)
    # a NaN result: numpy's values, so its NaN bits
    assert done == ([] if any(np.isnan(w).any() for w in want) else [0])
    assert nan or done
    for a, w in zip(got, want):
        _same(a, w)


@pytest.mark.parametrize("scale,center", [(False, False), (True, False), (False, True)])
def test_layer_norm_without_params_and_new_outputs(scale, center, done):
    rng = np.random.default_rng(7)
    x = _rows(rng, 40, 96, False).reshape(4, 10, 96)
    g, b = rng.standard_normal((2, 96)).astype(np.float32)
    attrs = {"begin_norm_axis": 2, "begin_params_axis": 2, "epsilon": 1e-3,
             "center": center, "scale": scale}
    with np.errstate(all="ignore"):
        got = norm.layer_norm(attrs, [x, b, g], [None] * 3)
        assert done == [0]
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
def test_bound_softmax_bits(n, nan, in_place, done):
    rng = np.random.default_rng(100 + n)
    x = _rows(rng, 240, n, nan).reshape(4, 3, 20, n)
    with np.errstate(all="ignore"):
        got, want = _bound_softmax(x, in_place), _numpy(_bound_softmax, x, in_place)
    # a NaN input: numpy from the start; a NaN sum (inf - inf): numpy's division
    assert done == ([] if np.isnan(x).any() else [1] if np.isnan(want).any() else [1, 2])
    assert nan or done == [1, 2]
    _same(got, want)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("nan", [False, True])
def test_bound_row_sum_bits(n, keepdims, nan, done):
    rng = np.random.default_rng(200 + n)
    x = _rows(rng, 300, n, nan).reshape(3, 100, n)
    attrs = {"axis": [2], "keepdims": keepdims}
    shape = (3, 100, 1) if keepdims else (3, 100)

    def run():
        fn = reduce.reduce_sum.bind(attrs, [(x.shape, x.dtype)], [(shape, x.dtype)])
        out = np.empty(shape, np.float32)
        fn(attrs, [x], [out])
        return out

    with np.errstate(all="ignore"):
        got, want = run(), _numpy(run)
    assert done == ([] if np.isnan(want).any() else [3])
    assert nan or done
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    with np.errstate(all="ignore"):
        assert np.array_equal(got, np.add.reduce(x, axis=2, keepdims=keepdims), equal_nan=True)
    assert np.signbit(got.reshape(300)[0]) == np.signbit(np.float32(0.0))  # -0 rows sum to +0


@pytest.mark.parametrize("shape", [(1024, 128), (16, 64, 128), (7, 3), (1000, 5), (1, 9)])
@pytest.mark.parametrize("like", [False, True])
@pytest.mark.parametrize("nan", [False, True])
def test_bound_column_sum_bits(shape, like, nan, done):
    rng = np.random.default_rng(sum(shape))
    x = _rows(rng, shape[0], int(np.prod(shape[1:])), nan).reshape(shape)
    x[:, 0] = -0.0  # a column of -0 sums to +0
    attrs = {"axis": [0], "keepdims": False}

    def run():
        if like:
            fn = reduce.reduce_sum_like.bind(attrs, [(x.shape, x.dtype), (shape[1:], x.dtype)],
                                             [(shape[1:], x.dtype)])
        else:
            fn = reduce.reduce_sum.bind(attrs, [(x.shape, x.dtype)], [(shape[1:], x.dtype)])
        out = np.empty(shape[1:], np.float32)
        fn(attrs, [x, out] if like else [x], [out])
        return out

    with np.errstate(all="ignore"):
        got, want = run(), _numpy(run)
    assert done == ([] if np.isnan(want).any() else [4])
    assert nan or done
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    assert not np.signbit(got.reshape(-1)[0])


@pytest.mark.parametrize("diagonal", [0, -1, 2, -70, 70])
@pytest.mark.parametrize("in_place", [False, True])
def test_fused_scale_tril_bits(diagonal, in_place, done):
    rng = np.random.default_rng(diagonal + 100)
    x = _rows(rng, 16 * 64, 64, True).reshape(4, 4, 64, 64)
    attrs = {"diagonal": diagonal, "is_floating_fill_value": True,
             "floating_fill_value": float("-inf"), "integer_fill_value": 0,
             "is_floating_scale_value": True, "floating_scale_value": 0.1767766952966369,
             "integer_scale_value": 0}

    def run():
        src = x.copy()
        out = src if in_place else np.empty_like(src)
        got = slice_.fused_scale_tril(attrs, [src], [out])[0]
        assert got is out
        return got

    with np.errstate(all="ignore"):
        got, want = run(), _numpy(run)
    assert done == [5]  # no sums: one NaN at most per operation, kept by both
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("rows,n,width,skip", [(1024, 64, 128, None), (64, 64, 128, None),
                                               (300, 7, 5, 3), (50, 200, 16, None), (0, 4, 8, None)])
@pytest.mark.parametrize("nan", [False, True])
@pytest.mark.parametrize("dt", ["f4", "f2"])
def test_embedding_grad_bits(rows, n, width, skip, nan, dt, done):
    rng = np.random.default_rng(rows + n)
    dy = _rows(rng, max(rows, 1), width, nan)[:rows].reshape(rows, width)
    dy = np.where(np.abs(dy) > 1e4, np.float32(1e4), dy).astype(dt)  # float16: no overflow
    ids = rng.integers(0, n, rows)
    w = np.empty((n, width), dt)
    attrs = {"padding_idx": -1 if skip is None else skip, "scale_grad_by_freq": False}

    def run():
        out = np.empty((n, width), dt)
        got = index.embedding_grad(attrs, [dy, w, ids], [out])[0]
        assert got is out
        return got

    with np.errstate(all="ignore"):
        got, want = run(), _numpy(run)
    assert np.array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))
    assert done == ([] if rows == 0 or np.isnan(want).any() else [6])
    assert nan or rows == 0 or done



def test_small_plans_keep_numpy(done):
    # launches under MIN_SIZE elements keep numpy (no module for a small plan or eager call)
    x = np.ones((64, 10), np.float32)
    with mock.patch.object(rows_native, "MIN_SIZE", 4096):
        _bound_softmax(x, False)
        fn = reduce.reduce_sum.bind({"axis": [0], "keepdims": False}, [(x.shape, x.dtype)],
                                    [((10,), x.dtype)])
        fn({}, [x], [np.empty(10, np.float32)])
        attrs = {"begin_norm_axis": 1, "begin_params_axis": 1, "epsilon": 1e-5,
                 "center": False, "scale": False}
        norm.layer_norm(attrs, [x], [None] * 3)
        index.embedding_grad({"padding_idx": -1, "scale_grad_by_freq": False},
                             [x, x, np.zeros(64, np.int64)], [None])
        assert done == []
        _bound_softmax(np.ones((64, 64), np.float32), False)
        assert done == [1, 2]
