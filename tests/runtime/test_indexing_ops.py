"""The ops of the reduce, index and slice families (formerly ops/indexing.td) on the CPU against numpy: argmax, top_k, cumsum, cumprod
and cumprod_grad, dim_gather, the dim_scatter family, gather_nd, scatter_nd_like and the
tensor_scatter_nd ops, triu and pad; their shape inference and
errors (naming the op and the attribute or operand); the gradients finite differences do not
reach (cumprod at zeros, exactly; which inputs take none). Finite differences and graph mode
are test_grad_ops.py's, from grad_cases_index.py; cudasim is tests/cuda/test_cuda_index.py's."""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.dialect import InferError, standard_dialect
from tdflow.dialect.types import TensorType as T

import tdflow
from tdflow.core.errors import TdflowError

F = tdflow.functional
D = standard_dialect()
rng = np.random.default_rng(29)
NUMERIC = ["float16", "float32", "float64", "int8", "int32", "int64"]


def t(a) -> tdflow.Tensor:
    return tdflow.tensor(np.asarray(a))


def _ints(shape, dtype="int64", lo=-3, hi=4) -> np.ndarray:
    """Small integers: many ties."""
    return rng.integers(lo, hi, size=shape).astype(dtype)


def _data(shape, dtype="float64") -> np.ndarray:
    if np.issubdtype(np.dtype(dtype), np.integer):
        return _ints(shape, dtype)
    return (rng.normal(size=shape) * 3).astype(dtype)


# -- argmax and top_k -----------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4), (4, 1)])
@pytest.mark.parametrize("dtype", NUMERIC + ["bool"])
def test_argmax_is_numpy_argmax_of_the_last_dim(shape, dtype):
    a = _data(shape, dtype) if dtype != "bool" else rng.random(shape) < 0.5
    y = F.argmax(t(a)).numpy()
    assert y.dtype == np.int64 and np.array_equal(y, np.argmax(a, axis=-1))
    (ty,) = D.infer_result_types("tdflow.argmax", [T(shape, "f32")], {})
    assert ty == T(shape[:-1], "i64")


def test_argmax_ties_and_nan():
    a = np.array([[1.0, 3.0, 3.0], [np.nan, 5.0, np.nan], [2.0, np.nan, 9.0]])
    assert F.argmax(t(a)).numpy().tolist() == [1, 0, 1]


def _np_top_k(a, k):
    """Largest first, equal values by position: a stable sort on the negated values."""
    key = -a.astype(np.float64)
    return np.argsort(key, axis=-1, kind="stable")[..., :k]


@pytest.mark.parametrize("shape, k", [((9,), 3), ((3, 6), 6), ((2, 3, 5), 1), ((4, 3), 0),
                                      ((2, 4), 7)])
@pytest.mark.parametrize("dtype", NUMERIC)
def test_top_k_is_a_stable_descending_sort(shape, k, dtype):
    a = _data(shape, dtype)
    y = F.top_k(t(a), k=k).numpy()
    assert y.dtype == np.int64 and np.array_equal(y, _np_top_k(a, k))
    (ty,) = D.infer_result_types("tdflow.top_k", [T(shape, "f32")], {"k": k})
    assert ty == T(shape[:-1] + (min(k, shape[-1]),), "i64")


def test_top_k_of_the_integer_extremes():
    # -x would wrap at the minimum; the kernel's key does not
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    a = np.array([[0, lo, hi, lo, -1]], np.int64)
    assert F.top_k(t(a), k=5).numpy().tolist() == [[2, 0, 4, 1, 3]]


def test_argmax_and_top_k_errors():
    with pytest.raises(InferError, match="'in' is a scalar"):
        D.infer_result_types("tdflow.argmax", [T((), "f32")], {})
    with pytest.raises(InferError, match="k must be >= 0"):
        D.infer_result_types("tdflow.top_k", [T((3,), "f32")], {"k": -1})


# -- cumsum, cumprod, cumprod_grad ----------------------------------------------------------------
@pytest.mark.parametrize("shape, dim", [((6,), 0), ((3, 4), 1), ((3, 4), -2), ((2, 3, 4), 1),
                                        ((2, 0), 1)])
