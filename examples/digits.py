"""scikit-learn's handwritten digits, and the training loop the three examples share.

1,797 greyscale 8x8 images of the digits 0-9 (bundled with scikit-learn, so nothing is
downloaded), scaled to [0, 1] as float32 and split once, with a fixed seed, into 1,437
training and 360 test images. ``pip install -e '.[examples]'`` installs scikit-learn.

>>> d = load()
>>> d.x_train.shape, d.x_train.dtype, d.y_train.dtype, d.x_test.shape
((1437, 64), dtype('float32'), dtype('int64'), (360, 64))
>>> float(d.x_train.min()), float(d.x_train.max())
(0.0, 1.0)
>>> xb, yb = next(batches(d.x_train, d.y_train, 64, seed=0))
>>> xb.shape, yb.shape
((64, 64), (64,))

``train_mlp.py``, ``train_cnn.py`` and ``train_resnet.py`` each define a model as a pair of
*steppers* (eager and graph mode: ``step(x, y) -> loss`` and ``logits(x) -> array``);
:class:`EagerSGD` is the eager half's autograd and SGD (a model adds its ``loss`` and
``logits``), :class:`GraphSGD` the graph half of a model given as one MLIR program (the MLP
and the CNN); :func:`fit` runs a stepper for a number of steps and :func:`main` is their
common command line (progress bar, summary table, exit status 1 when the stated accuracy
target is missed); :func:`train_modes`, its mode loop with the progress bar, serves
``train_gpt.py`` too.

>>> images(d.x_train[:2]).shape
(2, 1, 8, 8)
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np

import tdflow

__all__ = ["BATCH", "LEARNING_RATE", "Digits", "EagerSGD", "GraphSGD", "N_CLASSES", "Run",
           "Stepper", "accuracy", "batches", "fit", "images", "load", "main"]

BATCH = 64  # images per SGD step, in every example and both modes
LEARNING_RATE = 0.1  # SGD step size, in every example and both modes
N_CLASSES = 10
N_TEST = 360
SPLIT_SEED = 0  # the split is part of the data set, not of a run: it never changes


@dataclass(frozen=True)
class Digits:
    """Train and test images as rows of 64 pixels in [0, 1] (float32), labels int64."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


@lru_cache(maxsize=1)
def load() -> Digits:
    """Load, scale and split the digits (the same split every time)."""
    from sklearn.datasets import load_digits

    raw = load_digits()
    x = (raw.data / 16.0).astype(np.float32)  # pixels are 0..16
    y = raw.target.astype(np.int64)
    order = np.random.default_rng(SPLIT_SEED).permutation(len(x))
    test, train = order[:N_TEST], order[N_TEST:]
    parts = (x[train], y[train], x[test], y[test])
    for a in parts:  # one cached copy is shared by every caller: nobody may write to it
        a.setflags(write=False)
    return Digits(*parts)


def batches(x: np.ndarray, y: np.ndarray, batch_size: int, seed: int) -> Iterator[
        tuple[np.ndarray, np.ndarray]]:
    """Endless full-size batches: each epoch a fresh shuffle (from ``seed``), the last
    partial batch of an epoch dropped (the compiled programs have a fixed batch size)."""
    rng = np.random.default_rng(seed)
    n = len(x) - len(x) % batch_size
    while True:
        order = rng.permutation(len(x))[:n]
        for i in range(0, n, batch_size):
            idx = np.sort(order[i:i + batch_size])
            yield np.ascontiguousarray(x[idx]), np.ascontiguousarray(y[idx])


def images(x: np.ndarray) -> np.ndarray:
    """Rows of 64 pixels as single-channel NCHW images ``[N, 1, 8, 8]`` (a view, no copy)."""
    return x.reshape(-1, 1, 8, 8)


def accuracy(logits: np.ndarray, labels: np.ndarray) -> float:
    """The fraction of rows whose largest logit is at the label."""
    return float(np.mean(np.argmax(logits, axis=1) == labels))


class Stepper(Protocol):
    """One model in one mode: its parameters live inside, ``step`` updates them."""

    def step(self, x: np.ndarray, y: np.ndarray) -> float:
        """One SGD step on a batch; returns the batch's mean loss before the update."""
        ...

    def logits(self, x: np.ndarray) -> np.ndarray:
        """Class scores ``[N, 10]`` for the images ``x`` (no gradient recorded)."""
        ...


