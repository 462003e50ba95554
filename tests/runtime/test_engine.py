"""Engine semantics: ordering, concurrent readers, failures, wait/wait_all, inline execution."""

from __future__ import annotations

import os
import threading

import pytest
from tdflow.runtime import engine as engine_mod
from tdflow.runtime.engine import EngineError, NaiveEngine, ThreadedEngine, Var

T = 10.0  # seconds: any wait longer than this is a deadlock


@pytest.fixture(params=["threaded", "naive"])
def eng(request):
    return ThreadedEngine(workers=2) if request.param == "threaded" else NaiveEngine()


def test_raw_war_waw_order_follows_push_order(eng):
    v = eng.new_var("v")
    log: list[str] = []
    box = {"v": 0}

    def write(val):
        def fn():
            log.append(f"w{val}")
            box["v"] = val
        return fn

    def read(tag):
        def fn():
            log.append(f"r{tag}={box['v']}")
        return fn

    eng.push(write(1), writes=(v,), inline=False)
    eng.push(read("a"), reads=(v,), inline=False)  # RAW: sees 1
    eng.push(write(2), writes=(v,), inline=False)  # WAR: after read a
    eng.push(write(3), writes=(v,), inline=False)  # WAW: after write 2
    eng.push(read("b"), reads=(v,), inline=False)
    eng.wait(v, timeout=T)
    eng.wait_all(timeout=T)
    assert log == ["w1", "ra=1", "w2", "w3", "rb=3"]
    assert v.version == 3


def test_concurrent_readers_overlap():
    eng = ThreadedEngine(workers=2)
    v = eng.new_var("v")
    barrier = threading.Barrier(2, timeout=T)
    hit = []

    def reader():
        barrier.wait()  # both readers must be inside at once, or this times out
        hit.append(threading.get_ident())

    eng.push(lambda: None, writes=(v,), inline=False)
    eng.push(reader, reads=(v,), inline=False)
    eng.push(reader, reads=(v,), inline=False)
    eng.wait_all(timeout=T)
    assert len(hit) == 2 and len(set(hit)) == 2


def test_write_waits_for_running_readers():
    eng = ThreadedEngine(workers=2)
    v = eng.new_var("v")
    release = threading.Event()
    started = threading.Event()
    log = []

    def slow_reader():
        started.set()
        assert release.wait(T)
        log.append("read")

    eng.push(slow_reader, reads=(v,), inline=False)
    assert started.wait(T)
    eng.push(lambda: log.append("write"), writes=(v,))  # WAR: must not run yet
    assert log == []
    release.set()
    eng.wait(v, timeout=T)
    assert log == ["read", "write"]


def test_independent_ops_do_not_wait_for_each_other():
    eng = ThreadedEngine(workers=1)
    a, b = eng.new_var("a"), eng.new_var("b")
    release = threading.Event()
    eng.push(lambda: release.wait(T), writes=(a,), inline=False)  # blocks the worker
    done = []
    eng.push(lambda: done.append("b"), writes=(b,), cost=1)  # ready and cheap: runs inline
    assert done == ["b"]
    eng.wait(b, timeout=T)
    release.set()
    eng.wait_all(timeout=T)


def test_tiny_ready_op_runs_inline_on_caller():
    eng = ThreadedEngine(workers=1)
    v = eng.new_var()
    where = []
    eng.push(lambda: where.append(threading.get_ident()), writes=(v,), cost=16)
    assert where == [threading.get_ident()]  # ran before push returned, on this thread
    assert not eng._threads  # no worker was ever needed


def test_a_costly_op_alone_in_the_engine_runs_inline():
    # nothing in flight: a worker could only add a hand-off, so even a costly op stays here
    eng = ThreadedEngine(workers=1)
    a, b = eng.new_var("a"), eng.new_var("b")
    where = []
    eng.push(lambda: where.append(threading.get_ident()), writes=(a,), cost=10**9)
    eng.push(lambda: where.append(threading.get_ident()), reads=(a,), writes=(b,), cost=10**9)
    eng.push(lambda: where.append(threading.get_ident()), reads=(a, b), writes=(eng.new_var(),),
             uses_blas=True, cost=10**9)  # the general (multi-var) path too
    assert where == [threading.get_ident()] * 3
    assert not eng._threads and eng.pending() == 0


