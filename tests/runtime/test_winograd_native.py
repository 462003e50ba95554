"""The native Winograd transforms (``lowering/winograd_native.py``) against their numpy path in
``runtime/kernels/_conv_winograd.py``: the same bits for the input and output transforms and
the filter gradient's ``dM`` (odd
and even output sizes, paddings 0-2, rows longer than the C loop's block, signed zeros,
subnormals, sums that overflow to inf and then meet inf), through the convolution kernels too,
and the calls it hands back to numpy."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from native_support import need_native, special_mix
from tdflow.lowering import winograd_native
from tdflow.runtime.kernels import _conv_winograd as winograd
from tdflow.runtime.kernels import conv

SPECIALS = [0.0, -0.0, 1e-45, -1e-45, 1.2e-38, 3.0e38, -3.0e38]


def _native():
    need_native()
    run = winograd_native.native_transforms()
    assert run is not None, "a compiler and Python.h are here, yet the transforms were not built"
    return run


def _same_bits(a: np.ndarray, b: np.ndarray) -> None:
    # NaN from inf - inf: numpy's and the C loop's are the same default NaN, but compare the
    # masks and the rest bit for bit so a payload detail cannot hide a wrong value
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    assert np.array_equal(np.isnan(a), np.isnan(b))
    keep = ~np.isnan(a)
    assert np.array_equal(a[keep].view(np.uint32), b[keep].view(np.uint32))


def _both(fn, *args):
    # the special values overflow on purpose (both paths alike)
    with np.errstate(over="ignore", invalid="ignore"):
        with mock.patch.object(winograd_native, "USE_NATIVE_WINOGRAD", False):
            ref = np.array(fn(*args), copy=True)
        return np.array(fn(*args), copy=True), ref


def _mixed(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    v = special_mix("f32", rng, int(np.prod(shape)), SPECIALS)
    return np.where(np.isnan(v), np.float32(1.5), v).reshape(shape)  # NaN inputs: see below


@pytest.mark.parametrize("n,c,h,w,pad", [(64, 16, 8, 8, 1), (3, 5, 7, 6, 1), (2, 3, 6, 9, 0),
                                         (1, 1, 3, 3, 2), (5, 60, 4, 5, 1)])
def test_input_transform_bits(n, c, h, w, pad):
    _native()
    rng = np.random.default_rng(n * 1000 + c)
    x = _mixed(rng, (n, c, h, w))
    out_hw = (h + 2 * pad - 2, w + 2 * pad - 2)
    got, ref = _both(winograd.input_transform, x, (pad, pad), out_hw)
    _same_bits(got, ref)


@pytest.mark.parametrize("n,o,oh,ow", [(64, 16, 8, 8), (3, 7, 5, 6), (2, 150, 3, 3), (1, 1, 1, 2)])
def test_output_transform_bits(n, o, oh, ow):
    _native()
    rng = np.random.default_rng(o)
    tiles = ((oh + 1) // 2) * ((ow + 1) // 2) * n
    m = _mixed(rng, (16, tiles, o))
    got, ref = _both(winograd.output_transform, m, n, (oh, ow))
    _same_bits(got, ref)


@pytest.mark.parametrize("n,c,o,h,w", [(64, 16, 16, 8, 8), (3, 4, 5, 7, 6), (2, 3, 140, 5, 5)])
def test_filter_grad_bits(n, c, o, h, w):
    """The filter gradient's ``dM = A dY A^T`` (odd sizes: the zeroed tile rows too)."""
    _native()
    rng = np.random.default_rng(o * 10 + h)
    x = _mixed(rng, (n, c, h, w))
    dy = _mixed(rng, (n, o, h, w))
    got, ref = _both(winograd.filter_grad, x, dy, (1, 1))
    _same_bits(got, ref)


def test_nan_inputs_propagate_alike():
    _native()
    rng = np.random.default_rng(7)
    x = special_mix("f32", rng, 2 * 8 * 6 * 6, SPECIALS + [np.inf, -np.inf]).reshape(2, 8, 6, 6)
    got, ref = _both(winograd.input_transform, x, (1, 1), (6, 6))
    _same_bits(got, ref)


@pytest.mark.parametrize("op", ["conv2d", "conv_data_grad", "conv_filter_grad"])
@pytest.mark.parametrize("c,o,h", [(16, 16, 8), (32, 32, 4), (8, 12, 5)])
def test_conv_kernels_bits(op, c, o, h):
    """The kernels that take the Winograd path give the numpy path's bits."""
    _native()
    rng = np.random.default_rng(c + o + h)
    attrs = {"data_format": "channels_first", "kernel_size": [3, 3], "strides": [1, 1],
             "dilation_rate": [1, 1], "padding_before": [1, 1], "groups": 1}
    x = rng.standard_normal((6, c, h, h), dtype=np.float32)
    w = rng.standard_normal((o, c, 3, 3), dtype=np.float32)
    dy = rng.standard_normal((6, o, h, h), dtype=np.float32)
    inputs = {"conv2d": [x, w], "conv_data_grad": [dy, w, x], "conv_filter_grad": [dy, x]}[op]
    got, ref = _both(lambda: getattr(conv, op)(attrs, inputs, [None])[0])
    _same_bits(got, ref)


def test_hands_back_on_wrong_sizes_and_overlap():
    run = _native()
    xp = np.ones((4, 4, 3), np.float32)
    v = np.full((4, 4, 1, 1, 3), 7.0, np.float32)
    assert not run(0, xp, v, 1, 2, 3, 0)  # sizes that disagree with the buffers
    assert not run(3, xp, v, 1, 1, 3, 0)  # no such kind
    assert not run(2, xp, v, 1, 1, 3, 0)  # dM: the source is not (th, 2, tw, 2, m)
    buf = np.zeros(16 * 3 + 48, np.float32)
    assert not run(0, buf[:48], buf[:48], 1, 1, 3, 0)  # overlapping
    assert (v == 7.0).all()
    assert run(0, xp, v, 1, 1, 3, 0)
    assert v[1, 1].ravel().tolist() == [4.0] * 3


def test_off_without_native(monkeypatch):
    monkeypatch.setenv("TDFLOW_NATIVE", "0")
    assert winograd_native.native_transforms() is None
