"""The integer types i16, ui8, ui16, ui32, ui64 on cudasim equal the numpy backend: values over
each type's whole range (so arithmetic wraps and ui16 products overflow C's int), division and
remainder by zero, casts between every pair, reductions down each kernel variant, max pooling,
gather, scatter-adds, add_n, tril, matmul, conv2d, sparse softmax cross-entropy and one_hot; then all of them compile with nvcc for sm_90."""

from __future__ import annotations

import numpy as np
import pytest
from cuda_harness import check, nvcc_compile_all, prebuild
from tdflow.dialect.element_types import INT_TYPES
from tdflow.dialect.formula.expr import Input
from tdflow.dialect.formula.text import format_expr

NEW = ("i16", "ui8", "ui16", "ui32", "ui64")


def full_range(dtype: str, shape=(7, 13), seed=0) -> np.ndarray:
    """Values over the whole range of ``dtype``, its extremes, 0, 1 and -1 among them."""
    t = INT_TYPES[dtype]
    lo, hi = t.range
    rng = np.random.default_rng(seed)
    v = rng.integers(lo, hi, size=shape, dtype=np.dtype(t.numpy), endpoint=True)
    v.flat[:5] = [lo, hi, 0, 1, t.wrap(-1)]
    return v


def _idx(values, it="i64"):
    return np.asarray(values).astype(np.dtype(INT_TYPES[it].numpy))


BINARY = ("broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
          "broadcast_maximum", "broadcast_minimum", "broadcast_equal", "broadcast_less",
          "broadcast_greater_equal")


def _binary_inputs(dt: str) -> list[np.ndarray]:
    a, b = full_range(dt, seed=1), full_range(dt, seed=2)
    b.flat[5:40:4] = 0  # x / 0 == 0
    b.flat[1] = a.flat[1]  # a tie
    a.flat[4] = 7  # 7 / max: 0 (C's -1 test would take an unsigned max for -1)
    return [a, b]


EXPRS = [Input(0) * Input(1) * Input(0),  # narrow types wrap after each step, as numpy does
         (Input(0) - Input(1)) % Input(1),  # remainder by zero is 0
         Input(0) * 3 - 7]  # literals in the type (-7 is 2**n - 7 unsigned)
ATTRS = {"padding": [1, 0], "data_format": "channels_first", "kernel_size": [2, 3],
         "stride": [2, 1], "dilation": [1, 1], "return_indices": True, "ceil_mode": False}

CASES: list[tuple[str, list, dict]] = []
for _dt in NEW:
    CASES += [(f"tdflow.{op}", _binary_inputs(_dt), {}) for op in BINARY]
    CASES += [("tdflow.fused_elementwise", _binary_inputs(_dt), {"expr": format_expr(e)})
              for e in EXPRS]
    CASES += [("tdflow.cast", [full_range(_dt, seed=3)], {"dtype": to})
              for to in ("i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64", "i1", "f32",
                         "f64")]
    CASES += [("tdflow.cast", [np.array([0.0, 1.9, 200.5, 65000.0], np.float32)], {"dtype": _dt})]
    CASES += [(op, [full_range(_dt, shape, seed=4)], {"axis": axis, "keepdims": False})
              for op in ("tdflow.reduce_sum", "tdflow.reduce_max", "tdflow.reduce_min",
                         "tdflow.reduce_prod")
              for shape, axis in (((7, 13), [1]), ((5, 300), [-1]), ((40, 50), [0]),
                                  ((3, 6000), [1]))]
    CASES += [("tdflow.max_pool_2d", [full_range(_dt, (2, 3, 5, 6), seed=5)], ATTRS)]
    CASES += [("tdflow.gather", [full_range(_dt, (5, 7), seed=6), _idx([1, 0, 4, 4, 2], _dt)],
               {"axis": 0})]
    CASES += [("tdflow.unsorted_segment_sum_like",
               [full_range(_dt, (3, 5, 2), seed=7), _idx([1, 3, 0, 9, 1], _dt),
                full_range(_dt, (3, 4, 2), seed=8)], {"axis": 1})]
    CASES += [("tdflow.add_n", [full_range(_dt, seed=s) for s in (9, 10, 11)], {})]
    CASES += [("tdflow.tril", [full_range(_dt, (2, 5, 7), seed=12)],
               {"diagonal": -1, "integer_fill_value": 3})]
    # GEMMs: small and 128x128 tiles, alpha and _add_to_output; sums of products wrap
    CASES += [("tdflow.matmul", [full_range(_dt, (m, k), seed=13), full_range(_dt, (k, n), seed=14),
                                 *extra], {"transpose_a": False, "transpose_b": False, "alpha": al})
              for (m, k, n), al, extra in (((7, 40, 9), 1.0, ()), ((130, 9, 129), 3.0, ()),
                                           ((5, 3, 7), 1.0, (full_range(_dt, (5, 7), seed=15),)))]
    # class labels of the type (the largest value is out of range: no loss); one_hot of them
    lab = np.array([0, 3, 4, INT_TYPES[_dt].range[1], 2, 1], np.dtype(INT_TYPES[_dt].numpy))
    x = np.random.default_rng(19).normal(size=(6, 5)).astype(np.float32)
    CASES += [("tdflow.sparse_softmax_cross_entropy", [x, lab], {"depth": 5}),
              ("tdflow.one_hot", [lab[lab < 5]], {"depth": 5, "dtype": _dt,
                                                   "integer_on_value": 7, "integer_off_value": 0})]
    CASES += [("tdflow.conv2d", [full_range(_dt, (2, 3, 7, 6), seed=16),
                                 full_range(_dt, (4, 3, 3, 3), seed=17),
                                 full_range(_dt, (4,), seed=18)],
               {"data_format": "channels_first", "kernel_size": [3, 3], "strides": [1, 1],
                "padding_before": [1, 1], "dilation_rate": [1, 1], "groups": 1})]


FLOAT_RESULTS = {"tdflow.sparse_softmax_cross_entropy"}  # compared within f32's tolerance


def _id(case: tuple[str, list, dict]) -> str:
    op, ins, attrs = case
    extra = attrs.get("dtype") or attrs.get("expr") or "x".join(map(str, ins[0].shape))
    return f"{op.split('.')[1]}-{ins[0].dtype}-{extra}"


@pytest.fixture(scope="module", autouse=True)
def _compiled_together() -> None:
    prebuild(CASES)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("case", range(len(CASES)), ids=[_id(c) for c in CASES])
def test_matches_numpy_exactly(case: int) -> None:
    op, ins, attrs = CASES[case]
    check(op, ins, attrs, exact=op not in FLOAT_RESULTS)


def test_all_compile_with_nvcc() -> None:
    # runs last in this module: every kernel the tests above generated, in one nvcc call
    assert "Compiling entry function" in nvcc_compile_all()