@pytest.mark.parametrize("general", [False, True])
def test_a_costly_op_ready_while_another_runs_overlaps_it_on_a_worker(general):
    eng = ThreadedEngine(workers=2)
    busy, other = eng.new_var("busy"), eng.new_var("other")
    gate, started = threading.Event(), threading.Event()
    where = []

    def costly():
        where.append(threading.get_ident())
        started.set()

    eng.push(lambda: gate.wait(T), writes=(busy,), inline=False)  # in flight on worker 0
    reads = (eng.new_var("x"), eng.new_var("y"), eng.new_var("z"), eng.new_var("w")) if general \
        else ()
    eng.push(costly, reads=reads, writes=(other,), cost=10**9)
    # it went to the pool: the second worker runs it while the first is still blocked
    assert started.wait(T)
    assert where and where[0] != threading.get_ident()
    assert not gate.is_set()
    cheap = []
    eng.push(lambda: cheap.append(threading.get_ident()), writes=(eng.new_var(),), cost=1)
    assert cheap == [threading.get_ident()]  # a cheap ready op still runs here, busy or not
    gate.set()
    eng.wait_all(timeout=T)


def test_op_not_ready_runs_after_its_dependency_on_a_worker():
    eng = ThreadedEngine(workers=1)
    v = eng.new_var()
    gate = threading.Event()
    order = []
    eng.push(lambda: (gate.wait(T), order.append(1)), writes=(v,), inline=False)
    eng.push(lambda: order.append(2), reads=(v,), cost=1)  # not ready: queued, not inline
    assert order == []
    gate.set()
    eng.wait_all(timeout=T)
    assert order == [1, 2]


def test_exception_surfaces_at_wait_with_name_and_loc(eng):
    a, b, c = eng.new_var("a"), eng.new_var("b"), eng.new_var("c")
    ran = []

    def boom():
        raise ValueError("bad shape")

    eng.push(boom, writes=(a,), name="tdflow.relu", loc="mlp.mlir:3:8", inline=False)
    eng.push(lambda: ran.append("dep"), reads=(a,), writes=(b,), name="dependent")
    eng.push(lambda: ran.append("other"), writes=(c,), name="unrelated")
    eng.wait(c, timeout=T)  # unrelated var: no error
    with pytest.raises(EngineError) as ei:
        eng.wait(b, timeout=T)
    msg = str(ei.value)
    assert "tdflow.relu" in msg and "mlp.mlir:3:8" in msg and "bad shape" in msg
    assert isinstance(ei.value.__cause__, ValueError)
    assert ei.value.op_name == "tdflow.relu" and ei.value.loc == "mlp.mlir:3:8"
    assert "dep" not in ran and "other" in ran
    for _ in range(2):  # a failed var stays failed: its value is poison
        with pytest.raises(EngineError, match="tdflow.relu"):
            eng.wait(a, timeout=T)
    eng.wait_all(timeout=T)  # already reported through wait


def test_wait_all_raises_unreported_failure_then_clears(eng):
    a, b = eng.new_var("a"), eng.new_var("b")
    eng.push(lambda: 1 / 0, writes=(a,), name="div", inline=False)
    eng.push(lambda: [][1], writes=(b,), name="index", inline=False)
    with pytest.raises(EngineError) as ei:
        eng.wait_all(timeout=T)
    other = "index" if ei.value.op_name == "div" else "div"  # either may fail first
    assert ei.value.op_name in ("div", "index")
    assert any(other in n for n in getattr(ei.value, "__notes__", []))
    eng.wait_all(timeout=T)  # each failure is reported once by wait_all
    with pytest.raises(EngineError, match="div"):
        eng.wait(a, timeout=T)  # but the var stays failed


def test_overwrite_clears_a_failure_read_modify_write_does_not(eng):
    a, b = eng.new_var("a"), eng.new_var("b")
    ran = []
    eng.push(lambda: 1 / 0, writes=(a,), name="first", inline=False)
    eng.push(lambda: ran.append("rmw"), reads=(a,), writes=(a,), name="rmw")
    with pytest.raises(EngineError, match="first"):
        eng.wait(a, timeout=T)
    assert ran == []
    eng.push(lambda: ran.append("overwrite"), writes=(a,), name="overwrite")
    eng.push(lambda: ran.append("read"), reads=(a,), writes=(b,), name="read")
    eng.wait(b, timeout=T)
    eng.wait(a, timeout=T)
    assert ran == ["overwrite", "read"]
    eng.wait_all(timeout=T)  # "first" was reported by wait(a) already


def test_calling_a_var_waits_for_it(eng):
    v = eng.new_var("v")
    out = []
    eng.push(lambda: out.append(1), writes=(v,), inline=False)
    v()
    assert out == [1]
    eng.push(lambda: 1 / 0, writes=(v,), name="bad", inline=False)
    with pytest.raises(EngineError, match="bad"):
        v()


