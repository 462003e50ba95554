"""softmax family, sparse softmax cross entropy (and grads), dropout: loops and finite differences."""

from __future__ import annotations

import math

import numpy as np
import pytest
from tdflow.runtime.kernels import random as kernels_random
from tdflow.runtime.kernels.registry import select_kernel

NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64,
      "i8": np.int8, "i1": np.bool_}
MLIR = {v: k for k, v in NP.items()}


def run(op, inputs, attrs=None, outs=None):
    attrs = attrs or {}
    dts = tuple(MLIR[a.dtype.type] for a in inputs if a is not None)
    return select_kernel(op, "cpu", dts, attrs)(attrs, inputs, outs)


def loop_softmax(row):
    m = max(row)
    e = [math.exp(v - m) for v in row]
    s = sum(e)
    return [v / s for v in e]


@pytest.mark.parametrize("dtype", ["f16", "f32", "f64"])
def test_softmax_and_log_softmax(dtype):
    rng = np.random.default_rng(0)
    x = (rng.normal(size=(2, 3, 5)) * 4).astype(NP[dtype])
    x[0, 0, 0] = 80  # large logits stay finite
    (y,) = run("tdflow.softmax", [x])
    (ly,) = run("tdflow.log_softmax", [x])
    assert y.dtype == NP[dtype] and ly.dtype == NP[dtype]
    tol = 1e-2 if dtype == "f16" else 1e-6
    for idx in np.ndindex(x.shape[:-1]):
        want = loop_softmax([float(v) for v in x[idx]])
        np.testing.assert_allclose(y[idx].astype(np.float64), want, rtol=tol, atol=tol)
        np.testing.assert_allclose(ly[idx].astype(np.float64), [math.log(max(w, 1e-300)) for w in want],
                                   rtol=tol, atol=tol * 10)


def test_softmax_edges_and_buffers():
    assert run("tdflow.softmax", [np.zeros((0, 4), np.float32)])[0].shape == (0, 4)
    assert run("tdflow.softmax", [np.zeros((2, 1), np.float32)])[0].tolist() == [[1.0], [1.0]]
    x = np.array([[1.0, 2.0]], np.float32)
    out = np.empty_like(x)
    assert run("tdflow.softmax", [x], outs=[out])[0] is out
    run("tdflow.softmax", [x], outs=[x])  # in place
    np.testing.assert_allclose(x, out)


