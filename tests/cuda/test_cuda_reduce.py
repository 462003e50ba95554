"""Generated reduction kernels on cudasim equal the numpy backend: reduce_sum/max/min/prod and
reduce_sum_like in every dtype their CPU kernels admit, over shapes that take each kernel
variant (a thread, a warp, a block or a column tile per output, several chained stages, two
passes for long extents), empty extents, NaN and infinities; then all compile with nvcc."""

from __future__ import annotations

import re

import numpy as np
import pytest
from cuda_harness import check, nvcc_compile_all, prebuild, rand
from tdflow.lowering.cuda import TensorSpec, generate

OPS = {"tdflow.reduce_sum": ("f16", "bf16", "f32", "f64", "i8", "i32", "i64"),
       "tdflow.reduce_prod": ("f16", "bf16", "f32", "f64", "i8", "i32", "i64"),
       "tdflow.reduce_max": ("i1", "f16", "bf16", "f32", "f64", "i8", "i32", "i64"),
       "tdflow.reduce_min": ("i1", "f16", "bf16", "f32", "f64", "i8", "i32", "i64")}
# (shape, axis, keepdims): the variant each takes is in the comment
SMALL = [((7, 13), [1], False),        # a thread per output (R <= 16)
         ((7, 13), [0], True),         # a thread per output walking columns
         ((5, 300), [-1], False),      # a warp per output
         ((40, 50), [0], False),       # 32x8 column tiles
         ((3, 5, 40), [0, 2], False),  # two chained stages (the last reduced run first)
         ((2, 3, 4), [], True),        # every axis
         ((2, 0, 3), [1], False)]      # an empty extent: the identity
LONG = [((2, 3000), [1], False),       # a block per output
        ((3, 6000), [1], False),       # two passes: chunks, then the partials
        ((5000, 40), [0], True)]       # two passes of column tiles


def _x(op: str, dt: str, shape, seed: int = 0) -> np.ndarray:
    if op == "tdflow.reduce_prod" and dt.startswith(("f", "b")):
        # products of values near 1 neither overflow nor vanish over long rows
        width = 0.5 if np.prod(shape) < 1000 else 0.01
        return rand(shape, dt, lo=1 - width, hi=1 + width, seed=seed)
    return rand(shape, dt, seed=seed)  # integers in [-5, 5]: i8 sums and products wrap


CASES = [(op, dt, shape, axis, keep) for op, dts in OPS.items() for dt in dts
         for shape, axis, keep in SMALL]
CASES += [(op, dt, shape, axis, keep) for op in OPS for dt in ("f32", "f64", "i32", "f16")
          for shape, axis, keep in LONG]
LIKE = [((4, 8), (8,), [0]), ((3, 4, 5), (1, 4, 1), [0, 2]), ((3, 4), (3, 4), []),
        ((6, 70), (6, 1), [1])]


def _like_inputs(dt: str, xs, ls):
    return [rand(xs, dt, seed=1), rand(ls, dt, seed=2)]


@pytest.fixture(scope="module", autouse=True)
def _compiled_together() -> None:
    cases = [(op, [_x(op, dt, shape)], {"axis": axis, "keepdims": keep})
             for op, dt, shape, axis, keep in CASES]
    cases += [("tdflow.reduce_sum_like", _like_inputs(dt, xs, ls), {"axis": ax})
              for xs, ls, ax in LIKE for dt in OPS["tdflow.reduce_sum"]]
    cases += [(op, [_special()], {"axis": [1]}) for op in
              ("tdflow.reduce_max", "tdflow.reduce_min", "tdflow.reduce_sum")]
    cases.append(("tdflow.reduce_sum", [np.full((3, 6000), 100, np.int8)], {"axis": [1]}))
    prebuild(cases)


def _special() -> np.ndarray:
    x = rand((4, 9), "f32", seed=3)
    x[1, 3], x[2, :], x[3, 2] = np.nan, -np.inf, np.inf
    return x


@pytest.mark.parametrize("op,dt,shape,axis,keep", CASES,
                         ids=[f"{c[0].split('_')[1]}-{c[1]}-{'x'.join(map(str, c[2]))}-{c[3]}"
                              for c in CASES])
def test_reduction_matches_numpy(op, dt, shape, axis, keep) -> None:
    got = check(op, [_x(op, dt, shape)], {"axis": axis, "keepdims": keep})[0]
    assert got.ndim == (len(shape) if keep else len(shape) - len(axis or shape))


@pytest.mark.parametrize("dt", OPS["tdflow.reduce_sum"])
def test_reduce_sum_like(dt) -> None:
    for xs, ls, ax in LIKE:
        got = check("tdflow.reduce_sum_like", _like_inputs(dt, xs, ls), {"axis": ax})[0]
        assert got.shape == ls


def test_nan_and_infinities() -> None:
    x = _special()
    for op in ("tdflow.reduce_max", "tdflow.reduce_min", "tdflow.reduce_sum"):
        got = check(op, [x], {"axis": [1]}, atol=1e-6)[0]  # atol: the scale is infinite
        assert np.isnan(got[1])
    assert check("tdflow.reduce_max", [x], {"axis": [1]}, atol=1e-6)[0][2] == -np.inf


def test_integer_wraparound_and_two_pass_sum() -> None:
    # i8 sums of 6000 values wrap in int8 exactly as numpy's; the f32 sum is within 1e-5
    x = np.full((3, 6000), 100, np.int8)
    assert check("tdflow.reduce_sum", [x], {"axis": [1]})[0].tolist() == [np.int8(-64)] * 3
    code = generate("tdflow.reduce_sum", [TensorSpec((3, 6000), "f32")],
                    [TensorSpec((3,), "f32")], {"axis": [1], "keepdims": False})
    assert len(code.launches) == 2 and code.scratch == (3 * 3 * 8,)


def test_all_compile_with_nvcc() -> None:
    # runs last in this module: every kernel the tests above generated, in one nvcc call
    report = nvcc_compile_all()
    assert "Compiling entry function" in report
    assert "bytes spill stores" in report
    assert not re.search(r"[1-9]\d* bytes spill (stores|loads)", report)
