"""The lean eager path: a tiny formula op switches to its native C loop after
``eager_native.HOT_CALLS`` calls of one (shapes, dtypes, attributes), and a small matmul runs
``np.dot``; both give numpy's bits (NaN, inf and signed zeros included), and without a native
build everything stays on numpy with the same values.

Each test uses shapes no other test uses, so its cache entries are fresh (an entry's count
starts when it is made).
"""

from __future__ import annotations

import itertools
import threading

import numpy as np
import pytest
from tdflow.dialect.formula.expr import Input
from tdflow.lowering.elementwise_native import native_kernel
from tdflow.runtime import eager_native
from tdflow.runtime.kernels.registry import select_kernel
from tdflow.runtime.tensor import Tensor

import tdflow

F = tdflow.functional
rng = np.random.default_rng(23)
_lengths = itertools.count(41)  # a fresh 1-D length per use: fresh cache entries

SPECIAL = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 3e38, -3e38,
                    1.5, -2.5, 0.2, -0.2, 7.0, -7.0], np.float32)


def has_native() -> bool:
    return native_kernel(Input(0) + Input(0), ("f32",), "f32") is not None


def special(n: int) -> np.ndarray:
    """``n`` float32 values: every special value, then random ones of many magnitudes."""
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-4, 5, n)).astype(np.float32)
    x[: len(SPECIAL)] = SPECIAL[:n]
    return x


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint32 if a.dtype == np.float32 else np.uint64)


@pytest.fixture
def hot(monkeypatch):
    """Entries made in the test switch after 3 calls; records every native build asked for."""
    built: list = []
    real = eager_native.native_kernel

    def spy(*args):
        fn = real(*args)
        built.append(fn)
        return fn

    monkeypatch.setattr(eager_native, "HOT_CALLS", 3)
    monkeypatch.setattr(eager_native, "BACKGROUND", False)  # the switch within the call
    monkeypatch.setattr(eager_native, "native_kernel", spy)
    return built


CASES = {
    "relu": (lambda x, y: F.relu(x), lambda a, b: np.maximum(a, np.float32(0))),
    "leaky_relu": (lambda x, y: F.leaky_relu(x, alpha=0.2),
                   lambda a, b: np.maximum(a, a * np.float32(0.2))),
    "leaky_relu 1.5": (lambda x, y: F.leaky_relu(x, 1.5),
                       lambda a, b: np.where(a > 0, a, a * np.float32(1.5))),
    "broadcast_add": (lambda x, y: F.broadcast_add(x, y), lambda a, b: np.add(a, b)),
    "add scalar": (lambda x, y: F.add(x, 1.0), lambda a, b: np.add(a, np.float32(1.0))),
    "mul scalar -0.0": (lambda x, y: F.mul(x, -0.0), lambda a, b: np.multiply(a, np.float32(-0.0))),
}


@pytest.mark.parametrize("case", list(CASES))
def test_native_and_numpy_give_the_same_bits_on_special_values(hot, case):
    eager, ref = CASES[case]
    n = next(_lengths)
    a = special(n)
    b = np.roll(special(n), 3)  # NaN against a number, never two NaNs of different bits
    b[np.isnan(a) & np.isnan(b)] = 1.0
    x, y = tdflow.tensor(a), tdflow.tensor(b)
    with np.errstate(all="ignore"):
        want = ref(a, b)
    for _ in range(6):  # before, at and after the switch
        np.testing.assert_array_equal(bits(eager(x, y).numpy()), bits(want), err_msg=case)
    assert len(hot) == 1  # one switch, at the third call
    if has_native():
        assert hot[0] is not None


def test_the_switch_happens_at_the_nth_call_of_one_entry(hot):
    n = next(_lengths)
    x = tdflow.tensor(special(n))
    F.relu(x)
    F.relu(x)
    assert hot == []
    F.relu(x)
    assert len(hot) == 1
    for _ in range(5):
        F.relu(x)
    assert len(hot) == 1  # counted once: the count is gone after the switch
    F.relu(tdflow.tensor(special(n + 1000)))  # another shape: its own entry, its own count
    assert len(hot) == 1


def test_a_row_broadcast_runs_natively_with_numpy_values(hot):
    n = next(_lengths)
    a = rng.standard_normal((3, n)).astype(np.float32)
    b = special(n)
    b[np.isnan(b)] = 2.0
    x, y = tdflow.tensor(a), tdflow.tensor(b)
    for _ in range(5):
        np.testing.assert_array_equal(bits(F.broadcast_add(x, y).numpy()), bits(a + b))
    assert len(hot) == 1 and (hot[0] is not None or not has_native())


def test_no_native_build_keeps_numpy(hot, monkeypatch):
    monkeypatch.setenv("TDFLOW_NATIVE", "0")
    n = next(_lengths)
    a = special(n)
    x = tdflow.tensor(a)
    for _ in range(5):
        np.testing.assert_array_equal(bits(F.leaky_relu(x, alpha=0.3).numpy()),
                                      bits(np.maximum(a, a * np.float32(0.3))))
    assert hot == [None]


def test_eager_after_the_switch_equals_the_graph_kernel(hot):
    n = next(_lengths)
    a = special(n)
    x = tdflow.tensor(a)
    attrs = {"alpha": np.float32(0.2).item()}
    kernel = select_kernel("tdflow.leaky_relu", "cpu", ("f32",), attrs)
    graph = kernel.fn(attrs, [a], [None])[0]  # what a compiled program runs
    for _ in range(5):
        np.testing.assert_array_equal(bits(F.leaky_relu(x, alpha=0.2).numpy()), bits(graph))


