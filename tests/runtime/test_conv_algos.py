"""The convolution algorithms of `_conv_algos` against im2col (the same kernels with the new
paths off) and an independent float64 numpy reference, on random geometry, dtypes, layouts and
non-finite values.

Tolerance (the one `_conv_algos` documents): ``|new - old| <= tol * B`` elementwise, where
``B`` is the largest entry of the same convolution of ``|operands|`` (the bound on the rounding
error of any summation order), ``tol`` 1e-5 for f32, 1e-12 for f64, 2e-3 for f16 (its results
are rounded to f16 after the f32 sums).
"""

from __future__ import annotations

import itertools
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tdflow.runtime.kernels import _conv_algos as conv_algos
from tdflow.runtime.kernels import _conv_taps as taps
from tdflow.runtime.kernels import _conv_winograd as winograd
from tdflow.runtime.kernels import conv

TOL = {np.float16: 2e-3, np.float32: 1e-5, np.float64: 1e-12}


@pytest.fixture
def every_path(monkeypatch):
    """The new paths on for every shape they cover (small test shapes included)."""
    all_paths(monkeypatch)


def all_paths(monkeypatch):
    monkeypatch.setattr(conv_algos, "ENABLED", True)
    monkeypatch.setattr(conv_algos, "MIN_FLAT_CHANNELS", 1)
    monkeypatch.setattr(conv_algos, "MAX_GRID_WASTE", math.inf)
    monkeypatch.setattr(conv_algos, "MAX_GRID_WASTE_FORWARD", math.inf)
    monkeypatch.setattr(conv_algos, "FLAT_FILTER_GRAD", True)
    monkeypatch.setattr(conv_algos, "MAX_TILE_WASTE", math.inf)
    monkeypatch.setattr(conv_algos, "MIN_WINOGRAD_PIXELS", 0)
    monkeypatch.setattr(conv_algos, "MIN_TAPS_PIXELS", 0)
    monkeypatch.setattr(conv_algos, "MIN_FLAT_PIXELS", 0)
    monkeypatch.setattr(conv_algos, "MIN_TAPS_CHANNELS", 1)
    monkeypatch.setattr(conv_algos, "MIN_WINOGRAD_CHANNELS",
                        dict.fromkeys(conv_algos.MIN_WINOGRAD_CHANNELS, 1))


def three(attrs, x, w, dy):
    """conv2d, conv_data_grad and conv_filter_grad of one geometry."""
    return (conv.conv2d(attrs, [x, w], [None])[0],
            conv.conv_data_grad(attrs, [dy, w, x], [None])[0],
            conv.conv_filter_grad(attrs, [dy, x], [None])[0])


def im2col(attrs, x, w, dy):
    old = conv_algos.ENABLED
    conv_algos.ENABLED = False
    try:
        return three(attrs, x, w, dy)
    finally:
        conv_algos.ENABLED = old


# --- an independent float64 reference (NC*S / OC*K layout), one einsum per kernel tap -------

def _slab(t, pad_out, stride, dil):
    return tuple(slice(o * d, o * d + s * (n - 1) + 1, s)
                 for o, d, s, n in zip(t, dil, stride, pad_out))


