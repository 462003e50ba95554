"""Generated slicing and indexing kernels on cudasim equal the numpy backend: slice, narrow and
their gradients, gather, embedding (bit for bit), the atomic scatter-adds embedding_grad and
unsorted_segment_sum_like (exact for integers, within rtol for floats: the order of the adds
differs), one_hot, arange, tril and fused_scale_tril, in every dtype their CPU kernels admit;
what an out-of-range index does on the GPU; then all of them compile with nvcc."""

from __future__ import annotations

import numpy as np
import pytest
from cuda_harness import (
    GENERATED,
    check,
    full_attrs,
    nvcc_compile_all,
    prebuild,
    rand,
    result_types,
    run,
)
from tdflow.lowering.cuda import TensorSpec, generate

ALL = ("f16", "f32", "f64", "i1", "i8", "i32", "i64")
NUMERIC = ("f16", "f32", "f64", "i8", "i32", "i64")
FLOATS = ("f16", "f32", "f64")
BIG = 2 ** 63 - 1


def _with_zero(x: np.ndarray) -> np.ndarray:
    x = x.copy()
    x[..., 1] = 0
    return x


def _idx(values, dt: str = "i64") -> np.ndarray:
    return np.array(values, {"i8": np.int8, "i32": np.int32, "i64": np.int64}[dt])


SLICES = [  # (shape, start, stop, step)
    ((7, 13), [1, 0], [BIG, 13], [2, 3]),
    ((7, 13), [-5, 2], [6, -1], [1, 4]),
    ((7, 13), [5, 0], [2, 13], [1, 1]),  # empty along dim 0
    ((3, 4, 37), [0, 1, 3], [3, 3, 36], [2, 1, 5]),
]


def _slice_attrs(start, stop, step) -> dict:
    return {"start": start, "stop": stop, "step": step}


def _slice_grad_case(shape, start, stop, step, dt="f32"):
    dy_shape = np.empty(shape)[tuple(slice(a, b, c) for a, b, c in zip(start, stop, step))].shape
    return ("tdflow.slice_grad", [rand(dy_shape, dt, seed=3)],
            {"like_shape": list(shape), **_slice_attrs(start, stop, step)})


