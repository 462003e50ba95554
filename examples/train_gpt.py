"""Train a small GPT character by character on the Zen of Python, eagerly and compiled.

    python examples/train_gpt.py                     # eager mode, then graph mode, then a sample
    python examples/train_gpt.py --mode graph --steps 200 --quiet --prompt "Errors "
    python examples/train_gpt.py --nproc 2 --quiet       # 2 thread ranks: tensor-parallel MLP
    python examples/train_gpt.py --nproc 4 --tensor-parallel 2 --quiet   # 2x2: data x tensor
    tdflow launch -n 2 examples/train_gpt.py --nproc 2   # the same over MPI processes

The text is the one ``import this`` prints (it ships with Python; read here without printing
it); the vocabulary is its characters. Each step trains on :data:`CONFIG`'s batch of random
windows of the text (inputs ``text[i:i + context]``, targets one character on) with Adam
(tdflow's ``adam_update``, OneFlow's op, updating parameters and moments in place).

Target: the mean loss of the last 10 steps below 1.5 nats per character within 250 steps,
else exit status 1 (from ln(vocab) = 3.8 at the start; both modes reach 0.84-0.98 for seeds
0-5, in about 3 s in graph mode and 6 s eagerly on two cores). Both modes start from the
same weights (``gpt.init_params``) and see the same windows:

* **eager**: the model on ``tdflow.functional`` with autograd (``loss.backward()``), then
  ``adam_update`` of each parameter under ``no_grad()``;
* **graph**: ``tdflow.value_and_grad`` of ``gpt.program(CONFIG)`` (the same ops as MLIR,
  compiled with their gradient into one plan), then the same ``adam_update`` on the arrays.

The gradients are the same bit for bit, so are the two runs (``tests/e2e/test_gpt.py``).

``--nproc N`` trains graph mode on N ranks (threads, or the MPI job under ``tdflow launch``)
with ``--tensor-parallel T`` (default 2 when N is even): the placement is the mesh
``[N / T, T]``, the batch is split over its first axis and every MLP block is Megatron-split
over its second, written as SBP on the program's arguments (``gpt.sbp_program``) and lowered
by ``infer-sbp`` (:class:`Distributed`). Every rank gets the logical gradients and runs the
same Adam step; in float64 the losses equal one process's to 1e-12
(``tests/distributed/test_train_gpt.py``).
:func:`sample` then continues a prompt with the trained model (greedy, or seeded sampling at
a temperature).
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import functools
import io
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np

if __package__ in (None, ""):  # run as a script: gpt.py lies next to this file
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import digits  # noqa: E402 - its train_modes: the progress loop the examples share
import gpt  # noqa: E402

import tdflow  # noqa: E402

F = tdflow.functional
Tensor = tdflow.Tensor
STEPS = 250
TARGET = 1.5
LEARNING_RATE = 5e-3
BETA1, BETA2, ADAM_EPSILON = 0.9, 0.99, 1e-8


@lru_cache(maxsize=1)
def zen() -> str:
    """The Zen of Python, as ``import this`` prints it (without printing it).

    >>> zen().splitlines()[0]
    'The Zen of Python, by Tim Peters'
    """
    with contextlib.redirect_stdout(io.StringIO()):
        import this
    return codecs.decode(this.s, "rot13")


@dataclass(frozen=True)
class Vocab:
    """The characters of a text, sorted; a character's id is its place.

    >>> v = Vocab.of("abca")
    >>> v.chars, v.encode("cab").tolist(), v.decode([2, 0])
    ('abc', [2, 0, 1], 'ca')
    """

    chars: str

    @classmethod
    def of(cls, text: str) -> Vocab:
        return cls("".join(sorted(set(text))))

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> np.ndarray:
        index = {c: i for i, c in enumerate(self.chars)}
        missing = sorted(set(text) - set(index))
        if missing:
            raise ValueError(f"characters not in the vocabulary: {''.join(missing)!r}")
        return np.array([index[c] for c in text], np.int64)

    def decode(self, ids: Sequence[int] | np.ndarray) -> str:
        return "".join(self.chars[int(i)] for i in ids)


VOCAB = Vocab.of(zen())
CONFIG = gpt.Config(batch=16, context=32, layers=2, width=32, heads=2, vocab=len(VOCAB))


def windows(data: np.ndarray, batch: int, context: int, seed: int) -> Iterator[
        tuple[np.ndarray, np.ndarray]]:
    """Endless batches of random windows: ``(tokens, targets)``, both ``[batch, context]``
    int64, targets one position on from tokens."""
    rng = np.random.default_rng(seed)
    offsets = np.arange(context)
    while True:
        starts = rng.integers(0, len(data) - context, size=batch)[:, None]
        yield data[starts + offsets], data[starts + offsets + 1]


# --- optimizer: Adam, as tdflow's adam_update (in place) -----------------------------------

class Adam:
    """Adam's moments for each parameter and OneFlow's bias corrections per step; ``update``
    runs ``adam_update`` on tensors sharing the parameters' memory."""

    def __init__(self, params: dict[str, Tensor], lr: float = LEARNING_RATE) -> None:
        self.params = params
        self.lr = lr
        self.m = {k: tdflow.tensor(np.zeros_like(p.numpy())) for k, p in params.items()}
        self.v = {k: tdflow.tensor(np.zeros_like(p.numpy())) for k, p in params.items()}
        self.t = 0

    def update(self, grads: dict[str, Tensor]) -> None:
        self.t += 1
        # The bias corrections change every step: as one-element operands (OneFlow's
        # bias_correction1/2 tensors) rather than attributes, so every step's calls hit the
        # op's cached inference and kernel (an attribute value is part of that cache's key).
        # float32, as the f32 attributes would hold them: the same bits either way.
        bc1 = tdflow.tensor(np.float32(1 - BETA1 ** self.t))
        bc2 = tdflow.tensor(np.float32(1 - BETA2 ** self.t))
        with tdflow.no_grad():
            for k, p in self.params.items():
                F.adam_update(p, grads[k], m=self.m[k], v=self.v[k], bias_correction1=bc1,
                              bias_correction2=bc2, learning_rate_val=self.lr,
                              beta1=BETA1, beta2=BETA2, epsilon=ADAM_EPSILON)


