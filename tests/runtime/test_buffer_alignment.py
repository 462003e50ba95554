"""A plan's internal CPU buffers start on a cache line (``runtime/executor.py``'s
``aligned_empty``); values are those of the hand-written step."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from tdflow.runtime.executor import ALIGN, aligned_empty

import tdflow

BENCH = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
import train_bench  # noqa: E402


@pytest.mark.parametrize("shape", [(), (0,), (3, 0), (7,), (5, 3), (2, 3, 4)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int8, np.bool_,
                                   np.float16])
def test_aligned_empty(shape, dtype):
    for _ in range(8):  # malloc gives 16-byte alignment: several tries see other offsets
        a = aligned_empty(shape, dtype)
        assert a.shape == shape and a.dtype == np.dtype(dtype)
        assert a.flags.c_contiguous and a.flags.writeable
        assert a.ctypes.data % ALIGN == 0 or a.size == 0
        a[...] = 1
        assert (a == 1).all()


def test_plan_buffers_are_aligned():
    x, y, params = train_bench.make_data(0)
    names = list(train_bench.PARAMS)
    vg = tdflow.value_and_grad(train_bench.program(), wrt=names)
    storage = vg.program.executor._storage  # the plan's internal buffers
    assert storage and all(a.ctypes.data % ALIGN == 0 for a in storage.values())
    args = [x, y, *(params[k] for k in names)]
    loss, grads = vg(*args)
    # the same values as the hand-written step (to its tolerance: other summation orders)
    want_loss, want = train_bench.numpy_column(x, y, params)[0]()
    np.testing.assert_allclose(float(loss), want_loss, rtol=1e-5)
    for g, k in zip(grads, names):
        np.testing.assert_allclose(g, want[k], rtol=1e-4, atol=1e-6)
