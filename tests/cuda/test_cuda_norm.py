"""Generated layer_norm, group_norm and normalization kernels on cudasim equal the numpy
backend: f16/f32/f64, every combination of the optional operands, rows taking each path (a warp,
a cached block, an uncached 512-thread block), both group_norm layouts and silu, batch norm in
training (moving statistics updated in place, compared too) and inference, channel dims in
the middle and last, chunked partials; then all compile with nvcc."""

from __future__ import annotations

import numpy as np
import pytest
from cuda_harness import GENERATED, RTOL, check, full_attrs, nvcc_compile_all, prebuild, rand
from tdflow.dialect.types import dtype_from_numpy
from tdflow.runtime.backends import get_backend
from tdflow.runtime.kernels.registry import kernel_table

DTS = ("f16", "f32", "f64")
LN = [((5, 7), 1, 1), ((3, 200), 1, 1), ((2, 3, 700), 1, 1), ((2, 9000), -1, -1),
      ((4, 3, 5), 2, 1)]  # gamma/beta of (3, 5) span more than a row of 5
GN = [((2, 4, 3, 3), 2, "channels_first"), ((2, 3, 3, 4), 2, "channels_last"),
      ((3, 6, 50), 3, "channels_first"), ((2, 40, 6), 3, "channels_last"),
      ((2, 8, 30, 30), 2, "channels_first")]
BN = [((8, 4, 5, 5), 1),     # inner 25 < 32: column tiles over (channel, inner)
      ((4, 3, 32, 20), 1),   # a block per (channel, chunk), three chunks per channel
      ((300, 6), 1),         # channels last, five chunks of the batch
      ((2, 70, 3), 1)]


def _ln_cases(dt: str):
    out = []
    for shape, a, pa in LN:
        x = rand(shape, dt, seed=1)
        p = shape[pa:] if pa >= 0 else shape[pa + len(shape):]
        g, b = rand(p, dt, seed=2), rand(p, dt, seed=3)
        base = {"begin_norm_axis": a, "begin_params_axis": pa, "epsilon": 1e-5}
        out.append(([x, b, g], {**base, "center": True, "scale": True}))
        if dt == "f32":  # the other operand combinations, in one dtype
            out += [([x], base), ([x, None, g], {**base, "scale": True}),
                    ([x, b], {**base, "center": True})]
    return [("tdflow.layer_norm", ins, at) for ins, at in out]


def _gn_cases(dt: str):
    out = []
    for shape, groups, fmt in GN:
        x = rand(shape, dt, seed=4)
        c = shape[-1 if fmt == "channels_last" else 1]
        g, b = rand((c,), dt, seed=5), rand((c,), dt, seed=6)
        base = {"num_groups": groups, "data_format": fmt, "epsilon": 1e-5}
        out.append(([x, b, g], {**base, "affine": True, "activation": "silu"}))
        if dt == "f32":
            out += [([x], base), ([x, b, g], {**base, "affine": True})]
    return [("tdflow.group_norm", ins, at) for ins, at in out]


def _bn_inputs(dt: str, shape, axis: int, moving: bool = True, add: bool = False):
    c = shape[axis]
    x = rand(shape, dt, seed=7)
    mm, mv = rand((c,), dt, seed=8), rand((c,), dt, lo=0.5, hi=2.0, seed=9)
    g, b = rand((c,), dt, seed=10), rand((c,), dt, seed=11)
    ins = [x, mm, mv, g, b] if moving else [x, None, None, g, b]
    return ins + [rand(shape, dt, seed=12)] if add else ins


def _bn_cases(dt: str):
    out = []
    for shape, axis in BN:
        for training in (True, False):
            attrs = {"axis": axis, "epsilon": 1e-5, "momentum": 0.9, "training": training}
            out.append(("tdflow.normalization", _bn_inputs(dt, shape, axis, add=True), attrs))
            if dt == "f32":
                out.append(("tdflow.normalization", _bn_inputs(dt, shape, axis), attrs))
        if dt == "f32":
            out.append(("tdflow.normalization", _bn_inputs(dt, shape, axis, moving=False),
                        {"axis": axis, "epsilon": 1e-5, "momentum": 0.9, "training": True}))
    return out


