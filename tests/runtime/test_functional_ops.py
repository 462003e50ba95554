"""``tdflow.functional`` generated from the standard dialect: coverage, numerics vs numpy, engine.

The kernels have their own exhaustive tests; here every call goes through the whole eager path
(binding, inference hooks, kernel selection, engine) and is compared with plain numpy.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping

import numpy as np
import pytest
from tdflow.dialect import standard_dialect
from tdflow.runtime import engine as engine_mod
from tdflow.runtime.engine import EngineError, NaiveEngine, ThreadedEngine
from tdflow.runtime.tensor_glue import var_of

import tdflow

F = tdflow.functional
T = 10.0
RNG = np.random.default_rng(7)


def t(a, dtype=None):
    return tdflow.tensor(np.asarray(a), dtype=dtype)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@contextlib.contextmanager
def installed(eng):
    """``eng`` as the process-wide engine for the ``with`` block; the previous one after it."""
    old = engine_mod.set_engine(eng)
    try:
        yield eng
    finally:
        engine_mod.set_engine(old)


def test_a_function_for_every_op_of_the_dialect():
    ops = standard_dialect().ops
    for op in ops.values() if isinstance(ops, Mapping) else ops:
        if op.dialect != "tdflow":
            continue
        if op.has_trait("LoweringOnly"):  # made by passes (fused_elementwise): no function
            assert not hasattr(F, op.mnemonic), op.name
            continue
        fname = "concat" if op.mnemonic == "cat" else op.mnemonic
        fn = getattr(F, fname)
        assert callable(fn) and fn.__name__ in (fname, op.mnemonic)
        assert fn.__doc__ and op.mnemonic in fn.__doc__ or fname in fn.__doc__
    assert F.cat is F.concat
    for extra in ("add", "sub", "mul", "div", "pow", "maximum"):
        assert callable(getattr(F, extra))


def test_default_signatures_follow_the_op_definitions():
    assert str(F.signatures("leaky_relu")[0]) == "Tensor (Tensor x, Float alpha=0.0)"
    assert str(F.signatures("relu")[0]) == "Tensor (Tensor x)"
    assert str(F.signatures("matmul")[0]).startswith(
        "Tensor (Tensor a, Tensor b, Tensor? _add_to_output=None, Bool transpose_a=False")
    assert str(F.signatures("concat")[0]) == (
        "Tensor (TensorTuple inputs, Int64 axis=0, *, Int64 max_dim_size=0)")
    assert str(F.signatures("sgd_update")[0]).startswith("Void (Tensor model, Tensor model_diff")


def test_help_shows_a_python_signature():
    import inspect

    sig = inspect.signature(F.leaky_relu)
    assert list(sig.parameters) == ["x", "alpha"] and sig.parameters["alpha"].default == 0.0


UNARY = {
    "relu": lambda a: np.maximum(a, 0),
    "sigmoid": lambda a: 1 / (1 + np.exp(-a)),
    "tanh": np.tanh,
    "exp": np.exp,
    "negative": np.negative,
    "square": np.square,
    "reciprocal": lambda a: 1 / a,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ops_match_numpy(name, engine):
    a = rand(3, 5)
    np.testing.assert_allclose(getattr(F, name)(t(a)).numpy(), UNARY[name](a), rtol=1e-5,
                               atol=1e-6)


def test_log_sqrt_on_positive_inputs(engine):
    a = np.abs(rand(7)) + 0.1
    np.testing.assert_allclose(F.log(t(a)).numpy(), np.log(a), rtol=1e-5)
    np.testing.assert_allclose(F.sqrt(t(a)).numpy(), np.sqrt(a), rtol=1e-5)


def test_leaky_relu_alpha_and_dtypes(engine):
    a = rand(16)
    np.testing.assert_allclose(F.leaky_relu(t(a), alpha=0.2).numpy(), np.where(a > 0, a, 0.2 * a),
                               rtol=1e-6)
    r = F.leaky_relu(t(a.astype(np.float64)), 0.5)
    assert r.dtype == "f64"
    np.testing.assert_allclose(r.numpy(), np.where(a > 0, a, 0.5 * a), rtol=1e-6)


@pytest.mark.parametrize("fname, ref", [("add", np.add), ("sub", np.subtract),
                                        ("mul", np.multiply), ("div", np.divide),
                                        ("maximum", np.maximum)])
def test_binary_broadcasting(fname, ref, engine):
    a, b = rand(4, 1, 3), rand(5, 1) + 3
    np.testing.assert_allclose(getattr(F, fname)(t(a), t(b)).numpy(), ref(a, b), rtol=1e-5)


@pytest.mark.parametrize("fname, scalar, ref", [
    ("add", 2, lambda a, s: a + s), ("add", 0.5, lambda a, s: a + s),
    ("sub", 1.5, lambda a, s: a - s), ("mul", 3, lambda a, s: a * s),
    ("div", 4.0, lambda a, s: a / s), ("pow", 2, lambda a, s: a**s),
])
def test_tensor_scalar_forms(fname, scalar, ref, engine):
    a = rand(6)
    r = getattr(F, fname)(t(a), scalar)
    assert r.dtype == "f32"
    np.testing.assert_allclose(r.numpy(), ref(a, scalar), rtol=1e-5)


@pytest.mark.parametrize("fname, ref", [("add", lambda s, a: s + a), ("sub", lambda s, a: s - a),
                                        ("mul", lambda s, a: s * a), ("div", lambda s, a: s / a)])
def test_scalar_tensor_forms(fname, ref, engine):
    a = rand(6) + 5
    np.testing.assert_allclose(getattr(F, fname)(2.0, t(a)).numpy(), ref(2.0, a), rtol=1e-5)


def test_integer_tensors(engine):
    a = np.arange(-3, 3, dtype=np.int64)
    r = F.add(t(a), 2)
    assert r.dtype == "i64"
    np.testing.assert_array_equal(r.numpy(), a + 2)
    np.testing.assert_array_equal(F.relu(t(a)).numpy(), np.maximum(a, 0))


def test_matmul_variants(engine):
    a, b, c = rand(3, 4), rand(5, 4), rand(3, 5)
    np.testing.assert_allclose(F.matmul(t(a), t(b), transpose_b=True).numpy(), a @ b.T, rtol=1e-5)
    np.testing.assert_allclose(F.matmul(t(a), t(b), t(c), transpose_b=True, alpha=2.0).numpy(),
                               2 * a @ b.T + c, rtol=1e-5)
    x, y = rand(2, 3, 4), rand(2, 4, 5)
    np.testing.assert_allclose(F.batch_matmul(t(x), t(y)).numpy(), x @ y, rtol=1e-5)


def test_reductions_softmax_and_shapes(engine):
    a = rand(3, 4)
    np.testing.assert_allclose(F.reduce_sum(t(a), [1]).numpy(), a.sum(1), rtol=1e-5)
    np.testing.assert_allclose(F.reduce_sum(t(a), -1, keepdims=True).numpy(),
                               a.sum(-1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(F.reduce_max(t(a), axis=[0]).numpy(), a.max(0))
    e = np.exp(a - a.max(-1, keepdims=True))
    sm = e / e.sum(-1, keepdims=True)
    np.testing.assert_allclose(F.softmax(t(a)).numpy(), sm, rtol=1e-5)
    np.testing.assert_allclose(F.log_softmax(t(a)).numpy(), np.log(sm), rtol=1e-4, atol=1e-6)
    np.testing.assert_array_equal(F.reshape(t(a), [2, 6]).numpy(), a.reshape(2, 6))
    np.testing.assert_array_equal(F.reshape(t(a), [-1]).numpy(), a.reshape(-1))
    np.testing.assert_array_equal(F.transpose(t(a), [1, 0]).numpy(), a.T)
    np.testing.assert_array_equal(F.concat([t(a), t(a)], 1).numpy(), np.concatenate([a, a], 1))
    np.testing.assert_array_equal(F.concat((t(a), t(a), t(a))).numpy(),
                                  np.concatenate([a, a, a], 0))
    np.testing.assert_array_equal(F.cast(t(a), "f64").numpy(), a.astype(np.float64))
    np.testing.assert_array_equal(F.cast(t(a), dtype=np.int32).numpy(), a.astype(np.int32))
    np.testing.assert_array_equal(F.ones_like(t(a)).numpy(), np.ones_like(a))
    np.testing.assert_allclose(F.bias_add(t(a), t(np.ones(4, np.float32)), axis=1).numpy(), a + 1)


def test_multi_result_ops_return_tuples(engine):
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    y, idx = F.max_pool_2d(t(x), [0, 0], "channels_first", [2, 2], [2, 2], [1, 1])
    np.testing.assert_array_equal(y.numpy(), [[[[5, 7], [13, 15]]]])
    assert idx.shape == (1, 1, 2, 2)


def test_in_place_update_op(engine):
    m, g = t(np.ones(4, np.float32)), t(np.full(4, 2.0, np.float32))
    assert F.sgd_update(m, g, learning_rate_val=0.1) is None
    np.testing.assert_allclose(m.numpy(), 0.8)
    r = F.relu(m)  # ordered after the update through m's var
    np.testing.assert_allclose(r.numpy(), 0.8)


def test_shape_errors_come_from_the_hooks_at_call_time(engine):
    with pytest.raises(ValueError, match="matmul"):
        F.matmul(t(rand(2, 3)), t(rand(2, 3)))
    with pytest.raises(ValueError, match="broadcast_add|broadcast"):
        F.add(t(rand(2, 3)), t(rand(4)))


# ------------------------------------------------------------------- engine integration
def test_results_are_async_and_correct_after_wait():
    with installed(ThreadedEngine(workers=1)) as eng:
        a = rand(16)
        x = t(np.zeros(16, np.float32))
        gate = threading.Event()

        def slow_fill():  # pending work on x: the eager op must queue behind it
            assert gate.wait(T)
            x.buffer[:] = a

        eng.push(slow_fill, writes=(var_of(x),), name="fill", inline=False)
        y = F.relu(x)
        z = F.add(y, 1.0)
        assert len(var_of(x)._queue) == 1  # the relu waits on x, behind the fill
        gate.set()
        np.testing.assert_allclose(z.numpy(), np.maximum(a, 0) + 1)
        eng.wait_all(timeout=T)


def test_upstream_failure_surfaces_at_read_with_the_op_name():
    with installed(ThreadedEngine(workers=1)) as eng:
        x = t(np.ones(4, np.float32))

        def broken():
            raise RuntimeError("device lost")

        eng.push(broken, writes=(var_of(x),), name="tdflow.load", loc="prog.mlir:2:3",
                 inline=False)
        y = F.exp(x)
        z = F.add(y, y)
        for r in (x, y, z):
            with pytest.raises(EngineError, match=r"tdflow\.load.*prog\.mlir:2:3.*device lost"):
                r.numpy()
        eng.wait_all(timeout=T)  # the failure was reported by the reads already


def test_kernel_failure_names_the_eager_op(monkeypatch, engine):
    import tdflow.runtime.kernels.formula as ew

    def broken_program(*args, **kwargs):
        def run(inputs, out):
            raise FloatingPointError("overflow in kernel")

        class P:
            pass

        p = P()
        p.run = run
        return p

    monkeypatch.setattr(ew, "build_program", broken_program)
    x = t(rand(3, 7, 2))  # a shape nothing else used: the cache entry is built now
    y = F.sqrt(x)
    with pytest.raises(EngineError, match=r"tdflow\.sqrt.*overflow in kernel") as ei:
        y.numpy()
    assert isinstance(ei.value.__cause__, FloatingPointError)
    engine.wait_all(timeout=T)


def test_eager_chain_under_naive_and_threaded_agree():
    a, b = rand(8, 8), rand(8, 8)
    outs = []
    for eng in (NaiveEngine(), ThreadedEngine(workers=1)):
        with installed(eng):
            x, y = t(a), t(b)
            h = F.relu(F.matmul(x, y))
            h = F.softmax(F.add(h, F.mul(x, 0.5)))
            outs.append(F.reduce_sum(h, [1]).numpy().copy())
            eng.wait_all(timeout=T)
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-6)
    np.testing.assert_allclose(outs[0], np.ones(8), rtol=1e-5)


def test_import_tdflow_stays_cheap_and_functional_never_touches_cuda():
    import subprocess
    import sys

    code = ("import sys, tdflow; assert 'tdflow.runtime.functional' not in sys.modules; "
            "assert 'numpy' not in sys.modules; tdflow.functional.relu; tdflow.tensor; "
            "assert 'pycuda' not in sys.modules; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_eager_calls_from_several_threads_share_inputs_safely():
    with installed(ThreadedEngine(workers=1)) as eng:
        shared = t(rand(32))
        base = shared.numpy().copy()
        errors: list[BaseException] = []

        def worker(k):
            try:
                for i in range(300):
                    y = F.add(F.relu(shared), float(k))
                    z = F.mul(y, F.leaky_relu(shared, alpha=0.1))
                    if i % 50 == 0:
                        want = (np.maximum(base, 0) + k) * np.where(base > 0, base, 0.1 * base)
                        np.testing.assert_allclose(z.numpy(), want, rtol=1e-5)
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(T * 3)
            assert not th.is_alive(), "eager thread deadlocked"
        assert not errors, errors[0]
        eng.wait_all(timeout=T)


def test_large_ops_alone_run_inline_and_overlap_a_busy_engine_on_a_worker():
    with installed(ThreadedEngine(workers=2)) as eng:
        a = rand(1 << 17)  # above INLINE_COST, but nothing is in flight: no hand-off
        y = F.exp(F.relu(t(a)))
        assert not eng._threads
        np.testing.assert_allclose(y.numpy(), np.exp(np.maximum(a, 0)), rtol=1e-6)
        gate = threading.Event()
        eng.push(lambda: gate.wait(T), writes=(eng.new_var(),), inline=False)
        y = F.exp(F.relu(t(a)))  # something in flight: these go to the other worker
        assert eng._threads
        np.testing.assert_allclose(y.numpy(), np.exp(np.maximum(a, 0)), rtol=1e-6)
        gate.set()
        m = rand(300, 300)
        np.testing.assert_allclose(F.matmul(t(m), t(m)).numpy(), m @ m, rtol=1e-4, atol=1e-4)
        eng.wait_all(timeout=T)
