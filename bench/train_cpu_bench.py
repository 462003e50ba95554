"""The MLP training step of ``bench/train_bench.py`` timed in CPU time of the calling thread.

On a machine shared with other jobs, wall-clock medians of a whole step measure the
scheduler; the CPU time the step's own thread spends does not. Run it with the synchronous
engine so that every op runs on that thread (the threaded engine would run large ones on a
worker, outside the count)::

    TDFLOW_ENGINE=naive python bench/train_cpu_bench.py [--steps 60]

Columns take turns step by step; prints best and median per column and their ratio to torch
(when ``import torch`` works; it is not a dependency), with BLAS and torch on one thread.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import train_bench as tb  # noqa: E402


def run(steps: int = 60) -> dict[str, tuple[float, float]]:
    """``{column: (best, median)}`` in seconds of thread CPU time per step."""
    from tdflow.runtime.kernels._blas import set_blas_threads

    x, y, params = tb.make_data(0)
    cols = {"eager": tb.eager_column(x, y, params)[1], "numpy": tb.numpy_column(x, y, params)[1]}
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
    for _ in range(steps):
        for k, step in cols.items():
            t0 = time.thread_time()
            step()
            times[k].append(time.thread_time() - t0)
    return {k: (min(v), float(np.median(v))) for k, v in times.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=60)
    args = ap.parse_args(argv)
    res = run(args.steps)
    ref = res.get("torch")
    for k, (best, med) in res.items():
        ratio = f"  vs torch {best / ref[0]:.2f}x / {med / ref[1]:.2f}x" if ref else ""
        print(f"{k:6s} best {best * 1e3:.3f} ms  median {med * 1e3:.3f} ms{ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
