"""An imported classifier is differentiable: value_and_grad fine-tunes its weights, with
gradients equal to finite differences, and the loss drops."""

from __future__ import annotations

import numpy as np
from models import blobs, classifier

import tdflow
from tdflow.onnx.convert import convert
from tdflow.onnx.importer import import_model, initializers


def _step_fn():
    m = classifier()
    program = convert(import_model(m, weights_as_args=True))
    params = initializers(m)
    return tdflow.value_and_grad(program, wrt=list(params)), params


def test_gradients_match_finite_differences():
    f, params = _step_fn()
    x, y = blobs(32)
    loss, grads = f(x, y, *params.values())
    names = list(params)
    rng = np.random.default_rng(3)
    for name, g in zip(names, grads):
        p = params[name].astype(np.float64)
        idx = tuple(int(rng.integers(0, d)) for d in p.shape)
        eps = 1e-3
        vals = []
        for sign in (1, -1):
            q = dict(params)
            pp = p.copy()
            pp[idx] += sign * eps
            q[name] = pp.astype(np.float32)
            vals.append(float(f(x, y, *q.values())[0]))
        fd = (vals[0] - vals[1]) / (2 * eps)
        assert abs(fd - float(g[idx])) < 2e-3 + 2e-2 * abs(fd), (name, idx, fd, g[idx])


def test_a_few_sgd_steps_lower_the_loss():
    f, params = _step_fn()
    x, y = blobs(32)
    first = None
    for _ in range(20):
        loss, grads = f(x, y, *params.values())
        first = float(loss) if first is None else first
        params = {k: v - 0.5 * g for (k, v), g in zip(params.items(), grads)}
    final = float(f(x, y, *params.values())[0])
    assert final < 0.3 * first, (first, final)
