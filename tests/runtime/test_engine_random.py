"""Randomized differential test (threaded engine vs naive engine) and concurrency stress."""

from __future__ import annotations

import random
import threading
import time

import pytest
from tdflow.runtime.engine import EngineError, NaiveEngine, ThreadedEngine

T = 30.0
MOD = 1_000_003


class Checker:
    """Records exclusion violations: a writer overlapping any other access of its var."""

    def __init__(self, nvars: int):
        self.lock = threading.Lock()
        self.readers = [0] * nvars
        self.writers = [0] * nvars
        self.violations: list[str] = []

    def enter(self, reads, writes, name):
        with self.lock:
            for r in reads:
                if self.writers[r]:
                    self.violations.append(f"{name}: read of v{r} during a write")
                self.readers[r] += 1
            for w in writes:
                if self.writers[w] or self.readers[w]:
                    self.violations.append(f"{name}: write of v{w} during another access")
                self.writers[w] += 1

    def leave(self, reads, writes):
        with self.lock:
            for r in reads:
                self.readers[r] -= 1
            for w in writes:
                self.writers[w] -= 1


def make_sequence(rng: random.Random):
    """A random program: ops (reads, writes, constants, fails?, scheduling hints) and waits."""
    nvars = rng.randint(1, 6)
    steps = []
    for i in range(rng.randint(1, 14)):
        if rng.random() < 0.08:
            steps.append(("wait", rng.randrange(nvars)))
            continue
        reads = rng.sample(range(nvars), rng.randint(0, min(3, nvars)))
        writes = rng.sample(range(nvars), rng.randint(0 if reads else 1, min(2, nvars)))
        if writes and rng.random() < 0.3:  # read-modify-write: the var is in both lists
            reads.append(writes[0])
        steps.append(("op", dict(
            name=f"op{i}", reads=reads, writes=writes,
            a=rng.randint(1, 97), b=rng.randint(0, 10_000),
            fail=rng.random() < 0.03,
            inline=rng.choice([None, None, False, True]),
            cost=rng.choice([None, 1, 10**9]),
            blas=rng.random() < 0.1,
            yield_=rng.random() < 0.2,
        )))
    return nvars, steps


def run_sequence(eng, nvars, steps, checker: Checker | None):
    """Run a program on ``eng``; return final states and what every wait raised."""
    state = [v * 7 + 1 for v in range(nvars)]
    vars_ = [eng.new_var(f"v{i}") for i in range(nvars)]
    outcomes = []

    def make_fn(spec):
        reads, writes = spec["reads"], spec["writes"]
        # a write also depends on its own value when the var is read too; WAW order is
    # observable anyway through the readers in between
        def fn():
            if checker:
                checker.enter([r for r in reads if r not in writes], writes, spec["name"])
            try:
                acc = sum(state[r] for r in reads) * spec["a"] + spec["b"]
                if spec["yield_"]:
                    time.sleep(0)  # invite a thread switch mid-op
                if spec["fail"]:
                    raise ArithmeticError(f"planned failure in {spec['name']}")
                for w in writes:  # vars in `reads` too fold in their old value
                    old = state[w] * 31 if w in reads else 0
                    state[w] = (old + acc + w) % MOD
            finally:
                if checker:
                    checker.leave([r for r in reads if r not in writes], writes)
        return fn

    def catch(thunk):
        try:
            thunk()
        except EngineError as e:
            return e.op_name
        return None

    for kind, arg in steps:
        if kind == "wait":
            outcomes.append(("wait", arg, catch(lambda a=arg: eng.wait(vars_[a], timeout=T))))
        else:
            eng.push(make_fn(arg), reads=[vars_[r] for r in arg["reads"]],
                     writes=[vars_[w] for w in arg["writes"]], name=arg["name"],
                     loc=f"seq:{arg['name']}", cost=arg["cost"], inline=arg["inline"],
                     uses_blas=arg["blas"])
    for i in range(nvars):
        outcomes.append(("wait", i, catch(lambda i=i: eng.wait(vars_[i], timeout=T))))
    outcomes.append(("wait_all", None, catch(lambda: eng.wait_all(timeout=T)) is not None))
    return state, outcomes


def test_10k_random_push_sequences_match_naive_engine():
    rng = random.Random(20261130)
    threaded = ThreadedEngine(workers=2)  # more workers than cores: maximal interleaving
    naive = NaiveEngine()
    checker = Checker(6)
    ops = 0
    for seq in range(10_000):
        nvars, steps = make_sequence(rng)
        ops += sum(1 for k, _ in steps if k == "op")
        want = run_sequence(naive, nvars, steps, None)
        got = run_sequence(threaded, nvars, steps, checker)
        assert got == want, f"sequence {seq} diverged: {steps}"
    assert not checker.violations, checker.violations[:5]
    assert ops > 50_000
    assert threaded.pending() == 0


@pytest.mark.parametrize("workers", [1, 3])
def test_stress_many_pushing_threads_no_deadlock_and_exclusive_writes(workers):
    eng = ThreadedEngine(workers=workers)
    nvars = 4
    vars_ = [eng.new_var(f"v{i}") for i in range(nvars)]
    counts = [0] * nvars
    reads_seen = []
    per_thread = 1500

    def pusher(seed):
        rng = random.Random(seed)
        for _ in range(per_thread):
            w = rng.randrange(nvars)
            r = rng.randrange(nvars)

            def inc(w=w):
                c = counts[w]  # a racy read-modify-write: only exclusive writes keep it exact
                time.sleep(0)
                counts[w] = c + 1

            eng.push(inc, writes=(vars_[w],), inline=rng.choice([None, False, True]),
                     cost=rng.choice([None, 1]))
            eng.push(lambda r=r: reads_seen.append(counts[r]), reads=(vars_[r],),
                     inline=rng.choice([None, False]))
            if rng.random() < 0.01:
                eng.wait(vars_[rng.randrange(nvars)], timeout=T)

    threads = [threading.Thread(target=pusher, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(T)
        assert not t.is_alive(), "pusher thread deadlocked"
    eng.wait_all(timeout=T)
    assert sum(counts) == 4 * per_thread
    assert len(reads_seen) == 4 * per_thread