# --- the two modes ---------------------------------------------------------------------------

class Stepper(Protocol):
    """One model in one mode: ``step`` updates its parameters, ``params`` reads them."""

    def step(self, tokens: np.ndarray, targets: np.ndarray) -> float: ...

    def params(self) -> dict[str, np.ndarray]: ...


class Eager:
    """``gpt.Eager`` (autograd) and Adam."""

    def __init__(self, params: dict[str, np.ndarray], cfg: gpt.Config = CONFIG) -> None:
        self.model = gpt.Eager(params, cfg)
        self.adam = Adam(self.model.p)

    def grads(self, tokens: np.ndarray, targets: np.ndarray) -> tuple[float, dict[str, Any]]:
        return self.model.grads(tokens, targets)

    def step(self, tokens: np.ndarray, targets: np.ndarray) -> float:
        loss, _ = self.grads(tokens, targets)
        self.adam.update({k: p.grad for k, p in self.model.p.items()})
        return loss

    def params(self) -> dict[str, np.ndarray]:
        return {k: p.numpy().copy() for k, p in self.model.p.items()}


class Graph:
    """``value_and_grad`` of ``gpt.program(cfg)`` and Adam on the parameter arrays (float32,
    or the dtype of ``params``)."""

    def __init__(self, params: dict[str, np.ndarray], cfg: gpt.Config = CONFIG) -> None:
        self.p = {k: v.copy() for k, v in params.items()}
        self.value_and_grad = tdflow.value_and_grad(self.program(cfg), wrt=list(self.p))
        self.adam = Adam({k: Tensor.from_numpy(v) for k, v in self.p.items()})

    def program(self, cfg: gpt.Config) -> str:
        text = gpt.program(cfg)
        return text if self.dtype == "f32" else text.replace("f32", self.dtype)

    @property
    def dtype(self) -> str:
        return "f64" if next(iter(self.p.values())).dtype == np.float64 else "f32"

    def grads(self, tokens: np.ndarray, targets: np.ndarray) -> tuple[float, dict[str, Any]]:
        loss, grads = self.value_and_grad(tokens, targets, *self.p.values())
        return float(loss), dict(zip(self.p, grads))

    def step(self, tokens: np.ndarray, targets: np.ndarray) -> float:
        loss, grads = self.grads(tokens, targets)
        self.adam.update({k: Tensor.from_numpy(g) for k, g in grads.items()})
        return loss

    def params(self) -> dict[str, np.ndarray]:
        return {k: v.copy() for k, v in self.p.items()}