class EagerSGD:
    """Eager mode: the parameters as tensors that require gradients; one step is forward,
    backward, SGD. A model subclasses it with ``loss`` (the batch's mean loss, recorded with
    autograd from ``self.p``) and ``logits``."""

    def __init__(self, params: dict[str, np.ndarray], lr: float = LEARNING_RATE) -> None:
        self.p = {k: tdflow.tensor(v.copy(), requires_grad=True) for k, v in params.items()}
        self.lr = lr

    def loss(self, x: np.ndarray, y: np.ndarray) -> tdflow.Tensor:
        """The batch's mean loss, a 0-d tensor whose graph reaches the parameters."""
        raise NotImplementedError

    def logits(self, x: np.ndarray) -> np.ndarray:
        """Class scores ``[N, 10]`` for the images ``x`` (no gradient recorded)."""
        raise NotImplementedError

    def grads(self, x: np.ndarray, y: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
        """The loss and the gradients of one batch (the parameters are left as they are)."""
        for t in self.p.values():
            t.grad = None
        loss = self.loss(x, y)
        loss.backward()
        return float(loss.numpy()), {k: t.grad.numpy() for k, t in self.p.items()}

    def step(self, x: np.ndarray, y: np.ndarray) -> float:
        loss, _ = self.grads(x, y)
        with tdflow.no_grad():
            for t in self.p.values():
                tdflow.functional.sgd_update(t, t.grad, learning_rate_val=self.lr)
        return loss


class GraphSGD:
    """Graph mode for a model written as one MLIR function: ``program(batch)`` its mean loss
    over ``(x, labels, *params)``, ``program(batch, loss=False)`` its logits over
    ``(x, *params)``. The loss and its gradient are compiled into one plan; parameters are
    numpy arrays. ``inputs`` turns rows of pixels into the program's ``%x``."""

    def __init__(self, program: Callable[..., str], names: Sequence[str],
                 params: dict[str, np.ndarray], lr: float = LEARNING_RATE,
                 inputs: Callable[[np.ndarray], np.ndarray] = lambda x: x) -> None:
        self.program, self.names, self.inputs = program, tuple(names), inputs
        self.p = {k: v.copy() for k, v in params.items()}
        self.lr = np.float32(lr)
        self.value_and_grad = tdflow.value_and_grad(program(BATCH), wrt=list(self.names))
        self._logits: dict[int, Callable[..., np.ndarray]] = {}

    def grads(self, x: np.ndarray, y: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
        loss, grads = self.value_and_grad(self.inputs(x), y, *self.p.values())
        return float(loss), dict(zip(self.names, grads))

    def step(self, x: np.ndarray, y: np.ndarray) -> float:
        loss, grads = self.grads(x, y)
        for k, g in grads.items():  # sgd_update's float32 arithmetic: w -= f32(lr) * g
            self.p[k] -= self.lr * g
        return loss

    def logits(self, x: np.ndarray) -> np.ndarray:
        fn = self._logits.get(len(x))
        if fn is None:
            fn = self._logits[len(x)] = tdflow.compile(self.program(len(x), loss=False))
        return fn(self.inputs(x), *self.p.values())


@dataclass(frozen=True)
class Run:
    """What one training run reached."""

    mode: str
    steps: int
    losses: tuple[float, ...]
    test_accuracy: float
    seconds: float

    @property
    def final_loss(self) -> float:
        """Mean loss of the last 10 steps (one batch's loss is noisy)."""
        tail = self.losses[-10:]
        return float(sum(tail) / len(tail))


def fit(mode: str, stepper: Stepper, steps: int, seed: int,
        on_step: Callable[[int, float], None] | None = None) -> Run:
    """Train ``stepper`` for ``steps`` batches of :data:`BATCH` (shuffled from ``seed``) and
    measure its accuracy on the test images."""
    d = load()
    it = batches(d.x_train, d.y_train, BATCH, seed)
    losses = []
    t0 = time.perf_counter()
    for i in range(steps):
        xb, yb = next(it)
        losses.append(stepper.step(xb, yb))
        if on_step is not None:
            on_step(i + 1, losses[-1])
    seconds = time.perf_counter() - t0
    return Run(mode, steps, tuple(losses), accuracy(stepper.logits(d.x_test), d.y_test), seconds)


TrainFn = Callable[..., Run]


def train_modes(train: TrainFn, mode: str, steps: int, seed: int, quiet: bool,
                console) -> list:
    """``train(mode, steps, seed, on_step=...)`` for ``mode`` (``"both"``: eager, then
    graph), each with a rich progress bar showing step and loss unless ``quiet`` or the console
    is not a terminal; the runs."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    runs = []
    for m in (("eager", "graph") if mode == "both" else (mode,)):
        if quiet or not console.is_terminal:  # a pipe or a log gets the summary only
            runs.append(train(m, steps, seed))
            continue
        with Progress(TextColumn(f"{m:>5}"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("loss {task.fields[loss]:.4f}"), TimeElapsedColumn(),
                      console=console, transient=False) as bar:
            task = bar.add_task(m, total=steps, loss=float("nan"))

            def on_step(i: int, loss: float, bar=bar, task=task) -> None:
                bar.update(task, completed=i, loss=loss)

            runs.append(train(m, steps, seed, on_step=on_step))
    return runs


def main(argv: Sequence[str] | None, *, name: str, train: TrainFn, steps: int,
         target: float, doc: str) -> int:
    """The examples' command line: ``--mode eager|graph|both``, ``--steps``, ``--seed``,
    ``--quiet`` (no progress bar). Prints a summary table; returns 1 when a mode's test
    accuracy is below ``target``."""
    from rich.console import Console
    from rich.table import Table

    ap = argparse.ArgumentParser(prog=name, description=doc.split("\n\n")[0])
    ap.add_argument("--mode", choices=("eager", "graph", "both"), default="both")
    ap.add_argument("--steps", type=int, default=steps, help=f"SGD steps (default {steps})")
    ap.add_argument("--seed", type=int, default=0, help="initial weights and batch order")
    ap.add_argument("--quiet", action="store_true", help="no progress bar, only the summary")
    args = ap.parse_args(argv)
    console = Console()
    runs = train_modes(train, args.mode, args.steps, args.seed, args.quiet, console)
    table = Table(title=f"{name}: target test accuracy >= {target:.2f} in {args.steps} steps")
    for col in ("mode", "steps", "final loss", "test accuracy", "wall time", "target"):
        table.add_column(col, justify="left" if col == "mode" else "right")
    for r in runs:
        table.add_row(r.mode, str(r.steps), f"{r.final_loss:.4f}", f"{r.test_accuracy:.4f}",
                      f"{r.seconds:.2f} s", "met" if r.test_accuracy >= target else "MISSED")
    console.print(table)
    return 0 if all(r.test_accuracy >= target for r in runs) else 1
