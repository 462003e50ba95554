"""A compiled call's own cost, in thread CPU time per call (issue 23, the MLP forward's last
percent): what ``f(*args)`` spends outside its kernels.

Two programs, each called ``--calls`` times in blocks of 1,000 (median and best of the blocks'
per-call means):

* ``add4``: one ``broadcast_add`` on 4 f32 elements (its bound kernel alone is timed beside
  it, and ``np.add(x, y)`` allocating its result, for scale);
* ``mlp no-op``: ``examples/mlp.mlir`` (5 arguments, 4 launches, one result) with every
  launch's kernel replaced by one that does nothing, so what is left is the call itself:
  the argument check, the result's allocation, the lock and the launch loop.

Run it once per tree to compare (``TDFLOW_TREE`` picks the tree with the finder shim)::

    TDFLOW_ENGINE=naive python bench/call_overhead_bench.py [--calls 100000]
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

ADD4 = """func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "tdflow.broadcast_add"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}"""


def per_call(fn: Callable[[], object], calls: int, block: int = 1000) -> tuple[float, float]:
    """``(median, best)`` over blocks of ``block`` calls of the mean thread CPU per call, us.

    >>> med, best = per_call(lambda: None, 2000)
    >>> 0 <= best <= med
    True
    """
    clk = time.thread_time_ns
    times = []
    for _ in range(max(1, calls // block)):
        t = clk()
        for _ in range(block):
            fn()
        times.append((clk() - t) / block / 1e3)
    times.sort()
    return times[len(times) // 2], times[0]


def _no_op_kernels(f: object) -> None:
    """Replace every launch's kernel of ``f``'s plan by one that fills nothing (in place:
    the call path holds these lists)."""
    ex = f.executor  # type: ignore[attr-defined]

    def noop(attrs: object, ins: object, outs: object) -> object:
        return outs

    for name in ("_steps", "_plain_steps"):  # the latter only where the tree has it
        steps = getattr(ex, name, None)
        if steps is not None:
            steps[:] = [(noop, *s[1:]) for s in steps]


def run(calls: int) -> dict[str, tuple[float, float]]:
    """``{case: (median, best)}`` in us per call."""
    import runtime_bench as rb

    import tdflow

    out = {}
    add = tdflow.compile(ADD4)
    x, y = np.arange(4, dtype=np.float32), np.ones(4, np.float32)
    assert add(x, y).tolist() == [1.0, 2.0, 3.0, 4.0]
    fn, attrs, ins, outs = add.executor._steps[0][:4]
    ins, outs = [x, y], [np.empty(4, np.float32)]
    out["add4 f(x, y)"] = per_call(lambda: add(x, y), calls)
    out["add4 kernel alone"] = per_call(lambda: fn(attrs, ins, outs), calls)
    out["np.add(x, y)"] = per_call(lambda: np.add(x, y), calls)
    mlp = tdflow.compile(rb.ROOT / "examples" / "mlp.mlir")
    args = rb.random_args(mlp, np.random.default_rng(0))
    mlp(*args)
    _no_op_kernels(mlp)
    out["mlp no-op f(*args)"] = per_call(lambda: mlp(*args), calls)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=100_000, help="calls per case (default 100000)")
    args = ap.parse_args()
    for case, (med, best) in run(args.calls).items():
        print(f"{case:20s} median {med:.3f} us  best {best:.3f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
