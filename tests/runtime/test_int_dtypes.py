"""The integer element types i16, ui8, ui16, ui32, ui64 end to end on the CPU: a program, the
dtype attribute, formula promotion and casts, and the kernels of the elementwise, comparison,
cast, reduction, pool and index ops against numpy (wrapping arithmetic, C's truncating
division with ``x / 0 == 0``)."""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.dialect import standard_dialect
from tdflow.dialect.element_types import INT_TYPES, promote_int
from tdflow.dialect.formula.expr import Cast, Input
from tdflow.dialect.formula.types import promote
from tdflow.dialect.types import TensorType, dtype_from_numpy
from tdflow.lowering.elementwise_numpy import render_numpy
from tdflow.runtime.kernels.registry import select_kernel

import tdflow

NEW = ("i16", "ui8", "ui16", "ui32", "ui64")
NP = {n: np.dtype(INT_TYPES[n].numpy) for n in INT_TYPES}
F = tdflow.functional


def full_range(dtype: str, shape=(64,), seed=0) -> np.ndarray:
    """Values over the whole range of ``dtype``, with the extremes, 0 and 1 among them."""
    lo, hi = INT_TYPES[dtype].range
    rng = np.random.default_rng(seed)
    v = rng.integers(lo, hi, size=shape, dtype=NP[dtype], endpoint=True)
    v.flat[:4] = [lo, hi, 0, 1]
    return v


def run(op: str, inputs, attrs=None):
    k = select_kernel(op, "cpu", tuple(dtype_from_numpy(a.dtype) for a in inputs), attrs or {})
    return k(attrs or {}, list(inputs), [None])[0]


# ---- the table and the dialect ------------------------------------------------------------


def test_the_table_gives_numpy_c_and_range():
    assert [INT_TYPES[n].numpy for n in NEW] == ["int16", "uint8", "uint16", "uint32", "uint64"]
    assert [INT_TYPES[n].c_type for n in NEW] == ["int16_t", "uint8_t", "uint16_t", "uint32_t",
                                                  "uint64_t"]
    assert INT_TYPES["ui64"].range == (0, 2**64 - 1) and INT_TYPES["i16"].wrap(40000) == -25536
    for n in NEW:
        assert dtype_from_numpy(NP[n]) == n and TensorType.parse(f"tensor<4x{n}>").np_dtype == NP[n]


def test_base_td_lists_the_integer_types_of_the_table():
    # TableGen cannot import the Python table: Base.td's TDF_IntTypes restates it, kept equal
    d = standard_dialect()
    mask = d.lookup("tdflow.dropout_grad").operands[1].dtypes
    assert [t for t in mask if t in INT_TYPES] == list(INT_TYPES)
    assert "i1" in mask and "f32" in mask


def test_promotion_follows_numpy_for_mixed_signs():
    for a in INT_TYPES:
        for b in INT_TYPES:
            want = np.promote_types(NP[a], NP[b])
            got = promote(a, b)
            if want.kind == "f":  # ui64 with a signed type: numpy goes to f64, tdflow stays i64
                assert got == "i64"
            else:
                assert NP[got] == want, (a, b)
    assert promote_int("i1", "ui8") == "ui8" and promote("ui32", "f16") == "f32"


PROGRAM = """\
func.func @f(%a: tensor<5xui8>, %b: tensor<5xui8>, %c: tensor<5xi16>) -> (tensor<5xui8>, tensor<5xi1>, tensor<5xui64>, tensor<5xi16>) {
  %0 = "tdflow.broadcast_add"(%a, %b) : (tensor<5xui8>, tensor<5xui8>) -> tensor<5xui8>
  %1 = "tdflow.broadcast_less"(%a, %b) : (tensor<5xui8>, tensor<5xui8>) -> tensor<5xi1>
  %2 = "tdflow.cast"(%0) {dtype = ui64} : (tensor<5xui8>) -> tensor<5xui64>
  %3 = "tdflow.broadcast_div"(%c, %c) : (tensor<5xi16>, tensor<5xi16>) -> tensor<5xi16>
  return %0, %1, %2, %3 : tensor<5xui8>, tensor<5xi1>, tensor<5xui64>, tensor<5xi16>
}
"""


