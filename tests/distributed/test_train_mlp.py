"""Data-parallel training of examples/train_mlp.py: N ranks follow the single-process losses
on the same global batches (float64: to 1e-12; uneven row splits included), and float32
training over 2 ranks still learns."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))

import train_mlp  # noqa: E402

STEPS = 12


@pytest.fixture(scope="module")
def single():
    return train_mlp.train("graph", STEPS, seed=3, nproc=1, dtype="f64")


@pytest.mark.parametrize("nproc", [2, 3])  # 64 rows over 3 ranks: 22, 21, 21
def test_n_ranks_give_the_single_process_losses_in_float64(single, nproc):
    dp = train_mlp.train("graph", STEPS, seed=3, nproc=nproc, dtype="f64")
    assert single.losses[-1] < single.losses[0]
    np.testing.assert_allclose(dp.losses, single.losses, rtol=1e-12, atol=0)
    assert dp.test_accuracy == pytest.approx(single.test_accuracy, abs=1e-9)


def test_the_one_rank_float64_step_is_the_plain_graph_model(single):
    # nproc=1 in float64 runs the same program as the example's graph mode, scaled by 1/64
    text = train_mlp.program(64, dtype="f64")
    assert text == train_mlp.program(64, dtype="f64", mean_over=64) and "f32" not in text


def test_float32_data_parallel_training_learns():
    run = train_mlp.train("graph", 60, seed=0, nproc=2)
    assert np.mean(run.losses[-10:]) < 0.6 * np.mean(run.losses[:10])


def test_nproc_needs_graph_mode():
    with pytest.raises(SystemExit, match="graph mode only"):
        train_mlp.train("eager", 1, nproc=2)


def test_the_data_parallel_program_goes_through_infer_sbp():
    # the ranks' rows come from the program's SBP, not from slicing in the example
    import tdflow.distributed as dist

    def rank(_r):
        model = train_mlp.DataParallel(train_mlp.init_params(0, np.float64), dtype="f64")
        plan = model.value_and_grad.program.plan(dist.current().rank)
        x_shape = plan.program.lowering.module["mlp_grad"].args[0].type.shape
        return [str(s[0]) for s in plan.arg_sbp[:6]], tuple(x_shape)

    out = dist.run_threads(rank, 3)
    assert out[0][0] == ["S(0)", "S(0)", "B", "B", "B", "B"]
    assert [o[1] for o in out] == [(22, 64), (21, 64), (21, 64)]  # 64 rows: 22, 21, 21
