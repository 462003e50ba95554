"""examples/train_gpt.py --nproc: the GPT with its batch split over one mesh axis and its MLP
blocks Megatron-split over the other, lowered by infer-sbp, follows the single-process
losses (float64, same windows) to 1e-12 on 2 thread ranks either way and on a 2x2 mesh."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))

import gpt  # noqa: E402
import train_gpt  # noqa: E402

import tdflow.distributed as dist  # noqa: E402

CFG = gpt.Config(batch=4, context=8, layers=1, width=8, heads=2, vocab=len(train_gpt.VOCAB))
STEPS = 4


@pytest.fixture(scope="module")
def single():
    return train_gpt.train("graph", STEPS, seed=1, cfg=CFG, dtype=np.float64)


@pytest.mark.parametrize("nproc, tp", [(2, 2), (2, 1), (4, 2)])
def test_the_mesh_follows_the_single_process_losses_in_float64(single, nproc, tp):
    run = train_gpt.train("graph", STEPS, seed=1, cfg=CFG, nproc=nproc, tensor_parallel=tp,
                          dtype=np.float64)
    assert single.losses[-1] < single.losses[0]
    np.testing.assert_allclose(run.losses, single.losses, rtol=1e-12, atol=0)
    for k, v in single.params.items():
        np.testing.assert_allclose(run.params[k], v, rtol=1e-9, atol=1e-12, err_msg=k)


def test_the_mlp_is_tensor_parallel_through_infer_sbp():
    # the compiler, not the example, splits the work: the forward of each block has the
    # Megatron pattern (column-split first matmul, row-split second, its partial sum reduced)
    text = gpt.sbp_program(CFG, (1, 2), "f64")
    prog = dist.compile(text, 2)
    ops = prog.plan(0).program.lowering.module["gpt"].ops
    names = [op.name for op in ops]
    assert "tdflow.boxing_reduce_scatter" in names or "tdflow.boxing_all_reduce" in names
    w1 = dict(gpt.param_shapes(CFG))["h0_mlp_w1"]
    physical = [a.type.shape for a in prog.plan(1).program.lowering.module["gpt"].args]
    assert (w1[0], w1[1] // 2) in [tuple(s) for s in physical]
    assert [str(s[1]) for s in prog.plan(0).arg_sbp[:2]] == ["B", "B"]
    assert [str(s[0]) for s in prog.plan(0).arg_sbp[:2]] == ["S(0)", "S(0)"]


def test_an_uneven_batch_is_refused():
    with pytest.raises(ValueError, match="does not split evenly"):
        gpt.sbp_program(gpt.Config(batch=3, context=4, layers=1, width=8, heads=2, vocab=5),
                        (2, 1))


def test_nproc_needs_graph_mode():
    with pytest.raises(SystemExit, match="graph mode only"):
        train_gpt.train("eager", 1, cfg=CFG, nproc=2)
