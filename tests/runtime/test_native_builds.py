"""Native modules built side by side on the pool, and numpy until they are ready
(lowering/elementwise_native_build.py)."""

from __future__ import annotations

import threading

import numpy as np
from native_support import need_native
from tdflow.dialect.formula.expr import Input
from tdflow.lowering import elementwise_native
from tdflow.lowering import elementwise_native_build as nb
from tdflow.runtime.kernels import elementwise as _installs_the_builder  # noqa: F401


def _real_builder():
    return elementwise_native._builder


def _gated(gate: threading.Event, seen: list, barrier: threading.Barrier | None = None):
    """A builder with no ``cached`` probe (so every request is a build on the pool) that waits
    for ``gate`` (and, given one, for ``barrier``: all its parties building at once)."""
    real = _real_builder()

    def build(source, flags):
        seen.append(threading.current_thread().name)
        if barrier is not None:
            barrier.wait()  # raises BrokenBarrierError if the builds ran one after the other
        assert gate.wait(120)
        return real(source, flags)

    return build


def bits(a):
    return a.view(np.uint32)


def test_background_runs_numpy_until_the_module_is_ready_then_the_native_loop(monkeypatch):
    need_native()
    gate, seen = threading.Event(), []
    monkeypatch.setattr(elementwise_native, "_builder", _gated(gate, seen))
    monkeypatch.setattr(nb, "BACKGROUND", True)
    expr = Input(0) * -0.8125 + Input(1)  # built by no other test
    calls = []

    def numpy_run(inputs, out=None):
        calls.append(1)
        out = np.empty_like(inputs[0]) if out is None else out
        np.add(np.multiply(inputs[0], np.float32(-0.8125)), inputs[1], out=out)
        return out

    run = elementwise_native.with_native(numpy_run, expr, ["f32", "f32"], "f32")
    rng = np.random.default_rng(3)
    x = rng.standard_normal(8192).astype(np.float32)
    y = rng.standard_normal(8192).astype(np.float32)
    x[:4] = [np.nan, -0.0, np.inf, -np.inf]
    want = numpy_run([x, y])
    calls.clear()
    try:
        got = run([x, y])  # the build is queued or held at the gate: numpy answers
        assert calls == [1]
        np.testing.assert_array_equal(bits(got), bits(want))
    finally:
        gate.set()
    assert nb.wait_all(120)
    calls.clear()
    got = run([x, y])  # ready: the native loop, the same bits
    assert calls == []
    np.testing.assert_array_equal(bits(got), bits(want))


def test_wait_mode_waits_for_the_build_on_the_first_call(monkeypatch):
    need_native()
    gate, seen = threading.Event(), []
    monkeypatch.setattr(elementwise_native, "_builder", _gated(gate, seen))
    monkeypatch.setattr(nb, "BACKGROUND", False)
    fn = elementwise_native.native_kernel(Input(0) - 0.6875, ("f32",), "f32")
    assert fn is not None  # a stand-in: the build is running (held at the gate)
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    out = np.empty_like(x)
    threading.Timer(0.05, gate.set).start()
    assert fn(x, out, 64)  # waited for the module: native, not a refusal
    np.testing.assert_array_equal(bits(out), bits(x - np.float32(0.6875)))


def test_the_modules_of_a_plan_build_side_by_side(monkeypatch):
    need_native()
    gate, seen = threading.Event(), []
    barrier = threading.Barrier(2, timeout=120)
    monkeypatch.setenv("TDFLOW_NATIVE_JOBS", "2")
    monkeypatch.setattr(elementwise_native, "_builder", _gated(gate, seen, barrier))
    monkeypatch.setattr(nb, "BACKGROUND", False)
    gate.set()
    a = elementwise_native.native_kernel(Input(0) * 1.4375, ("f32",), "f32")
    b = elementwise_native.native_kernel(Input(0) + 2.5625, ("f32",), "f32")
    x, out = np.arange(16, dtype=np.float32), np.empty(16, np.float32)
    assert a(x, out, 16)  # both compilers met at the barrier: they ran at once
    np.testing.assert_array_equal(out, x * np.float32(1.4375))
    assert b(x, out, 16)
    np.testing.assert_array_equal(out, x + np.float32(2.5625))
    assert len(seen) == 2 and not barrier.broken


def test_a_cached_module_is_loaded_at_once_not_deferred(monkeypatch):
    need_native()
    expr = Input(0) * 3.3125
    first = elementwise_native.native_kernel(expr, ("f32",), "f32", wait=True)
    assert first is not None
    monkeypatch.setattr(nb, "_built", {})  # a new process: only the disk cache knows it
    again = elementwise_native.native_kernel(expr, ("f32",), "f32")
    assert type(again).__name__ == "builtin_function_or_method"


def test_a_failed_build_refuses_and_numpy_runs(monkeypatch):
    def failing(source, flags):
        raise RuntimeError("no compiler today")

    monkeypatch.setattr(elementwise_native, "_builder", failing)
    monkeypatch.setattr(nb, "BACKGROUND", False)
    fn = elementwise_native.native_kernel(Input(0) * -5.0625, ("f32",), "f32")
    x, out = np.ones(8, np.float32), np.zeros(8, np.float32)
    if fn is not None:  # a stand-in (Python headers present): it refuses, out untouched
        assert fn(x, out, 8) is False and not out.any()
    assert elementwise_native.native_kernel(Input(0) * -5.0625, ("f32",), "f32",
                                            wait=True) is None
