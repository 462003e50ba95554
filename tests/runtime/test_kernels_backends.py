"""Backends by naming convention, the never-raising cuda_status, BLAS thread control."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from tdflow.runtime.backends import BackendUnavailableError, get_backend
from tdflow.runtime.backends import cuda_status as cs
from tdflow.runtime.kernels._blas import blas_threads, set_blas_threads
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
    from tdflow.runtime.kernels import _blas

    assert _blas.default_blas_threads() >= 1
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    policy = _blas.tdflow_blas_threads
    try:
        monkeypatch.setenv("TDFLOW_BLAS_THREADS", "1")
        policy.cache_clear()
        assert policy() == 1
        monkeypatch.delenv("TDFLOW_BLAS_THREADS")
        policy.cache_clear()
        assert policy() == _blas.default_blas_threads()
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
        policy.cache_clear()
        assert policy() is None  # the user's own setting is left alone
    finally:
        policy.cache_clear()  # read the real environment again


def test_blas_threads_are_tdflows_inside_its_blas_kernels_only(monkeypatch):
    """A BLAS kernel runs with tdflow's count; the caller's count is back afterwards, also
    after a kernel that raises; a kernel without BLAS leaves the count alone."""
    from tdflow.runtime.kernels.registry import register_kernel, select_kernel

    before = blas_threads()
    if before is None:
        pytest.skip("numpy's BLAS is not an OpenBLAS we can control")
    from tdflow.runtime.kernels._blas import tdflow_blas_threads

    monkeypatch.setenv("TDFLOW_BLAS_THREADS", "1")
    tdflow_blas_threads.cache_clear()
    seen = []

    @register_kernel("test.blas_probe", uses_blas=True)
    def probe(attrs, inputs, outs):
        seen.append(blas_threads())
        if attrs.get("fail"):
            raise ValueError("probe failed")
        return [np.matmul(inputs[0], inputs[0])]

    @register_kernel("test.plain_probe")
    def plain(attrs, inputs, outs):
        seen.append(blas_threads())
        return [inputs[0]]

    a = np.ones((32, 32), np.float32)
    try:
        assert set_blas_threads(2)  # the user's setting
        select_kernel("test.blas_probe", "cpu", ("f32",))({}, [a])
        with pytest.raises(ValueError, match="probe failed"):
            select_kernel("test.blas_probe", "cpu", ("f32",))({"fail": True}, [a])
        select_kernel("test.plain_probe", "cpu", ("f32",))({}, [a])
        mm = select_kernel("tdflow.matmul", "cpu", ("f32", "f32"), {})
        np.testing.assert_allclose(mm({}, [a, a])[0], a @ a)
        assert seen == [1, 1, 2]
        assert blas_threads() == 2
    finally:
        set_blas_threads(before)
        monkeypatch.undo()
        tdflow_blas_threads.cache_clear()


def test_loading_tdflows_kernels_leaves_the_users_blas_threads():
    """A user's numpy code after ``import tdflow`` and a compile runs with the user's count."""
    code = """if True:
        import numpy as np
        from tdflow.runtime.kernels._blas import blas_threads, set_blas_threads
        if blas_threads() is None:
            print("uncontrollable"); raise SystemExit
        set_blas_threads(2)
        import tdflow
        from tdflow.runtime.kernels.registry import select_kernel
        a = np.ones((64, 64), np.float32)
        select_kernel("tdflow.matmul", "cpu", ("f32", "f32"), {})({}, [a, a])
        print(blas_threads())
    """
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    env["TDFLOW_BLAS_THREADS"] = "1"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    if out.stdout.strip() == "uncontrollable":
        pytest.skip("numpy's BLAS is not an OpenBLAS we can control")
    assert out.stdout.strip() == "2"



@pytest.fixture
def blas_look(monkeypatch):
    """tdflow's BLAS count set to 1 (``TDFLOW_BLAS_THREADS``), and ``look()`` recording what
    a call sees: (the BLAS count, tdflow's scope depth) into ``look.seen``. After the test the
    caller's count, the variable and tdflow's cached count are as they were."""
    from tdflow.runtime.kernels import _blas

    before = blas_threads()
    if before is None:
        pytest.skip("numpy's BLAS is not an OpenBLAS we can control")
    monkeypatch.setenv("TDFLOW_BLAS_THREADS", "1")
    _blas.tdflow_blas_threads.cache_clear()

    def look():
        look.seen.append((blas_threads(), _blas._scope[0]))

    look.seen = []
    try:
        yield look
    finally:
        set_blas_threads(before)
        monkeypatch.undo()
        _blas.tdflow_blas_threads.cache_clear()


def test_blas_scope_fast_path_and_nesting(blas_look):
    """With the count already tdflow's, a scoped call runs without opening a scope; with
    another count, nested scoped calls all see tdflow's and the caller's comes back."""
    from tdflow.runtime.kernels import _blas

    seen = blas_look.seen
    inner = _blas.blas_scoped(blas_look)

    @_blas.blas_scoped
    def outer():
        blas_look()
        inner()

    assert set_blas_threads(1)
    outer()
    assert seen == [(1, 0), (1, 0)] and blas_threads() == 1  # no scope was opened
    seen.clear()
    assert set_blas_threads(2)
    outer()
    assert seen == [(1, 1), (1, 2)]  # inner counted inside outer's scope
    assert blas_threads() == 2 and _blas._scope[0] == 0


def test_blas_scoped_launch_fast_path_and_full_scope(blas_look):
    """A bound launch's scope: nothing opened with the count already tdflow's; with another
    count, the launch runs with tdflow's (counted as a scope, nested ones inside it) and the
    caller's comes back; the launch's result passes through."""
    from tdflow.runtime.kernels import _blas

    seen = blas_look.seen
    inner = _blas.blas_scoped(blas_look)

    def launch(attrs, ins, outs):
        blas_look()
        inner()
        return outs

    run = _blas.blas_scoped_launch(launch)
    outs = [object()]
    assert set_blas_threads(1)
    assert run({}, [], outs) is outs
    assert seen == [(1, 0), (1, 0)] and blas_threads() == 1
    seen.clear()
    assert set_blas_threads(2)
    assert run({}, [], outs) is outs
    assert seen == [(1, 1), (1, 2)]
    assert blas_threads() == 2 and _blas._scope[0] == 0
