"""Train a 64->256->10 perceptron on scikit-learn's 8x8 digits, eagerly and compiled.

    pip install -e '.[examples]'               # scikit-learn, for the digits
    python examples/train_mlp.py               # eager mode, then graph mode
    python examples/train_mlp.py --mode graph --steps 300 --seed 1 --quiet

Target: test accuracy >= 0.95 after 400 SGD steps of 64 images (about 18 epochs; both modes
reach 0.96-0.98 for seeds 0-9), else exit status 1.

The model is ``matmul -> bias_add -> relu -> matmul -> bias_add``, the loss the batch mean of
``sparse_softmax_cross_entropy`` (``reduce_sum`` then ``scalar_mul`` by 1/64). Both modes
start from the same weights (``init_params(seed)``) and see the same batches:

* **eager**: parameters are tensors with ``requires_grad=True``; ``loss.backward()`` fills
  their ``.grad``, and ``tdflow.functional.sgd_update`` updates them in place under
  ``tdflow.no_grad()``;
* **graph**: :func:`program` writes the loss as an MLIR function for the batch size, and
  ``tdflow.value_and_grad`` compiles it with its gradient into one plan; the numpy update
  ``w -= float32(lr) * dw`` is the arithmetic of ``sgd_update``'s kernel for float32.

The two modes compute the same gradients bit for bit (``tests/e2e/test_training.py``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: digits.py lies next to this file
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import digits  # noqa: E402

import tdflow  # noqa: E402

F = tdflow.functional
STEPS = 400
TARGET = 0.95
HIDDEN = 256
PARAMS = ("w1", "b1", "w2", "b2")


def init_params(seed: int) -> dict[str, np.ndarray]:
    """He-initialised weights and zero biases, float32, from ``seed``."""
    rng = np.random.default_rng(seed)
    return {
        "w1": (rng.standard_normal((64, HIDDEN)) * np.sqrt(2 / 64)).astype(np.float32),
        "b1": np.zeros(HIDDEN, np.float32),
        "w2": (rng.standard_normal((HIDDEN, 10)) * np.sqrt(1 / HIDDEN)).astype(np.float32),
        "b2": np.zeros(10, np.float32),
    }


# --- eager -------------------------------------------------------------------------------

def eager_logits(p: dict[str, Any], x: Any) -> Any:
    h = F.relu(F.bias_add(F.matmul(x, p["w1"]), p["b1"], axis=1))
    return F.bias_add(F.matmul(h, p["w2"]), p["b2"], axis=1)


def eager_loss(p: dict[str, Any], x: Any, y: Any) -> Any:
    """Mean cross-entropy of the batch, a 0-d tensor."""
    _, per_row = F.sparse_softmax_cross_entropy(eager_logits(p, x), y, depth=10)
    total = F.reduce_sum(per_row, axis=[0])
    return F.scalar_mul(total, has_float_operand=True, float_operand=1.0 / len(y.numpy()))


class Eager(digits.EagerSGD):
    """The MLP in eager mode: tensors that require gradients, ``backward``, ``sgd_update``."""

    def loss(self, x: np.ndarray, y: np.ndarray) -> Any:
        return eager_loss(self.p, tdflow.tensor(x), tdflow.tensor(y))

    def logits(self, x: np.ndarray) -> np.ndarray:
        with tdflow.no_grad():
            return eager_logits(self.p, tdflow.tensor(x)).numpy()


# --- graph -------------------------------------------------------------------------------

def program(batch: int, loss: bool = True) -> str:
    """The model as MLIR text for ``batch`` images: the mean loss (``loss``) or the logits."""
    n, h = batch, HIDDEN
    head = (f"func.func @mlp(%x: tensor<{n}x64xf32>, %labels: tensor<{n}xi64>, "
            if loss else f"func.func @mlp(%x: tensor<{n}x64xf32>, ")
    result = "tensor<f32>" if loss else f"tensor<{n}x10xf32>"
    lines = [
        head + f"%w1: tensor<64x{h}xf32>, %b1: tensor<{h}xf32>, %w2: tensor<{h}x10xf32>, "
        f"%b2: tensor<10xf32>) -> {result} {{",
        f'  %0 = "tdflow.matmul"(%x, %w1) : (tensor<{n}x64xf32>, tensor<64x{h}xf32>) -> tensor<{n}x{h}xf32>',
        f'  %1 = "tdflow.bias_add"(%0, %b1) {{axis = 1 : si32}} : (tensor<{n}x{h}xf32>, tensor<{h}xf32>) -> tensor<{n}x{h}xf32>',
        f'  %2 = "tdflow.relu"(%1) : (tensor<{n}x{h}xf32>) -> tensor<{n}x{h}xf32>',
        f'  %3 = "tdflow.matmul"(%2, %w2) : (tensor<{n}x{h}xf32>, tensor<{h}x10xf32>) -> tensor<{n}x10xf32>',
        f'  %4 = "tdflow.bias_add"(%3, %b2) {{axis = 1 : si32}} : (tensor<{n}x10xf32>, tensor<10xf32>) -> tensor<{n}x10xf32>',
    ]
    if loss:
        lines += [
            f'  %p, %l = "tdflow.sparse_softmax_cross_entropy"(%4, %labels) {{depth = 10 : si64}} : (tensor<{n}x10xf32>, tensor<{n}xi64>) -> (tensor<{n}x10xf32>, tensor<{n}xf32>)',
            f'  %5 = "tdflow.reduce_sum"(%l) {{axis = [0 : si32]}} : (tensor<{n}xf32>) -> tensor<f32>',
            f'  %6 = "tdflow.scalar_mul"(%5) {{has_float_operand = true, float_operand = {1.0 / n!r} : f64}} : (tensor<f32>) -> tensor<f32>',
            "  return %6 : tensor<f32>",
        ]
    else:
        lines.append(f"  return %4 : tensor<{n}x10xf32>")
    return "\n".join(lines + ["}", ""])


class Graph(digits.GraphSGD):
    """The MLP in graph mode: :func:`program`'s loss and its gradient compiled into one plan."""

    def __init__(self, params: dict[str, np.ndarray], lr: float = digits.LEARNING_RATE) -> None:
        super().__init__(program, PARAMS, params, lr)


MODES = {"eager": Eager, "graph": Graph}


def train(mode: str, steps: int = STEPS, seed: int = 0,
          on_step: Callable[[int, float], None] | None = None) -> digits.Run:
    """Train from ``init_params(seed)`` for ``steps`` steps in ``mode`` (eager or graph)."""
    return digits.fit(mode, MODES[mode](init_params(seed)), steps, seed, on_step)


def main(argv: list[str] | None = None) -> int:
    return digits.main(argv, name="train_mlp", train=train, steps=STEPS, target=TARGET,
                       doc=__doc__)


if __name__ == "__main__":
    sys.exit(main())