class Distributed(Graph):
    """Graph mode on ``dp * tp`` ranks: ``tdflow.distributed.value_and_grad`` of
    ``gpt.sbp_program(cfg, (dp, tp))`` (batch split over ``dp``, MLP Megatron-split over
    ``tp``), called with the logical batch and parameters on every rank (or, outside any
    rank, on thread ranks); every rank gets the logical loss and gradients and takes the
    same Adam step."""

    def __init__(self, params: dict[str, np.ndarray], cfg: gpt.Config = CONFIG,
                 hierarchy: tuple[int, int] = (1, 2)) -> None:
        import tdflow.distributed as dist

        self.p = {k: v.copy() for k, v in params.items()}
        nproc = hierarchy[0] * hierarchy[1]
        self.value_and_grad = dist.value_and_grad(gpt.sbp_program(cfg, hierarchy, self.dtype),
                                                  nproc, wrt=list(self.p))
        self.adam = Adam({k: Tensor.from_numpy(v) for k, v in self.p.items()})


MODES: dict[str, Callable[..., Stepper]] = {"eager": Eager, "graph": Graph}


@dataclass(frozen=True)
class Run:
    """What one training run reached, and the parameters it ended with."""

    mode: str
    steps: int
    losses: tuple[float, ...]
    seconds: float
    params: dict[str, np.ndarray]

    @property
    def final_loss(self) -> float:
        """Mean loss of the last 10 steps (one batch's loss is noisy)."""
        tail = self.losses[-10:]
        return float(sum(tail) / len(tail))


