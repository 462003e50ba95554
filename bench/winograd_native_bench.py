"""The native Winograd transforms (`lowering/winograd_native.py`) against their numpy path, same run.

    python bench/winograd_native_bench.py                  # layers and the ResNet step
    TDFLOW_ENGINE=naive python bench/winograd_native_bench.py

Per Winograd layer of `examples/resnet.py` (the 3x3 stride-1 ones with 8+ channels, batch 64):
the three kernels with the transforms in numpy (`numpy`, ``USE_NATIVE_WINOGRAD = False``) and
in C (`native`), and PyTorch on the same arrays, taking turns; the calling thread's CPU time.
Then the ResNet training step (graph and eager, `bench/model_bench.py`'s columns) both ways and
PyTorch's, wall and process CPU time. Numpy's BLAS and torch get `--threads` threads (default 1).
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import conv_bench  # noqa: E402
import model_bench  # noqa: E402
from tdflow.lowering import winograd_native  # noqa: E402
from tdflow.runtime.kernels import conv  # noqa: E402


def with_native(on: bool, fn):
    def run():
        winograd_native.USE_NATIVE_WINOGRAD = on
        try:
            return fn()
        finally:
            winograd_native.USE_NATIVE_WINOGRAD = True
    return run


def layer_table(rounds: int, batch: int = 64) -> str:
    rng = np.random.default_rng(0)
    rows = ["| layer (C->O, HxW) | count | op | numpy | native | torch | native/numpy "
            "| numpy/torch | native/torch |", "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for (c, o, h, k, pad, stride), count in conv_bench.resnet_layers().items():
        if k != 3 or stride != 1 or c < 8:
            continue
        a = {"data_format": "channels_first", "kernel_size": [3, 3], "strides": [1, 1],
             "dilation_rate": [1, 1], "padding_before": [pad, pad], "groups": 1}
        x = rng.standard_normal((batch, c, h, h), dtype=np.float32)
        w = rng.standard_normal((o, c, 3, 3), dtype=np.float32)
        dy = rng.standard_normal((batch, o, h, h), dtype=np.float32)
        inputs = {"conv2d": [x, w], "conv_data_grad": [dy, w, x], "conv_filter_grad": [dy, x]}
        ref = conv_bench.torch_calls(x, w, dy, pad, stride)
        for op in conv_bench.OPS:
            call = functools.partial(getattr(conv, op), a, inputs[op], [None])
            cols = {"numpy": with_native(False, call), "native": with_native(True, call)}
            if op in ref:
                cols["torch"] = ref[op]
            t = conv_bench.alternate(cols, rounds, time.thread_time)
            tt = t.get("torch", float("nan"))
            rows.append(f"| {c}->{o}, {h}x{h} | {count} | {op} | {t['numpy'] * 1e6:.0f} us | "
                        f"{t['native'] * 1e6:.0f} us | {tt * 1e6:.0f} us | "
                        f"{t['native'] / t['numpy']:.2f} | {t['numpy'] / tt:.2f} | "
                        f"{t['native'] / tt:.2f} |")
    return "\n".join(rows)


def step_table(rounds: int) -> str:
    cols = model_bench._resnet_columns()
    timed = {f"{mode} {label}": with_native(label == "native", cols[mode])
             for mode in ("graph", "eager") for label in ("numpy", "native")}
    if "torch" in cols:
        timed["torch"] = cols["torch"]
    for fn in timed.values():
        for _ in range(2):
            fn()
    names = list(timed)
    wall: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        for n in names[r % len(names):] + names[:r % len(names)]:
            w0, c0 = time.perf_counter(), time.process_time()
            timed[n]()
            wall[n].append(time.perf_counter() - w0)
            cpu[n].append(time.process_time() - c0)
    med = {n: (statistics.median(wall[n]), statistics.median(cpu[n])) for n in names}
    base = med.get("torch", (float("nan"), float("nan")))
    rows = ["| column | wall per step | vs torch | CPU per step | vs torch |",
            "|---|---:|---:|---:|---:|"]
    for n, (w, c) in med.items():
        rows.append(f"| {n} | {w * 1e3:.2f} ms | {w / base[0]:.2f}x | {c * 1e3:.2f} ms | "
                    f"{c / base[1]:.2f}x |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--step-rounds", type=int, default=30)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--layers-only", action="store_true", help="skip the training steps")
    args = ap.parse_args(argv)
    with model_bench.threads(args.threads):
        print(layer_table(args.rounds))
        if not args.layers_only:
            print()
            print(step_table(args.step_rounds))
    print(f"engine {os.environ.get('TDFLOW_ENGINE', 'default')}, {os.cpu_count()} CPUs, "
          f"{args.threads} thread(s) for BLAS and torch, load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