EXACT: dict[str, list[tuple[str, list, dict]]] = {
    "slice": [("tdflow.slice", [rand(s, "f32", seed=1)], _slice_attrs(a, b, c))
              for s, a, b, c in SLICES]
    + [("tdflow.slice", [rand((7, 13), dt, seed=2)], _slice_attrs(*SLICES[0][1:])) for dt in ALL],
    "slice_grad": [_slice_grad_case(*c) for c in SLICES]
    + [_slice_grad_case(*SLICES[1], dt=dt) for dt in ALL],
    "narrow": [("tdflow.narrow", [rand((5, 9), dt, seed=4)], {"dim": 1, "start": -4, "length": 3})
               for dt in ALL]
    + [("tdflow.narrow", [rand((5, 9, 3))], {"dim": 0, "start": 2, "length": 0}),
       ("tdflow.narrow", [rand((5, 9, 3), "i8")], {"dim": -1, "start": 1, "length": 2})],
    "narrow_grad": [("tdflow.narrow_grad", [rand((5, 3), dt, seed=5), rand((5, 9), dt)],
                     {"dim": 1, "start": -4, "length": 3}) for dt in ALL]
    + [("tdflow.narrow_grad", [rand((2, 9, 3), "f64"), rand((5, 9, 3), "f64")],
        {"dim": 0, "start": 3, "length": 2})],
    "gather": [("tdflow.gather", [rand((5, 7), dt, seed=6), _idx([1, 0, 4, 4, 2])], {"axis": 0})
               for dt in ALL]
    + [("tdflow.gather", [rand((4, 6, 3), seed=7), _idx([[5, 0], [2, 2], [1, 3]], it)],
        {"axis": a}) for it in ("i8", "i32", "i64") for a in (1, -2)]
    + [("tdflow.gather", [rand((4, 6), "i64"), _idx([3, 0, 1], "i32")], {"axis": -1})],
    "embedding": [("tdflow.embedding", [rand((9, 5), dt, seed=8), _idx([[1, 0, 8], [4, 4, 2]], it)],
                   {}) for dt in ALL for it in ("i32",)]
    + [("tdflow.embedding", [rand((9, 33)), _idx([3, 3, 7], it)], {}) for it in ("i8", "i64")],
    "one_hot": [("tdflow.one_hot", [_idx([[1, 0, 3], [2, 2, 0]], it)],
                 {"depth": 4, "dtype": dt, "floating_on_value": 2.5, "floating_off_value": -0.5,
                  "integer_on_value": 7, "integer_off_value": -1})
                for it in ("i8", "i32", "i64") for dt in ALL],
    "arange": [("tdflow.arange", [], {"float_start": 0.5, "float_delta": 0.3, "float_limit": 7.1,
                                      "dtype": dt, "nd_sbp": []}) for dt in FLOATS]
    + [("tdflow.arange", [], {"float_start": 3.0, "float_delta": -0.1, "float_limit": -1.0,
                              "dtype": "f32", "nd_sbp": []})]
    + [("tdflow.arange", [], {"integer_start": -3, "integer_delta": 2, "integer_limit": 170,
                              "dtype": dt, "nd_sbp": []}) for dt in ("i8", "i32", "i64")]
    + [("tdflow.arange", [], {"integer_start": 10, "integer_delta": -3, "integer_limit": -20,
                              "dtype": "i64", "nd_sbp": []})],
    "tril": [("tdflow.tril", [rand((2, 5, 7), dt, seed=9)],
              {"diagonal": d, "integer_fill_value": 1}) for dt in ALL for d in (-1, 2)]
    + [("tdflow.tril", [rand((6, 4), "f32")], {"diagonal": 0, "is_floating_fill_value": True,
                                               "floating_fill_value": float("-inf")}),
       ("tdflow.tril", [rand((3, 3), "f16")], {"diagonal": -5, "is_floating_fill_value": True,
                                               "floating_fill_value": 0.1})],
    "fused_scale_tril": [("tdflow.fused_scale_tril", [rand((3, 5, 4), dt, seed=10)],
                          {"diagonal": 1, "is_floating_fill_value": True,
                           "floating_fill_value": float("-inf"), "is_floating_scale_value": True,
                           "floating_scale_value": 0.3}) for dt in FLOATS]
    + [("tdflow.fused_scale_tril", [rand((3, 5, 4), dt, seed=11)],
        {"diagonal": -1, "integer_fill_value": 9, "integer_scale_value": 100})
       for dt in ("i8", "i32", "i64")],  # 100 * 5 wraps in i8
}

SCATTER: dict[str, list[tuple[str, list, dict]]] = {
    "embedding_grad": [("tdflow.embedding_grad", [rand((2, 3, 5), dt, seed=12), rand((9, 5), dt),
                                                  _idx([[1, 0, 8], [1, 1, 2]], it)],
                        {"padding_idx": pad, "scale_grad_by_freq": freq})
                       for dt in FLOATS for it in ("i32", "i64") for pad in (-1, 1)
                       for freq in (False, True)]
    + [("tdflow.embedding_grad", [rand((40, 33), seed=13), rand((7, 33)),
                                  _idx(np.arange(40) % 7, "i8")], {"scale_grad_by_freq": True})],
    "unsorted_segment_sum_like": [
        ("tdflow.unsorted_segment_sum_like", [rand((3, 5, 2), dt, seed=14),
                                              _idx([1, -1, 0, 9, 1], it), rand((3, 4, 2), dt)],
         {"axis": 1}) for dt in NUMERIC for it in ("i8", "i64")]
    + [("tdflow.unsorted_segment_sum_like", [rand((6, 7), dt, seed=15), _idx([0, 2, 2, 0, 5, 2]),
                                             rand((3, 7), dt)], {"axis": 0}) for dt in NUMERIC]
    + [("tdflow.unsorted_segment_sum_like", [np.full((4, 3), 100, np.int8), _idx([0, 0, 0, 1]),
                                             np.zeros((2, 3), np.int8)], {"axis": 0})],  # wraps
}


def _with_nan(x: np.ndarray, at: tuple) -> np.ndarray:
    x = x.copy()
    x[at] = np.nan
    return x


