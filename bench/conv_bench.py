"""The convolution algorithms of `runtime/kernels/_conv_algos.py` against im2col, same run.

    python bench/conv_bench.py                # the tables
    python bench/conv_bench.py --write-docs   # also the "Convolution algorithms" section of
                                              # docs/benchmarks.md

Per layer shape of `examples/resnet.py` (batch 64, 8x8 digits): the three kernels
(`conv2d`, `conv_data_grad`, `conv_filter_grad`, float32) with the new paths off (`im2col`,
``_conv_algos.ENABLED = False``) and on (`new`), the two taking turns. Then the ResNet
training step (graph and eager, `bench/model_bench.py`'s columns) before and after, and
PyTorch's step when torch is installed. Numpy's BLAS and torch get `--threads` threads
(default 1). Times are medians per call: the layers' the CPU time of the calling thread, the
steps' both wall time and the process's CPU time (on a loaded machine the wall time of a long
call also counts the time it waits to be scheduled again).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import model_bench  # noqa: E402
from _common import write_docs_section  # noqa: E402
from tdflow.runtime.kernels import _conv_algos as conv_algos  # noqa: E402
from tdflow.runtime.kernels import conv  # noqa: E402

OPS = ("conv2d", "conv_data_grad", "conv_filter_grad")


def resnet_layers() -> Counter:
    """(C, O, H, kernel, pad, stride) of each ResNet convolution, with how often it occurs."""
    import resnet

    shapes = [(1, resnet.STEM, 8, 3, 1, 1)]
    h = 8
    for _, c_in, c_out, stride in resnet.BLOCKS:
        shapes.append((c_in, c_out, h, 3, 1, stride))
        if stride != 1 or c_in != c_out:
            shapes.append((c_in, c_out, h, 1, 0, stride))
        h = (h - 1) // stride + 1
        shapes.append((c_out, c_out, h, 3, 1, 1))
    return Counter(shapes)


#: the columns: im2col everywhere, the paths before Winograd (1x1 GEMMs, flat-shift), all
CONFIGS = {"im2col": {"ENABLED": False}, "flat": {"WINOGRAD": False, "TAPS": False}, "new": {}}


def with_paths(config: str, fn: Callable[[], object]) -> Callable[[], object]:
    settings = CONFIGS[config]

    def run() -> object:
        old = {name: getattr(conv_algos, name) for name in settings}
        for name, value in settings.items():
            setattr(conv_algos, name, value)
        try:
            return fn()
        finally:
            for name, value in old.items():
                setattr(conv_algos, name, value)
    return run


def alternate(cols: dict[str, Callable[[], object]], rounds: int,
              clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Median seconds of ``clock`` per call, the columns taking turns (the order rotating)."""
    for fn in cols.values():
        for _ in range(2):
            fn()
    names = list(cols)
    samples: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        for n in names[r % len(names):] + names[:r % len(names)]:
            t0 = clock()
            cols[n]()
            samples[n].append(clock() - t0)
    return {n: statistics.median(v) for n, v in samples.items()}


def torch_calls(x: np.ndarray, w: np.ndarray, dy: np.ndarray, pad: int,
                stride: int) -> dict[str, Callable[[], object]]:
    """PyTorch's three kernels on the same arrays (empty without torch)."""
    try:
        import torch
    except ImportError:
        return {}
    tx, tw, tdy = (torch.from_numpy(a) for a in (x, w, dy))
    geo = ([stride] * 2, [pad] * 2, [1, 1], False, [0, 0], 1)

    def grad(mask: list[bool]) -> Callable[[], object]:
        return lambda: torch.ops.aten.convolution_backward(tdy, tx, tw, None, *geo, mask)
    return {"conv2d": lambda: torch.nn.functional.conv2d(tx, tw, stride=stride, padding=pad),
            "conv_data_grad": grad([True, False, False]),
            "conv_filter_grad": grad([False, True, False])}


