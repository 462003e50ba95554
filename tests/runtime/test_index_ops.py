"""The index ops of tdflow/ops/index.td against numpy: gather and unsorted_segment_sum_like,
embedding and embedding_grad, narrow and narrow_grad, expand, expand_dims, squeeze, tril,
fused_scale_tril, arange and one_hot; their errors (naming the op and the attribute or
operand); the gradients finite differences cannot check (embedding's padding_idx and
scale_grad_by_freq); and each record against OneFlow's own (from the shared corpus).

The gradients are checked against finite differences and graph mode by test_grad_ops.py,
from grad_cases_index.py."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from tdflow.dialect import InferError, standard_dialect
from tdflow.dialect.context import standard_context
from tdflow.dialect.dialect import load_dialect
from tdflow.dialect.grad import gradient_of
from tdflow.dialect.types import TensorType as T
from tdflow.runtime.eager import EagerError

import tdflow
from tdflow.core.errors import TdflowError

F = tdflow.functional
D = standard_dialect()
rng = np.random.default_rng(13)
CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "oneflow"
INDEX_OPS = ("gather", "unsorted_segment_sum_like", "embedding", "embedding_grad", "narrow",
             "narrow_grad", "expand", "expand_dims", "squeeze", "tril", "fused_scale_tril",
             "arange", "one_hot")
DTYPES = ["float16", "float32", "float64", "int32", "int64", "bool"]


def t(a) -> tdflow.Tensor:
    return tdflow.tensor(np.asarray(a))


def _data(shape, dtype="float64") -> np.ndarray:
    return (rng.normal(size=shape) * 4).astype(dtype)


# -- gather ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, idx_shape, axis", [
    ((5,), (3,), 0), ((5, 3), (4,), 0), ((5, 3), (2, 2), 1), ((2, 3, 4), (), 1),
    ((2, 3, 4), (3, 2), -1), ((2, 3, 4), (1,), -3), ((4, 1), (0,), 0), ((3, 4), (2, 1, 2), -2),
])
def test_gather_is_numpy_take(shape, idx_shape, axis):
    a = _data(shape)
    idx = rng.integers(0, shape[axis], size=idx_shape)
    y = F.gather(t(a), t(idx), axis=axis).numpy()
    expected = np.take(a, idx, axis=axis)
    assert y.shape == expected.shape and np.array_equal(y, expected)
    (ty,) = D.infer_result_types("tdflow.gather", [T(shape, "f32"), T(idx_shape, "i64")],
                                 {"axis": axis})
    assert ty == T(expected.shape, "f32")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("idx_dtype", ["int8", "int32", "int64"])
def test_gather_keeps_every_dtype(dtype, idx_dtype):
    a = _data((4, 3), dtype)
    idx = np.array([3, 0, 3], idx_dtype)
    y = F.gather(t(a), t(idx), axis=0).numpy()
    assert y.dtype == a.dtype and np.array_equal(y, a[[3, 0, 3]])


@pytest.mark.parametrize("bad", [[0, 4], [-1], [7, 1, 100]])
def test_gather_out_of_range_indices_name_the_op(bad):
    """OneFlow's CPU kernel checks 0 <= index < dim; so does tdflow's (no numpy IndexError,
    and no silent wrap-around of a negative index)."""
    with pytest.raises(TdflowError, match=r"tdflow\.gather.*'indices' holds -?\d+ .*out of "
                                          r"range \[0, 4\)") as e:
        F.gather(t(np.ones((4, 2))), t(np.array(bad)), axis=0).numpy()
    assert not isinstance(e.value, IndexError)


def test_gather_errors_name_the_attribute_or_operand():
    with pytest.raises(InferError, match="axis 2 is out of range") as e:
        D.infer_result_types("tdflow.gather", [T((4, 2), "f32"), T((3,), "i64")], {"axis": 2})
    assert e.value.attr == "axis" and "tdflow.gather" in str(e.value)
    with pytest.raises(InferError, match="'indices' must be an integer tensor") as e:
        D.infer_result_types("tdflow.gather", [T((4, 2), "f32"), T((3,), "f32")], {})
    assert e.value.operand == "indices"
    with pytest.raises(EagerError, match="axis -3 is out of range"):
        F.gather(t(np.ones((4, 2))), t(np.array([0])), axis=-3)


def test_gather_gradient_adds_repeated_indices():
    a = _data((3, 5))
    idx = np.array([[4, 1], [4, 4]])
    x = tdflow.tensor(a, requires_grad=True)
    dy = _data((3, 2, 2))
    F.reduce_sum(F.mul(F.gather(x, t(idx), axis=1), t(dy)), axis=[]).backward()
    expected = np.zeros_like(a)
    for i in range(2):
        for j in range(2):
            expected[:, idx[i, j]] += dy[:, i, j]
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)
    assert expected[:, 4].any() and not expected[:, 0].any()


# -- unsorted_segment_sum_like ---------------------------------------------------------------------
@pytest.mark.parametrize("like_shape, ids, axis", [
    ((4, 3), [0, 2, 2, 3, 0], 0), ((2, 5), [[4, 4], [0, 1]], 1), ((3,), [1, 1, 1], 0),
    ((2, 3, 2), [2, -1, 5, 0], -2),
])
def test_unsorted_segment_sum_like_is_numpy_add_at(like_shape, ids, axis):
    """Repeated ids accumulate; ids outside [0, like.shape[axis]) are skipped (OneFlow)."""
    ids = np.array(ids)
    ax = axis % len(like_shape)
    data = _data(like_shape[:ax] + ids.shape + like_shape[ax + 1:])
    out = F.unsorted_segment_sum_like(t(data), t(ids), t(np.zeros(like_shape)), axis=axis).numpy()
    expected = np.zeros(like_shape)
    moved = np.moveaxis(expected, ax, 0)
    src = np.moveaxis(data.reshape(like_shape[:ax] + (ids.size,) + like_shape[ax + 1:]), ax, 0)
    for k, i in enumerate(ids.reshape(-1)):
        if 0 <= i < like_shape[ax]:
            moved[i] += src[k]
    np.testing.assert_allclose(out, expected, rtol=1e-12)


@pytest.mark.parametrize("n, size, lead, rest, dtype", [
    (64, 1024, 1, (128,), np.float32),   # the GPT's token table: ~16 rows an id (vectorised)
    (64, 1024, 2, (3,), np.float64),     # a leading dim, f64
    (5, 40, 1, (4,), np.float32),        # one id holds over an eighth: np.add.at itself
    (300, 200, 1, (), np.float32),       # no trailing dims, most ids once or never
    (7, 0, 1, (2,), np.float32),         # no ids
])
def test_add_at_in_order_is_np_add_at_bit_for_bit(n, size, lead, rest, dtype):
    """Same sums in the same order as np.add.at: the bits, signed zeros and infs included."""
    from tdflow.runtime.kernels.index import add_at_in_order

    ids = rng.integers(0, n, size)
    data = (rng.standard_normal((lead, size) + rest)
            * 10.0 ** rng.integers(-30, 30, (lead, size) + rest)).astype(dtype)
    flat = data.reshape(-1)
    flat[rng.random(flat.size) < 0.2] = -0.0  # runs of -0.0: add.at's 0 + -0.0 is +0.0
    bits = flat.view(np.uint32 if dtype == np.float32 else np.uint64)
    pick = rng.random(flat.size) < 0.01
    bits[pick] = bits[pick] | (np.uint32(0x7FC00001) if dtype == np.float32
                               else np.uint64(0x7FF8000000000001))  # NaNs with payloads
    flat[rng.random(flat.size) < 0.01] = np.inf
    got, want = np.zeros((lead, n) + rest, dtype), np.zeros((lead, n) + rest, dtype)
    with np.errstate(invalid="ignore"):
        add_at_in_order(got, ids, data)
        np.add.at(want, (slice(None), ids), data)
    # the bits everywhere but where two NaNs met: which payload survives is add.at's inner
    # loop's choice (the NaN payload freedom the native loops document too)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got.view(bits.dtype)[~nan], want.view(bits.dtype)[~nan])
    assert nan.any() or size == 0


def test_unsorted_segment_sum_like_checks_data_shape():
    with pytest.raises(InferError, match="'data' has shape") as e:
        D.infer_result_types("tdflow.unsorted_segment_sum_like",
                             [T((3, 2), "f32"), T((4,), "i64"), T((5, 2), "f32")], {})
    assert e.value.operand == "data"


# -- embedding and embedding_grad ------------------------------------------------------------------
def _np_embedding_grad(dy, n, idx, pad=-1, scale=False):
    dx = np.zeros((n, dy.shape[-1]))
    counts = np.bincount(idx.reshape(-1), minlength=n)
    for p, i in np.ndenumerate(idx):
        if i != pad:
            dx[i] += dy[p] / (counts[i] if scale else 1)
    return dx


@pytest.mark.parametrize("idx_shape", [(), (5,), (2, 3), (2, 1, 4)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_embedding_looks_up_rows(idx_shape, dtype):
    w = _data((7, 3), dtype)
    idx = rng.integers(0, 7, size=idx_shape)
    y = F.embedding(t(w), t(idx)).numpy()
    assert y.shape == idx_shape + (3,) and y.dtype == w.dtype and np.array_equal(y, w[idx])


@pytest.mark.parametrize("pad, scale", [(-1, False), (3, False), (-1, True), (0, True), (3, True)])
def test_embedding_gradient_skips_padding_and_scales_by_frequency(pad, scale):
    idx = np.array([[1, 3, 3], [0, 3, 5]])
    w = tdflow.tensor(_data((6, 4)), requires_grad=True)
    dy = _data((2, 3, 4))
    out = F.embedding(w, t(idx), padding_idx=pad, scale_grad_by_freq=scale)
    np.testing.assert_array_equal(out.numpy(), w.numpy()[idx])  # the padding row is looked up
    F.reduce_sum(F.mul(out, t(dy)), axis=[]).backward()
    expected = _np_embedding_grad(dy, 6, idx, pad, scale)
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-12)
    direct = F.embedding_grad(t(dy), t(np.zeros((6, 4))), t(idx), padding_idx=pad,
                              scale_grad_by_freq=scale).numpy()
    np.testing.assert_allclose(direct, expected, rtol=1e-12)
    if pad >= 0:
        assert not w.grad.numpy()[pad].any()


def test_embedding_errors():
    with pytest.raises(InferError, match="'weight' must be a 2-D table") as e:
        D.infer_result_types("tdflow.embedding", [T((7,), "f32"), T((3,), "i64")], {})
    assert e.value.operand == "weight"
    with pytest.raises(TdflowError, match=r"tdflow\.embedding.*'indices' holds 7 .*\[0, 7\)"):
        F.embedding(t(np.ones((7, 2))), t(np.array([1, 7]))).numpy()
    with pytest.raises(EagerError, match="'indices' must be an integer tensor"):
        F.embedding(t(np.ones((7, 2))), t(np.array([1.0])))
    with pytest.raises(InferError, match="'dy' has shape") as e:
        D.infer_result_types("tdflow.embedding_grad",
                             [T((3, 5), "f32"), T((7, 4), "f32"), T((3,), "i64")], {})
    assert e.value.operand == "dy"


# -- narrow and narrow_grad ------------------------------------------------------------------------
@pytest.mark.parametrize("shape, dim, start, length", [
    ((6,), 0, 0, 6), ((6,), 0, 2, 3), ((4, 6), 1, 5, 1), ((4, 6), -1, -4, 2), ((4, 6), 0, 4, 0),
    ((2, 3, 4), 1, 0, 2), ((2, 3, 4), -3, -1, 1),
])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_narrow_is_a_slice_of_one_dim(shape, dim, start, length, dtype):
    a = _data(shape, dtype)
    d = dim % len(shape)
    s = start % shape[d] if start < 0 else start
    idx = (slice(None),) * d + (slice(s, s + length),)
    y = F.narrow(t(a), dim=dim, start=start, length=length).numpy()
    assert y.dtype == a.dtype and np.array_equal(y, a[idx])
    dy = _data(a[idx].shape, dtype)
    dx = F.narrow_grad(t(dy), t(a), dim=dim, start=start, length=length).numpy()
    expected = np.zeros(shape, dtype)
    expected[idx] = dy
    assert np.array_equal(dx, expected)


@pytest.mark.parametrize("attrs, attr, match", [
    ({"dim": 2, "start": 0, "length": 1}, "dim", "dim 2 is out of range"),
    ({"dim": 1, "start": 7, "length": 0}, "start", "start 7 is out of range"),
    ({"dim": 1, "start": -7, "length": 1}, "start", "start -7 is out of range"),
    ({"dim": 1, "start": 4, "length": 3}, "length", "start 4 \\+ length 3 exceeds"),
    ({"dim": 0, "start": 0, "length": -1}, "length", "length must be >= 0"),
])
def test_narrow_errors_name_the_attribute(attrs, attr, match):
    with pytest.raises(InferError, match=match) as e:
        D.infer_result_types("tdflow.narrow", [T((4, 6), "f32")], attrs)
    assert e.value.attr == attr and "tdflow.narrow" in str(e.value)
    with pytest.raises(EagerError, match=match):
        F.narrow(t(np.ones((4, 6))), **attrs)


# -- expand, expand_dims, squeeze ------------------------------------------------------------------
@pytest.mark.parametrize("shape, target, result", [
    ((3, 1), [2, 3, 4], (2, 3, 4)), ((4,), [3, 4], (3, 4)), ((2, 1, 3), [2, 5, -1], (2, 5, 3)),
    ((), [2, 3], (2, 3)), ((1, 1), [1, 3], (1, 3)), ((3, 4), [3, 4], (3, 4)),
    ((1,), [0], (0,)), ((2, 1), [-1, -1], (2, 1)),
])
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
def test_expand_is_broadcast_to(shape, target, result, dtype):
    a = _data(shape, dtype)
    y = F.expand(t(a), expand_shape=target).numpy()
    assert y.dtype == a.dtype and np.array_equal(y, np.broadcast_to(a, result))
    (ty,) = D.infer_result_types("tdflow.expand", [T(shape, "f32")], {"expand_shape": target})
    assert ty.shape == result


@pytest.mark.parametrize("shape, target, match", [
    ((3, 2), [3, 4], "dim 1 is 2, expected 1 or 4"), ((2, 3), [3], "fewer than 'in'"),
    ((3,), [-1, 3], "-1 at dim 0, a new leading dim"), ((3,), [-2], "negative dim -2"),
])
def test_expand_errors_name_expand_shape(shape, target, match):
    with pytest.raises(InferError, match=match) as e:
        D.infer_result_types("tdflow.expand", [T(shape, "f32")], {"expand_shape": target})
    assert e.value.attr == "expand_shape"


def test_expand_gradient_sums_the_broadcast_dims():
    a = _data((3, 1))
    x = tdflow.tensor(a, requires_grad=True)
    dy = _data((2, 3, 4))
    F.reduce_sum(F.mul(F.expand(x, expand_shape=[2, 3, 4]), t(dy)), axis=[]).backward()
    np.testing.assert_allclose(x.grad.numpy(), dy.sum(axis=(0, 2))[:, None], rtol=1e-12)


@pytest.mark.parametrize("shape, axis", [((3, 4), 0), ((3, 4), 1), ((3, 4), 2), ((3, 4), -1),
                                         ((3, 4), -3), ((), 0), ((), -1)])
def test_expand_dims_is_numpy_expand_dims(shape, axis):
    a = _data(shape, "float32")
    y = F.expand_dims(t(a), axis=axis).numpy()
    assert np.array_equal(y, np.expand_dims(a, axis)) and y.shape == np.expand_dims(a, axis).shape
    with pytest.raises(InferError, match="out of range") as e:
        D.infer_result_types("tdflow.expand_dims", [T(shape, "f32")], {"axis": len(shape) + 1})
    assert e.value.attr == "axis"


@pytest.mark.parametrize("shape, axes", [((1, 3, 1), [0, 2]), ((1, 3, 1), [-1]), ((3, 4), []),
                                         ((1,), [0]), ((2, 1, 1, 2), [2, 1])])
@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_squeeze_is_numpy_squeeze(shape, axes, dtype):
    a = _data(shape, dtype)
    y = F.squeeze(t(a), axes=axes).numpy()
    expected = np.squeeze(a, axis=tuple(axes)) if axes else a
    assert y.shape == expected.shape and np.array_equal(y, expected)


@pytest.mark.parametrize("axes, match", [([1], "dim 1 .* has size 3, only dims of size 1"),
                                         ([3], "axes 3 is out of range"),
                                         ([0, -3], "names a dimension twice")])
def test_squeeze_errors_name_axes(axes, match):
    with pytest.raises(InferError, match=match) as e:
        D.infer_result_types("tdflow.squeeze", [T((1, 3, 1), "f32")], {"axes": axes})
    assert e.value.attr == "axes"
    with pytest.raises(EagerError, match=match):
        F.squeeze(t(np.ones((1, 3, 1))), axes=axes)


# -- tril and fused_scale_tril ---------------------------------------------------------------------
def _np_tril(a, diagonal, fill):
    keep = np.tri(*a.shape[-2:], k=diagonal, dtype=bool)
    return np.where(keep, a, np.array(fill).astype(a.dtype))


# from 16 matrices on, the kernel fills row by row across the batch instead of a masked copy
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3), (2, 3, 4), (2, 2, 3, 3), (1, 1), (0, 3),
                                   (16, 5, 5), (4, 4, 3, 6), (32, 6, 3)])
@pytest.mark.parametrize("diagonal", [0, -1, 2, -10, 10])
def test_tril_is_numpy_tril_with_a_fill(shape, diagonal):
    a = _data(shape)
    assert np.array_equal(F.tril(t(a), diagonal=diagonal).numpy(), np.tril(a, diagonal))
    y = F.tril(t(a), diagonal=diagonal, is_floating_fill_value=True,
               floating_fill_value=float("-inf")).numpy()
    assert np.array_equal(y, _np_tril(a, diagonal, -np.inf))


@pytest.mark.parametrize("dtype", DTYPES)
def test_tril_keeps_every_dtype(dtype):
    a = _data((3, 4), dtype)
    if dtype in ("float16", "float32", "float64"):
        y = F.tril(t(a), is_floating_fill_value=True, floating_fill_value=-2.5).numpy()
        fill = -2.5
    else:
        y = F.tril(t(a), integer_fill_value=1).numpy()
        fill = 1
    assert y.dtype == a.dtype and np.array_equal(y, _np_tril(a, 0, fill))


@pytest.mark.parametrize("attrs, scale, fill", [
    ({}, 1, 0),
    ({"is_floating_scale_value": True, "floating_scale_value": 0.125}, 0.125, 0),
    ({"integer_scale_value": 3, "is_floating_fill_value": True, "floating_fill_value": -1e9}, 3, -1e9),
    ({"is_floating_scale_value": True, "floating_scale_value": -2.0, "integer_fill_value": 5,
      "diagonal": -1}, -2.0, 5),
])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5), (4, 4, 6, 6), (16, 3, 5)])
def test_fused_scale_tril_scales_then_masks(attrs, scale, fill, shape):
    a = _data(shape)
    y = F.fused_scale_tril(t(a), **attrs).numpy()
    np.testing.assert_allclose(y, _np_tril(a * scale, attrs.get("diagonal", 0), fill), rtol=1e-15)
    ai = _data(shape, "int64")
    yi = F.fused_scale_tril(t(ai), integer_scale_value=2, integer_fill_value=-7).numpy()
    assert yi.dtype == np.int64 and np.array_equal(yi, _np_tril(ai * 2, 0, -7))


@pytest.mark.parametrize("op", ["tril", "fused_scale_tril"])
def test_tril_needs_a_matrix(op):
    with pytest.raises(InferError, match="'in' must have at least 2 dims") as e:
        D.infer_result_types(f"tdflow.{op}", [T((4,), "f32")], {})
    assert e.value.operand == "in" and f"tdflow.{op}" in str(e.value)


# -- arange ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("start, limit, delta", [(0, 5, 1), (2, 11, 3), (5, 0, -2), (3, 3, 1),
                                                 (-4, 4, 5)])
@pytest.mark.parametrize("dtype", ["i32", "i64", "i8"])
def test_arange_integers_are_numpy_arange(start, limit, delta, dtype):
    y = F.arange(dtype=dtype, integer_start=start, integer_limit=limit, integer_delta=delta).numpy()
    expected = np.arange(start, limit, delta)
    assert y.dtype == np.dtype({"i32": "int32", "i64": "int64", "i8": "int8"}[dtype])
    assert np.array_equal(y, expected)


@pytest.mark.parametrize("start, limit, delta", [(0.0, 1.0, 0.25), (0.5, 1.6, 0.25),
                                                 (1.0, -1.0, -0.3), (0.0, 0.1, 1.0)])
@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_arange_floats_are_numpy_arange(start, limit, delta, dtype):
    y = F.arange(dtype=dtype, float_start=start, float_limit=limit, float_delta=delta).numpy()
    expected = np.arange(start, limit, delta)
    assert y.shape == expected.shape
    np.testing.assert_allclose(y, expected.astype(y.dtype), rtol=1e-6)


def test_arange_errors_name_the_delta_and_nd_sbp_is_kept():
    with pytest.raises(InferError, match="integer_delta is 0") as e:
        D.infer_result_types("tdflow.arange", [], {"dtype": "i64", "integer_limit": 4,
                                                   "nd_sbp": []})
    assert e.value.attr == "integer_delta"
    with pytest.raises(InferError, match="float_delta 1.0 runs away") as e:
        D.infer_result_types("tdflow.arange", [], {"dtype": "f32", "float_start": 2.0,
                                                   "float_delta": 1.0, "nd_sbp": []})
    assert e.value.attr == "float_delta"
    (ty,) = D.infer_result_types("tdflow.arange", [], {"dtype": "f32", "float_limit": 1.0,
                                                       "float_delta": 0.3, "nd_sbp": ["B"]})
    assert ty == T((4,), "f32")
    assert D.lookup("tdflow.arange").has_trait("NoGrad")


# -- one_hot ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("idx_shape", [(), (5,), (2, 3)])
@pytest.mark.parametrize("dtype, on, off", [("f32", 1.0, 0.0), ("f64", 0.9, 0.01),
                                            ("i64", 1, 0), ("i32", 7, -1)])
def test_one_hot_matches_numpy(idx_shape, dtype, on, off):
    idx = rng.integers(0, 4, size=idx_shape)
    kind = "floating" if dtype.startswith("f") else "integer"
    y = F.one_hot(t(idx), depth=4, dtype=dtype, **{f"{kind}_on_value": on,
                                                   f"{kind}_off_value": off}).numpy()
    expected = np.where(np.eye(4, dtype=bool)[idx], on, off)
    assert y.shape == idx_shape + (4,)
    np.testing.assert_allclose(y, expected.astype(y.dtype))


def test_one_hot_errors():
    with pytest.raises(TdflowError, match=r"tdflow\.one_hot.*'indices' holds 4 .*\[0, 4\)"):
        F.one_hot(t(np.array([0, 4])), depth=4, dtype="f32").numpy()
    with pytest.raises(InferError, match="depth must be positive") as e:
        D.infer_result_types("tdflow.one_hot", [T((3,), "i64")], {"depth": 0, "dtype": "f32"})
    assert e.value.attr == "depth"
    with pytest.raises(InferError, match="'indices' must be an integer tensor") as e:
        D.infer_result_types("tdflow.one_hot", [T((3,), "f32")], {"depth": 2, "dtype": "f32"})
    assert e.value.operand == "indices"


# -- the records -----------------------------------------------------------------------------------
def test_integer_outputs_and_nograd_ops_have_no_gradient():
    ctx = standard_context()
    for op in ("arange", "one_hot", "embedding_grad"):
        assert gradient_of(ctx, ctx.lookup(f"tdflow.{op}")) is None
    for op in set(INDEX_OPS) - {"arange", "one_hot", "embedding_grad"}:
        assert gradient_of(ctx, ctx.lookup(f"tdflow.{op}")) is not None, op


def test_description_examples_verify():
    from tdflow.dialect.ir import verify_module
    from tdflow.dialect.ir.parser import parse_module

    for name in INDEX_OPS:
        op = D.lookup(f"tdflow.{name}")
        (line,) = re.findall(r"^\s*(%.*\"tdflow\." + name + "\".*)$", op.description, re.M)
        types = line.rsplit(" : ", 1)[1]
        args, _, results = types.partition(" -> ")
        arg_types = [a.strip() for a in re.findall(r"tensor<[^>]*>", args)]
        res_types = re.findall(r"tensor<[^>]*>", results)
        operands = re.findall(r"\((%[^)]*)\)", line.split("=", 1)[1])[0].split(", ") \
            if arg_types else []
        params = ", ".join(f"{o}: {ty}" for o, ty in zip(operands, arg_types))
        text = (f"func.func @f({params}) -> {res_types[0]} {{\n  {line.strip()}\n"
                f"  return {line.split('=')[0].strip()} : {res_types[0]}\n}}\n")
        diags = verify_module(parse_module(text, f"<{name}>"), D)
        assert not [d for d in diags if d.severity == "error"], (name, [str(d) for d in diags])


def _oneflow_record(text: str, mnemonic: str) -> str:
    m = re.search(r'^def OneFlow_\w+ : OneFlow_BaseOp<"' + mnemonic + r'",.*?^}', text, re.M | re.S)
    assert m, mnemonic
    return m.group(0)


def test_records_match_oneflows(tmp_path):
    """Each op's operands, results, attributes (kinds, defaults), flags and NoGrad equal those of
    OneFlow's record pasted unchanged onto tdflow's Base.td. The one difference: tdflow's
    embedding_grad is NoGrad, as its other *_grad ops of scatters are."""
    path = CORPUS / "OneFlow" / "OneFlowUserOps.td"
    if not path.is_file():
        pytest.skip(f"OneFlow corpus not found at {CORPUS}")
    text = path.read_text()
    records = "\n".join(_oneflow_record(text, m) for m in INDEX_OPS)
    tmp = tmp_path / "oneflow_index_ops.td"
    tmp.write_text('include "tdflow/Base.td"\n' + records)
    theirs = load_dialect(tmp)
    for name in INDEX_OPS:
        of, ours = theirs.lookup(f"tdflow.{name}"), D.lookup(f"tdflow.{name}")

        def shape(defs):
            # OneFlow's OneFlowBase.td gives source ops (arange) the optional control input
            # UserSourceOpTickInput; pasted onto Base.td the record lacks it
            return [(v.name, v.arity) for v in defs if v.name != "UserSourceOpTickInput"]

        assert shape(of.operands) == shape(ours.operands), name
        assert shape(of.results) == shape(ours.results), name
        assert of.attributes == ours.attributes, name
        assert of.hooks == ours.hooks, name
        if name != "embedding_grad":
            assert of.has_trait("NoGrad") == ours.has_trait("NoGrad"), name
