"""Generated conv2d / conv_data_grad / conv_filter_grad kernels (implicit GEMMs) on cudasim
equal the numpy backend: strides, padding, dilation, groups, bias, ``_add_to_output``, both
layouts, every dtype the CPU kernels admit (f32, f64, f16, i8, i32, i64), SIMT and tensor-core
tiles, split-K filter gradients; then all compile with nvcc."""

from __future__ import annotations

import pytest
from cuda_harness import RTOL, check, nvcc_compile_all, prebuild, rand

# (n, c, h, w, filters, kernel, strides, padding, dilation, groups)
GEOMETRIES = {
    "plain": (2, 3, 7, 6, 4, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    "strided": (1, 4, 9, 8, 6, (3, 2), (2, 1), (1, 0), (1, 2), 2),
    "grouped": (2, 6, 10, 10, 6, (3, 3), (2, 2), (1, 1), (2, 2), 3),
    # 64+ filters and pixels: the 64x64 tiles; filter gradient K = 2*24*24 splits
    "wide": (2, 2, 24, 24, 64, (1, 1), (1, 1), (0, 0), (1, 1), 1),
}
FIRST, LAST = "channels_first", "channels_last"


def _operands(geo: str, fmt: str, dt: str):
    n, c, h, w, o, k, s, p, d, g = GEOMETRIES[geo]
    xs = (n, c, h, w) if fmt == FIRST else (n, h, w, c)
    ws = (o, c // g, *k) if fmt == FIRST else (o, *k, c // g)
    oh = [(size + 2 * pp - dd * (kk - 1) - 1) // ss + 1
          for size, kk, ss, pp, dd in zip((h, w), k, s, p, d)]
    ys = (n, o, *oh) if fmt == FIRST else (n, *oh, o)
    attrs = {"data_format": fmt, "kernel_size": list(k), "strides": list(s),
             "padding_before": list(p), "dilation_rate": list(d), "groups": g}
    return (rand(xs, dt, seed=1), rand(ws, dt, seed=2), rand((o,), dt, seed=3),
            rand(ys, dt, seed=4), attrs)


def _cases(geo: str, fmt: str, dt: str, extras: bool = False) -> list[tuple[str, list, dict]]:
    x, w, b, dy, attrs = _operands(geo, fmt, dt)
    grad = {**attrs, "num_spatial_dims": 2}
    out = [("tdflow.conv2d", [x, w, b], attrs), ("tdflow.conv_data_grad", [dy, w, x], grad),
           ("tdflow.conv_filter_grad", [dy, x], grad)]
    if extras:  # no bias; _add_to_output without a bias; both
        seg = {**attrs, "operandSegmentSizes": [1, 1, 0, 1]}
        out += [("tdflow.conv2d", [x, w], attrs), ("tdflow.conv2d", [x, w, None, dy], seg),
                ("tdflow.conv2d", [x, w, b, dy], {**attrs, "operandSegmentSizes": [1, 1, 1, 1]}),
                ("tdflow.conv_data_grad", [dy, w, x, rand(x.shape, dt, seed=5)], grad)]
    return out


def _all() -> list[tuple[str, list, dict]]:
    out = []
    for geo in GEOMETRIES:
        for fmt in (FIRST, LAST):
            out += _cases(geo, fmt, "f32", extras=geo == "strided")
    for fmt in (FIRST, LAST):
        out += _cases("grouped", fmt, "f16") + _cases("wide", fmt, "f16")
        out += _cases("strided", fmt, "i32", extras=fmt == FIRST)
    out += _cases("grouped", FIRST, "f64") + _cases("strided", LAST, "f64")
    out += _cases("plain", FIRST, "i8") + _cases("grouped", LAST, "i64")
    return out


CASES = _all()


@pytest.fixture(scope="module", autouse=True)
def _compiled_together() -> None:
    prebuild(CASES)


def _id(i: int, case: tuple[str, list, dict]) -> str:
    op, ins, attrs = case
    return (f"{op.split('.')[1]}-{ins[0].dtype}-{'x'.join(map(str, ins[0].shape))}-"
            f"{attrs['data_format'].split('_')[1]}-{len(ins)}in-{i}")


@pytest.mark.parametrize("case", range(len(CASES)), ids=[_id(i, c) for i, c in enumerate(CASES)])
def test_matches_numpy(case: int) -> None:
    op, ins, attrs = CASES[case]
    dt = str(ins[0].dtype)
    if dt.startswith("float"):  # tolerance from the sums' size, as tests/runtime/test_conv_algos.py
        check(op, ins, attrs, atol=RTOL[DTYPE[dt]] * _abs_scale(op, ins, attrs))
    else:
        check(op, ins, attrs)


DTYPE = {"float16": "f16", "float32": "f32", "float64": "f64"}


def _abs_scale(op: str, ins: list, attrs: dict) -> float:
    """The largest entry of the same op on the operands' absolute values, in float64: the size
    of the sums of products each result entry is, which bounds their rounding. A filter
    gradient sums N*H*W products (2*24*24 in the wide geometry) whose result may cancel to far
    below them, so the result's own size is no measure of the error two summation orders make
    (cudasim's split-K and numpy's BLAS both stay within 1e-8 of this scale in f32)."""
    import numpy as np
    from tdflow.dialect import standard_dialect
    from tdflow.dialect.attr_normalize import complete_attrs
    from tdflow.runtime.kernels.registry import kernel_table

    wide = [None if a is None else np.abs(a).astype(np.float64) for a in ins]
    k = kernel_table("cpu").select(op, tuple("f64" if a is not None else None for a in ins))
    full = complete_attrs(standard_dialect().lookup(op), attrs,
                          [None if a is None else a.shape for a in ins])
    return float(np.max(k.fn(full, wide, [None])[0]))


def test_all_compile_with_nvcc() -> None:
    # runs last in this module: every kernel the tests above generated, in one nvcc call
    report = nvcc_compile_all()
    assert "Compiling entry function" in report
