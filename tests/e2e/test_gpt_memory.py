"""Eager training keeps no memory from one step to the next (issue 23: the eager GPT step's
resident memory was reported to grow from step 1 to step 20).

Measured with ``tracemalloc`` (numpy's buffers are traced too): after the first steps have
filled the caches (op runners, gradient traces, kernels), the memory held between steps stays
where it was after step 2, and no tape node outlives its step.
"""

from __future__ import annotations

import gc
import sys
import tracemalloc
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))

import gpt  # noqa: E402
import train_gpt  # noqa: E402
from tdflow.runtime.engine import get_engine  # noqa: E402
from tdflow.runtime.tape import Node  # noqa: E402

STEPS = 20
# What may be added between step 2 and step 20: cache entries of ops whose attributes change
# every step (Adam's bias corrections key the adam_update runner's cache), about 25 KiB a step
# here. One step's saved activations alone are larger than this margin.
MARGIN_MIB = 1.5


def test_eager_gpt_steps_hold_no_more_memory_than_step_two():
    cfg = train_gpt.CONFIG
    stepper = train_gpt.Eager(gpt.init_params(cfg, 0), cfg)
    batches = train_gpt.windows(train_gpt.VOCAB.encode(train_gpt.zen()), cfg.batch,
                                cfg.context, 0)
    held: dict[int, float] = {}
    tracemalloc.start()
    try:
        for step in range(1, STEPS + 1):
            stepper.step(*next(batches))
            get_engine().wait_all()
            gc.collect()
            held[step] = tracemalloc.get_traced_memory()[0] / 2**20
            alive = sum(1 for o in gc.get_objects() if type(o) is Node)
            assert alive == 0, f"step {step}: {alive} tape nodes outlive backward()"
    finally:
        tracemalloc.stop()
    grown = held[STEPS] - held[2]
    assert grown < MARGIN_MIB, (f"{grown:.2f} MiB more held after step {STEPS} than after "
                                f"step 2: " + ", ".join(f"{k}: {v:.2f}" for k, v in held.items()))