def _scatter_cases(how: str, dtypes: tuple[str, ...]) -> list[tuple[str, list, dict]]:
    # repeated indices (applied in numpy's order), a smaller index along dim 1, both dims
    rep = _idx([[0, 2, 2], [1, 1, 1]])
    return ([(f"tdflow.dim_scatter_{how}", [rand((3, 4), dt, seed=20), rep, rand((2, 3), dt, seed=21)],
              {"dim": 0}) for dt in dtypes]
            + [(f"tdflow.dim_scatter_{how}", [rand((2, 5, 3), "f32", seed=22),
                                             _idx([[[4, 0], [4, 4]]], it), rand((1, 2, 2), seed=23)],
                {"dim": -2}) for it in ("i8", "i32")])


# the ops of the reduce, index and slice families (formerly ops/indexing.td): numpy's order everywhere, so bit for bit
INDEXING: dict[str, list[tuple[str, list, dict]]] = {
    "argmax": [("tdflow.argmax", [rand((3, 7), dt, seed=24)], {}) for dt in ALL]
    + [("tdflow.argmax", [_with_nan(rand((2, 5), seed=25), (1, 3))], {}),
       ("tdflow.argmax", [rand((300_000, 3), "i8", seed=48)], {}),  # more lines than threads
       ("tdflow.argmax", [rand((6,), "f16", seed=26)], {})],
    "top_k": [("tdflow.top_k", [rand((3, 9), dt, seed=27)], {"k": k})
              for dt in NUMERIC for k in (1, 4, 9)]  # small integers: many ties
    + [("tdflow.top_k", [_with_nan(rand((2, 6), seed=28), (0, 2))], {"k": 6})],
    "cumsum": [("tdflow.cumsum", [rand((4, 5, 3), dt, seed=29)], {"dim": d})
               for dt in NUMERIC for d in (0, 1, -1)]
    + [("tdflow.cumsum", [np.full((3, 40), 100, np.int8)], {"dim": 1}),  # wraps
       ("tdflow.cumsum", [rand((2, 300_000), "i32", seed=49)], {"dim": 0})],  # many lines
    "cumprod": [("tdflow.cumprod", [rand((4, 6), dt, seed=30, lo=-1.5, hi=1.5)], {"dim": d})
                for dt in NUMERIC for d in (0, 1)]
    + [("tdflow.cumprod", [np.full((2, 20), 7, np.int32)], {"dim": 1})],  # wraps
    "dim_gather": [("tdflow.dim_gather", [rand((3, 5), dt, seed=31), _idx([[4, 0], [2, 2], [0, 1]])],
                    {"dim": 1}) for dt in ALL]
    + [("tdflow.dim_gather", [rand((4, 3, 2), seed=32), _idx([[[3], [0]], [[1], [1]]], it)],
        {"dim": 0}) for it in ("i8", "i32")],
    "dim_scatter_update": _scatter_cases("update", ALL),
    "dim_scatter_add": _scatter_cases("add", NUMERIC)
    + [("tdflow.dim_scatter_add", [np.zeros((1, 2), np.int8), _idx([[0, 0, 0]]),
                                   np.full((1, 3), 100, np.int8)], {"dim": 1})],  # wraps
    "dim_scatter_mul": _scatter_cases("mul", NUMERIC),
    "dim_scatter_max": _scatter_cases("max", NUMERIC)
    + [("tdflow.dim_scatter_max", [_with_nan(rand((2, 3), seed=33), (0, 1)), _idx([[1, 2, 0]]),
                                   _with_nan(rand((1, 3), seed=34), (0, 2))], {"dim": 1})],
    "dim_scatter_min": _scatter_cases("min", NUMERIC),
    "dim_scatter_add_like": [("tdflow.dim_scatter_add_like", [rand((3, 4), dt), _idx([[0, 3, 3]]),
                              rand((1, 3), dt, seed=35)], {"dim": 1}) for dt in NUMERIC],
    "gather_nd": [("tdflow.gather_nd", [rand((4, 3, 2), dt, seed=42), _idx([[3, 0], [1, 2], [3, 0]], it)],
                   {}) for dt in ALL for it in ("i32",)]
    + [("tdflow.gather_nd", [rand((4, 3)), _idx([[[2]], [[0]]], it)], {}) for it in ("i8", "i64")],
    "scatter_nd_like": [("tdflow.scatter_nd_like", [rand((4, 3), dt), _idx([[1], [3], [1]]),
                         rand((3, 3), dt, seed=43)], {}) for dt in NUMERIC],
    "tensor_scatter_nd_update": [("tdflow.tensor_scatter_nd_update",
                                  [rand((4, 3, 2), dt, seed=44), rand((3, 2), dt, seed=45),
                                   _idx([[1, 0], [3, 2], [1, 0]], it)], {})
                                 for dt in ALL for it in ("i8", "i64")],
    "tensor_scatter_nd_add": [("tdflow.tensor_scatter_nd_add",
                               [rand((4, 3, 2), dt, seed=46), rand((3, 2), dt, seed=47),
                                _idx([[1, 0], [3, 2], [1, 0]])], {}) for dt in NUMERIC]
    + [("tdflow.tensor_scatter_nd_add", [np.zeros(2, np.int8), np.full(3, 100, np.int8),
                                         _idx([[1], [1], [1]])], {})],  # wraps
    "triu": [("tdflow.triu", [rand((2, 4, 6), dt, seed=36)], {"diagonal": d})
             for dt in ALL for d in (-1, 0, 3)],
    "pad": [("tdflow.pad", [rand((2, 3), dt, seed=37)],
             {"padding_before": [1, 0], "padding_after": [0, 2], "padding": [],
              "floating_constant_value": -0.25, "integral_constant_value": 300}) for dt in ALL]
    + [("tdflow.pad", [rand((2, 1, 3), seed=38)],
        {"padding_before": [0, 2, 1], "padding_after": [1, 0, 0], "padding": [],
         "floating_constant_value": float("-inf")})],
}
# cumprod_grad's products run in another order than numpy's: within rtol
CUMPROD_GRAD = [("tdflow.cumprod_grad", [rand((3, 5), dt, seed=39), rand((3, 5), dt),
                                         _with_zero(rand((3, 5), dt, seed=40))], {"dim": d})
                for dt in FLOATS for d in (0, 1)]


