"""Tensor methods (t.sum, t.mean, t.reshape, t.transpose, t.permute, t.T, ...) and the
composite functions behind them (sum, mean, linear, cross_entropy): numpy's values, and
gradients that flow (finite differences)."""

from __future__ import annotations

import numpy as np
import pytest
from finite_diff import central_differences

import tdflow

F = tdflow.functional
rng = np.random.default_rng(7)


@pytest.mark.parametrize("dim, keep", [(None, False), (0, False), (1, True), ([0, 2], False),
                                       (-1, True)])
def test_sum_and_mean_match_numpy(dim, keep):
    a = rng.normal(size=(2, 3, 4))
    t = tdflow.tensor(a)
    axis = tuple(dim) if isinstance(dim, list) else dim
    np.testing.assert_allclose(t.sum(dim, keep).numpy(), a.sum(axis=axis, keepdims=keep))
    np.testing.assert_allclose(t.mean(dim, keep).numpy(), a.mean(axis=axis, keepdims=keep))
    np.testing.assert_allclose(F.mean(t, dim=None if dim is None else
                                      ([dim] if isinstance(dim, int) else dim),
                                      keepdim=keep).numpy(), a.mean(axis=axis, keepdims=keep))


def test_shape_methods_match_numpy():
    a = rng.normal(size=(2, 3, 4))
    t = tdflow.tensor(a)
    assert np.array_equal(t.reshape(4, -1).numpy(), a.reshape(4, -1))
    assert np.array_equal(t.reshape((6, 4)).numpy(), a.reshape(6, 4))
    assert np.array_equal(t.transpose(0, 2).numpy(), a.transpose(2, 1, 0))
    assert np.array_equal(t.permute(1, 2, 0).numpy(), a.transpose(1, 2, 0))
    assert np.array_equal(t.T.numpy(), a.T)
    assert np.array_equal(t.exp().numpy(), np.exp(a)) and t.relu().dtype == "f64"
    with pytest.raises(IndexError, match="out of range"):
        t.sum(3)


def test_methods_are_differentiable():
    a = rng.normal(size=(3, 4))

    def loss_np(x):
        return float((x.T @ x).mean() + np.exp(x.reshape(4, 3)).sum() + np.tanh(x).mean(axis=1).sum())

    x = tdflow.tensor(a, requires_grad=True)
    loss = (x.T @ x).mean() + x.reshape(4, 3).exp().sum() + x.tanh().mean(1).sum()
    assert loss.item() == pytest.approx(loss_np(a), rel=1e-12)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), central_differences(loss_np, a), rtol=1e-6, atol=1e-8)


def test_linear_and_cross_entropy_match_numpy_and_differentiate():
    x, w, b = rng.normal(size=(5, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4,))
    target = np.array([0, 3, 1, 2, 3])

    def loss_np(w_, reduction="mean"):
        z = x @ w_.T + b
        logp = z - z.max(1, keepdims=True)
        logp = logp - np.log(np.exp(logp).sum(1, keepdims=True))
        per = -logp[np.arange(5), target]
        return {"mean": per.mean(), "sum": per.sum(), "none": per}[reduction]

    tw = tdflow.tensor(w, requires_grad=True)
    y = F.linear(tdflow.tensor(x), tw, tdflow.tensor(b))
    np.testing.assert_allclose(y.numpy(), x @ w.T + b, rtol=1e-12)
    for red in ("sum", "none"):
        np.testing.assert_allclose(F.cross_entropy(y, tdflow.tensor(target), red).numpy(),
                                   loss_np(w, red), rtol=1e-12)
    loss = F.cross_entropy(y, tdflow.tensor(target))
    assert loss.item() == pytest.approx(loss_np(w), rel=1e-12)
    loss.backward()
    np.testing.assert_allclose(tw.grad.numpy(), central_differences(loss_np, w), rtol=1e-6, atol=1e-9)
    x3 = rng.normal(size=(2, 5, 3))
    np.testing.assert_allclose(F.linear(tdflow.tensor(x3), tdflow.tensor(w)).numpy(), x3 @ w.T,
                               rtol=1e-12)
    with pytest.raises(ValueError, match="reduction must be one of"):
        F.cross_entropy(y, tdflow.tensor(target), "avg")
    with pytest.raises(ValueError, match="weight must be 2-D"):
        F.linear(tdflow.tensor(x), tdflow.tensor(b))