def train(mode: str, steps: int = STEPS, seed: int = 0, cfg: gpt.Config = CONFIG,
          on_step: Callable[[int, float], None] | None = None, nproc: int = 1,
          tensor_parallel: int | None = None, dtype: Any = np.float32) -> Run:
    """Train from ``gpt.init_params(cfg, seed)`` (in ``dtype``) for ``steps`` Adam steps in
    ``mode`` (eager or graph) on windows of the Zen drawn from ``seed``; ``nproc > 1``:
    graph mode on the mesh ``[nproc / tensor_parallel, tensor_parallel]`` (:class:`Distributed`)."""
    params = {k: v.astype(dtype) for k, v in gpt.init_params(cfg, seed).items()}
    if nproc > 1:
        if mode != "graph":
            raise SystemExit(f"train_gpt: --nproc runs graph mode only, not {mode}")
        tp = tensor_parallel or (2 if nproc % 2 == 0 else 1)
        if nproc % tp:
            raise SystemExit(f"train_gpt: --tensor-parallel {tp} does not divide --nproc {nproc}")
        stepper: Stepper = Distributed(params, cfg, (nproc // tp, tp))
    else:
        stepper = MODES[mode](params, cfg)
    it = windows(VOCAB.encode(zen()), cfg.batch, cfg.context, seed)
    losses = []
    t0 = time.perf_counter()
    for i in range(steps):
        losses.append(stepper.step(*next(it)))
        if on_step is not None:
            on_step(i + 1, losses[-1])
    label = mode if nproc == 1 else f"{mode}, {nproc} ranks"
    return Run(label, steps, tuple(losses), time.perf_counter() - t0, stepper.params())


def sample(params: dict[str, np.ndarray], prompt: str, length: int, cfg: gpt.Config = CONFIG,
           temperature: float = 0.0, seed: int = 0) -> str:
    """``length`` characters continuing ``prompt``: each the most likely next one
    (``temperature`` 0) or drawn, from ``seed``, from the softmax of the scores divided by
    ``temperature``. The model sees the last ``cfg.context`` characters.

    >>> text = sample(gpt.init_params(CONFIG, 0), "Beautiful", 12, temperature=1.0)
    >>> len(text), set(text) <= set(VOCAB.chars)
    (12, True)
    """
    model = gpt.Eager(params, cfg)
    rng = np.random.default_rng(seed)
    ids = list(VOCAB.encode(prompt)) or [int(VOCAB.encode("\n")[0])]
    for _ in range(length):
        window = np.array([ids[-cfg.context:]], np.int64)
        scores = model.logits(window)[0, -1].astype(np.float64)
        if temperature <= 0:
            ids.append(int(np.argmax(scores)))
            continue
        z = scores / temperature
        prob = np.exp(z - z.max())
        ids.append(int(rng.choice(len(prob), p=prob / prob.sum())))
    return VOCAB.decode(ids[len(ids) - length:])


def main(argv: Sequence[str] | None = None) -> int:
    """``--mode eager|graph|both``, ``--steps``, ``--seed``, ``--quiet`` (no progress bar),
    ``--prompt``/``--length``/``--temperature`` for the sample. Prints a summary table and
    a sample of the last run's model; returns 1 when a mode misses :data:`TARGET`."""
    from rich.console import Console
    from rich.table import Table

    ap = argparse.ArgumentParser(prog="train_gpt", description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", choices=("eager", "graph", "both"), default="both")
    ap.add_argument("--steps", type=int, default=STEPS, help=f"Adam steps (default {STEPS})")
    ap.add_argument("--seed", type=int, default=0, help="initial weights and windows")
    ap.add_argument("--quiet", action="store_true", help="no progress bar, only the summary")
    ap.add_argument("--prompt", default="Beautiful is ", help="text the sample continues")
    ap.add_argument("--length", type=int, default=120, help="characters to sample")
    ap.add_argument("--temperature", type=float, default=0.0, help="0: greedy")
    ap.add_argument("--nproc", type=int, default=1,
                    help="ranks (graph mode): threads, or the MPI job under tdflow launch")
    ap.add_argument("--tensor-parallel", type=int, default=None, metavar="T",
                    help="ranks of the MLP's tensor-parallel axis (default 2 when --nproc is "
                         "even); the batch is split over the other nproc / T")
    args = ap.parse_args(argv)
    if args.nproc > 1 and args.mode == "both":
        args.mode = "graph"
    from tdflow.distributed import rank

    console = Console(file=io.StringIO()) if rank() != 0 else Console()  # rank 0 reports
    train_fn = functools.partial(train, nproc=args.nproc, tensor_parallel=args.tensor_parallel)
    runs = digits.train_modes(train_fn, args.mode, args.steps, args.seed, args.quiet, console)
    table = Table(title=f"train_gpt ({CONFIG.layers} layers, width {CONFIG.width}, "
                        f"{CONFIG.heads} heads, context {CONFIG.context}, batch "
                        f"{CONFIG.batch}, Adam): target loss < {TARGET} in {args.steps} steps")
    for col in ("mode", "steps", "first loss", "final loss", "wall time", "ms/step", "target"):
        table.add_column(col, justify="left" if col == "mode" else "right")
    for r in runs:
        table.add_row(r.mode, str(r.steps), f"{r.losses[0]:.4f}", f"{r.final_loss:.4f}",
                      f"{r.seconds:.2f} s", f"{1000 * r.seconds / max(r.steps, 1):.1f}",
                      "met" if r.final_loss < TARGET else "MISSED")
    console.print(table)
    text = sample(runs[-1].params, args.prompt, args.length, temperature=args.temperature,
                  seed=args.seed)
    console.print(f"sample ({runs[-1].mode} mode's model): ", end="")
    console.print(args.prompt + text, markup=False, highlight=False)
    return 0 if all(r.final_loss < TARGET for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
