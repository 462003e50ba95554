"""Train a 64->256->10 perceptron on scikit-learn's 8x8 digits, eagerly and compiled.

    pip install -e '.[examples]'               # scikit-learn, for the digits
    python examples/train_mlp.py               # eager mode, then graph mode
    python examples/train_mlp.py --mode graph --steps 300 --seed 1 --quiet
    python examples/train_mlp.py --nproc 2 --quiet            # data parallel, 2 thread ranks
    tdflow launch -n 2 examples/train_mlp.py --nproc 2        # the same over MPI

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

``--nproc N`` trains data-parallel in graph mode (:class:`DataParallel`): the program's
images and labels are ``S(0)`` (OneFlow's SBP), ``infer-sbp`` derives the rest (each rank its
rows of the global batch of 64; the loss and the gradients partial sums, summed over the
ranks), so N ranks follow the single-process losses (``tests/distributed/test_train_mlp.py``).
Without ``mpiexec`` the ranks are threads.
"""

from __future__ import annotations

import functools
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


def init_params(seed: int, dtype: Any = np.float32) -> dict[str, np.ndarray]:
    """He-initialised weights and zero biases, float32 (or ``dtype``), from ``seed``."""
    rng = np.random.default_rng(seed)
    return {
        "w1": (rng.standard_normal((64, HIDDEN)) * np.sqrt(2 / 64)).astype(dtype),
        "b1": np.zeros(HIDDEN, dtype),
        "w2": (rng.standard_normal((HIDDEN, 10)) * np.sqrt(1 / HIDDEN)).astype(dtype),
        "b2": np.zeros(10, dtype),
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

def program(batch: int, loss: bool = True, dtype: str = "f32", mean_over: int | None = None,
            split_batch: bool = False) -> str:
    """The model as MLIR text for ``batch`` images: the mean loss (``loss``) or the logits;
    ``dtype`` of the floats; ``mean_over`` the count the summed loss is divided by (default
    ``batch``); ``split_batch``: the images and labels carry OneFlow's SBP ``S(0)`` (the
    data-parallel program: ``infer-sbp`` derives the rest, parameters stay broadcast).

    >>> "%x: tensor<64x64xf32> {sbp = [#sbp.S<0>]}" in program(64, split_batch=True)
    True
    """
    text = _program(batch, loss, 1.0 / (mean_over or batch), split_batch)
    return text if dtype == "f32" else text.replace("f32", dtype)


def _program(batch: int, loss: bool, scale: float, split_batch: bool = False) -> str:
    n, h = batch, HIDDEN
    s = " {sbp = [#sbp.S<0>]}" if split_batch else ""
    head = (f"func.func @mlp(%x: tensor<{n}x64xf32>{s}, %labels: tensor<{n}xi64>{s}, "
            if loss else f"func.func @mlp(%x: tensor<{n}x64xf32>{s}, ")
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
            f'  %6 = "tdflow.scalar_mul"(%5) {{has_float_operand = true, float_operand = {scale!r} : f64}} : (tensor<f32>) -> tensor<f32>',
            "  return %6 : tensor<f32>",
        ]
    else:
        lines.append(f"  return %4 : tensor<{n}x10xf32>")
    return "\n".join(lines + ["}", ""])


class Graph(digits.GraphSGD):
    """The MLP in graph mode: :func:`program`'s loss and its gradient compiled into one plan."""

    def __init__(self, params: dict[str, np.ndarray], lr: float = digits.LEARNING_RATE) -> None:
        super().__init__(program, PARAMS, params, lr)


class DataParallel(Graph):
    """Graph mode on the calling rank of a data-parallel group: the program's batch is
    ``S(0)`` (:func:`program` with ``split_batch``), ``tdflow.distributed.value_and_grad``
    lowers it with ``infer-sbp`` (parameters broadcast, their gradients partial sums, summed
    over the ranks), and every rank gets the logical loss and gradients."""

    def __init__(self, params: dict[str, np.ndarray], lr: float = digits.LEARNING_RATE,
                 dtype: str = "f32") -> None:
        import tdflow.distributed as dist

        self.comm = dist.current()
        self.program = functools.partial(program, dtype=dtype)
        np_dtype = np.dtype({"f32": "float32", "f64": "float64"}[dtype])
        self.names, self.inputs = PARAMS, (lambda x: x.astype(np_dtype, copy=False))
        self.p = {k: v.copy() for k, v in params.items()}
        self.lr = np.float32(lr)
        self.value_and_grad = dist.value_and_grad(
            program(digits.BATCH, dtype=dtype, split_batch=True), self.comm.size,
            wrt=list(PARAMS))
        self._logits: dict[int, Callable[..., np.ndarray]] = {}

    def grads(self, x: np.ndarray, y: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
        loss, grads = self.value_and_grad(self.inputs(x), y, *self.p.values())
        return float(loss), dict(zip(self.names, grads))


MODES = {"eager": Eager, "graph": Graph}


def train(mode: str, steps: int = STEPS, seed: int = 0,
          on_step: Callable[[int, float], None] | None = None, nproc: int = 1,
          dtype: str = "f32") -> digits.Run:
    """Train from ``init_params(seed)`` for ``steps`` steps in ``mode`` (eager or graph);
    ``nproc > 1``: graph mode, data parallel on that many ranks (the MPI job's, or threads).
    The run of rank 0 is returned."""
    params = init_params(seed, np.dtype({"f32": "float32", "f64": "float64"}[dtype]))
    if nproc == 1 and dtype == "f32":
        return digits.fit(mode, MODES[mode](params), steps, seed, on_step)
    if mode != "graph":
        raise SystemExit(f"train_mlp: --nproc runs graph mode only, not {mode}")
    from tdflow.distributed import current, run_threads

    def rank_run(_rank: int = 0) -> digits.Run:
        return digits.fit(mode, DataParallel(params, dtype=dtype), steps, seed,
                          on_step if current().rank == 0 else None)

    if current().size == nproc:  # already on a rank of a group this size (mpiexec)
        return rank_run()
    return run_threads(rank_run, nproc)[0]


def main(argv: list[str] | None = None) -> int:
    import argparse
    import contextlib
    import os

    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--nproc", type=int, default=1)
    known, rest = ap.parse_known_args(argv)
    if known.nproc > 1 and not any(a.startswith("--mode") for a in rest):
        rest += ["--mode", "graph"]
    run = functools.partial(train, nproc=known.nproc)
    quiet = contextlib.nullcontext()
    from tdflow.distributed import rank

    if rank() != 0:  # under mpiexec only rank 0 reports
        quiet = contextlib.redirect_stdout(open(os.devnull, "w"))  # noqa: SIM115
    with quiet:
        return digits.main(rest, name="train_mlp", train=run, steps=STEPS, target=TARGET,
                           doc=__doc__)


if __name__ == "__main__":
    sys.exit(main())