def ref_conv(x, w, pad, stride, dil, groups):
    n, c, *sp = x.shape
    o, cg, *k = w.shape
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(p, p) for p in pad])
    out_sp = [(s + 2 * p - d * (kk - 1) - 1) // st + 1
              for s, p, d, kk, st in zip(sp, pad, dil, k, stride)]
    xg = xp.reshape(n, groups, cg, *xp.shape[2:])
    wg = w.astype(np.float64).reshape(groups, o // groups, cg, *k)
    out = np.zeros((n, groups, o // groups, *out_sp))
    for t in itertools.product(*map(range, k)):
        win = xg[(slice(None),) * 3 + _slab(t, out_sp, stride, dil)]
        out += np.einsum("ngc...,goc->ngo...", win, wg[(slice(None),) * 3 + t])
    return out.reshape(n, o, *out_sp)


def ref_grads(x, w, dy, pad, stride, dil, groups):
    n, c, *sp = x.shape
    o, cg, *k = w.shape
    out_sp = dy.shape[2:]
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(p, p) for p in pad])
    xg = xp.reshape(n, groups, cg, *xp.shape[2:])
    wg = w.astype(np.float64).reshape(groups, o // groups, cg, *k)
    dyg = dy.astype(np.float64).reshape(n, groups, o // groups, *out_sp)
    dxg = np.zeros_like(xg)
    dwg = np.zeros_like(wg)
    for t in itertools.product(*map(range, k)):
        sl = (slice(None),) * 3 + _slab(t, out_sp, stride, dil)
        dxg[sl] += np.einsum("ngo...,goc->ngc...", dyg, wg[(slice(None),) * 3 + t])
        win = xg[sl].reshape(n, groups, cg, -1)
        dwg[(slice(None),) * 3 + t] = np.einsum("ngos,ngcs->goc",
                                                dyg.reshape(n, groups, o // groups, -1), win)
    crop = (slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(pad, sp))
    return dxg.reshape(xp.shape)[crop], dwg.reshape(w.shape)


# --- helpers -------------------------------------------------------------------------------

def attrs_of(k, pad, stride, dil, groups, last):
    return {"data_format": "channels_last" if last else "channels_first", "kernel_size": list(k),
            "padding_before": list(pad), "strides": list(stride), "dilation_rate": list(dil),
            "groups": groups, "num_spatial_dims": len(k)}


def to_layout(a, last):
    return np.ascontiguousarray(np.moveaxis(a, 1, -1)) if last else a


def from_layout(a, last):
    return np.moveaxis(a, -1, 1) if last else a


def check_close(got, want, bound, dt):
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    limit = TOL[dt] * max(float(np.max(bound, initial=0.0)), 1e-30)
    assert float(np.max(err, initial=0.0)) <= limit, (float(err.max()), limit)


def geometry(data, nd):
    k = [data.draw(st.integers(1, 3)) for _ in range(nd)]
    dil = [data.draw(st.integers(1, 2)) for _ in range(nd)]
    pad = [data.draw(st.integers(0, 2)) for _ in range(nd)]
    # stride 1 most of the time: that is where the flat path runs
    stride = [data.draw(st.sampled_from([1, 1, 1, 2])) for _ in range(nd)]
    sp = [data.draw(st.integers(max(1, d * (kk - 1) + 1 - 2 * p), 6))
          for kk, d, p in zip(k, dil, pad)]
    return k, dil, pad, stride, sp


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_new_paths_match_im2col_and_float64_reference(data):
    nd = data.draw(st.sampled_from([1, 2, 2, 2, 3]))
    k, dil, pad, stride, sp = geometry(data, nd)
    if data.draw(st.booleans()):  # the pointwise path: an unpadded 1x1 kernel
        k, pad = [1] * nd, [0] * nd
    groups = data.draw(st.sampled_from([1, 1, 2]))
    cg, og, n = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)), data.draw(
        st.integers(1, 3))
    dt = data.draw(st.sampled_from([np.float16, np.float32, np.float64]))
    last = data.draw(st.booleans())
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    x = rng.normal(size=(n, cg * groups, *sp))
    w = rng.normal(size=(og * groups, cg, *k))
    x, w = x.astype(dt), w.astype(dt)
    want = ref_conv(x, w, pad, stride, dil, groups)
    dy = rng.normal(size=want.shape).astype(dt)
    a = attrs_of(k, pad, stride, dil, groups, last)
    ops = [to_layout(x, last), to_layout(w, last), to_layout(dy, last)]
    old = [from_layout(r, last) for r in im2col(a, *ops)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(conv_algos, "MIN_FLAT_CHANNELS", 1)
        mp.setattr(conv_algos, "MAX_GRID_WASTE", math.inf)
        mp.setattr(conv_algos, "MAX_GRID_WASTE_FORWARD", math.inf)
        mp.setattr(conv_algos, "FLAT_FILTER_GRAD", True)
        new = [from_layout(r, last) for r in three(a, *ops)]
    dx, dw = ref_grads(x, w, dy, pad, stride, dil, groups)
    bounds = [ref_conv(abs(x), abs(w), pad, stride, dil, groups),
              *ref_grads(abs(x), abs(w), abs(dy), pad, stride, dil, groups)]
    for got, base, ref, bound in zip(new, old, [want, dx, dw], bounds):
        assert got.dtype == dt and got.shape == base.shape == ref.shape
        check_close(got, base, bound, dt)
        check_close(got, ref, bound, dt)


@pytest.mark.parametrize("where", ["x", "w", "dy"])
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("shape", [((2, 4, 6, 5), (4, 3, 3), (1, 1)),   # flat (3x3, stride 1)
                                   ((2, 4, 6, 5), (4, 1, 1), (0, 0))])  # pointwise
def test_non_finite_values_propagate_like_im2col(every_path, where, value, shape):
    (n, c, h, wd), (o, kh, kw), pad = shape
    rng = np.random.default_rng(5)
    x = rng.normal(size=(n, c, h, wd)).astype(np.float32)
    w = rng.normal(size=(o, c, kh, kw)).astype(np.float32)
    dy = rng.normal(size=(n, o, h, wd)).astype(np.float32)
    arr = {"x": x, "w": w, "dy": dy}[where]
    arr.flat[rng.choice(arr.size, 2, replace=False)] = value
    a = attrs_of((kh, kw), pad, (1, 1), (1, 1), 1, False)
    for got, base in zip(three(a, x, w, dy), im2col(a, x, w, dy)):
        for test in (np.isnan, np.isposinf, np.isneginf):
            np.testing.assert_array_equal(test(got), test(base))
        fin = np.isfinite(base)
        np.testing.assert_allclose(got[fin], base[fin], rtol=1e-4, atol=1e-4)


def test_resnet_layers_take_the_new_paths(monkeypatch):
    """The shapes the ResNet example trains with are the ones the defaults speed up."""
    taken = []
    for name in ("correlate", "filter_grad"):
        real = getattr(winograd, name)
        monkeypatch.setattr(winograd, name,
                            lambda *a, _real=real, _name=name: taken.append(_name) or _real(*a))
    rng = np.random.default_rng(0)
    for (c, o, h, k, pad, s), (paths, wino) in {
            (16, 16, 8, 3, 1, 1): (("forward", "data_grad", "filter_grad"), 3),
            (32, 32, 4, 3, 1, 1): (("forward", "data_grad", "filter_grad"), 3),
            (1, 16, 8, 3, 1, 1): ((), 0),  # the stem's one channel: im2col measured faster
            (16, 32, 8, 3, 1, 2): (("forward", "data_grad", "filter_grad"), 0),  # taps
            (16, 32, 8, 1, 0, 2): (("forward", "data_grad", "filter_grad"), 0)}.items():
        x = rng.normal(size=(64, c, h, h)).astype(np.float32)
        w = rng.normal(size=(o, c, k, k)).astype(np.float32)
        a = attrs_of((k, k), (pad, pad), (s, s), (1, 1), 1, False)
        geo = conv.ConvGeometry(a, x, "tdflow.conv2d")
        oh = (h + 2 * pad - k) // s + 1
        dy = rng.normal(size=(o, 64, oh, oh)).astype(np.float32)
        taken.clear()
        got = {"forward": conv_algos.forward(geo, x, w, (k, k), (oh, oh)),
               "data_grad": conv_algos.data_grad(geo, dy, w, x.shape, (k, k)),
               "filter_grad": conv_algos.filter_grad(geo, dy, x, (k, k))}
        assert {name for name, r in got.items() if r is not None} == set(paths)
        assert len(taken) == wino, (c, o, h, taken)


def test_batch_one_forward_choices(monkeypatch):
    """Inference at batch 1 (ONNX ResNet-50): few output pixels or few input channels keep
    im2col's single GEMM (``None``); enough of both take Winograd or the taps."""
    taken = []
    for mod, name in ((winograd, "correlate"), (taps, "correlate")):
        real = getattr(mod, name)
        monkeypatch.setattr(mod, name, lambda *a, _real=real, _m=mod.__name__:
                            taken.append(_m.rsplit(".", 1)[1]) or _real(*a))
    rng = np.random.default_rng(1)
    for (c, o, h, k, pad, s), path in {
            (3, 8, 80, 7, 3, 2): None,  # the stem: 1600 pixels, but K = 3 per tap
            (16, 8, 80, 3, 1, 2): "_conv_taps",  # 1600 pixels of 16 channels
            (16, 8, 28, 3, 1, 2): None,  # 196 pixels at stride 2
            (16, 8, 28, 3, 1, 1): "_conv_winograd",  # 784 pixels
            (32, 8, 14, 3, 1, 1): "_conv_winograd",  # 196 pixels
            (32, 8, 12, 3, 1, 1): None,  # 144 pixels: not Winograd, nor flat
            (32, 8, 7, 3, 1, 1): None}.items():
        x = rng.normal(size=(1, c, h, h)).astype(np.float32)
        w = rng.normal(size=(o, c, k, k)).astype(np.float32)
        a = attrs_of((k, k), (pad, pad), (s, s), (1, 1), 1, False)
        geo = conv.ConvGeometry(a, x, "tdflow.conv2d")
        oh = (h + 2 * pad - k) // s + 1
        taken.clear()
        got = conv_algos.forward(geo, x, w, (k, k), (oh, oh))
        assert (got is None) == (path is None) and taken == ([path] if path else []), (c, h)


def test_integer_and_empty_convolutions_keep_im2col():
    a = attrs_of((3, 3), (1, 1), (1, 1), (1, 1), 1, False)
    geo = conv.ConvGeometry(a, np.ones((1, 16, 4, 4)), "tdflow.conv2d")
    xi, wi = np.ones((1, 16, 4, 4), np.int32), np.ones((16, 16, 3, 3), np.int32)
    assert conv_algos.forward(geo, xi, wi, (3, 3), (4, 4)) is None
    assert conv.conv2d(a, [xi, wi], [None])[0][0, 0].tolist() == [
        [64, 96, 96, 64], [96, 144, 144, 96], [96, 144, 144, 96], [64, 96, 96, 64]]
    xe = np.ones((0, 16, 4, 4), np.float32)
    assert conv_algos.forward(geo, xe, wi.astype(np.float32), (3, 3), (4, 4)) is None


def test_bias_add_to_output_and_buffers_on_the_new_path(every_path):
    rng = np.random.default_rng(7)
    x = rng.normal(size=(2, 4, 5, 5)).astype(np.float32)
    w = rng.normal(size=(6, 4, 3, 3)).astype(np.float32)
    bias = rng.normal(size=6).astype(np.float32)
    add = rng.normal(size=(2, 6, 5, 5)).astype(np.float32)
    a = attrs_of((3, 3), (1, 1), (1, 1), (1, 1), 1, False)
    out = np.empty((2, 6, 5, 5), np.float32)
    got = conv.conv2d(a, [x, w, bias, add], [out])[0]
    assert got is out
    want = ref_conv(x, w, (1, 1), (1, 1), (1, 1), 1) + bias[:, None, None] + add
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    dy = rng.normal(size=(2, 6, 5, 5)).astype(np.float32)
    acc = np.ones_like(x)
    dx = conv.conv_data_grad(a, [dy, w, x, acc], [None])[0]
    np.testing.assert_allclose(dx, ref_grads(x, w, dy, (1, 1), (1, 1), (1, 1), 1)[0] + 1,
                               rtol=1e-5, atol=1e-5)


# --- Winograd F(2x2, 3x3) ------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.data())
def test_winograd_matches_im2col_and_float64_reference(data):
    """Every 2-D 3x3 stride-1 geometry (odd sizes, pads 0-3, one channel, one pixel) on the
    Winograd path (checked taken), against im2col and the float64 reference."""
    pad = [data.draw(st.integers(0, 3)) for _ in range(2)]
    sp = [data.draw(st.integers(max(1, 3 - 2 * p), 9)) for p in pad]
    c, o, n = (data.draw(st.integers(1, 20)), data.draw(st.integers(1, 20)),
               data.draw(st.integers(1, 3)))
    dt = data.draw(st.sampled_from([np.float16, np.float32, np.float64]))
    last = data.draw(st.booleans())
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    x = rng.normal(size=(n, c, *sp)).astype(dt)
    w = rng.normal(size=(o, c, 3, 3)).astype(dt)
    want = ref_conv(x, w, pad, (1, 1), (1, 1), 1)
    dy = rng.normal(size=want.shape).astype(dt)
    a = attrs_of((3, 3), pad, (1, 1), (1, 1), 1, last)
    ops = [to_layout(x, last), to_layout(w, last), to_layout(dy, last)]
    old = [from_layout(r, last) for r in im2col(a, *ops)]
    with pytest.MonkeyPatch.context() as mp:
        taken = spy_winograd(mp)
        new = [from_layout(r, last) for r in three(a, *ops)]
    # the data gradient is a correlation padded by 2 - pad: Winograd only for pads up to 2
    assert taken == ["correlate"] * (1 + (max(pad) <= 2)) + ["filter_grad"]
    dx, dw = ref_grads(x, w, dy, pad, (1, 1), (1, 1), 1)
    bounds = [ref_conv(abs(x), abs(w), pad, (1, 1), (1, 1), 1),
              *ref_grads(abs(x), abs(w), abs(dy), pad, (1, 1), (1, 1), 1)]
    for got, base, ref, bound in zip(new, old, [want, dx, dw], bounds):
        assert got.dtype == dt and got.shape == base.shape == ref.shape
        check_close(got, base, bound, dt)
        check_close(got, ref, bound, dt)


def spy_winograd(monkeypatch):
    """The new paths on for every shape; returns the list of Winograd entry points called."""
    all_paths(monkeypatch)
    taken = []
    for name in ("correlate", "filter_grad"):
        real = getattr(winograd, name)
        monkeypatch.setattr(winograd, name,
                            lambda *a, _real=real, _name=name: taken.append(_name) or _real(*a))
    return taken


@pytest.fixture
def every_path_winograd(monkeypatch):
    return spy_winograd(monkeypatch)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, 1e38])
@pytest.mark.parametrize("where", ["x", "w", "dy"])
def test_winograd_leaves_non_finite_and_huge_operands_to_the_other_paths(
        every_path_winograd, where, value):
    """An inf would meet -inf in the transforms (NaN where im2col gives inf), and 1e38 would
    overflow them: those operands take the flat path, whose results match im2col's."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 4, 6, 6)).astype(np.float32)
    w = rng.normal(size=(5, 4, 3, 3)).astype(np.float32)
    dy = rng.normal(size=(2, 5, 6, 6)).astype(np.float32)
    arr = {"x": x, "w": w, "dy": dy}[where]
    arr.flat[rng.choice(arr.size, 2, replace=False)] = value
    a = attrs_of((3, 3), (1, 1), (1, 1), (1, 1), 1, False)
    with np.errstate(all="ignore"):
        got, base = three(a, x, w, dy), im2col(a, x, w, dy)
    # each kernel reads two of the three operands: the one with the bad value falls back
    uses = {"x": ("correlate", "filter_grad"), "w": ("correlate", "correlate"),
            "dy": ("correlate", "filter_grad")}[where]
    assert len(every_path_winograd) == 3 - len(uses)
    for g, b in zip(got, base):
        for test in (np.isnan, np.isposinf, np.isneginf):
            np.testing.assert_array_equal(test(g), test(b))
        fin = np.isfinite(b)
        np.testing.assert_allclose(g[fin], b[fin], rtol=1e-4, atol=1e-4 * abs(b[fin]).max())


def test_winograd_results_do_not_alias_its_scratch(every_path):
    """Results are views of per-thread scratch until the kernel's store copies them: a second
    call must not change the first result (one output pixel included, where the view would be
    contiguous), nor a call on another thread."""
    rng = np.random.default_rng(11)
    for sp in [(8, 8), (1, 1)]:
        a = attrs_of((3, 3), (1, 1), (1, 1), (1, 1), 1, False)
        x1, x2 = (rng.normal(size=(3, 4, *sp)).astype(np.float32) for _ in range(2))
        w = rng.normal(size=(6, 4, 3, 3)).astype(np.float32)
        first = conv.conv2d(a, [x1, w], [None])[0]
        kept = first.copy()
        conv.conv2d(a, [x2, w], [None])
        np.testing.assert_array_equal(first, kept)
    xs = [rng.normal(size=(4, 16, 8, 8)).astype(np.float32) for _ in range(8)]
    w = rng.normal(size=(16, 16, 3, 3)).astype(np.float32)
    a = attrs_of((3, 3), (1, 1), (1, 1), (1, 1), 1, False)
    alone = [conv.conv2d(a, [x, w], [None])[0] for x in xs]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda x: conv.conv2d(a, [x, w], [None])[0], xs * 4))
    for i, got in enumerate(together):
        np.testing.assert_array_equal(got, alone[i % len(xs)])


# --- strided 2-D layers: one GEMM per tap (_conv_taps) --------------------------------------

@settings(max_examples=40, deadline=None)
@given(st.data())
def test_taps_path_matches_im2col_and_float64_reference(data):
    k = [data.draw(st.integers(1, 4)) for _ in range(2)]
    stride = [data.draw(st.integers(1, 3)) for _ in range(2)]
    if stride == [1, 1]:
        stride[data.draw(st.integers(0, 1))] = 2
    dil = [data.draw(st.integers(1, 2)) for _ in range(2)]
    pad = [data.draw(st.integers(0, 2)) for _ in range(2)]
    if k == [1, 1] and pad == [0, 0]:
        pad[0] = 1  # an unpadded 1x1 kernel takes the pointwise path
    sp = [data.draw(st.integers(max(1, d * (kk - 1) + 1 - 2 * p), 9))
          for kk, d, p in zip(k, dil, pad)]
    c, o, n = (data.draw(st.integers(1, 20)), data.draw(st.integers(1, 20)),
               data.draw(st.integers(1, 3)))
    dt = data.draw(st.sampled_from([np.float16, np.float32, np.float64]))
    last = data.draw(st.booleans())
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    x = rng.normal(size=(n, c, *sp)).astype(dt)
    w = rng.normal(size=(o, c, *k)).astype(dt)
    want = ref_conv(x, w, pad, stride, dil, 1)
    dy = rng.normal(size=want.shape).astype(dt)
    a = attrs_of(k, pad, stride, dil, 1, last)
    ops = [to_layout(x, last), to_layout(w, last), to_layout(dy, last)]
    old = [from_layout(r, last) for r in im2col(a, *ops)]
    taken = []
    with pytest.MonkeyPatch.context() as mp:
        # the forward's limits for batch-1 inference, off: these shapes test the path itself
        mp.setattr(conv_algos, "MIN_TAPS_PIXELS", 0)
        mp.setattr(conv_algos, "MIN_TAPS_CHANNELS", 1)
        for name in ("correlate", "data_grad", "filter_grad"):
            real = getattr(taps, name)
            mp.setattr(taps, name, lambda *a, _real=real, _name=name:
                       taken.append(_name) or _real(*a))
        new = [from_layout(r, last) for r in three(a, *ops)]
    assert taken == ["correlate", "data_grad", "filter_grad"]
    dx, dw = ref_grads(x, w, dy, pad, stride, dil, 1)
    bounds = [ref_conv(abs(x), abs(w), pad, stride, dil, 1),
              *ref_grads(abs(x), abs(w), abs(dy), pad, stride, dil, 1)]
    for got, base, ref, bound in zip(new, old, [want, dx, dw], bounds):
        assert got.dtype == dt and got.shape == base.shape == ref.shape
        check_close(got, base, bound, dt)
        check_close(got, ref, bound, dt)


@pytest.mark.parametrize("where", ["x", "w", "dy"])
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_taps_path_propagates_non_finite_values_like_im2col(where, value):
    rng = np.random.default_rng(9)
    x = rng.normal(size=(2, 4, 7, 6)).astype(np.float32)
    w = rng.normal(size=(5, 4, 3, 3)).astype(np.float32)
    dy = rng.normal(size=(2, 5, 4, 3)).astype(np.float32)
    arr = {"x": x, "w": w, "dy": dy}[where]
    arr.flat[rng.choice(arr.size, 2, replace=False)] = value
    a = attrs_of((3, 3), (1, 1), (2, 2), (1, 1), 1, False)
    with np.errstate(all="ignore"):
        got, base = three(a, x, w, dy), im2col(a, x, w, dy)
    for g, b in zip(got, base):
        for test in (np.isnan, np.isposinf, np.isneginf):
            np.testing.assert_array_equal(test(g), test(b))
        fin = np.isfinite(b)
        np.testing.assert_allclose(g[fin], b[fin], rtol=1e-4, atol=1e-4 * abs(b[fin]).max())