@pytest.fixture(scope="module", autouse=True)
def _compiled_together() -> None:
    prebuild([c for table in (EXACT, SCATTER, INDEXING) for cases in table.values() for c in cases]
             + CUMPROD_GRAD)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("family", sorted(INDEXING))
def test_indexing_ops_match_numpy_exactly(family: str) -> None:
    for op, inputs, attrs in INDEXING[family]:
        check(op, inputs, attrs, exact=True)


def test_cumprod_grad_matches_numpy() -> None:
    for op, inputs, attrs in CUMPROD_GRAD:
        check(op, inputs, attrs)


def test_indexing_out_of_range_on_the_gpu() -> None:
    # numpy raises; the kernels read zero (dim_gather) or write nothing (the scatters)
    x = rand((2, 3), seed=41)
    got = _both("tdflow.dim_gather", [x, _idx([[2, 3], [-1, 0]])], {"dim": 1})[0]
    np.testing.assert_array_equal(got, [[x[0, 2], 0.0], [0.0, x[1, 0]]])
    got = _both("tdflow.dim_scatter_add", [x, _idx([[5, 1]]), np.ones((1, 2), np.float32)],
                {"dim": 1})[0]
    np.testing.assert_array_equal(got, x + np.array([[0, 1, 0], [0, 0, 0]], np.float32))
    got = _both("tdflow.gather_nd", [x, _idx([[1, 2], [2, 0], [0, -1]])], {})[0]
    np.testing.assert_array_equal(got, [x[1, 2], 0.0, 0.0])
    got = _both("tdflow.tensor_scatter_nd_update", [x, np.ones((2, 3), np.float32),
                                                    _idx([[1], [7]])], {})[0]
    np.testing.assert_array_equal(got, np.stack([x[0], np.ones(3, np.float32)]))


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
@pytest.mark.parametrize("family", sorted(EXACT))
def test_matches_numpy_exactly(family: str) -> None:
    for op, inputs, attrs in EXACT[family]:
        check(op, inputs, attrs, exact=True)


@pytest.mark.parametrize("family", sorted(SCATTER))
def test_scatter_add_matches_numpy(family: str) -> None:
    for op, inputs, attrs in SCATTER[family]:
        check(op, inputs, attrs)


