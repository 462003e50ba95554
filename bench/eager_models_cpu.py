"""The eager ResNet or GPT training step against PyTorch's, wall and CPU time, same run.

``bench/model_bench.py`` times every column of both models by wall clock; on the 2 shared
cores, loaded by other jobs, wall time is mostly time spent waiting for a core. This script
times one model's eager and torch columns (the same step functions as ``model_bench``),
taking turns, and also reports the process CPU time per step (``time.process_time``).

    python bench/eager_models_cpu.py resnet 10    # model, rounds
    python bench/eager_models_cpu.py gpt 8
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import model_bench as mb  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Print one line: each column's median wall and mean CPU ms per step, and vs torch."""
    args = sys.argv[1:] if argv is None else argv
    which = args[0] if args else "resnet"
    rounds = int(args[1]) if len(args) > 1 else 10
    cols = mb._resnet_columns() if which == "resnet" else mb._gpt_columns()
    cols = {k: v for k, v in cols.items() if k in ("eager", "torch")}
    if "torch" not in cols:
        raise SystemExit("PyTorch is not installed: nothing to compare with")
    with mb.threads(1):
        for fn in cols.values():  # compile, warm caches
            for _ in range(3):
                fn()
        names = list(cols)
        wall: dict[str, list[float]] = {n: [] for n in names}
        cpu = dict.fromkeys(names, 0.0)
        for r in range(rounds):
            for n in names[r % len(names):] + names[:r % len(names)]:
                c0, t0 = time.process_time(), time.perf_counter()
                cols[n]()
                wall[n].append(time.perf_counter() - t0)
                cpu[n] += time.process_time() - c0
    tw, tc = statistics.median(wall["torch"]), cpu["torch"] / rounds
    out = []
    for n in names:
        w, c = statistics.median(wall[n]), cpu[n] / rounds
        out.append(f"{n} wall {w * 1e3:.2f} ms ({w / tw:.2f}x) cpu {c * 1e3:.2f} ms "
                   f"({c / tc:.2f}x)")
    print(which, " | ".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