# numpy's f32 batch statistics are pairwise f32 sums, the kernels' double sums: where beta
# cancels (x - mean) * inv * gamma, y differs by a few f32 ulps of its terms (the kernels' y is
# the closer to a float64 reference: 3.9e-7 against numpy's 9.1e-7 on the (300, 6) case)
BN_ATOL = {"f32": 2e-6}
TRAINING = {"axis": 0, "epsilon": 1e-5, "momentum": 0.9, "training": True}


def _bn_buffers(dt: str, shape, axis: int, n_results: int):
    """Training inputs, attributes and result buffers (y, or y, mean and inv_variance)."""
    ins = _bn_inputs(dt, shape, axis)
    attrs = full_attrs("tdflow.normalization", {**TRAINING, "axis": axis})
    outs = [np.empty_like(ins[0])] + [np.empty_like(ins[1]) for _ in range(n_results - 1)]
    return ins, attrs, outs


def _explicit_codes() -> list:
    """cudasim code of the in-place tests' normalizations (their result types are given)."""
    sim = get_backend("cudasim")
    codes = []
    for dt in DTS:
        for shape, axis in BN:
            for n in (1, 3):
                ins, attrs, outs = _bn_buffers(dt, shape, axis, n)
                codes.append(sim.code_for("tdflow.normalization", attrs, ins, outs))
    GENERATED.extend(codes)  # compiled by nvcc at the end too
    return codes


@pytest.fixture(scope="module", autouse=True)
def _compiled_together() -> None:
    prebuild([c for dt in DTS for c in _ln_cases(dt) + _gn_cases(dt) + _bn_cases(dt)])
    get_backend("cudasim").prepare(_explicit_codes())


@pytest.mark.parametrize("dt", DTS)
def test_layer_norm(dt) -> None:
    for op, ins, attrs in _ln_cases(dt):
        y, mean, inv = check(op, ins, attrs)
        assert mean.dtype == (np.float32 if dt == "f16" else y.dtype)


@pytest.mark.parametrize("dt", DTS)
def test_group_norm(dt) -> None:
    for op, ins, attrs in _gn_cases(dt):
        check(op, ins, attrs)


@pytest.mark.parametrize("dt", DTS)
def test_normalization_results(dt) -> None:
    for op, ins, attrs in _bn_cases(dt):
        check(op, ins, attrs, atol=BN_ATOL.get(dt))


def _both(op: str, inputs, attrs, results):
    """Each device's results and (updated in place) operands, into copies of ``results``."""
    done = []
    for device in ("cpu", "cudasim"):
        ins = [None if a is None else a.copy() for a in inputs]
        outs = [np.empty_like(r) for r in results]
        k = kernel_table(device).select(
            op, [None if a is None else dtype_from_numpy(a.dtype) for a in ins], attrs)
        done.append(list(k(attrs, ins, outs)) + [a for a in ins if a is not None])
    return done


@pytest.mark.parametrize("dt", DTS)
@pytest.mark.parametrize("n_results", (1, 3))
def test_normalization_updates_moving_statistics(dt, n_results) -> None:
    for shape, axis in BN:
        before, attrs, results = _bn_buffers(dt, shape, axis, n_results)
        want, got = _both("tdflow.normalization", before, attrs, results)
        for k, (g, w) in enumerate(zip(got, want)):
            r = RTOL[dt]
            scale = max(1.0, float(np.max(np.abs(w.astype(np.float64)))))
            atol = BN_ATOL.get(dt, r * scale * 1e-2)
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=r,
                                       atol=atol, err_msg=f"{shape} buffer {k}")
        # the moving statistics did move (operands 1 and 2, after the results)
        assert not np.array_equal(got[n_results + 1], before[1])
        assert not np.array_equal(got[n_results + 2], before[2])


def test_inference_leaves_moving_statistics() -> None:
    ins, attrs, results = _bn_buffers("f32", (8, 4, 5, 5), 1, 3)
    _, got = _both("tdflow.normalization", ins, {**attrs, "training": False}, results)
    assert np.array_equal(got[4], ins[1]) and np.array_equal(got[5], ins[2])


def test_all_compile_with_nvcc() -> None:
    # runs last in this module: every kernel the tests above generated, in one nvcc call
    report = nvcc_compile_all()
    assert "Compiling entry function" in report