@pytest.mark.parametrize("dtype", ["f16", "f32", "f64"])
def test_softmax_grad_into_its_output_is_the_fresh_path_bit_for_bit(dtype):
    """Computed in the given output (f32/f64), in place over dy too: the allocating path's bits,
    NaN, inf and signed zeros included."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=(2, 3, 16)) * 20
    x[0, 0, 3], x[1, 2, 0] = np.nan, np.inf
    dy = (rng.normal(size=x.shape) * 10.0 ** rng.integers(-3, 3, x.shape)).astype(NP[dtype])
    dy[0, 1, :4] = -0.0
    dy[1, 0, 5] = -np.inf
    with np.errstate(all="ignore"):
        y = run("tdflow.softmax", [x.astype(NP[dtype])])[0]
        (fresh,) = run("tdflow.softmax_grad", [y, dy])
        out = np.full_like(dy, 5)
        (into,) = run("tdflow.softmax_grad", [y, dy], outs=[out])
        inplace = dy.copy()
        (over,) = run("tdflow.softmax_grad", [y, inplace], outs=[inplace])
    assert into is out and over is inplace
    for got in (into, over):
        assert np.array_equal(got.view(np.uint8), fresh.view(np.uint8))
    assert np.isnan(fresh).any() and np.signbit(fresh[~np.isnan(fresh)]).any()


def test_softmax_grad_finite_differences():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 4))
    dy = rng.normal(size=(3, 4))
    y = run("tdflow.softmax", [x])[0]
    (dx,) = run("tdflow.softmax_grad", [y, dy])
    h = 1e-6
    for i, j in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i, j] += h
        xm[i, j] -= h
        num = ((run("tdflow.softmax", [xp])[0] - run("tdflow.softmax", [xm])[0]) * dy).sum() / (2 * h)
        assert abs(dx[i, j] - num) < 1e-6


def loop_ce(pred, label):
    n, c = pred.shape
    prob = np.zeros_like(pred, dtype=np.float64)
    loss = np.zeros(n)
    for i in range(n):
        p = loop_softmax([float(v) for v in pred[i]])
        prob[i] = p
        if 0 <= label[i] < c:
            loss[i] = -math.log(p[label[i]])
    return prob, loss


@pytest.mark.parametrize("ldtype", ["i32", "i64", "i8"])
def test_sparse_softmax_cross_entropy(ldtype):
    rng = np.random.default_rng(2)
    pred = rng.normal(size=(5, 4)).astype(np.float32)
    label = np.array([0, 3, 1, 2, 3], NP[ldtype])
    prob, out = run("tdflow.sparse_softmax_cross_entropy", [pred, label], {"depth": 4})
    want_p, want_l = loop_ce(pred, label)
    np.testing.assert_allclose(prob, want_p, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, want_l, rtol=1e-5, atol=1e-6)
    assert prob.dtype == np.float32 and out.shape == (5,)
    # depth=0 (the default) means "the last dim"
    _, out0 = run("tdflow.sparse_softmax_cross_entropy", [pred, label])
    np.testing.assert_allclose(out0, out)


def test_sparse_cross_entropy_out_of_range_label_and_errors():
    pred = np.zeros((2, 3), np.float64)
    label = np.array([5, -1], np.int64)
    _, out = run("tdflow.sparse_softmax_cross_entropy", [pred, label], {"depth": 3})
    assert out.tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="depth is 4"):
        run("tdflow.sparse_softmax_cross_entropy", [pred, np.zeros(2, np.int64)], {"depth": 4})
    with pytest.raises(ValueError, match="label shape"):
        run("tdflow.sparse_softmax_cross_entropy", [pred, np.zeros(3, np.int64)], {"depth": 3})


def test_sparse_cross_entropy_grad_finite_differences():
    rng = np.random.default_rng(3)
    pred = rng.normal(size=(3, 1, 4))
    label = np.array([[2], [0], [3]], np.int32)
    dy = rng.normal(size=(3, 1))
    prob, _ = run("tdflow.sparse_softmax_cross_entropy", [pred, label], {"depth": 4})
    (dpred,) = run("tdflow.sparse_softmax_cross_entropy_grad", [label, dy, prob], {"depth": 4})
    h = 1e-6

    def loss(p):
        return (run("tdflow.sparse_softmax_cross_entropy", [p, label], {"depth": 4})[1] * dy).sum()

    for idx in np.ndindex(pred.shape):
        pp, pm = pred.copy(), pred.copy()
        pp[idx] += h
        pm[idx] -= h
        assert abs(dpred[idx] - (loss(pp) - loss(pm)) / (2 * h)) < 1e-6
    out = np.empty_like(pred)
    assert run("tdflow.sparse_softmax_cross_entropy_grad", [label, dy, prob], {"depth": 4},
               [out])[0] is out


def test_dropout_statistics_seed_and_add():
    x = np.ones((200, 100), np.float32)
    out, mask = run("tdflow.dropout", [x], {"rate": 0.3, "seed": 7})
    assert mask.dtype == np.bool_ and 0.65 < mask.mean() < 0.75
    np.testing.assert_allclose(out, mask / 0.7, rtol=1e-6)
    # the same seed replays from a fresh generator in another process; here it advances
    out2, mask2 = run("tdflow.dropout", [x], {"rate": 0.3, "seed": 7})
    assert not np.array_equal(mask, mask2)
    kernels_random.manual_seed(123)
    _, m1 = run("tdflow.dropout", [x], {"rate": 0.5})
    kernels_random.manual_seed(123)
    _, m2 = run("tdflow.dropout", [x], {"rate": 0.5})
    assert np.array_equal(m1, m2)
    add = np.full_like(x, 2.0)
    out, mask = run("tdflow.dropout", [x, add], {"rate": 0.5})
    np.testing.assert_allclose(out, mask * 2.0 + 2.0)


def test_dropout_edges_and_buffers():
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    out, mask = run("tdflow.dropout", [x])  # rate 0: identity
    assert np.array_equal(out, x) and mask.all()
    out, mask = run("tdflow.dropout", [x], {"rate": 1.0})
    assert not mask.any() and not out.any()
    ob, mb = np.empty_like(x), np.empty(x.shape, np.bool_)
    o, m = run("tdflow.dropout", [x], {"rate": 0.5}, [ob, mb])
    assert o is ob and m is mb
    with pytest.raises(ValueError, match="rate must be in"):
        run("tdflow.dropout", [x], {"rate": 1.5})
    out, mask = run("tdflow.dropout", [np.ones((0, 2), np.float16)], {"rate": 0.5})
    assert out.shape == (0, 2) and out.dtype == np.float16
