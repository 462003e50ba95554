"""value_and_grad and sgd_step of SBP programs over thread ranks: the logical loss and
gradients equal the single-process ones (float64, to 1e-12): the MLP data parallel (batch
S(0)), its hidden layer tensor parallel (Megatron), and a 2x2 hybrid of the two."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import tdflow
import tdflow.distributed as dist

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))

import train_mlp  # noqa: E402

BATCH = 12


def _annotate(text: str, sbp: dict[str, str], hierarchy: str | None = None) -> str:
    """``text`` with ``{sbp = [...]}`` on the named arguments (and a hierarchy attribute)."""
    for name, s in sbp.items():
        text = re.sub(rf"(%{name}: tensor<[^>]*>)", rf"\1 {{sbp = [{s}]}}", text, count=1)
    if hierarchy:
        text = text.replace(") -> tensor<f64> {", f") -> tensor<f64> attributes "
                                                  f"{{hierarchy = {hierarchy}}} {{", 1)
    return text


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    p = train_mlp.init_params(seed, np.float64)
    x = rng.standard_normal((BATCH, 64))
    y = rng.integers(0, 10, BATCH).astype(np.int64)
    return [x, y, *p.values()]


PLAIN = train_mlp.program(BATCH, dtype="f64")
CASES = {
    "data-parallel": (2, {"x": "#sbp.S<0>", "labels": "#sbp.S<0>"}, None),
    "data-parallel-4": (4, {"x": "#sbp.S<0>", "labels": "#sbp.S<0>"}, None),
    "megatron": (2, {"w1": "#sbp.S<1>", "b1": "#sbp.S<0>", "w2": "#sbp.S<0>"}, None),
    "hybrid-2x2": (4, {"x": "#sbp.S<0>, #sbp.B", "labels": "#sbp.S<0>, #sbp.B",
                       "w1": "#sbp.B, #sbp.S<1>", "b1": "#sbp.B, #sbp.S<0>",
                       "w2": "#sbp.B, #sbp.S<0>"}, "[2, 2]"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_loss_and_gradients_equal_the_single_process_ones(case):
    nproc, sbp, hierarchy = CASES[case]
    args = _inputs()
    loss1, grads1 = tdflow.value_and_grad(PLAIN, wrt=list(train_mlp.PARAMS))(*args)
    vg = dist.value_and_grad(_annotate(PLAIN, sbp, hierarchy), nproc, wrt=list(train_mlp.PARAMS))
    loss, grads = vg(*args)
    np.testing.assert_allclose(loss, loss1, rtol=1e-12)
    for g, g1 in zip(grads, grads1):
        np.testing.assert_allclose(g, g1, rtol=1e-10, atol=1e-14)


def test_sgd_steps_follow_the_single_process_losses():
    args = _inputs(1)
    single = [a.copy() for a in args]
    step1 = tdflow.value_and_grad(PLAIN, wrt=list(train_mlp.PARAMS))
    step = dist.sgd_step(_annotate(PLAIN, CASES["data-parallel"][1]), 0.1, 2,
                         wrt=list(train_mlp.PARAMS))
    for _ in range(3):
        loss1, g1 = step1(*single)
        for w, g in zip(single[2:], g1):
            w -= 0.1 * g
        loss = step(*args)
        np.testing.assert_allclose(loss, loss1, rtol=1e-12)
    for w, w1 in zip(args[2:], single[2:]):
        np.testing.assert_allclose(w, w1, rtol=1e-12, atol=1e-15)


def test_an_operand_used_twice():
    # w * w with w broadcast: an (x: P, y: B) signature must not read the one value as both
    text = ('func.func @f(%w: tensor<2xf64>) -> tensor<f64> {\n'
            '  %p = "tdflow.broadcast_mul"(%w, %w) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>\n'
            '  %s = "tdflow.reduce_sum"(%p) {axis = [0 : si32]} : (tensor<2xf64>) -> tensor<f64>\n'
            '  return %s : tensor<f64>\n}')
    assert float(dist.compile(text, 2)(np.array([1.0, 2.0]))) == 5.0
