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


SECTION = "## Convolution algorithms (bench/conv_bench.py)"
NOTES = """The paths (`runtime/kernels/_conv_algos.py`): unpadded 1x1 kernels as plain GEMMs on
the pixels (`_conv_pointwise.py`); stride-1 forward and data gradient as flat-shift columns on
the padded grid (`_conv_flat.py`: one contiguous copy per kernel tap, one GEMM, the valid
outputs cropped; the data gradient as the correlation of the padded `dy` with the flipped,
transposed filters instead of im2col's strided scatter-add). Kept on im2col, as measured: the
stride-1 filter gradient (`FLAT_FILTER_GRAD`: one GEMM per tap on shifted views, 0.97-1.04x of
im2col, its GEMMs running over the whole padded grid), the 4x4 forward (2.25 grid positions
per output, `MAX_GRID_WASTE_FORWARD`: 1.04-1.07x), the 1-channel stem (`MIN_FLAT_CHANNELS`) and
the stride-2 3x3 layer. Results agree with im2col within `1e-5` (f32) / `1e-12` (f64) of the
largest entry of the same convolution of the absolute values
(`tests/runtime/test_conv_algos.py`). Rows whose two columns run the same im2col code show the
measurement noise (up to ~25% on this shared machine). Wall times on it are 3-4x the CPU times
(load ~7 on 2 cores) and exaggerate im2col's data gradient (its long calls are preempted more
often: 10.7 ms wall for 2.8 ms CPU on the 16->16 layer), so the CPU columns are the ones to read.
In the graph step (thread CPU time per kernel, 20 steps, two runs) the seven data gradients went
from 10.3-11.0 ms to 6.6-7.7 ms and the three kernels together from 22.8-24.4 to 18.8-21.9 ms:
a step 5-10% shorter, far from issue 23's goal; the filter gradients and forwards (6-8 ms each)
are what is left to beat."""


if __name__ == "__main__":
    raise SystemExit(main())
