"""The eager fast path: a tiny op of tdflow's own kernels on ready inputs runs at once
(:meth:`Engine.run_now`), with no var for its result; anything pending on its inputs, a
failure, or a user's kernel takes the engine's ordinary path, with the same results.

Every check compares with numpy (or with the queued path) and holds on both engines.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from tdflow.runtime import eager_entry
from tdflow.runtime.engine import Engine, NaiveEngine, ThreadedEngine, get_engine, set_engine
from tdflow.runtime.tensor_glue import var_of

import tdflow

F = tdflow.functional
rng = np.random.default_rng(7)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def test_a_tiny_op_on_ready_inputs_runs_at_once_without_a_var(engine):
    a = f32(16)
    y = F.relu(tdflow.tensor(a))
    assert y._sync is None  # computed: nothing to wait for, no var made
    np.testing.assert_array_equal(y.numpy(), np.maximum(a, 0))
    z = F.broadcast_add(y, y)  # reading a var-less result is fine
    np.testing.assert_array_equal(z.numpy(), 2 * np.maximum(a, 0))


def test_every_fast_form_equals_numpy(engine):
    a, b, m = f32(16), f32(16), f32(4, 4)
    x, y, w = tdflow.tensor(a), tdflow.tensor(b), tdflow.tensor(m)
    got = {
        "broadcast_add": F.broadcast_add(x, y),
        "leaky_relu": F.leaky_relu(x, alpha=0.2),
        "leaky_relu positional": F.leaky_relu(x, 0.2),
        "add scalar": F.add(x, 1.5),
        "add int": F.add(x, 2),
        "matmul": F.matmul(w, w),
        "matmul transpose_b": F.matmul(w, w, transpose_b=True),
        "matmul alpha": F.matmul(w, w, alpha=2.0),
        "bias_add": F.bias_add(w, tdflow.tensor(b[:4]), axis=1),
        "reshape": F.reshape(x, (4, 4)),
        "reduce_sum": F.reduce_sum(w, axis=[1]),
    }
    want = {
        "broadcast_add": a + b,
        "leaky_relu": np.where(a > 0, a, a * np.float32(0.2)),
        "leaky_relu positional": np.where(a > 0, a, a * np.float32(0.2)),
        "add scalar": a + np.float32(1.5),
        "add int": a + np.float32(2),
        "matmul": m @ m,
        "matmul transpose_b": m @ m.T,
        "matmul alpha": np.float32(2) * (m @ m),
        "bias_add": m + b[:4],
        "reshape": a.reshape(4, 4),
        "reduce_sum": m.sum(1),
    }
    for k, t in got.items():
        np.testing.assert_allclose(t.numpy(), want[k], rtol=1e-6, atol=1e-6, err_msg=k)


def test_the_fast_forms_reject_what_the_signature_rejects(engine):
    x = tdflow.tensor(f32(4))
    with pytest.raises(TypeError, match='argument "alpha" must be Float, not str'):
        F.leaky_relu(x, alpha="big")
    with pytest.raises(TypeError, match='unexpected keyword argument "beta"'):
        F.leaky_relu(x, beta=0.1)
    with pytest.raises(TypeError, match='argument "transpose_b" must be Bool, not int'):
        F.matmul(x, x, transpose_b=1)
    with pytest.raises(TypeError, match='missing required argument "shape"'):
        F.reshape(x)


def test_an_op_waits_for_a_pending_write_of_its_input():
    engine = ThreadedEngine(workers=1)
    old = set_engine(engine)
    try:
        a = np.zeros(16, np.float32)
        x = tdflow.tensor(a)
        buf = x.buffer
        release = threading.Event()

        def slow_fill():
            release.wait(5)
            buf[:] = 3.0

        engine.push(slow_fill, writes=(var_of(x),), name="fill", inline=False)
        y = F.relu(x)  # must not run now: the fill is pending
        assert y._sync is not None
        release.set()
        np.testing.assert_array_equal(y.numpy(), np.full(16, 3.0, np.float32))
    finally:
        engine.wait_all()
        set_engine(old)


def test_an_in_place_update_after_a_fast_read_is_ordered_after_it(engine):
    w = tdflow.tensor(np.ones(8, np.float32))
    g = tdflow.tensor(np.full(8, 2.0, np.float32))
    before = F.relu(w)  # ran at once: read w before the update
    F.sgd_update(w, g, learning_rate_val=0.5)
    np.testing.assert_array_equal(before.numpy(), np.ones(8, np.float32))
    np.testing.assert_array_equal(w.numpy(), np.zeros(8, np.float32))
    after = F.relu(F.add(w, 1.0))  # reads the updated value
    np.testing.assert_array_equal(after.numpy(), np.ones(8, np.float32))


def test_a_failed_input_makes_the_op_fail_at_read_naming_the_first_op(engine):
    x = tdflow.tensor(f32(4))

    def broken():
        raise RuntimeError("disk on fire")

    engine.push(broken, writes=(var_of(x),), name="tdflow.load")
    y = F.relu(x)
    with pytest.raises(tdflow.runtime.engine.EngineError, match="tdflow.load"):
        y.numpy()


def test_only_tdflows_own_kernels_run_under_the_engine_lock():
    from tdflow.runtime.kernels import linalg

    assert eager_entry.is_pure(linalg.matmul)
    assert not eager_entry.is_pure(lambda attrs, ins, outs: None)  # a user's kernel
    assert Engine().run_now(lambda i, o: None, [], None, ()) is False  # no fast path: push


def test_gradients_through_the_fast_path_equal_the_queued_path():
    a, b = f32(4, 4), f32(4)

    def grads(engine_kind):
        old = set_engine(ThreadedEngine(workers=1) if engine_kind else NaiveEngine())
        try:
            w = tdflow.tensor(a, requires_grad=True)
            c = tdflow.tensor(b, requires_grad=True)
            y = F.leaky_relu(F.bias_add(F.matmul(w, w), c, axis=1), alpha=0.1)
            F.reduce_sum(F.mul(y, y), axis=[0, 1]).backward()
            return w.grad.numpy().copy(), c.grad.numpy().copy()
        finally:
            get_engine().wait_all()
            set_engine(old)

    (gw1, gc1), (gw2, gc2) = grads(True), grads(False)
    np.testing.assert_array_equal(gw1, gw2)
    np.testing.assert_array_equal(gc1, gc2)


def test_threads_sharing_inputs_and_updating_their_own_parameters():
    """Four threads call tiny ops on shared inputs and update their own parameters in place,
    interleaved with queued work; every result equals the serial numpy computation."""
    engine = ThreadedEngine(workers=1)
    old = set_engine(engine)
    shared = f32(8, 8)
    xs = tdflow.tensor(shared)
    errors: list[BaseException] = []
    steps = 200

    def worker(seed: int) -> None:
        try:
            local = np.random.default_rng(seed)
            w0 = local.standard_normal((8, 8)).astype(np.float32)
            w = tdflow.tensor(w0.copy())
            want = w0.copy()
            for i in range(steps):
                g = F.relu(F.matmul(xs, w))
                F.sgd_update(w, g, learning_rate_val=0.01)
                want -= np.float32(0.01) * np.maximum(shared @ want, 0)
                if i % 50 == 0:  # queued work on the shared input now and then
                    engine.push(lambda: time.sleep(0.001), reads=(var_of(xs),), name="nap",
                                inline=False)
            np.testing.assert_allclose(w.numpy(), want, rtol=1e-5, atol=1e-5)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        engine.wait_all()
    finally:
        set_engine(old)
    assert not any(t.is_alive() for t in threads)
    if errors:
        raise errors[0]
