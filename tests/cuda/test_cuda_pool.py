"""Generated pooling kernels on cudasim equal the numpy backend: max_pool_2d (values and
indices: strides, padding, dilation, ceil_mode, NaN, -inf, windows wholly in the padding) and
its gradient, avg_pool_2d (count_include_pad, divisor_override, ceil_mode) and its gradient,
adaptive_avg_pool2d (overlapping cells) and its gradient, both layouts and every dtype the CPU
kernels admit (floats for the average pools; f32, f64, f16, i8, i32, i64 for max pooling);
then all compile with nvcc."""

from __future__ import annotations

import numpy as np
import pytest
from cuda_harness import check, nvcc_compile_all, prebuild, rand
from tdflow.runtime.kernels.pool import max_pool_2d as cpu_max_pool

FIRST, LAST = "channels_first", "channels_last"
# (n, c, h, w), kernel, stride, padding, dilation, ceil_mode
WINDOWS = [((2, 3, 7, 6), (2, 2), (2, 2), (0, 0), (1, 1), False),
           ((1, 2, 9, 8), (3, 3), (2, 1), (1, 1), (2, 1), True),
           ((2, 2, 5, 5), (3, 2), (1, 2), (1, 1), (1, 1), True)]


def _x(shape, fmt: str, dt: str, seed: int = 1) -> np.ndarray:
    n, c, h, w = shape
    return rand((n, c, h, w) if fmt == FIRST else (n, h, w, c), dt, seed=seed)


def _max_attrs(win, fmt: str) -> dict:
    _, k, s, p, d, ceil = win
    return {"kernel_size": list(k), "stride": list(s), "padding": list(p), "dilation": list(d),
            "ceil_mode": ceil, "data_format": fmt}


def _avg_attrs(win, fmt: str, include: bool, override: int) -> dict:
    _, k, s, p, _, ceil = win
    return {"kernel_size": list(k), "stride": list(s), "padding": list(p), "ceil_mode": ceil,
            "data_format": fmt, "count_include_pad": include, "divisor_override": override}


def _special(fmt: str) -> np.ndarray:
    """NaN and -inf in some windows; ties between equal maxima."""
    x = np.round(_x((1, 2, 9, 8), fmt, "f32", seed=7))
    flat = x.reshape(-1)
    flat[[3, 20, 41]] = np.nan
    flat[[5, 6, 60, 61, 62]] = -np.inf
    return x


def _max_cases() -> list[tuple[str, list, dict]]:
    out = []
    for fmt in (FIRST, LAST):
        for dt in ("f32", "f64", "f16", "i8", "i32", "i64"):
            for win in (WINDOWS if dt in ("f32", "i32") else WINDOWS[1:2]):
                x = _x(win[0], fmt, dt)
                attrs = _max_attrs(win, fmt)
                y, idx = cpu_max_pool(attrs, [x], [None, None])
                out.append(("tdflow.max_pool_2d", [x], attrs))
                out.append(("tdflow.max_pool_2d_grad", [x, idx, rand(y.shape, dt, seed=2)], attrs))
        x = _special(fmt)
        out.append(("tdflow.max_pool_2d", [x], _max_attrs(WINDOWS[1], fmt)))
    # rows -1 and 2 of a 2-row input (dilation 3, padding 1): windows wholly in the padding
    x = rand((1, 1, 2, 5), seed=3)
    attrs = _max_attrs(((1, 1, 2, 5), (2, 2), (1, 1), (1, 0), (3, 1), False), FIRST)
    y, idx = cpu_max_pool(attrs, [x], [None, None])
    assert (idx < 0).any()
    out += [("tdflow.max_pool_2d", [x], attrs),
            ("tdflow.max_pool_2d_grad", [x, idx, rand(y.shape, seed=4)], attrs),
            ("tdflow.max_pool_2d_grad", [x, idx.astype(np.int32), rand(y.shape, seed=4)], attrs)]
    return out


def _avg_cases() -> list[tuple[str, list, dict]]:
    out = []
    for fmt in (FIRST, LAST):
        for dt in ("f32", "f64", "f16"):
            for win in (WINDOWS if dt == "f32" else WINDOWS[1:]):
                x = _x(win[0], fmt, dt)
                for include, override in ((False, 0), (True, 0), (False, 3)):
                    attrs = _avg_attrs(win, fmt, include, override)
                    out.append(("tdflow.avg_pool_2d", [x], attrs))
                    out.append(("tdflow.avg_pool_2d_grad", [x, None], attrs))  # dy filled below
            for size in ([1, 1], [3], [4, 5]):  # 7x6 -> 3x3, 4x5: cells overlap
                x = _x(WINDOWS[0][0], fmt, dt)
                attrs = {"data_format": fmt, "output_size": size}
                out.append(("tdflow.adaptive_avg_pool2d", [x], attrs))
                out.append(("tdflow.adaptive_avg_pool2d_grad", [x, None], attrs))
    return out


def _with_dy(cases: list[tuple[str, list, dict]]) -> list[tuple[str, list, dict]]:
    """Gradient cases get a dy shaped like the forward result of the case before them."""
    from cuda_harness import full_attrs, result_types

    done = []
    for op, ins, attrs in cases:
        if ins[-1] is None:
            fwd = op.removesuffix("_grad")
            shape = result_types(fwd, ins[:1], full_attrs(fwd, attrs))[0].shape
            ins = [ins[0], rand(shape, _name(ins[0].dtype), seed=5)]
        done.append((op, ins, attrs))
    return done


def _name(dt: np.dtype) -> str:
    return {"float16": "f16", "float32": "f32", "float64": "f64"}[dt.name]


CASES = _max_cases() + _with_dy(_avg_cases())


@pytest.fixture(scope="module", autouse=True)
def _compiled_together() -> None:
    prebuild(CASES)


def _id(i: int, case: tuple[str, list, dict]) -> str:
    op, ins, attrs = case
    return f"{op.split('.')[1]}-{ins[0].dtype}-{'x'.join(map(str, ins[0].shape))}-{i}"


@pytest.mark.parametrize("case", range(len(CASES)), ids=[_id(i, c) for i, c in enumerate(CASES)])
def test_matches_numpy(case: int) -> None:
    op, ins, attrs = CASES[case]
    got = check(op, ins, attrs)
    if op == "tdflow.max_pool_2d" and ins[0].dtype.kind == "f":
        assert np.isnan(got[0]).sum() == np.isnan(cpu_max_pool(attrs, ins, [None, None])[0]).sum()


def test_all_compile_with_nvcc() -> None:
    # runs last in this module: every kernel the tests above generated, in one nvcc call
    report = nvcc_compile_all()
    assert "Compiling entry function" in report
