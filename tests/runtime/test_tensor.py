"""Tensor: construction, dtypes, numpy/dlpack interop, repr, item."""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.runtime.tensor import Tensor, tensor


def test_defaults_and_dtypes():
    assert tensor([1.0, 2.0]).dtype == "f32"
    assert tensor([1, 2]).dtype == "i64"
    assert tensor([True]).dtype == "i1"
    assert tensor(np.zeros(2, np.float64)).dtype == "f64"
    assert tensor([1, 2], dtype="f16").numpy().dtype == np.float16
    assert tensor([1, 2], dtype=np.int8).dtype == "i8"
    assert tensor(2.5, dtype=float).shape == ()
    with pytest.raises(TypeError, match="unsupported dtype"):
        tensor([1], dtype="u16")
    with pytest.raises(TypeError, match="cannot make a tensor"):
        tensor(["a"])
    with pytest.raises(TypeError, match="only floating-point"):
        tensor([1], requires_grad=True)


def test_copy_semantics_and_views():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = tensor(a)
    a[0, 0] = 99
    assert t.numpy()[0, 0] == 0  # tensor() copies
    s = Tensor.from_numpy(a)
    assert s.numpy() is a  # from_numpy shares
    assert t.T.shape == (3, 2)
    assert tensor(t).numpy() is not t.numpy()
    assert len(t) == 2 and t.ndim == 2 and t.numel() == 6


def test_interop():
    t = tensor([[1.0, 2.0]], requires_grad=True)
    assert np.asarray(t).dtype == np.float32
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert np.from_dlpack(t).tolist() == [[1.0, 2.0]]
    assert t.__dlpack_device__()[0] == 1  # kDLCPU
    assert "requires_grad=True" in repr(t) and "dtype=f32" in repr(t)
    assert tensor(7).item() == 7
    with pytest.raises(ValueError, match="one element"):
        t.item()


def test_sync_hook_runs_before_reads():
    calls = []
    t = Tensor._wrap(np.zeros(2, np.float32))
    t._sync = lambda: calls.append(1)
    t.numpy()
    np.asarray(t)
    assert len(calls) == 2


def test_wrap_is_cheap():
    import timeit

    a = np.ones(16, np.float32)
    per_call = min(timeit.repeat(lambda: Tensor._wrap(a), number=2000, repeat=5)) / 2000
    assert per_call < 5e-6


def test_bf16_values_are_rounded_and_stored_as_f32():
    t = tensor([1.0 + 2**-9, 1.0 + 3 * 2**-9, float("nan"), float("inf")], dtype="bf16")
    assert t.dtype == "bf16" and t.numpy().dtype == np.float32
    v = t.numpy()
    assert v[0] == 1.0 and v[1] == 1.0 + 2**-7  # ties to even, nearest
    assert np.isnan(v[2]) and np.isinf(v[3])


def test_detach_keeps_pending_writes_tracked():
    calls = []
    t = Tensor._wrap(np.zeros(2, np.float32))
    t._sync = lambda: calls.append(1)
    d = t.detach()
    d.numpy()
    assert calls == [1] and d.grad_fn is None and not d.requires_grad