def layer_table(rounds: int, batch: int = 64) -> str:
    rng = np.random.default_rng(0)
    rows = ["| layer (C->O, HxW, kernel/stride) | count | op | im2col | flat | new | torch "
            "| new/im2col | new/flat | new/torch |", "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for (c, o, h, k, pad, stride), count in resnet_layers().items():
        a = {"data_format": "channels_first", "kernel_size": [k, k], "strides": [stride] * 2,
             "dilation_rate": [1, 1], "padding_before": [pad, pad], "groups": 1}
        x = rng.standard_normal((batch, c, h, h), dtype=np.float32)
        w = rng.standard_normal((o, c, k, k), dtype=np.float32)
        dy = rng.standard_normal(conv.conv2d(a, [x, w], [None])[0].shape, dtype=np.float32)
        calls = {"conv2d": lambda a=a, x=x, w=w: conv.conv2d(a, [x, w], [None]),
                 "conv_data_grad": lambda a=a, x=x, w=w, dy=dy:
                     conv.conv_data_grad(a, [dy, w, x], [None]),
                 "conv_filter_grad": lambda a=a, x=x, dy=dy:
                     conv.conv_filter_grad(a, [dy, x], [None])}
        ref = torch_calls(x, w, dy, pad, stride)
        for op in OPS:
            # CPU time of the calling thread (BLAS has one thread): on the shared machine a
            # longer call is also more often preempted, which wall time would count
            cols = {name: with_paths(name, calls[op]) for name in CONFIGS}
            if op in ref:
                cols["torch"] = ref[op]
            t = alternate(cols, rounds, time.thread_time)
            torch_cells = (f"{t['torch'] * 1e6:.0f} us", f"{t['new'] / t['torch']:.2f}") \
                if "torch" in t else ("-", "-")
            rows.append(f"| {c}->{o}, {h}x{h}, {k}x{k}/{stride} | {count} | {op} | "
                        + " | ".join(f"{t[name] * 1e6:.0f} us" for name in CONFIGS)
                        + f" | {torch_cells[0]} | {t['new'] / t['im2col']:.2f} | "
                          f"{t['new'] / t['flat']:.2f} | {torch_cells[1]} |")
    return "\n".join(rows)


def step_table(rounds: int) -> str:
    cols = model_bench._resnet_columns()
    timed = {f"{mode} {label}": with_paths(label, cols[mode])
             for mode in ("graph", "eager") for label in CONFIGS}
    if "torch" in cols:
        timed["torch"] = cols["torch"]
    wall = alternate(timed, rounds)
    cpu = alternate(timed, rounds, time.process_time)  # all threads: the engine's workers too
    rows = ["| column | wall per step | vs im2col | vs torch | CPU per step | vs im2col | vs torch |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for name in wall:
        cells = []
        for t in (wall, cpu):
            base = t.get(name.rsplit(" ", 1)[0] + " im2col", t[name])
            vs_torch = f"{t[name] / t['torch']:.2f}x" if "torch" in t else "n/a (no torch)"
            cells.append(f"{t[name] * 1e3:.2f} ms | {t[name] / base:.2f} | {vs_torch}")
        rows.append(f"| {name} | {cells[0]} | {cells[1]} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--step-rounds", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--layers-only", action="store_true", help="skip the training steps")
    args = ap.parse_args(argv)
    with model_bench.threads(args.threads):
        layers = layer_table(args.rounds)
        steps = "(not run)" if args.layers_only else step_table(args.step_rounds)
    meta = (f"{datetime.date.today()}, {platform.python_version()}, numpy {np.__version__}, "
            f"{os.cpu_count()} CPUs, {args.threads} thread(s) for BLAS and torch, load "
            f"{os.getloadavg()[0]:.2f}")
    text = f"{layers}\n\nResNet training step (batch 64):\n\n{steps}"
    print(text)
    print(meta)
    if args.write_docs:
        write_docs_section(SECTION, f"{SECTION}\n\n`python bench/conv_bench.py --write-docs` "
                                    f"({meta}):\n\n{text}\n\n{NOTES}\n")
    return 0


SECTION = "## Issue 23 lever 1: convolutions past im2col (bench/conv_bench.py)"
NOTES = """Columns: `im2col` (every new path off), `flat` (the paths before this round: 1x1 as
GEMMs, flat-shift stride-1 forward and data gradient), `new` (this round), `torch` (PyTorch
CPU, same arrays, same thread count). Layer times are the calling thread's CPU time, medians
of the columns taking turns; the step table's CPU column is the process's (every thread). The
batch-norm, reduce and pooling changes below are in all three tdflow step columns, so the step
ratios against `im2col`/`flat` show the convolution paths alone.

What changed (`runtime/kernels/_conv_algos.py` dispatches):
- 3x3 stride-1 layers (forward, data gradient, filter gradient): Winograd F(2x2, 3x3)
  (`_conv_winograd.py`). The transforms run on a pixels-outermost layout `(H, W, N * C)` so
  every numpy loop covers `N * C` contiguous numbers (the `(C, N, H, W)` layout gave loops of
  2-10 elements: 3-4x slower); the products are 16 GEMMs `(tiles x C) @ (C x O)`; the data
  gradient is the forward on `dy` with the flipped, transposed filters; the filter gradient
  is the transposed map (`dM = A dY A^T`, 16 GEMMs, `G^T dU G`). Taken for finite operands
  whose magnitude cannot overflow in the transforms, at least 8 channels (the 1-channel stem
  measured 2-4x slower) and even-ish outputs (`MAX_TILE_WASTE`).
- Strided 2-D layers: one GEMM per kernel tap on the same pixels-outermost layout
  (`_conv_taps.py`): forward `cols_t @ w_t`, data gradient added into strided views of the
  padded `dx` (im2col's scatter-add ran 4-element loops), filter gradient `dy^T @ cols_t`.
- Per-thread scratch kept between calls (`_conv_scratch.py`, 32 MiB per thread at most): a
  fresh 1 MiB array page-faults on every call here (480 faults, 1.3 ms, inside a 30 us
  transform). Rows of `N * O` floats are often a multiple of 4 KiB, and the final copy into
  `(N, O, H, W)` then read with a 4 KiB stride (every read in one cache set: 5.7x slower), so
  results are written with a 16-element pitch.
- Outside the convolutions (the profile's next items): batch-norm training statistics as
  einsums on the `(outer, C, inner)` view written straight into the output (`norm.py`:
  192 -> 85 us and 420 -> 94 us per call on the ResNet's two shapes, no whole-tensor
  temporaries); `reduce_sum` over every axis but one (the batch-norm gradient's `(0, 2, 3)`)
  as an einsum (`reduce.py`: 1.5-1.8x); global `adaptive_avg_pool2d` as one reduction per
  plane (`pool.py`: 295 -> 46 us).

Not taken, as measured: a Winograd/taps input in batch blocks that stay in L2 (1.2-1.6x
slower: numpy's per-call overhead), per-tap GEMMs instead of Winograd for 3x3 stride 1 (equal
within noise), a one-GEMM stacked-taps path for the 1-channel stem (no faster than im2col).
Accuracy: Winograd's error is measured and tested within `1e-5` (f32; measured 2.8e-7) and
`1e-12` (f64; measured 6e-16) of the largest entry of the same convolution of absolute
values, against im2col and a float64 reference (`tests/runtime/test_conv_algos.py`).
Still short of issue 23's goals (graph <= 1.5x, eager <= 2x torch): the 3x3 kernels are 1.1-1.7x
PyTorch's per layer, their transforms memory-bound passes over 1 MiB arrays; the rest of the
step is batch-norm backward as fused elementwise launches and reductions, and the executor."""


if __name__ == "__main__":
    raise SystemExit(main())
