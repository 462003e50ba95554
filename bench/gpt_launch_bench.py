"""CPU time of the GPT graph step's kernel launches, summed by op (bench/model_bench.py's GPT).

    TDFLOW_ENGINE=naive python bench/gpt_launch_bench.py             # every op, by time
    TDFLOW_ENGINE=naive python bench/gpt_launch_bench.py --steps 10 \\
        --ops embedding_grad layer_norm softmax_grad fused_scale_tril

The runtime's tracing times each launch; here its clock is the calling thread's CPU time, so
preemption by other jobs on a loaded machine does not count (with the naive engine every
launch runs on the calling thread). Prints the median per step of each op's total over
``--steps`` traced steps, the launch counts, and the sum of all launches.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import model_bench  # noqa: E402 - the bench directory is not a package


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--ops", nargs="*", help="op names without 'tdflow.' (default: all)")
    args = ap.parse_args(argv)
    from tdflow.runtime import tracing

    tracing._clock = time.thread_time_ns  # the hook's clock: CPU time of the launching thread
    with model_bench.threads(1):
        step = model_bench._gpt_columns()["graph"]
        for _ in range(3):  # compile, warm caches
            step()
        totals: dict[str, list[int]] = collections.defaultdict(list)
        counts: collections.Counter[str] = collections.Counter()
        for _ in range(args.steps):
            rec = tracing.Recorder()
            with tracing.installed(rec):
                step()
            per: collections.Counter[str] = collections.Counter()
            for name, cat, _start, dur, _tid, _a in rec.events:
                if cat == "launch":
                    per[name.removeprefix("tdflow.")] += dur
                    per["(all launches)"] += dur
                    counts[name.removeprefix("tdflow.")] += 1
            for k, v in per.items():
                totals[k].append(v)
    rows = sorted(totals, key=lambda k: -statistics.median(totals[k]))
    for k in rows:
        if args.ops and k not in args.ops and k != "(all launches)":
            continue
        n = counts[k] / args.steps if k in counts else sum(counts.values()) / args.steps
        print(f"{k:40s} {n:6.0f} launches {statistics.median(totals[k]) / 1e6:8.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
