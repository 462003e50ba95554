"""Backends by naming convention, the never-raising cuda_status, BLAS thread control."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from tdflow.runtime.backends import BackendUnavailableError, get_backend
from tdflow.runtime.backends import cuda_status as cs
from tdflow.runtime.backends.cpu import blas_threads, set_blas_threads
from tdflow.runtime.kernels.registry import registered_kernels


def test_cpu_backend():
    b = get_backend("cpu")
    assert b is get_backend("cpu") and b.name == "cpu"
    buf = b.allocate((2, 3), "f16")
    assert buf.shape == (2, 3) and buf.dtype == np.float16
    assert b.zeros((2,), "i1").tolist() == [False, False]
    k = b.kernels.select("tdflow.square", ("i32",), {})
    assert b.launch(k, {}, [np.array([3], np.int32)])[0].tolist() == [9]
    b.synchronize()
    a = np.ones(2)
    assert b.to_numpy(b.from_numpy(a)) is a


def test_unknown_and_unavailable_backends():
    with pytest.raises(ValueError, match="unknown device 'tpu'; known backends: cpu, cuda"):
        get_backend("tpu")
    status = cs.cuda_status()
    if not status.available:
        with pytest.raises(BackendUnavailableError, match="CUDA unavailable: "):
            get_backend("cuda")
        assert str(status).startswith("CUDA unavailable: ")


def test_cuda_status_never_raises(monkeypatch):
    def boom(name):
        raise RuntimeError("broken driver")

    cs.cuda_status.cache_clear()
    monkeypatch.setattr(cs.importlib.util, "find_spec", boom)
    try:
        s = cs.cuda_status()
        assert not s.available and "broken driver" in s.reason
    finally:
        cs.cuda_status.cache_clear()
    monkeypatch.setenv("TDFLOW_DISABLE_CUDA", "1")
    try:
        assert "TDFLOW_DISABLE_CUDA" in cs.cuda_status().reason
    finally:
        cs.cuda_status.cache_clear()


def test_import_tdflow_and_cpu_runtime_do_not_import_pycuda():
    code = ("import sys, tdflow, tdflow.runtime.backends.cpu, tdflow.runtime.kernels.registry as r; "
            "r.kernel_table('cpu'); from tdflow.runtime.backends.cuda_status import find_nvcc; "
            "find_nvcc(); print('pycuda' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_blas_threads_can_be_limited():
    before = blas_threads()
    if before is None:
        pytest.skip("numpy's BLAS is not an OpenBLAS we can control")
    try:
        assert set_blas_threads(1)
        assert blas_threads() == 1
    finally:
        set_blas_threads(before)


def test_every_spec_op_has_a_cpu_kernel():
    spec = """relu leaky_relu sigmoid tanh gelu exp log sqrt negative square reciprocal scalar_add
    scalar_mul scalar_pow broadcast_add broadcast_sub broadcast_mul broadcast_div broadcast_maximum
    bias_add matmul batch_matmul reduce_sum reduce_max softmax log_softmax
    sparse_softmax_cross_entropy reshape transpose cat cast constant ones_like reduce_sum_like
    broadcast_like conv2d max_pool_2d dropout relu_grad leaky_relu_grad sigmoid_grad tanh_grad
    gelu_grad softmax_grad dropout_grad conv_data_grad conv_filter_grad max_pool_2d_grad
    sparse_softmax_cross_entropy_grad sgd_update""".split()
    have = {k.op for k in registered_kernels() if k.device == "cpu"}
    assert {f"tdflow.{m}" for m in spec} <= have
    assert len(spec) == 50
    blas = {k.op for k in registered_kernels() if k.uses_blas}
    assert {"tdflow.matmul", "tdflow.conv2d"} <= blas and "tdflow.relu" not in blas


def test_blas_policy(monkeypatch):
    from tdflow.runtime.backends import cpu

    assert cpu.default_blas_threads() >= 1
    monkeypatch.setattr(cpu, "_configured", [])
    monkeypatch.setenv("TDFLOW_BLAS_THREADS", "1")
    before = blas_threads()
    try:
        n = cpu.configure_blas_threads()
        assert n in (1, None)  # None: a BLAS we cannot control
        assert cpu.configure_blas_threads() == n  # once per process
    finally:
        if before is not None:
            set_blas_threads(before)
    monkeypatch.setattr(cpu, "_configured", [])
    monkeypatch.delenv("TDFLOW_BLAS_THREADS")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    assert cpu.configure_blas_threads() is None  # the user's own setting is left alone