def test_wait_all_waits_for_everything():
    eng = ThreadedEngine(workers=2)
    vs = [eng.new_var() for _ in range(8)]
    count = []
    lock = threading.Lock()

    def inc():
        with lock:
            count.append(1)

    for i in range(200):
        eng.push(inc, reads=(vs[i % 8],), writes=(vs[(i * 3 + 1) % 8],), inline=False)
    eng.wait_all(timeout=T)
    assert len(count) == 200 and eng.pending() == 0


def test_duplicate_and_read_write_same_var_are_merged(eng):
    v = eng.new_var()
    out = []
    eng.push(lambda: out.append(1), reads=(v, v), writes=(v, v), inline=False)
    eng.wait(v, timeout=T)
    assert out == [1] and v.version == 1


def test_bad_dependency_type_is_a_type_error(eng):
    with pytest.raises(TypeError, match="Var"):
        eng.push(lambda: None, reads=("x",))


def test_wait_timeout_raises():
    eng = ThreadedEngine(workers=1)
    v = eng.new_var()
    gate, started = threading.Event(), threading.Event()
    eng.push(lambda: (started.set(), gate.wait(T)), writes=(v,), inline=False)
    assert started.wait(T)  # on the worker, so the waiting thread cannot pick it up itself
    with pytest.raises(TimeoutError):
        eng.wait(v, timeout=0.05)
    gate.set()
    eng.wait(v, timeout=T)


def test_wait_on_idle_var_returns_immediately(eng):
    eng.wait(Var("fresh"), timeout=T)
    eng.wait_all(timeout=T)


def overlap_probe():
    """A busy op, and the list of how many copies of it were running each time one started."""
    inside: list[int] = []
    peak: list[int] = []
    lock = threading.Lock()

    def op():
        with lock:
            inside.append(1)
            peak.append(len(inside))
        for _ in range(2000):
            pass
        with lock:
            inside.pop()

    return op, peak


def test_blas_ops_never_overlap():
    eng = ThreadedEngine(workers=3)
    vs = [eng.new_var() for _ in range(6)]
    blas_like, peak = overlap_probe()
    for v in vs:
        eng.push(blas_like, writes=(v,), inline=False, uses_blas=True)
    eng.wait_all(timeout=T)
    assert max(peak) == 1


def test_ops_may_push_and_wait_from_inside_ops():
    eng = ThreadedEngine(workers=1)
    a, b = eng.new_var(), eng.new_var()
    out = []

    def outer():
        eng.push(lambda: out.append("inner"), writes=(b,), inline=False)
        eng.wait(b, timeout=T)
        out.append("outer")

    eng.push(outer, writes=(a,), inline=False)
    eng.wait_all(timeout=T)
    assert out == ["inner", "outer"]


def test_keyboard_interrupt_inline_is_reraised_and_recorded():
    eng = ThreadedEngine(workers=1)
    v = eng.new_var()

    def interrupted():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        eng.push(interrupted, writes=(v,), name="ctrl-c", cost=1)
    with pytest.raises(EngineError, match="ctrl-c"):
        eng.wait(v, timeout=T)


def test_get_engine_honours_env(monkeypatch):
    old = engine_mod.set_engine(None)
    try:
        monkeypatch.setenv("TDFLOW_ENGINE", "naive")
        assert isinstance(engine_mod.get_engine(), NaiveEngine)
        engine_mod.set_engine(None)
        monkeypatch.setenv("TDFLOW_ENGINE", "threaded")
        e = engine_mod.get_engine()
        assert isinstance(e, ThreadedEngine) and e is engine_mod.get_engine()
        engine_mod.set_engine(None)
        monkeypatch.setenv("TDFLOW_ENGINE", "bogus")
        with pytest.raises(ValueError, match="TDFLOW_ENGINE"):
            engine_mod.get_engine()
    finally:
        engine_mod.set_engine(old)


