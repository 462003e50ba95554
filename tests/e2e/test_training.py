"""The training examples (examples/train_mlp.py, examples/train_cnn.py) train, in both modes.

Each model is trained eagerly (``backward`` + ``sgd_update``) and compiled
(``value_and_grad`` + the numpy update) from the same weights on the same batches, for fewer
steps than the scripts' defaults: the loss must fall, the test accuracy must reach the
script's stated target, and the two modes must agree bit for bit (the first step's gradients,
and with them every later loss).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))

import digits  # noqa: E402
import train_cnn  # noqa: E402
import train_mlp  # noqa: E402

# (module, steps): fewer than the scripts' defaults (400 and 300), still past the target
MODELS = {"mlp": (train_mlp, 200), "cnn": (train_cnn, 200)}


@pytest.fixture(scope="module", params=sorted(MODELS))
def runs(request):
    module, steps = MODELS[request.param]
    return module, {mode: module.train(mode, steps, seed=0) for mode in ("eager", "graph")}


def test_loss_falls_and_accuracy_reaches_the_target(runs):
    module, by_mode = runs
    for mode, run in by_mode.items():
        first = float(np.mean(run.losses[:10]))
        assert run.final_loss < 0.5 * first, (mode, first, run.final_loss)
        assert run.test_accuracy >= module.TARGET, (mode, run.test_accuracy)


def test_eager_and_graph_runs_are_identical(runs):
    _, by_mode = runs
    eager, graph = by_mode["eager"], by_mode["graph"]
    assert eager.losses == graph.losses  # float equality, step by step
    assert eager.test_accuracy == graph.test_accuracy


@pytest.mark.parametrize("name", sorted(MODELS))
def test_first_step_gradients_are_bit_for_bit_equal(name):
    module, _ = MODELS[name]
    d = digits.load()
    x, y = next(digits.batches(d.x_train, d.y_train, digits.BATCH, seed=0))
    params = module.init_params(0)
    eager_loss, eager = module.Eager(params).grads(x, y)
    graph_loss, graph = module.Graph(params).grads(x, y)
    assert eager_loss == graph_loss
    assert list(eager) == list(graph) == list(module.PARAMS)
    for k in module.PARAMS:
        assert eager[k].dtype == graph[k].dtype == np.float32
        assert eager[k].shape == graph[k].shape == params[k].shape
        assert np.array_equal(eager[k], graph[k]), (
            f"{name} d{k}: max |eager - graph| = {np.abs(eager[k] - graph[k]).max()}")
        assert np.any(eager[k] != 0), k


def test_script_runs_and_prints_its_summary():
    proc = subprocess.run([sys.executable, str(EXAMPLES / "train_mlp.py"), "--steps", "200",
                           "--quiet"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "120"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "train_mlp: target test accuracy >= 0.95 in 200 steps" in out
    for mode in ("eager", "graph"):
        row = next(line for line in out.splitlines() if f" {mode} " in line)
        assert "200" in row and "met" in row, out
    assert "MISSED" not in out


def test_script_exits_1_when_the_target_is_missed():
    assert train_mlp.main(["--mode", "graph", "--steps", "5", "--quiet"]) == 1


def test_digits_docstring_examples():
    import doctest

    result = doctest.testmod(digits)
    assert result.attempted and not result.failed