@pytest.mark.parametrize("dtype", NUMERIC)
def test_cumsum_and_cumprod_are_numpy_in_the_input_type(shape, dim, dtype):
    a = _data(shape, dtype) if dtype.startswith("int") else _data(shape, dtype) / 3
    acc = np.float32 if dtype == "float16" else dtype
    for fn, ref in ((F.cumsum, np.cumsum), (F.cumprod, np.cumprod)):
        y = fn(t(a), dim=dim).numpy()
        want = ref(a, axis=dim, dtype=acc).astype(dtype)
        assert y.dtype == np.dtype(dtype) and np.array_equal(y, want), fn


def test_cumsum_of_small_integers_wraps_in_their_type():
    a = np.full(40, 100, np.int8)
    assert np.array_equal(F.cumsum(t(a), dim=0).numpy(), np.cumsum(a, dtype=np.int8))


def test_scan_errors():
    with pytest.raises(InferError, match="dim"):
        D.infer_result_types("tdflow.cumsum", [T((3, 4), "f32")], {"dim": 2})
    with pytest.raises(InferError, match="boolean"):
        D.infer_result_types("tdflow.cumprod", [T((3,), "i1")], {"dim": 0})


def _np_cumprod_jacobian_vjp(x, dy):
    """``dx_i = sum_j dy_j * d(prod_{k <= j} x_k)/dx_i``, the products taken without x_i."""
    n = x.size
    dx = np.zeros(n)
    for i in range(n):
        for j in range(i, n):
            dx[i] += dy[j] * np.prod([x[k] for k in range(j + 1) if k != i])
    return dx


@pytest.mark.parametrize("x", [[0.5, 0.0, -1.5, 2.0], [0.0, 0.0, 3.0], [1.2, -0.7, 0.4, 0.0],
                               [2.0]])
def test_cumprod_gradient_is_exact_at_zeros(x):
    x = np.array(x)
    dy = rng.normal(size=x.shape)
    xt = tdflow.tensor(x, requires_grad=True)
    F.reduce_sum(F.mul(F.cumprod(xt, dim=0), t(dy)), axis=[]).backward()
    np.testing.assert_allclose(xt.grad.numpy(), _np_cumprod_jacobian_vjp(x, dy), rtol=1e-12,
                               atol=1e-12)


def test_cumsum_gradient_is_the_reversed_running_sum():
    x = tdflow.tensor(rng.normal(size=(2, 5)), requires_grad=True)
    dy = rng.normal(size=(2, 5))
    F.reduce_sum(F.mul(F.cumsum(x, dim=1), t(dy)), axis=[]).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cumsum(dy[:, ::-1], axis=1)[:, ::-1],
                               rtol=1e-12)


# -- dim_gather and the dim_scatter family --------------------------------------------------------
@pytest.mark.parametrize("shape, idx_shape, dim", [((3, 5), (3, 2), 1), ((4, 3), (6, 3), 0),
                                                   ((2, 3, 4), (2, 2, 4), -2), ((5,), (8,), 0),
                                                   ((3, 4), (2, 3), 1)])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_dim_gather_is_take_along_axis(shape, idx_shape, dim, dtype):
    a = _data(shape) .astype(dtype)
    idx = rng.integers(0, shape[dim], size=idx_shape)
    y = F.dim_gather(t(a), t(idx), dim=dim).numpy()
    # numpy needs the index to cover the data outside dim: cut the data to it
    cut = a[tuple(slice(None) if d == dim % len(shape) else slice(0, n)
                  for d, n in enumerate(idx_shape))]
    assert y.dtype == a.dtype and np.array_equal(y, np.take_along_axis(cut, idx, axis=dim))


def _np_scatter(how, a, idx, src, dim):
    out = a.copy()
    at = list(np.indices(idx.shape, sparse=True))
    at[dim] = idx
    at = tuple(at)
    if how == "update":
        for p in np.ndindex(idx.shape):  # one at a time, in order: the last write wins
            q = tuple(int(idx[p]) if d == dim else c for d, c in enumerate(p))
            out[q] = src[p]
    else:
        {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}[how].at(
            out, at, src)
    return out


