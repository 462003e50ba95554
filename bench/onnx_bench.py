"""ONNX models on tdflow's CPU backend against onnxruntime, in the same run.

    python bench/onnx_bench.py                      # ResNet-50 (light zoo, random weights)
    python bench/onnx_bench.py --models resnet50 squeezenet vgg19
    python bench/onnx_bench.py --write-docs         # also the "ONNX models" section of
                                                    # docs/benchmarks.md

For each model of ONNX's light zoo (``tdflow.onnx.zoo``: the graphs with seeded random weights),
batch 1: the median time of one inference of tdflow's compiled plan and of an onnxruntime
session with one intra-op and one inter-op thread (numpy's BLAS gets the same one thread), and
their ratio; and the time tdflow takes to import and compile the model (``import_model`` plus
the first ``prepare``/``run``'s lowering and compilation, cache cold). Targets (issue 20):
ResNet-50 inference within 2x of onnxruntime's single-threaded session; import + compile of
ResNet-50 under 3 s.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write_docs_section  # noqa: E402

HEADING = "## ONNX models (bench/onnx_bench.py)"
TARGETS = {"resnet50": 2.0}
COMPILE_TARGET_S = 3.0


def _median(fn, rounds: int) -> float:
    fn()  # warm
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bench_model(name: str, rounds: int) -> dict[str, float]:
    import onnxruntime as ort

    from tdflow.onnx.backend import TdflowBackend
    from tdflow.onnx.zoo import load_light, randomized

    model, feeds = randomized(load_light(name), seed=0)
    t0 = time.perf_counter()
    rep = TdflowBackend.prepare(model, "CPU")
    t1 = time.perf_counter()
    ours = rep.run(feeds)  # lowers and compiles for these shapes
    t2 = time.perf_counter()
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    theirs = sess.run(None, feeds)
    err = max(float(np.max(np.abs(a - b))) for a, b in zip(ours, theirs))
    t_ours = _median(lambda: rep.run(feeds), rounds)
    t_ort = _median(lambda: sess.run(None, feeds), rounds)
    return {"import_s": t1 - t0, "compile_s": t2 - t1, "tdflow_s": t_ours, "ort_s": t_ort,
            "ratio": t_ours / t_ort, "max_abs_diff": err}


def table(results: dict[str, dict[str, float]]) -> str:
    rows = ["| model (batch 1) | tdflow | onnxruntime (1 thread) | tdflow / ort | import | "
            "first run (lower + compile + run) | max abs diff |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for name, r in results.items():
        rows.append(f"| {name} | {r['tdflow_s'] * 1e3:.1f} ms | {r['ort_s'] * 1e3:.1f} ms | "
                    f"{r['ratio']:.2f}x | {r['import_s']:.2f} s | {r['compile_s']:.2f} s | "
                    f"{r['max_abs_diff']:.1e} |")
    rows += ["", "| target | measured | limit | verdict |", "|---|---:|---:|---|"]
    for name, limit in TARGETS.items():
        if name in results:
            r = results[name]
            rows.append(f"| {name} tdflow/ort | {r['ratio']:.2f}x | <= {limit:.1f}x | "
                        f"{'met' if r['ratio'] <= limit else 'MISS'} |")
            total = r["import_s"] + r["compile_s"]
            rows.append(f"| {name} import + compile | {total:.2f} s | < {COMPILE_TARGET_S:.0f} s | "
                        f"{'met' if total < COMPILE_TARGET_S else 'MISS'} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["resnet50"])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args(argv)
    # a cold cache: the import and compile times are what a new user sees
    os.environ.setdefault("TDFLOW_CACHE_DIR", tempfile.mkdtemp(prefix="tdflow-onnx-bench-"))
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # without it numpy's BLAS keeps its threads: say so in the line below
        threadpool_limits = None
    with threadpool_limits(1) if threadpool_limits else contextlib.nullcontext():
        results = {name: bench_model(name, args.rounds) for name in args.models}
    text = table(results)
    meta = (f"{datetime.date.today()}, {platform.python_version()}, numpy {np.__version__}, "
            f"{os.cpu_count()} CPUs, onnxruntime on 1 thread, numpy's BLAS on "
            f"{'1 thread' if threadpool_limits else 'its default threads'}, load "
            f"{os.getloadavg()[0]:.2f}")
    print(text)
    print(meta)
    if args.write_docs:
        cmd = "python bench/onnx_bench.py " + " ".join(
            (["--models", *args.models] if args.models != ["resnet50"] else []) + ["--write-docs"])
        write_docs_section(HEADING, f"{HEADING}\n\n`{cmd}` ({meta}):\n\n{text}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
