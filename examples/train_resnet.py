"""Train the small ResNet of resnet.py on scikit-learn's 8x8 digits, eagerly and compiled.

    pip install -e '.[examples]'                  # scikit-learn, for the digits
    python examples/train_resnet.py               # eager mode, then graph mode
    python examples/train_resnet.py --mode graph --steps 200 --quiet

Target: test accuracy >= 0.95 after 200 SGD steps of 64 images (about 9 epochs; seeds 0-4
reach 0.967-0.992, the same in both modes), else exit status 1. Test accuracy is noisy
before that: the moving statistics trail the weights, and a step can dip it for a while.

Both modes start from the same weights (``resnet.init_params(seed)``) and moving statistics,
see the same batches and run the same ops (``resnet.forward``): eager mode records the
forward with autograd (batch norm in training mode, its moving statistics updated in place),
calls ``backward`` and ``sgd_update`` under ``no_grad``; graph mode compiles the program of
``resnet.program`` with ``tdflow.sgd_step`` (forward, backward and the in-place updates of the
parameters and the moving statistics as one plan). Evaluation uses the moving statistics
(batch norm in inference mode).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: digits.py and resnet.py lie next to this file
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import digits  # noqa: E402
import resnet  # noqa: E402

import tdflow  # noqa: E402

F = tdflow.functional
STEPS = 200
TARGET = 0.95
LEARNING_RATE = digits.LEARNING_RATE
PARAMS = resnet.PARAMS
images = digits.images  # rows of 64 pixels as [N, 1, 8, 8] (bench/model_bench.py uses it too)


class Eager(digits.EagerSGD):
    """Parameters as tensors that require gradients, moving statistics as plain tensors; one
    step is a training-mode forward (which updates the moving statistics), backward and SGD."""

    def __init__(self, params: dict[str, np.ndarray], stats: dict[str, np.ndarray],
                 lr: float = LEARNING_RATE) -> None:
        super().__init__(params, lr)
        self.s = {k: tdflow.tensor(v.copy()) for k, v in stats.items()}

    @property
    def stats(self) -> dict[str, np.ndarray]:
        return {k: t.numpy() for k, t in self.s.items()}

    def loss(self, x: np.ndarray, y: np.ndarray) -> tdflow.Tensor:
        """The batch's mean loss (batch norm in training mode: the moving statistics are
        updated)."""
        logits = resnet.forward(F, self.p, self.s, tdflow.tensor(images(x)), len(x),
                                training=True)
        return resnet.loss(F, logits, tdflow.tensor(y), len(x))

    def logits(self, x: np.ndarray) -> np.ndarray:
        with tdflow.no_grad():
            return resnet.forward(F, self.p, self.s, tdflow.tensor(images(x)), len(x),
                                  training=False).numpy()


class Graph:
    """The training step compiled as one plan; parameters and statistics are numpy arrays
    that it updates in place."""

    def __init__(self, params: dict[str, np.ndarray], stats: dict[str, np.ndarray],
                 lr: float = LEARNING_RATE) -> None:
        self.p = {k: v.copy() for k, v in params.items()}
        self.s = {k: v.copy() for k, v in stats.items()}
        self.lr = lr
        self._step: Callable[..., np.ndarray] | None = None
        self._value_and_grad: Callable[..., tuple] | None = None
        self._logits: dict[int, Callable[..., np.ndarray]] = {}

    @property
    def stats(self) -> dict[str, np.ndarray]:
        return self.s

    def _args(self, x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
        return [images(x), y, *self.p.values(), *self.s.values()]

    def grads(self, x: np.ndarray, y: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
        """The loss and the gradients of one batch (the moving statistics are updated)."""
        if self._value_and_grad is None:
            self._value_and_grad = tdflow.value_and_grad(resnet.program(len(x)),
                                                         wrt=list(PARAMS))
        loss, grads = self._value_and_grad(*self._args(x, y))
        return float(loss), dict(zip(PARAMS, grads))

    def step(self, x: np.ndarray, y: np.ndarray) -> float:
        if self._step is None:
            self._step = tdflow.sgd_step(resnet.program(len(x)), lr=self.lr, wrt=list(PARAMS))
        return float(self._step(*self._args(x, y)))

    def logits(self, x: np.ndarray) -> np.ndarray:
        fn = self._logits.get(len(x))
        if fn is None:
            fn = self._logits[len(x)] = tdflow.compile(resnet.program(len(x), training=False))
        return fn(images(x), *self.p.values(), *self.s.values())


MODES = {"eager": Eager, "graph": Graph}


def train(mode: str, steps: int = STEPS, seed: int = 0,
          on_step: Callable[[int, float], None] | None = None) -> digits.Run:
    """Train from ``resnet.init_params(seed)`` for ``steps`` steps in ``mode``."""
    stepper = MODES[mode](resnet.init_params(seed), resnet.init_stats())
    return digits.fit(mode, stepper, steps, seed, on_step)


def main(argv: list[str] | None = None) -> int:
    return digits.main(argv, name="train_resnet", train=train, steps=STEPS, target=TARGET,
                       doc=__doc__)


if __name__ == "__main__":
    sys.exit(main())
