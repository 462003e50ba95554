"""Eager calls run a kernel's ``bind`` specialisation (the function a compiled plan runs for the
same shapes, dtypes and attributes) and compute what the general kernel computes, bit for bit:
NaN, inf and signed zeros included, on contiguous and strided inputs.

Each case runs twice on fresh :class:`OpRunner` objects (fresh caches): once as shipped, once
with the specialisation switched off (``eager_entry.bind_for_entry`` returning the general
kernel); the test also checks that the first run did use a bound function, so it compares two
paths.
"""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.dialect.context import standard_context
from tdflow.runtime import eager_entry
from tdflow.runtime.eager import OpRunner
from tdflow.runtime.engine import get_engine
from tdflow.runtime.tensor import Tensor

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the special values
rng = np.random.default_rng(5)
SPECIAL = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, 3e38, -3e38, 1.5],
                   np.float32)


def values(*shape: int, dtype=np.float32, strided: bool = False) -> np.ndarray:
    """Random values with the special ones first; ``strided``: a non-contiguous view."""
    full = (shape[0] * 2, *shape[1:]) if strided else shape
    a = (rng.standard_normal(full) * 10.0 ** rng.integers(-3, 4, full)).astype(dtype)
    flat = a.reshape(-1)
    flat[: min(len(SPECIAL), flat.size)] = SPECIAL[: flat.size].astype(dtype)
    return a[::2] if strided else a


def bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def run_op(name: str, attr_names: tuple, attr_vals: tuple, operands: list,
           bound: bool, monkeypatch) -> tuple[list[np.ndarray], object]:
    """The op on fresh tensors (copies of ``operands``, strides kept): its results and, after
    the call, every operand's value (in-place ops write them); plus the function it ran."""
    ctx = standard_context()
    runner = OpRunner(ctx.lookup(name), attr_names, ctx)
    with monkeypatch.context() as m:
        if not bound:
            m.setattr(eager_entry, "bind_for_entry", lambda fn, *a: fn)
        ts = []
        for a in operands:
            if a is None:
                ts.append(None)
                continue
            base = np.empty((a.shape[0] * 2, *a.shape[1:]), a.dtype)[::2] \
                if not a.flags.c_contiguous else np.empty_like(a)
            base[...] = a
            ts.append(Tensor.from_numpy(base))
        out = runner.run(tuple(ts), attr_vals)
        get_engine().wait_all()
    (entry,) = runner.cache.values()
    outs = [] if out is None else list(out) if isinstance(out, tuple) else [out]
    return [o.numpy() for o in outs] + [t.numpy() for t in ts if t is not None], entry.fn


CASES = [
    ("tdflow.bias_add", ("axis",), (1,), lambda s: [values(8, 5, strided=s), values(5)]),
    ("tdflow.bias_add", ("axis",), (0,), lambda s: [values(8, 5, strided=s), values(8)]),
    ("tdflow.reduce_sum", ("axis",), ((0,),), lambda s: [values(16, 6, strided=s)]),
    ("tdflow.reduce_sum", ("axis", "keepdims"), ((1,), True), lambda s: [values(16, 6, strided=s)]),
    ("tdflow.reduce_sum_like", ("axis",), ((0,),),
     lambda s: [values(16, 6, strided=s), values(6)]),
    ("tdflow.broadcast_like", ("broadcast_axes",), ((0,),),
     lambda s: [values(6), values(16, 6, strided=s)]),
    ("tdflow.softmax", (), (), lambda s: [values(12, 7, strided=s)]),
    ("tdflow.matmul", (), (), lambda s: [values(12, 7, strided=s), values(7, 5)]),
    ("tdflow.matmul", ("transpose_a",), (True,),
     lambda s: [values(300, 20, strided=s), values(300, 30)]),
    ("tdflow.matmul", ("transpose_b",), (True,),
     lambda s: [values(64, 10, strided=s), values(256, 10)]),
    ("tdflow.sgd_update", ("learning_rate_val",), (0.1,),
     lambda s: [values(40, 3), values(40, 3, strided=s)]),
]


@pytest.mark.parametrize("strided", [False, True])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}{c[2]}")
def test_bound_kernels_match_the_general_kernel_bit_for_bit(case, strided, monkeypatch):
    name, names, vals, make = case
    operands = make(strided)
    got, fast = run_op(name, names, vals, operands, True, monkeypatch)
    want, general = run_op(name, names, vals, operands, False, monkeypatch)
    assert fast is not general  # the two runs took the two paths
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        assert bits(g) == bits(w)


@pytest.mark.parametrize("labels", [[0, 2, 1, 3], [0, 5, -1, 3]])  # in range, and not
def test_sparse_softmax_cross_entropy_and_its_gradient_bound(labels, monkeypatch):
    x = values(4, 4)
    lab = np.array(labels, np.int64)
    args = ("tdflow.sparse_softmax_cross_entropy", ("depth",), (4,), [x, lab])
    got, fast = run_op(*args, True, monkeypatch)
    want, general = run_op(*args, False, monkeypatch)
    assert fast is not general and [bits(g) for g in got] == [bits(w) for w in want]
    prob, dy = np.abs(values(4, 4)) / 50, values(4)
    gargs = ("tdflow.sparse_softmax_cross_entropy_grad", ("depth",), (4,), [lab, dy, prob])
    got, fast = run_op(*gargs, True, monkeypatch)
    want, general = run_op(*gargs, False, monkeypatch)
    assert fast is not general and [bits(g) for g in got] == [bits(w) for w in want]
