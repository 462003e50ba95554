"""Fused elementwise kernels block by block against whole arrays and the numpy expression.

    python bench/fused_bench.py            # the 6-op chain of bench/runtime_bench.py, 1M f32

Columns, taking turns round by round in one process (medians): ``numpy`` the hand-written
numpy expression; ``kernel segments`` the chain's fused kernel (``render_numpy`` of the
composed expression: native C segments around numpy's ``tanh``, in blocks,
``lowering/elementwise_segments.py``); ``kernel whole`` / ``kernel blocks`` the same kernel
with the segments off and ``elementwise_blocks.USE_BLOCKS`` off / on (numpy ufuncs only: the
kernel as before the segments); ``graph segments`` / ``graph whole`` / ``graph blocks`` the
compiled program (``tdflow.compile`` of runtime_bench's CHAIN, fused into one launch) with the
same switches, and ``graph tiled`` the graph as before the segments (numpy ufuncs, the launch
cut into the executor's 64K-element tiles, as ``plan-memory`` did: ``{tile_fused=true}``). The issue's target for the
chain is <= 0.7x the numpy expression.

    python bench/fused_bench.py --others  # also: gelu, gelu_grad (1M f32), the GPT graph step

``--others`` times other work the segments change, with them on and off in the same process:
the ``gelu``/``gelu_grad`` kernels (erf between exact ops) and ``bench/model_bench.py``'s GPT
graph step (its GELU, softmax and layer-norm fused expressions).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from tdflow.dialect.formula.expr import Const, Input, Unary, maximum
from tdflow.lowering import elementwise_blocks, elementwise_segments
from tdflow.lowering.elementwise_numpy import render_numpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
#: --cpu: time.process_time (this process's CPU time, all threads) instead of wall time: on a
#: machine shared with other jobs it is the steadier measure of the work itself.
CPU_TIME = False


def _switch(on: bool, fn: Callable[[], Any], segments: bool = False) -> Callable[[], Any]:
    def run() -> Any:
        elementwise_blocks.USE_BLOCKS = on
        elementwise_segments.USE_SEGMENTS = segments
        try:
            return fn()
        finally:
            elementwise_blocks.USE_BLOCKS = True
            elementwise_segments.USE_SEGMENTS = True
    return run


def columns(n: int = 1 << 20) -> dict[str, Callable[[], Any]]:
    """The chain ``square(relu(tanh(x * y + x) * 0.5))`` in each column."""
    import runtime_bench

    import tdflow

    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = np.empty_like(x)
    e = maximum(Unary("tanh", Input(0) * Input(1) + Input(0)) * 0.5, Const(0.0))
    prog = render_numpy(e * e, ["f32", "f32"], "f32")
    cols = {"numpy": lambda: runtime_bench.chain_numpy(x, y),
            "kernel segments": _switch(True, lambda: prog([x, y], out), segments=True),
            "kernel whole": _switch(False, lambda: prog([x, y], out)),
            "kernel blocks": _switch(True, lambda: prog([x, y], out))}
    if n == 1 << 20:
        from tdflow.lowering.pass_manager import default_pipeline

        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "chain.mlir"
            path.write_text(runtime_bench.CHAIN)
            fn = tdflow.compile(str(path))
            tiled = tdflow.compile(str(path), pipeline=default_pipeline("cpu").replace(
                "plan-memory", "plan-memory{tile_fused=true}"))
        assert np.array_equal(fn(x, y), prog([x, y]))
        cols["graph segments"] = _switch(True, lambda: fn(x, y), segments=True)
        cols["graph whole"] = _switch(False, lambda: fn(x, y))
        cols["graph blocks"] = _switch(True, lambda: fn(x, y))
        assert np.array_equal(tiled(x, y), prog([x, y]))
        assert [ln.tile for ln in tiled.plan.launches] == [65536]
        cols["graph tiled"] = _switch(True, lambda: tiled(x, y))
    return cols


def timed(cols: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    for fn in cols.values():
        fn()
    names = list(cols)
    samples: dict[str, list[float]] = {k: [] for k in names}
    for r in range(rounds):
        for k in names[r % len(names):] + names[:r % len(names)]:
            t0 = time.process_time() if CPU_TIME else time.perf_counter()
            cols[k]()
            samples[k].append((time.process_time() if CPU_TIME else time.perf_counter()) - t0)
    return {k: statistics.median(v) for k, v in samples.items()}


def others(rounds: int) -> dict[str, float]:
    """Medians of gelu, gelu_grad and the GPT graph step with the segments on and off."""
    import model_bench
    from tdflow.lowering.elementwise_ops import ELEMENTWISE_OPS

    rng = np.random.default_rng(0)
    x = (rng.standard_normal(1 << 20) * 2).astype(np.float32)
    dy = rng.standard_normal(1 << 20).astype(np.float32)
    out = np.empty_like(x)
    gelu = render_numpy(ELEMENTWISE_OPS["tdflow.gelu"].bind(), ["f32"], "f32")
    grad = render_numpy(ELEMENTWISE_OPS["tdflow.gelu_grad"].bind(), ["f32", "f32"], "f32")
    step = model_bench._gpt_columns()["graph"]
    work = {"gelu 1M f32": lambda: gelu([x], out), "gelu_grad 1M f32": lambda: grad([x, dy], out),
            "GPT graph step": step}
    cols = {}
    for name, fn in work.items():
        cols[f"{name}, segments"] = _switch(True, fn, segments=True)
        cols[f"{name}, before"] = _switch(True, fn)
    return timed(cols, rounds)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--elements", type=int, default=1 << 20)
    ap.add_argument("--cpu", action="store_true", help="CPU time instead of wall time")
    ap.add_argument("--others", action="store_true", help="also gelu, gelu_grad, the GPT step")
    args = ap.parse_args(argv)
    global CPU_TIME
    CPU_TIME = args.cpu
    t = timed(columns(args.elements), args.rounds)
    base = t["numpy"]
    print(f"| 6-op chain, {args.elements:,} f32 | median | vs numpy |")
    print("|---|---:|---:|")
    for k, v in t.items():
        print(f"| {k} | {v * 1e3:.3f} ms | {v / base:.2f}x |")
    print(f"medians of {'CPU' if CPU_TIME else 'wall'} time; blocks of {elementwise_blocks.BLOCK} "
          f"(numpy) and {elementwise_segments.BLOCK} (segments) elements; {os.cpu_count()} CPUs, load "
          f"{os.getloadavg()[0]:.2f}; target <= 0.7x numpy")
    if args.others:
        o = others(max(5, args.rounds // 4))
        print("| work | segments | before | ratio |")
        print("|---|---:|---:|---:|")
        for k in [k[:-len(", segments")] for k in o if k.endswith(", segments")]:
            a, b = o[f"{k}, segments"], o[f"{k}, before"]
            print(f"| {k} | {a * 1e3:.3f} ms | {b * 1e3:.3f} ms | {a / b:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