def test_program_in_the_new_types_runs():
    a = np.array([250, 3, 0, 255, 7], np.uint8)
    b = np.array([10, 4, 0, 255, 7], np.uint8)
    c = np.array([-32768, 5, 0, -7, 32767], np.int16)
    s, lt, wide, q = tdflow.compile(PROGRAM)(a, b, c)
    np.testing.assert_array_equal(s, a + b)  # wraps: 250 + 10 == 4
    assert s.dtype == np.uint8 and wide.dtype == np.uint64 and q.dtype == np.int16
    np.testing.assert_array_equal(lt, a < b)
    np.testing.assert_array_equal(wide, (a + b).astype(np.uint64))
    np.testing.assert_array_equal(q, [1, 1, 0, 1, 1])  # 0 / 0 == 0


def test_dtype_attribute_and_tensors_take_the_new_types():
    for n in NEW:
        t = tdflow.tensor(np.arange(3).astype(NP[n]))
        assert t.dtype == n
        assert F.cast(t, dtype=n).dtype == n
    assert tdflow.tensor([1, 2], dtype="uint16").dtype == "ui16"


# ---- elementwise and comparisons ------------------------------------------------------------

WRAPPING = {"broadcast_add": np.add, "broadcast_sub": np.subtract,
            "broadcast_mul": np.multiply, "broadcast_maximum": np.maximum,
            "broadcast_minimum": np.minimum}
COMPARE = {"broadcast_equal": np.equal, "broadcast_less": np.less,
           "broadcast_less_equal": np.less_equal, "broadcast_greater": np.greater,
           "broadcast_greater_equal": np.greater_equal, "broadcast_not_equal": np.not_equal}


def c_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C's truncating division with x / 0 == 0 and MIN / -1 == MIN, on Python integers."""
    t = INT_TYPES[dtype_from_numpy(a.dtype)]
    out = [0 if y == 0 else t.wrap(abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1))
           for x, y in zip(a.tolist(), b.tolist())]
    return np.array(out, dtype=a.dtype)


@pytest.mark.parametrize("dtype", NEW + ("i8", "i32", "i64"))
def test_arithmetic_wraps_as_numpy(dtype):
    a, b = full_range(dtype, seed=1), full_range(dtype, seed=2)
    with np.errstate(over="ignore"):
        for op, ref in WRAPPING.items():
            got = run(f"tdflow.{op}", [a, b])
            assert got.dtype == NP[dtype]
            np.testing.assert_array_equal(got, ref(a, b), err_msg=op)
    b[::3] = 0
    np.testing.assert_array_equal(run("tdflow.broadcast_div", [a, b]), c_div(a, b))


@pytest.mark.parametrize("dtype", NEW)
def test_comparisons_match_numpy(dtype):
    a, b = full_range(dtype, seed=3), full_range(dtype, seed=4)
    b[::2] = a[::2]  # ties
    for op, ref in COMPARE.items():
        got = run(f"tdflow.{op}", [a, b])
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, ref(a, b), err_msg=op)


@pytest.mark.parametrize("dtype", NEW)
def test_eager_ops_with_broadcasting(dtype):
    a = full_range(dtype, (4, 1, 3), seed=5)
    b = full_range(dtype, (5, 1), seed=6)
    with np.errstate(over="ignore"):
        r = F.broadcast_mul(tdflow.tensor(a), tdflow.tensor(b))
        assert r.dtype == dtype
        np.testing.assert_array_equal(r.numpy(), a * b)
    np.testing.assert_array_equal(F.broadcast_less(tdflow.tensor(a), tdflow.tensor(b)).numpy(),
                                  a < b)


@pytest.mark.parametrize("dtype", NEW)
def test_where_takes_an_integer_condition(dtype):
    c = np.array([0, 3, 0, 255], NP[dtype])
    x, y = np.arange(4, dtype=np.float32), -np.ones(4, np.float32)
    np.testing.assert_array_equal(run("tdflow.where", [c, x, y]), np.where(c, x, y))


def test_unary_ops_on_unsigned_types():
    x = full_range("ui32", seed=7)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(run("tdflow.negative", [x]), -x)
    np.testing.assert_array_equal(run("tdflow.abs", [x]), x)
    np.testing.assert_array_equal(run("tdflow.relu", [x]), x)


