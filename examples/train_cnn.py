"""Train a small convolutional network on scikit-learn's 8x8 digits, eagerly and compiled.

    pip install -e '.[examples]'               # scikit-learn, for the digits
    python examples/train_cnn.py               # eager mode, then graph mode
    python examples/train_cnn.py --mode eager --steps 200 --quiet

Target: test accuracy >= 0.90 after 300 SGD steps of 64 images (about 13 epochs; both modes
reach 0.93-0.97 for seeds 0-9), else exit status 1.

The model, NCHW (``channels_first``): ``conv2d`` 1->8 channels, 3x3, padding 1 (8x8 stays
8x8) -> ``bias_add`` -> ``relu`` -> ``max_pool_2d`` 2x2 (to 8x4x4) -> ``reshape`` to 128
features -> ``matmul`` to 10 classes -> ``bias_add``; the loss is the batch mean of
``sparse_softmax_cross_entropy``. Eager and graph mode are as in ``train_mlp.py``: the same
initial weights and batches, ``backward`` + ``sgd_update`` against ``value_and_grad`` + the
numpy update with ``sgd_update``'s float32 arithmetic.
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
STEPS = 300
TARGET = 0.90
CHANNELS = 8
FEATURES = CHANNELS * 4 * 4  # after the 2x2 pool of 8x8 images
PARAMS = ("k", "kb", "w", "b")
CONV = {"padding_before": [1, 1], "data_format": "channels_first", "kernel_size": [3, 3],
        "strides": [1, 1], "dilation_rate": [1, 1], "filters": CHANNELS}
POOL = {"padding": [0, 0], "data_format": "channels_first", "kernel_size": [2, 2],
        "stride": [2, 2], "dilation": [1, 1]}


def init_params(seed: int) -> dict[str, np.ndarray]:
    """He-initialised filters and weights, zero biases, float32, from ``seed``."""
    rng = np.random.default_rng(seed)
    return {
        "k": (rng.standard_normal((CHANNELS, 1, 3, 3)) * np.sqrt(2 / 9)).astype(np.float32),
        "kb": np.zeros(CHANNELS, np.float32),
        "w": (rng.standard_normal((FEATURES, 10)) * np.sqrt(1 / FEATURES)).astype(np.float32),
        "b": np.zeros(10, np.float32),
    }


# --- eager -------------------------------------------------------------------------------

def eager_logits(p: dict[str, Any], x: Any) -> Any:
    """``x``: images ``[N, 1, 8, 8]``."""
    h = F.relu(F.bias_add(F.conv2d(x, p["k"], **CONV), p["kb"], axis=1))
    pooled, _ = F.max_pool_2d(h, **POOL)
    flat = F.reshape(pooled, shape=[x.shape[0], FEATURES])
    return F.bias_add(F.matmul(flat, p["w"]), p["b"], axis=1)


def eager_loss(p: dict[str, Any], x: Any, y: Any) -> Any:
    """Mean cross-entropy of the batch, a 0-d tensor."""
    _, per_row = F.sparse_softmax_cross_entropy(eager_logits(p, x), y, depth=10)
    total = F.reduce_sum(per_row, axis=[0])
    return F.scalar_mul(total, has_float_operand=True, float_operand=1.0 / x.shape[0])


class Eager(digits.EagerSGD):
    """The CNN in eager mode: tensors that require gradients, ``backward``, ``sgd_update``."""

    def loss(self, x: np.ndarray, y: np.ndarray) -> Any:
        return eager_loss(self.p, tdflow.tensor(digits.images(x)), tdflow.tensor(y))

    def logits(self, x: np.ndarray) -> np.ndarray:
        with tdflow.no_grad():
            return eager_logits(self.p, tdflow.tensor(digits.images(x))).numpy()


# --- graph -------------------------------------------------------------------------------

def program(batch: int, loss: bool = True) -> str:
    """The model as MLIR text for ``batch`` images: the mean loss (``loss``) or the logits."""
    n, c, f = batch, CHANNELS, FEATURES
    x, conv, pool = f"tensor<{n}x1x8x8xf32>", f"tensor<{n}x{c}x8x8xf32>", f"tensor<{n}x{c}x4x4xf32>"
    args = f"%x: {x}, " + (f"%labels: tensor<{n}xi64>, " if loss else "")
    result = "tensor<f32>" if loss else f"tensor<{n}x10xf32>"
    lines = [
        f"func.func @cnn({args}%k: tensor<{c}x1x3x3xf32>, %kb: tensor<{c}xf32>, "
        f"%w: tensor<{f}x10xf32>, %b: tensor<10xf32>) -> {result} {{",
        f'  %0 = "tdflow.conv2d"(%x, %k) {{operandSegmentSizes = array<i32: 1, 1, 0, 0>, '
        f'filters = {c} : si32, padding_before = [1, 1], data_format = "channels_first", '
        f"kernel_size = [3, 3], strides = [1, 1], dilation_rate = [1, 1], groups = 1 : si32}} "
        f": ({x}, tensor<{c}x1x3x3xf32>) -> {conv}",
        f'  %1 = "tdflow.bias_add"(%0, %kb) {{axis = 1 : si32}} : ({conv}, tensor<{c}xf32>) -> {conv}',
        f'  %2 = "tdflow.relu"(%1) : ({conv}) -> {conv}',
        f'  %3, %4 = "tdflow.max_pool_2d"(%2) {{padding = [0, 0], data_format = "channels_first", '
        f"kernel_size = [2, 2], stride = [2, 2], dilation = [1, 1]}} "
        f": ({conv}) -> ({pool}, tensor<{n}x{c}x4x4xi64>)",
        f'  %5 = "tdflow.reshape"(%3) {{shape = [{n}, {f}]}} : ({pool}) -> tensor<{n}x{f}xf32>',
        f'  %6 = "tdflow.matmul"(%5, %w) : (tensor<{n}x{f}xf32>, tensor<{f}x10xf32>) -> tensor<{n}x10xf32>',
        f'  %7 = "tdflow.bias_add"(%6, %b) {{axis = 1 : si32}} : (tensor<{n}x10xf32>, tensor<10xf32>) -> tensor<{n}x10xf32>',
    ]
    if loss:
        lines += [
            f'  %p, %l = "tdflow.sparse_softmax_cross_entropy"(%7, %labels) {{depth = 10 : si64}} : (tensor<{n}x10xf32>, tensor<{n}xi64>) -> (tensor<{n}x10xf32>, tensor<{n}xf32>)',
            f'  %8 = "tdflow.reduce_sum"(%l) {{axis = [0 : si32]}} : (tensor<{n}xf32>) -> tensor<f32>',
            f'  %9 = "tdflow.scalar_mul"(%8) {{has_float_operand = true, float_operand = {1.0 / n!r} : f64}} : (tensor<f32>) -> tensor<f32>',
            "  return %9 : tensor<f32>",
        ]
    else:
        lines.append(f"  return %7 : tensor<{n}x10xf32>")
    return "\n".join(lines + ["}", ""])


class Graph(digits.GraphSGD):
    """The CNN in graph mode: :func:`program`'s loss and its gradient compiled into one plan."""

    def __init__(self, params: dict[str, np.ndarray], lr: float = digits.LEARNING_RATE) -> None:
        super().__init__(program, PARAMS, params, lr, inputs=digits.images)


MODES = {"eager": Eager, "graph": Graph}


def train(mode: str, steps: int = STEPS, seed: int = 0,
          on_step: Callable[[int, float], None] | None = None) -> digits.Run:
    """Train from ``init_params(seed)`` for ``steps`` steps in ``mode`` (eager or graph)."""
    return digits.fit(mode, MODES[mode](init_params(seed)), steps, seed, on_step)


def main(argv: list[str] | None = None) -> int:
    return digits.main(argv, name="train_cnn", train=train, steps=STEPS, target=TARGET,
                       doc=__doc__)


if __name__ == "__main__":
    sys.exit(main())
