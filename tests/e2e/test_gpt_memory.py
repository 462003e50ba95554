"""Eager training keeps no memory from one step to the next (issue 23: the eager GPT step's
resident memory was reported to grow from step 1 to step 20).

Measured with ``tracemalloc`` (numpy's buffers are traced too): after the first steps have
filled the caches (op runners, gradient traces, kernels), the memory held between steps stays
where it was after step 2, as does the number of live tensors, and no tape node outlives its
step. Adam's per-step values (its bias corrections) reach ``adam_update`` as operands, so after
the first steps no call builds a new cache entry (inference and kernel) at all.
"""

from __future__ import annotations

import gc
import sys
import tracemalloc
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))

import gpt  # noqa: E402
import train_gpt  # noqa: E402
from tdflow.runtime.eager import OpRunner  # noqa: E402
from tdflow.runtime.engine import (  # noqa: E402
    NaiveEngine,
    ThreadedEngine,
    get_engine,
    set_engine,
)
from tdflow.runtime.tape import Node  # noqa: E402
from tdflow.runtime.tensor import Tensor  # noqa: E402

STEPS = 20
# What may differ between step 2 and step 20: with the threaded engine, the elementwise programs'
# scratch buffers, kept per thread (a large op runs on the caller or on an engine worker, as the
# timing falls), up to about 2.5 MiB here; with the synchronous engine, nothing but interpreter
# noise. One step's saved activations alone are several MiB.
MARGIN_MIB = {"threaded": 3.0, "naive": 0.0625}


def _count(cls: type) -> int:
    # (a list of gc.get_objects() kept across steps would keep every object it lists alive)
    return sum(1 for o in gc.get_objects() if type(o) is cls)


def _stepper():
    cfg = train_gpt.CONFIG
    stepper = train_gpt.Eager(gpt.init_params(cfg, 0), cfg)
    batches = train_gpt.windows(train_gpt.VOCAB.encode(train_gpt.zen()), cfg.batch,
                                cfg.context, 0)
    return stepper, batches


@pytest.fixture(params=["threaded", "naive"])
def engine(request):
    old = set_engine(ThreadedEngine() if request.param == "threaded" else NaiveEngine())
    yield request.param
    get_engine().wait_all()
    set_engine(old)


def test_eager_gpt_steps_hold_no_more_memory_than_step_two(engine):
    stepper, batches = _stepper()
    held: dict[int, float] = {}
    tensors: dict[int, int] = {}
    tracemalloc.start()
    try:
        for step in range(1, STEPS + 1):
            stepper.step(*next(batches))
            get_engine().wait_all()
            gc.collect()
            held[step] = tracemalloc.get_traced_memory()[0] / 2**20
            alive, tensors[step] = _count(Node), _count(Tensor)
            assert alive == 0, f"step {step}: {alive} tape nodes outlive backward()"
    finally:
        tracemalloc.stop()
    assert all(n == tensors[2] for n in list(tensors.values())[2:]), tensors
    grown = held[STEPS] - held[2]
    assert grown < MARGIN_MIB[engine], (f"{grown:.2f} MiB more held after step {STEPS} than after "
                                f"step 2: " + ", ".join(f"{k}: {v:.2f}" for k, v in held.items()))


def test_eager_gpt_steps_after_the_first_build_no_cache_entries(monkeypatch):
    """Every op call of steps 3.. hits its runner's cache: nothing keyed by a value that
    changes every step (issue 19: adam_update's bias corrections were attributes)."""
    stepper, batches = _stepper()
    built: list[str] = []
    prepare = OpRunner.prepare

    def counting(self, *args):
        built.append(self.name)
        return prepare(self, *args)

    monkeypatch.setattr(OpRunner, "prepare", counting)
    for _ in range(2):
        stepper.step(*next(batches))
    built.clear()
    for _ in range(4):
        stepper.step(*next(batches))
    get_engine().wait_all()
    assert built == []
    stepper.adam.lr *= 0.5  # a new attribute value does build one (the count counts)
    stepper.step(*next(batches))
    assert "tdflow.adam_update" in built