def test_pow_of_unsigned_types_and_a_float_base():
    base = np.array([0, 1, 2, 3, 15], np.uint16)
    e = np.array([3, 0, 5, 4, 4], np.uint16)
    np.testing.assert_array_equal(run("tdflow.broadcast_pow", [base, e]), base ** e)


def test_formula_casts_to_the_new_types():
    x = np.array([-1.0, 300.5, 70000.0, 2.0], np.float64)
    for n in ("i16", "ui8", "ui16"):
        got = render_numpy(Cast(Input(0), n), ["f64"], n)([x])
        assert got.dtype == NP[n]
        np.testing.assert_array_equal(got, np.array([-1, 300, 70000, 2]).astype(NP[n]))
    # a mixed-sign sum computes in the promoted type: ui8 + i8 in i16
    a, b = np.array([200, 255], np.uint8), np.array([-100, 127], np.int8)
    got = render_numpy(Input(0) + Input(1), ["ui8", "i8"], "i16")([a, b])
    np.testing.assert_array_equal(got, a.astype(np.int16) + b)


def test_formula_text_casts_to_the_new_types():
    from tdflow.dialect.formula.check import check_formula
    from tdflow.dialect.formula.dtypes import result_dtypes
    from tdflow.dialect.formula.parse import parse_formula
    from tdflow.dialect.formula.text import format_expr, parse_expr

    op = standard_dialect().lookup("tdflow.relu")
    c = check_formula(parse_formula("ui16(x) * 2", file="-", line=1, col=1), op)
    assert c.exprs == (Cast(Input(0), "ui16") * 2,) and result_dtypes(c, ["i8"]) == ("ui16",)
    e = Cast(Input(0) + Input(1), "ui64") * 3
    assert format_expr(e) == "mul(cast(add(in0, in1), ui64), 3)" and parse_expr(format_expr(e)) == e


# ---- cast, reductions, pooling, indexing ------------------------------------------------------


@pytest.mark.parametrize("src", NEW + ("i8", "i64", "f32"))
def test_cast_matches_numpy_astype(src):
    x = (full_range(src, seed=8) if src in INT_TYPES
         else np.array([-3.5, 0.0, 1.9, 200.0], np.float32))
    for dst in NEW + ("i1", "f64", "i32"):
        got = run("tdflow.cast", [x], {"dtype": dst})
        want = x.astype(TensorType((), dst).np_dtype)
        if src == "f32" and dst.startswith("ui"):
            x_ok = x >= 0  # a negative float to an unsigned type is undefined in C and numpy
            got, want = got[x_ok], want[x_ok]
        np.testing.assert_array_equal(got, want, err_msg=f"{src} -> {dst}")


@pytest.mark.parametrize("dtype", NEW)
def test_reductions_match_numpy(dtype):
    x = full_range(dtype, (6, 5), seed=9)
    attrs = {"axis": [1], "keepdims": False}
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(run("tdflow.reduce_sum", [x], attrs),
                                      x.sum(axis=1, dtype=x.dtype))
        np.testing.assert_array_equal(run("tdflow.reduce_prod", [x], attrs),
                                      x.prod(axis=1, dtype=x.dtype))
    np.testing.assert_array_equal(run("tdflow.reduce_max", [x], attrs), x.max(axis=1))
    np.testing.assert_array_equal(run("tdflow.reduce_min", [x], attrs), x.min(axis=1))


@pytest.mark.parametrize("dtype", NEW)
def test_max_pool_and_gather(dtype):
    x = full_range(dtype, (1, 2, 4, 4), seed=10)
    attrs = {"padding": [0, 0], "data_format": "channels_first", "kernel_size": [2, 2],
             "stride": [2, 2], "dilation": [1, 1], "return_indices": False, "ceil_mode": False}
    k = select_kernel("tdflow.max_pool_2d", "cpu", (dtype,), attrs)
    y = k(attrs, [x], [None, None])[0]
    np.testing.assert_array_equal(y, x.reshape(1, 2, 2, 2, 2, 2).max(axis=(3, 5)))
    data = full_range(dtype, (5, 3), seed=11)
    idx = np.array([4, 0, 2], NP[dtype])  # indices may have the new types too
    k = select_kernel("tdflow.gather", "cpu", (dtype, dtype), {"axis": 0})
    np.testing.assert_array_equal(k({"axis": 0}, [data, idx], [None])[0], data[[4, 0, 2]])