def test_default_workers_leave_a_core_to_the_caller(monkeypatch):
    monkeypatch.delenv("TDFLOW_ENGINE_WORKERS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    assert engine_mod.default_workers() == 1  # 1 worker + the calling thread on 2 cores
    monkeypatch.setenv("TDFLOW_ENGINE_WORKERS", "3")
    assert engine_mod.default_workers() == 3
    monkeypatch.setenv("TDFLOW_ENGINE_WORKERS", "0")
    with pytest.raises(ValueError):
        engine_mod.default_workers()


def test_push_one_is_push_with_one_write(eng):
    a, b = eng.new_var("a"), eng.new_var("b")
    out = []
    eng.push(lambda: out.append("a"), writes=(a,), inline=False)
    eng.push_one(lambda: out.append("b"), (a,), b, "tdflow.relu", 16)  # waits for a's writer
    eng.wait(b, timeout=T)
    assert out == ["a", "b"]
    eng.push_one(lambda: 1 / 0, (b,), a, "tdflow.exp", 16)
    with pytest.raises(EngineError, match="tdflow.exp"):
        eng.wait(a, timeout=T)


def test_unreported_failures_are_bounded(eng):
    for i in range(engine_mod.MAX_UNREPORTED + 10):
        eng.push(lambda: 1 / 0, writes=(eng.new_var(),), name=f"f{i}", inline=False)
    with pytest.raises(EngineError) as ei:
        eng.wait_all(timeout=T)
    assert len(eng._unreported) == 0
    assert any(f"{engine_mod.MAX_UNREPORTED + 9} more" in n for n in ei.value.__notes__)


def test_a_chain_of_tiny_ops_runs_in_bulk_on_one_worker():
    eng = ThreadedEngine(workers=2)
    v = eng.new_var("v")
    gate, done = threading.Event(), threading.Event()
    threads = []
    eng.push(lambda: gate.wait(T), writes=(v,), inline=False)
    for _ in range(50):
        eng.push(lambda: threads.append(threading.get_ident()), reads=(), writes=(v,), cost=1)
    eng.push(done.set, writes=(v,), cost=1)
    assert threads == []  # all queued behind the blocked write
    gate.set()
    assert done.wait(T)  # not eng.wait: the caller must not help, the worker runs the chain
    assert len(threads) == 50 and len(set(threads)) == 1
    assert threads[0] != threading.get_ident()
    eng.wait_all(timeout=T)


def test_ops_named_as_blas_take_the_slot_even_unflagged():
    eng = ThreadedEngine(workers=3)
    kernel, peak = overlap_probe()
    for _ in range(6):  # an executor replaying a plan pushes by op name only
        eng.push(kernel, writes=(eng.new_var(),), name="tdflow.matmul", inline=False)
    eng.wait_all(timeout=T)
    assert max(peak) == 1


def test_wait_all_inside_an_op_is_refused_not_a_deadlock():
    eng = ThreadedEngine(workers=1)
    v = eng.new_var()

    def op():
        eng.wait_all(timeout=T)

    eng.push(op, writes=(v,), name="waiter", inline=False)
    with pytest.raises(EngineError, match="waiter.*wait_all"):
        eng.wait(v, timeout=T)


def test_an_op_of_several_writes_runs_inline_and_orders_what_follows(monkeypatch):
    """An op writing several vars (an eager op of several results) runs on the pushing thread
    when its vars are free, like a one-write op; a reader of either var pushed while it runs
    waits for it, and a failure poisons every var it writes."""
    eng = ThreadedEngine(workers=1)
    a, b, c, x = (eng.new_var(n) for n in "abcx")
    where, seen = [], []
    box = {}

    def two():
        where.append(threading.get_ident())
        box["b"], box["c"] = 1, 2

    eng.push(lambda: box.__setitem__("x", 5), writes=(x,))
    with monkeypatch.context() as m:  # ready: the inline path, no queued op built
        m.setattr(eng, "_push_queued", lambda *a: pytest.fail("queued"))
        eng.push(two, reads=(x,), writes=(b, c), cost=10**9)
    assert where == [threading.get_ident()] and not eng._threads and eng.pending() == 0
    eng.push(lambda: seen.append(box["b"] + box["c"]), reads=(b, c), writes=(a,))
    assert seen == [3]

    gate = threading.Event()
    eng.push(lambda: gate.wait(T), writes=(x,), inline=False)  # x busy on the worker
    eng.push(lambda: box.__setitem__("b", box["b"] * 10), reads=(x,), writes=(b, c))
    assert eng.pending() == 2  # queued behind the busy write of x: not run here
    gate.set()
    eng.wait(b)
    assert box["b"] == 10

    def broken():
        raise ValueError("no")

    eng.push(broken, writes=(b, c))
    for v in (b, c):
        with pytest.raises(EngineError, match="no"):
            eng.wait(v)
    eng.wait_all()  # (reported by the waits already)


def test_several_writes_named_twice_or_also_read_take_the_general_path():
    eng = ThreadedEngine(workers=1)
    a, b = eng.new_var("a"), eng.new_var("b")
    out = []
    eng.push(lambda: out.append(1), writes=(a, a, b))  # duplicates: deduplicated, still run
    eng.push(lambda: out.append(2), reads=(a,), writes=(a, b))  # a read-write var
    eng.wait_all()
    assert out == [1, 2] and eng.pending() == 0
