"""The MLP training step of ``bench/train_bench.py`` timed in CPU time of the calling thread.

On a machine shared with other jobs, wall-clock medians of a whole step measure the
scheduler; the CPU time the step's own thread spends does not. Run it with the synchronous
engine so that every op runs on that thread (the threaded engine would run large ones on a
worker, outside the count)::

    TDFLOW_ENGINE=naive python bench/train_cpu_bench.py [--steps 60]

Columns take turns step by step; prints best and median per column and their ratio to torch
(when ``import torch`` works; it is not a dependency), with BLAS and torch on one thread.
With ``--graph``, the numpy step and the graph-mode columns of ``train_bench.py``
(``sgd_step``; ``value_and_grad`` + numpy update; the latter with ``mode="direct"``), each
with its ratio to the numpy step measured in the same rounds (issue 23: graph step <= 1.0x
numpy). With ``--forward``, the compiled MLP forward of ``runtime_bench.py`` against its
numpy expression, alternating call by call as ``runtime_bench.py`` does (issue 23: <= 1.0x).
Both leave torch and eager out: between their steps a plan's buffers go cold while numpy's
fresh arrays reuse memory the column before just freed (measured: the forward at 1.2x numpy
when timed between torch and eager steps, 1.0-1.03x on its own).

The order of the columns counts (the machine's L2 is 1 MiB a core, the step's working set about
2 MiB): by default every step runs them in the same order, so ``sgd_step`` always runs right
after numpy's step. ``--rotate`` turns the order by one each step (with four columns
``sgd_step`` still follows numpy in three steps of four); ``--shuffle`` draws a random order
each step (seeded), so every column follows every other alike; ``--block N`` runs N steps of a
column in a row (the first of each block not counted), as a training loop runs its step: each
column then follows itself. docs/benchmarks.md (helper xent, fourth session) compares them.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import train_bench as tb  # noqa: E402


def graph_columns(x: np.ndarray, y: np.ndarray, params: dict[str, np.ndarray]
                  ) -> dict[str, Callable[[], object]]:
    """The graph-mode steps, as zero-argument calls."""
    return {"graph": tb.sgd_step_column(x, y, params)[1],
            "graph vg+np": tb.graph_column(x, y, params)[1],
            "graph direct": tb.graph_column(x, y, params, mode="direct")[1]}


def forward_columns() -> dict[str, Callable[[], object]]:
    """The compiled MLP forward of ``runtime_bench.py`` and its numpy expression."""
    import runtime_bench as rb

    import tdflow

    cols = {}
    fwd = tdflow.compile(rb.ROOT / "examples" / "mlp.mlir")
    args = rb.random_args(fwd, np.random.default_rng(0))
    np.testing.assert_allclose(fwd(*args), rb.mlp_numpy(*args), rtol=2e-4, atol=1e-5)
    cols["forward"] = lambda: fwd(*args)
    cols["forward numpy"] = lambda: rb.mlp_numpy(*args)
    return cols


def launch_counts(forward: bool) -> dict[str, tuple[int, int]]:
    """``{program: (launches per call, prologue launches run once at load)}`` of the plans
    the ``--graph`` (or ``--forward``) columns run."""
    import runtime_bench as rb

    import tdflow

    if forward:
        progs = {"forward": tdflow.compile(rb.ROOT / "examples" / "mlp.mlir")}
    else:
        wrt = list(tb.PARAMS)
        progs = {"sgd_step": tdflow.sgd_step(tb.program(), lr=tb.LR, wrt=wrt).program,
                 "value_and_grad": tdflow.value_and_grad(tb.program(), wrt=wrt).program}
    return {k: (len(p.plan.launches), len(p.plan.prologue)) for k, p in progs.items()}


#: Each column's reference for the printed ratio (the others: torch, when present).
REFERENCE = {"graph": "numpy", "graph vg+np": "numpy", "graph direct": "numpy",
             "forward": "forward numpy"}


def run(steps: int = 60, graph: bool = False, forward: bool = False, rotate: bool = False,
        shuffle: bool = False, block: int = 1) -> dict[str, tuple[float, float]]:
    """``{column: (best, median)}`` in seconds of thread CPU time per step; with ``rotate``
    the columns' order turns by one each step, so no column always runs right after the same
    one (the column after numpy's step measured 2-4% slower than the same step timed last)."""
    from tdflow.runtime.kernels._blas import set_blas_threads

    x, y, params = tb.make_data(0)
    torch_col = None
    if forward:
        cols = forward_columns()
    elif graph:
        cols = {"numpy": tb.numpy_column(x, y, params)[1], **graph_columns(x, y, params)}
    else:
        cols = {"eager": tb.eager_column(x, y, params)[1],
                "numpy": tb.numpy_column(x, y, params)[1]}
        torch_col = tb.torch_column(x, y, params)
    if torch_col is not None:
        import torch

        torch.set_num_threads(1)
        cols["torch"] = torch_col[1]
    set_blas_threads(1)
    for step in cols.values():  # warm: caches, traces, first allocations
        step()
        step()
    times: dict[str, list[float]] = {k: [] for k in cols}
    order = list(cols.items())
    rng = np.random.default_rng(0)
    for i in range(-(-steps // block)):
        turn = i % len(order) if rotate else 0
        now = order[turn:] + order[:turn]
        if shuffle:
            now = [order[j] for j in rng.permutation(len(order))]
        for k, step in now:
            for j in range(block + (block > 1)):  # a block's first step is not counted
                t0 = time.thread_time()
                step()
                if j or block == 1:
                    times[k].append(time.thread_time() - t0)
    return {k: (min(v), float(np.median(v))) for k, v in times.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--graph", action="store_true",
                    help="also the graph-mode steps, against the numpy step")
    ap.add_argument("--forward", action="store_true",
                    help="only the compiled MLP forward against its numpy expression")
    ap.add_argument("--rotate", action="store_true",
                    help="turn the columns' order by one each step (no fixed neighbours)")
    ap.add_argument("--shuffle", action="store_true",
                    help="a random order of the columns each step (seeded)")
    ap.add_argument("--block", type=int, default=1,
                    help="steps each column runs in a row before the next column's turn")
    args = ap.parse_args(argv)
    res = run(args.steps, args.graph, args.forward, args.rotate, args.shuffle, args.block)
    for k, (best, med) in res.items():
        name = REFERENCE.get(k, "torch")
        ref = res.get(name)
        ratio = (f"  vs {name} {best / ref[0]:.3f}x / {med / ref[1]:.3f}x"
                 if ref and k != name else "")
        print(f"{k:13s} best {best * 1e3:.3f} ms  median {med * 1e3:.3f} ms{ratio}")
    if args.graph or args.forward:
        print("launches: " + ", ".join(f"{k} {n} (+{pro} at load)" for k, (n, pro)
                                       in launch_counts(args.forward).items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