def test_a_strided_input_falls_back_to_numpy(hot):
    n = next(_lengths)
    a = special(2 * n)
    x = Tensor.from_numpy(a[::2])  # not C-contiguous: the native loop refuses it
    for _ in range(5):
        np.testing.assert_array_equal(bits(F.relu(x).numpy()), bits(np.maximum(a[::2], 0)))


def test_a_background_build_switches_the_entry_when_done(hot, monkeypatch):
    monkeypatch.setattr(eager_native, "BACKGROUND", True)
    n = next(_lengths)
    a = special(n)
    x = tdflow.tensor(a)
    want = bits(np.maximum(a, a * np.float32(0.2)))
    for _ in range(3):  # the third starts the build and returns numpy's values meanwhile
        assert (bits(F.leaky_relu(x, alpha=0.2).numpy()) == want).all()
    assert eager_native.wait_builds(timeout=300)
    assert len(hot) == 1 and (hot[0] is not None or not has_native())
    for _ in range(3):
        assert (bits(F.leaky_relu(x, alpha=0.2).numpy()) == want).all()


def test_threads_calling_concurrently_get_numpy_values(monkeypatch):
    monkeypatch.setattr(eager_native, "HOT_CALLS", 50)
    n = next(_lengths)
    a = special(n)
    shared = tdflow.tensor(a)
    want_relu = bits(np.maximum(a, np.float32(0)))
    want_leaky = bits(np.maximum(a, a * np.float32(0.2)))
    errors: list = []

    def work():
        try:
            own = tdflow.tensor(a.copy())
            for i in range(300):
                t = shared if i % 2 else own
                assert (bits(F.relu(t).numpy()) == want_relu).all()
                assert (bits(F.leaky_relu(t, alpha=0.2).numpy()) == want_leaky).all()
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert eager_native.wait_builds(timeout=300)
    assert not errors, errors[0]


MATMUL_SHAPES = [(4, 4, 4), (2, 3, 5), (5, 2, 2), (1, 4, 4), (4, 1, 4), (4, 4, 1), (1, 1, 1),
                 (16, 16, 16)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("m,k,n", MATMUL_SHAPES)
def test_small_matmul_gives_np_matmul_bits(m, k, n, dtype):
    for scale in (1.0, 1e-30, 1e30):
        a = (rng.standard_normal((m, k)) * (scale if dtype != np.int32 else 10)).astype(dtype)
        b = rng.standard_normal((k, n)).astype(dtype)
        if dtype != np.int32:
            a.flat[0] = -0.0
            b.flat[-1] = np.nan if scale == 1.0 else -0.0
        want = np.matmul(a, b)
        got = F.matmul(tdflow.tensor(a), tdflow.tensor(b)).numpy()
        assert got.dtype == want.dtype
        if dtype == np.int32:
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_array_equal(bits(got), bits(want))


def test_small_matmul_of_strided_inputs_gives_np_matmul_bits():
    a = rng.standard_normal((6, 4)).astype(np.float32)
    b = rng.standard_normal((6, 6)).astype(np.float32)
    for left, right in [(a.T, b), (a.T, b[:, ::2]), (b[::2, :4], a.T[:, :5])]:
        want = np.matmul(left, right)
        got = F.matmul(Tensor.from_numpy(left), Tensor.from_numpy(right)).numpy()
        np.testing.assert_array_equal(bits(got), bits(want))


def test_a_build_asked_for_before_the_builder_is_installed_is_not_kept(monkeypatch):
    from tdflow.dialect.formula.expr import minimum
    from tdflow.lowering import elementwise_native

    expr = minimum(Input(0), -3.25)  # an expression nothing else builds
    monkeypatch.setattr(elementwise_native, "_builder", None)
    assert native_kernel(expr, ("f32",), "f32") is None
    monkeypatch.undo()
    if has_native():  # installed now: the earlier "no" was not remembered
        fn = native_kernel(expr, ("f32",), "f32")
        x, out = special(20), np.empty(20, np.float32)
        assert fn is not None and fn(x, out)
        np.testing.assert_array_equal(bits(out), bits(np.minimum(x, np.float32(-3.25))))


def test_the_small_matmul_form_writes_a_strided_out_through_np_matmul():
    from tdflow.runtime.kernels.linalg import plain_product

    a = rng.standard_normal((4, 4)).astype(np.float32)
    run = plain_product({"transpose_a": False, "transpose_b": False, "alpha": 1.0}, [a, a])
    wide = np.zeros((4, 8), np.float32)
    run([a, a, None], wide[:, ::2])  # np.dot refuses this out; np.matmul writes it
    np.testing.assert_array_equal(bits(wide[:, ::2]), bits(np.matmul(a, a)))
    assert not wide[:, 1::2].any()


def test_a_child_forked_during_a_build_can_build(monkeypatch):
    import os

    from tdflow.lowering import elementwise_native

    if not hasattr(os, "fork"):
        pytest.skip("no fork() on this platform")
    # the build lock held, as by a background build at the moment of fork()
    with elementwise_native._lock:
        pid = os.fork()
        if pid == 0:  # the child: a build must not wait for the parent's lock
            import signal

            signal.alarm(120)  # a child stuck on the lock dies instead of hanging the test
            try:
                fn = native_kernel(Input(0) * 2.5, ("f32",), "f32")
                os._exit(0 if fn is not None or not has_native() else 3)
            except BaseException:  # noqa: BLE001 - any failure is the child's exit code
                os._exit(4)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
