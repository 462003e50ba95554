"""A numpy elementwise program keeps its scratch per input shapes (up to ``SCRATCH_SHAPES``
of them, per thread): one program serves every layer whose expression repeats (batch
normalization's gradient, at each layer's shape), and calls alternating between shapes reuse
their temporaries instead of allocating them again; the values are numpy's, bit for bit."""

from __future__ import annotations

import numpy as np
from tdflow.dialect.formula.expr import Input
from tdflow.lowering import elementwise_native, elementwise_numpy
from tdflow.lowering.elementwise_numpy import render_numpy

SHAPES = [((64, 32, 4, 4), (1, 32, 1, 1)), ((64, 16, 8, 8), (1, 16, 1, 1))]


def test_alternating_broadcast_shapes_reuse_their_scratch(monkeypatch):
    kept: list = []
    real = elementwise_numpy._keep
    # numpy's path is the subject: once the runtime has installed a C builder (any earlier test
    # that compiled something), these channel broadcasts would run on the native loop instead
    monkeypatch.setattr(elementwise_native, "USE_NATIVE", False)
    monkeypatch.setattr(elementwise_numpy, "_keep",
                        lambda d, k, v, n: (kept.append(k), real(d, k, v, n)))
    run = render_numpy((Input(0) - Input(1)) * Input(2), ["f32"] * 3, "f32").run
    rng = np.random.default_rng(3)
    for i in range(6):
        big, small = SHAPES[i % 2]
        x = rng.standard_normal(big).astype(np.float32)
        x.reshape(-1)[:4] = [np.nan, -0.0, np.inf, -np.inf]
        m, s = (rng.standard_normal(small).astype(np.float32) for _ in range(2))
        got = run([x, m, s], np.empty(big, np.float32))
        want = np.multiply(np.subtract(x, m), s)
        assert got.tobytes() == want.tobytes()
    assert len(kept) == 2  # one plan per shape, made on its first call


def test_kept_scratch_stays_within_its_bounds():
    kept: dict = {}
    for i in range(3 * elementwise_numpy.SCRATCH_SHAPES):
        elementwise_numpy._keep(kept, (i,), object(), 1 << 16)
        assert len(kept) <= elementwise_numpy.SCRATCH_SHAPES + 2  # shapes and the byte count
    elementwise_numpy._keep(kept, (-1,), object(), elementwise_numpy.SCRATCH_MAX_BYTES)
    assert set(kept) == {(-1,), "bytes"}  # the budget: what was kept before is dropped
    elementwise_numpy._keep(kept, (-2,), object(), elementwise_numpy.SCRATCH_MAX_BYTES + 1)
    assert (-2,) not in kept  # larger than the budget: never kept
