"""float32 erf: the table path (numpy and native) against the exact float64 path, alone, in GELU
and in the GPT.

    python bench/erf_bench.py             # erf, gelu, gelu_grad on 1M f32; the GPT graph step
    python bench/erf_bench.py --no-gpt    # the kernels only

The columns run in the same process, taking turns round by round: ``original`` the exact
float64 path over whole arrays (the code before issue 23), ``exact f64, chunked`` the same
arithmetic 16K elements at a time (``erf_numpy.CHUNK``: no page faults of temporaries), ``f32
path`` the table-driven float32 erf in numpy's blocks, ``native`` the same table in one C loop
(``lowering/erf_native.py``, the same bits). The switches (``erf_f32.USE_F32_PATH``,
``erf_numpy.CHUNK``, ``erf_native.USE_NATIVE_ERF``) are read at every call, so the GPT step is one
compiled plan for all. ``gelu`` and ``gelu_grad`` are the ops' own kernels (their
``formula`` rendered by ``render_numpy``), as eager and graph mode run them. PyTorch's
``torch.erf`` / ``gelu`` is timed too when torch is installed (it is not on the CI machine).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from tdflow.lowering import erf_f32 as erf_mod
from tdflow.lowering import erf_native, erf_numpy
from tdflow.lowering.elementwise_numpy import render_numpy
from tdflow.lowering.elementwise_ops import ELEMENTWISE_OPS

sys.path.insert(0, str(Path(__file__).resolve().parent))
#: --cpu: time.process_time (this process's CPU time, all threads) instead of wall time: on a
#: machine shared with other jobs it is the steadier measure of the work itself.
CPU_TIME = False


def _timed(fns: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    """Median seconds per call of each (path, fn) column; the columns take turns."""
    names = list(fns)
    for n in names:
        fns[n]()
    samples: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        for n in names[r % len(names):] + names[:r % len(names)]:
            t0 = time.process_time() if CPU_TIME else time.perf_counter()
            fns[n]()
            samples[n].append((time.process_time() if CPU_TIME else time.perf_counter()) - t0)
    return {n: statistics.median(v) for n, v in samples.items()}


def _with_path(fast: bool, fn: Callable[[], Any], chunked: bool = True,
               native: bool = False) -> Callable[[], Any]:
    """``fn`` with the f32 path on or off (``native``: in one C loop); ``chunked=False`` also
    turns off the exact path's chunks (``erf_numpy.CHUNK``): the code as it was before both
    (the "original" column)."""
    chunk = erf_numpy.CHUNK

    def run() -> Any:
        erf_mod.USE_F32_PATH = fast
        erf_native.USE_NATIVE_ERF = native
        erf_numpy.CHUNK = chunk if chunked else 1 << 62
        try:
            return fn()
        finally:
            erf_mod.USE_F32_PATH = erf_native.USE_NATIVE_ERF = True
            erf_numpy.CHUNK = chunk
    return run


def kernels(n: int = 1 << 20, rounds: int = 15) -> list[tuple[str, float, ...]]:
    """(name, original, chunked, f32 numpy, native seconds) for erf, gelu and gelu_grad on
    ``n`` float32 values."""
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(n) * 2).astype(np.float32)
    dy = rng.standard_normal(n).astype(np.float32)
    out = np.empty_like(x)
    gelu = render_numpy(ELEMENTWISE_OPS["tdflow.gelu"].bind(), ["f32"], "f32")
    grad = render_numpy(ELEMENTWISE_OPS["tdflow.gelu_grad"].bind(), ["f32", "f32"], "f32")
    work = {"erf": lambda: erf_mod.erf_ufunc(x, out=out, dtype=np.float32),
            "gelu": lambda: gelu([x], out), "gelu_grad": lambda: grad([x, dy], out)}
    cols = {}
    for name, fn in work.items():
        cols[(name, "orig")] = _with_path(False, fn, chunked=False)
        cols[(name, "old")] = _with_path(False, fn)
        cols[(name, "new")] = _with_path(True, fn)
        cols[(name, "native")] = _with_path(True, fn, native=True)
    t = _timed(cols, rounds)
    rows = [(name, t[(name, "orig")], t[(name, "old")], t[(name, "new")], t[(name, "native")])
            for name in work]
    try:
        import torch
    except ImportError:
        return rows
    tx = torch.from_numpy(x)
    tt = _timed({"erf": lambda: torch.erf(tx), "gelu": lambda: torch.nn.functional.gelu(tx)},
                rounds)
    nan = float("nan")
    return rows + [(f"torch {k}", nan, nan, nan, v) for k, v in tt.items()]


def gpt_step(rounds: int = 10) -> tuple[float, float, float, float]:
    """Median seconds of the GPT graph step (bench/model_bench.py's): original, exact
    chunked, f32 erf in numpy and native."""
    import model_bench

    step = model_bench._gpt_columns()["graph"]
    t = _timed({"orig": _with_path(False, step, chunked=False), "old": _with_path(False, step),
                "new": _with_path(True, step), "native": _with_path(True, step, native=True)},
               rounds)
    return t["orig"], t["old"], t["new"], t["native"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--no-gpt", action="store_true")
    ap.add_argument("--cpu", action="store_true", help="CPU time instead of wall time")
    args = ap.parse_args(argv)
    global CPU_TIME
    CPU_TIME = args.cpu
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:
        pass
    print("| work (1M f32) | original (exact f64, whole arrays) | exact f64, chunked | f32 path "
          "| f32 native | native vs original | native vs f32 path |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    # The GPT first: the kernels' 1M-element arrays raise glibc's mmap and trim thresholds for
    # the rest of the process, after which whole-array temporaries stop costing page faults
    # (the original path then looks ~1.5x faster than in a process that only trains the GPT).
    gpt = [] if args.no_gpt else [("GPT graph step (model_bench size)",
                                   *gpt_step(max(5, args.rounds // 2)))]
    rows = kernels(rounds=args.rounds) + gpt
    for name, orig, old, new, native in rows:
        ratio = f"{orig / native:.2f}x" if orig == orig else "(torch)"
        vs_f32 = f"{native / new:.2f}x" if new == new else ""
        print(f"| {name} | {orig * 1e3:.2f} ms | {old * 1e3:.2f} ms | {new * 1e3:.2f} ms "
              f"| {native * 1e3:.2f} ms | {ratio} | {vs_f32} |")
    try:
        import torch  # noqa: F401
        has_torch = "installed"
    except ImportError:
        has_torch = "not installed (no PyTorch ratio)"
    print(f"medians of {'CPU' if CPU_TIME else 'wall'} time; torch: {has_torch}; "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