@pytest.mark.parametrize("how", ["update", "add", "mul", "max", "min"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("shape, idx_shape, dim", [((3, 4), (2, 4), 0), ((3, 4), (3, 6), 1),
                                                   ((2, 3, 4), (1, 3, 2), -1)])
def test_dim_scatter_is_numpy_ufunc_at(how, dtype, shape, idx_shape, dim):
    a, src = _data(shape, dtype), _data(idx_shape, dtype)
    idx = rng.integers(0, shape[dim], size=idx_shape)  # repeats included
    y = getattr(F, f"dim_scatter_{how}")(t(a), t(idx), t(src), dim=dim).numpy()
    assert np.array_equal(y, _np_scatter(how, a, idx, src, dim % len(shape)))


def test_dim_scatter_add_like_starts_from_zeros():
    like, idx, src = np.ones((2, 4)), np.array([[3, 3, 0]]), np.array([[1.0, 2.0, 4.0]])
    y = F.dim_scatter_add_like(t(like), t(idx), t(src), dim=1).numpy()
    assert y.tolist() == [[4.0, 0.0, 0.0, 3.0], [0.0, 0.0, 0.0, 0.0]]


def test_dim_index_errors_name_the_operand():
    with pytest.raises(InferError, match="'index'.*rank"):
        D.infer_result_types("tdflow.dim_gather", [T((3, 4), "f32"), T((3,), "i64")], {"dim": 0})
    with pytest.raises(InferError, match="larger than 'input'.*dim 0"):
        D.infer_result_types("tdflow.dim_gather", [T((3, 4), "f32"), T((5, 2), "i64")], {"dim": 1})
    with pytest.raises(InferError, match="'src'.*'index'"):
        D.infer_result_types("tdflow.dim_scatter_add", [T((3, 4), "f32"), T((2, 4), "i64"),
                                                        T((2, 3), "f32")], {"dim": 0})
    with pytest.raises(InferError, match="integer tensor"):
        D.infer_result_types("tdflow.dim_gather", [T((3, 4), "f32"), T((3, 4), "f32")], {})
    # the engine runs kernels asynchronously: the error surfaces when the result is read
    with pytest.raises(TdflowError, match=r"dim_gather.*'index' holds 4 .*\[0, 3\)"):
        F.dim_gather(t(np.zeros((2, 3))), t(np.array([[0, 4]])), dim=1).numpy()


def test_index_operands_take_no_gradient():
    x = tdflow.tensor(rng.normal(size=(3, 4)), requires_grad=True)
    src = tdflow.tensor(rng.normal(size=(2, 4)), requires_grad=True)
    idx = np.array([[0, 1, 2, 0], [2, 2, 1, 1]])
    F.reduce_sum(F.dim_scatter_add(x, t(idx), src, dim=0), axis=[]).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((3, 4)))
    np.testing.assert_array_equal(src.grad.numpy(), np.ones((2, 4)))


# -- gather_nd and the tensor_scatter_nd ops ------------------------------------------------------
def _np_gather_nd(a, idx):
    return np.array([a[tuple(int(c) for c in tup)] for tup in idx.reshape(-1, idx.shape[-1])]
                    ).reshape(idx.shape[:-1] + a.shape[idx.shape[-1]:])


def _np_scatter_nd(a, idx, upd, add):
    out = a.copy()
    tuples = idx.reshape(-1, idx.shape[-1])
    slices = upd.reshape((len(tuples),) + a.shape[idx.shape[-1]:])
    for tup, sl in zip(tuples, slices):  # in order: repeats accumulate, or the last one wins
        at = tuple(int(c) for c in tup)
        out[at] = out[at] + sl if add else sl
    return out


@pytest.mark.parametrize("shape, idx_shape", [((4, 3, 2), (5, 2)), ((4, 3, 2), (2, 3, 1)),
                                              ((4, 3), (3, 2)), ((5,), (4, 1)), ((2, 3), (0, 2))])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_gather_nd_picks_slices_by_tuples(shape, idx_shape, dtype):
    a = _data(shape).astype(dtype)
    k = idx_shape[-1]
    idx = np.stack([rng.integers(0, shape[j], size=idx_shape[:-1]) for j in range(k)], -1)
    idx = idx.reshape(idx_shape)
    y = F.gather_nd(t(a), t(idx)).numpy()
    assert y.dtype == a.dtype and np.array_equal(y, _np_gather_nd(a, idx))
    (ty,) = D.infer_result_types("tdflow.gather_nd", [T(shape, "f32"), T(idx_shape, "i64")], {})
    assert ty.shape == y.shape


@pytest.mark.parametrize("add", [False, True])
@pytest.mark.parametrize("shape, idx", [((4, 3, 2), [[1, 0], [3, 2], [1, 0]]),
                                        ((4, 3), [[2], [0], [2]]), ((3, 2), [[0, 1], [2, 0]])])
def test_tensor_scatter_nd_is_in_order_writes(add, shape, idx):
    a = _data(shape)
    idx = np.array(idx)
    upd = _data(idx.shape[:-1] + shape[idx.shape[-1]:])
    op = F.tensor_scatter_nd_add if add else F.tensor_scatter_nd_update
    y = op(t(a), t(upd), t(idx)).numpy()
    assert np.array_equal(y, _np_scatter_nd(a, idx, upd, add))
    z = F.scatter_nd_like(t(a), t(idx), t(upd)).numpy()
    assert np.array_equal(z, _np_scatter_nd(np.zeros_like(a), idx, upd, add=True))


def test_nd_errors_name_the_operand():
    with pytest.raises(InferError, match="tuples of 3 indices.*only 2 dims"):
        D.infer_result_types("tdflow.gather_nd", [T((3, 4), "f32"), T((2, 3), "i64")], {})
    with pytest.raises(InferError, match="'updates' has shape"):
        D.infer_result_types("tdflow.tensor_scatter_nd_add",
                             [T((4, 3), "f32"), T((2, 2), "f32"), T((2, 1), "i64")], {})
    with pytest.raises(TdflowError, match=r"gather_nd.*'indices\[\.\.\., 1\]' holds 3"):
        F.gather_nd(t(np.zeros((2, 3))), t(np.array([[0, 3]]))).numpy()


# -- triu and pad ---------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (2, 3, 4), (5, 2)])
@pytest.mark.parametrize("diagonal", [-2, 0, 1, 6])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_triu_is_numpy_triu(shape, diagonal, dtype):
    a = _data(shape).astype(dtype)
    assert np.array_equal(F.triu(t(a), diagonal=diagonal).numpy(), np.triu(a, diagonal))


@pytest.mark.parametrize("shape, before, after", [((2, 3), [1, 0], [0, 2]), ((3,), [0], [0]),
                                                  ((2, 1, 3), [2, 0, 1], [1, 3, 0]),
                                                  ((0, 2), [1, 1], [0, 0])])
@pytest.mark.parametrize("dtype, kind, value", [("float32", "floating", -1.5),
                                                ("int8", "integral", 300), ("bool", "integral", 1),
                                                ("float64", "floating", float("-inf"))])
def test_pad_is_numpy_pad_constant(shape, before, after, dtype, kind, value):
    a = _data(shape).astype(dtype)
    y = F.pad(t(a), padding_before=before, padding_after=after, padding=[],
              **{f"{kind}_constant_value": value}).numpy()
    fill = np.array(value).astype(dtype)
    assert y.dtype == a.dtype
    assert np.array_equal(y, np.pad(a, list(zip(before, after)), constant_values=fill))
    (ty,) = D.infer_result_types("tdflow.pad", [T(shape, "f32")],
                                 {"padding_before": before, "padding_after": after,
                                  "padding": []})
    assert ty.shape == y.shape


@pytest.mark.parametrize("before, after, match", [
    ([1], [0, 0], r"padding_before \[1\] has 1 entry but 'x' of shape \[2, 3\] has 2 dims"),
    ([0, -1], [0, 0], r"padding_before \[0, -1\] has an entry below 0 \(crop with slice\)")])
def test_pad_errors_name_the_attribute(before, after, match):
    with pytest.raises(InferError, match=match) as err:
        D.infer_result_types("tdflow.pad", [T((2, 3), "f32")],
                             {"padding_before": before, "padding_after": after, "padding": []})
    assert err.value.attr == "padding_before"
