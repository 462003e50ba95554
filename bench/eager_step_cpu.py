"""The eager MLP training step against PyTorch's, in wall time and in CPU time, same run.

``bench/train_bench.py``'s eager column reports the median wall time of a step. On the 2 shared
cores, loaded by other jobs, that wall time is mostly time spent not running (measured: eager
step 5-9 ms wall for 2.1-2.6 ms of CPU, while PyTorch's 1.4 ms step stays within its CPU
time), so this script also reports the CPU time of the process (all its threads) per step.
The two columns alternate step by step, the order switching every step; BLAS and torch run one
thread each (``train_bench.threads(1)``).

    python bench/eager_step_cpu.py            # 300 steps per column
    python bench/eager_step_cpu.py 1000
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import train_bench as tb  # noqa: E402


def run(steps: int = 300) -> dict[str, float]:
    """Median wall ms and mean CPU ms per step of the eager and torch columns."""
    x, y, params = tb.make_data()
    with tb.threads(1):
        _, eager = tb.eager_column(x, y, params)
        torch_col = tb.torch_column(x, y, params)
        if torch_col is None:
            raise SystemExit("PyTorch is not installed: nothing to compare with")
        _, torch = torch_col
        for _ in range(30):
            eager()
            torch()
        wall: dict[str, list[float]] = {"eager": [], "torch": []}
        cpu = {"eager": 0.0, "torch": 0.0}
        pair = (("eager", eager), ("torch", torch))
        for i in range(steps):
            for name, fn in pair if i % 2 else pair[::-1]:
                w0, c0 = time.perf_counter(), time.process_time()
                fn()
                wall[name].append(time.perf_counter() - w0)
                cpu[name] += time.process_time() - c0
    out = {f"{k}_wall_ms": statistics.median(v) * 1e3 for k, v in wall.items()}
    out.update({f"{k}_cpu_ms": v / steps * 1e3 for k, v in cpu.items()})
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    r = run(int(args[0]) if args else 300)
    print(f"eager wall {r['eager_wall_ms']:.3f} ms cpu {r['eager_cpu_ms']:.3f} ms | "
          f"torch wall {r['torch_wall_ms']:.3f} cpu {r['torch_cpu_ms']:.3f} | "
          f"wall ratio {r['eager_wall_ms'] / r['torch_wall_ms']:.2f}x "
          f"cpu ratio {r['eager_cpu_ms'] / r['torch_cpu_ms']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