def test_scatter_add_launches() -> None:
    # f32 accumulates in the (zeroed) result; f16 in float scratch zeroed by its own kernel
    f32 = generate("tdflow.unsorted_segment_sum_like", [TensorSpec((4, 3), "f32"),
                   TensorSpec((4,), "i64"), TensorSpec((2, 3), "f32")], [TensorSpec((2, 3), "f32")],
                   {"axis": 0})
    f16 = generate("tdflow.embedding_grad", [TensorSpec((4, 3), "f16"), TensorSpec((2, 3), "f16"),
                   TensorSpec((4,), "i32")], [TensorSpec((2, 3), "f16")],
                   {"padding_idx": -1, "scale_grad_by_freq": True})
    assert f32.zero_outputs == (0,) and not f32.scratch and "atomicAdd" in f32.source
    assert f16.zero_outputs == () and f16.scratch == (24, 8)
    assert [ln.kernel.rsplit("_", 1)[0] for ln in f16.launches] == [
        "zero_acc", "zero_count", "count", "scatter_add", "finish"]


def _both(op: str, inputs: list, attrs: dict) -> list[np.ndarray]:
    attrs = full_attrs(op, attrs)
    types = result_types(op, inputs, attrs)
    with pytest.raises(ValueError, match="out of range"):
        run("cpu", op, inputs, attrs, types)
    return run("cudasim", op, inputs, attrs, types)


def test_out_of_range_indices_on_the_gpu() -> None:
    # numpy raises; a kernel cannot, so it reads zeros / adds nothing / sets no hot element
    x = rand((4, 3), seed=16)
    got = _both("tdflow.gather", [x, _idx([2, -1, 4, 0])], {"axis": 0})[0]
    np.testing.assert_array_equal(got, np.stack([x[2], np.zeros(3), np.zeros(3), x[0]]))
    got = _both("tdflow.embedding", [x, _idx([[7], [1]], "i8")], {})[0]
    np.testing.assert_array_equal(got, np.stack([np.zeros((1, 3)), x[1:2]]))
    dy = rand((3, 3), seed=17)
    got = _both("tdflow.embedding_grad", [dy, x, _idx([1, 9, -2], "i32")], {})[0]
    np.testing.assert_array_equal(got, np.stack([np.zeros(3), dy[0], np.zeros(3), np.zeros(3)]))
    got = _both("tdflow.one_hot", [_idx([1, 5, -1])], {"depth": 3, "dtype": "i32",
                                                       "integer_on_value": 1})[0]
    np.testing.assert_array_equal(got, [[0, 1, 0], [0, 0, 0], [0, 0, 0]])


def test_all_compile_with_nvcc() -> None:
    b = TensorSpec((9, 5), "bf16")
    GENERATED.extend([
        generate("tdflow.embedding_grad", [TensorSpec((4, 5), "bf16"), b, TensorSpec((4,), "i64")],
                 [b], {"padding_idx": 2, "scale_grad_by_freq": True}),
        generate("tdflow.unsorted_segment_sum_like", [TensorSpec((4, 5), "bf16"),
                 TensorSpec((4,), "i32"), b], [b], {"axis": 0}),
        generate("tdflow.gather", [b, TensorSpec((3,), "i8")], [TensorSpec((3, 5), "bf16")],
                 {"axis": 0}),
        generate("tdflow.arange", [], [TensorSpec((20,), "bf16")],
                 {"float_start": 0.0, "float_delta": 0.5, "dtype": "bf16"}),
        generate("tdflow.fused_scale_tril", [b], [b], {"diagonal": 0, "is_floating_scale_value":
                                                       True, "floating_scale_value": 0.5}),
        generate("tdflow.cumsum", [b], [b], {"dim": 0}),
        generate("tdflow.top_k", [b], [TensorSpec((9, 2), "i64")], {"k": 2}),
        generate("tdflow.argmax", [b], [TensorSpec((9,), "i64")], {}),
        generate("tdflow.dim_scatter_max", [b, TensorSpec((2, 5), "i32"), TensorSpec((2, 5), "bf16")],
                 [b], {"dim": 0}),
        generate("tdflow.cumprod_grad", [b, b, b], [b], {"dim": 1}),
        generate("tdflow.slice_grad", [TensorSpec((1 << 15, 1 << 15), "f32")],
                 [TensorSpec((1 << 16, 1 << 16), "f32")],
                 {"like_shape": [1 << 16, 1 << 16], "start": [0, 1], "stop": [BIG, BIG],
                  "step": [2, 2]}),
    ])
    report = nvcc_compile_all()
    assert "Compiling entry function" in report
