"""ONNX models on tdflow's CPU backend against onnxruntime, in the same run.

    python bench/onnx_bench.py                      # ResNet-50 (light zoo, random weights)
    python bench/onnx_bench.py --models resnet50 squeezenet vgg19
    python bench/onnx_bench.py --write-docs         # also the "ONNX models" section of
                                                    # docs/benchmarks.md
    python bench/onnx_bench.py --models resnet50 --baseline /tmp/base  # A/B against a
                                                    # checkout, fresh processes taking turns

For each model of ONNX's light zoo (``tdflow.onnx.zoo``: the graphs with seeded random weights),
batch 1: the median time of one inference of tdflow's compiled plan and of an onnxruntime
session with one intra-op and one inter-op thread (numpy's BLAS gets the same one thread), and
their ratio; and the time tdflow takes to import and compile the model (``import_model`` plus
the first ``prepare``/``run``'s lowering and compilation, cache cold). Targets (issue 20):
ResNet-50 inference within 2x of onnxruntime's single-threaded session; import + compile of
ResNet-50 under 3 s. The C modules a cold first run did not wait for (``TDFLOW_NATIVE_BUILDS``'s
default, ``background``) are waited for before the steady state is timed ("C builds after it").
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


def _median(fn, rounds: int, clock=time.perf_counter) -> float:
    fn()  # warm
    times = []
    for _ in range(rounds):
        t = clock()
        fn()
        times.append(clock() - t)
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
    # the C modules still compiling (TDFLOW_NATIVE_BUILDS=background, the default: the first
    # run ran numpy for them): the steady state below is timed once they are loaded
    try:
        from tdflow.lowering.elementwise_native_build import wait_all
    except ImportError:  # a --baseline tree from before the build pool: it built in line
        def wait_all() -> bool:
            return True
    wait_all()
    t3 = time.perf_counter()
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    theirs = sess.run(None, feeds)
    err = max(float(np.max(np.abs(a - b))) for a, b in zip(ours, theirs))
    t_ours = _median(lambda: rep.run(feeds), rounds)
    t_ort = _median(lambda: sess.run(None, feeds), rounds)
    # the calling thread's CPU time (both run on it, one thread each): what other jobs on a
    # shared machine disturb least
    c_ours = _median(lambda: rep.run(feeds), rounds, time.thread_time)
    c_ort = _median(lambda: sess.run(None, feeds), rounds, time.thread_time)
    return {"import_s": t1 - t0, "compile_s": t2 - t1, "builds_after_s": t3 - t2,
            "tdflow_s": t_ours, "ort_s": t_ort,
            "ratio": t_ours / t_ort, "max_abs_diff": err, "tdflow_cpu_s": c_ours,
            "ort_cpu_s": c_ort, "cpu_ratio": c_ours / c_ort}


def ab_rounds(models: list[str], rounds: int, baseline: str, ab_rounds: int) -> str:
    """This tree and ``baseline`` (a checkout of tdflow, run through ``TDFLOW_TREE``), each
    model in a fresh process per tree, the trees taking turns ``ab_rounds`` times: the
    medians of the wall and thread-CPU ratios to onnxruntime per tree."""
    import json
    import subprocess

    here = str(Path(__file__).resolve().parents[1])
    trees = {"this tree": here, "baseline": str(Path(baseline).resolve())}
    got: dict[tuple[str, str], list[dict[str, float]]] = {}
    for _ in range(ab_rounds):
        for label, tree in trees.items():
            for name in models:
                env = dict(os.environ, TDFLOW_TREE=tree,
                           TDFLOW_CACHE_DIR=tempfile.mkdtemp(prefix="tdflow-onnx-ab-"))
                out = subprocess.run([sys.executable, __file__, "--models", name, "--rounds",
                                      str(rounds), "--json"], env=env, cwd=tree, check=True,
                                     capture_output=True, text=True).stdout
                r = json.loads(out.strip().splitlines()[-1])[name]
                got.setdefault((name, label), []).append(r)
                print(f"{name} {label}: {r['ratio']:.2f}x wall, {r['cpu_ratio']:.2f}x CPU",
                      file=sys.stderr, flush=True)
    rows = ["| model (batch 1) | tree | tdflow CPU | ort CPU | tdflow / ort (CPU) | "
            "tdflow / ort (wall) | import + first run | rounds |",
            "|---|---|---:|---:|---:|---:|---:|---:|"]
    for (name, label), rs in got.items():
        med = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
        rows.append(f"| {name} | {label} | {med['tdflow_cpu_s'] * 1e3:.1f} ms | "
                    f"{med['ort_cpu_s'] * 1e3:.1f} ms | {med['cpu_ratio']:.2f}x | "
                    f"{med['ratio']:.2f}x | "
                    f"{statistics.median(r['import_s'] + r['compile_s'] for r in rs):.2f} s | "
                    f"{len(rs)} |")
    return "\n".join(rows)


def table(results: dict[str, dict[str, float]]) -> str:
    rows = ["| model (batch 1) | tdflow | onnxruntime (1 thread) | tdflow / ort | "
            "tdflow / ort (thread CPU) | import | first run (lower + compile + run) | "
            "C builds after it | max abs diff |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in results.items():
        rows.append(f"| {name} | {r['tdflow_s'] * 1e3:.1f} ms | {r['ort_s'] * 1e3:.1f} ms | "
                    f"{r['ratio']:.2f}x | {r['cpu_ratio']:.2f}x | {r['import_s']:.2f} s | "
                    f"{r['compile_s']:.2f} s | {r.get('builds_after_s', 0.0):.2f} s | "
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
    ap.add_argument("--baseline", metavar="TREE",
                    help="also run a checkout of tdflow at TREE, the two trees taking turns in "
                         "fresh processes (--ab-rounds times), and print the medians")
    ap.add_argument("--ab-rounds", type=int, default=3)
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # --baseline's child
    args = ap.parse_args(argv)
    if args.baseline:
        print(ab_rounds(args.models, args.rounds, args.baseline, args.ab_rounds))
        return 0
    # a cold cache: the import and compile times are what a new user sees
    os.environ.setdefault("TDFLOW_CACHE_DIR", tempfile.mkdtemp(prefix="tdflow-onnx-bench-"))
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # without it numpy's BLAS keeps its threads: say so in the line below
        threadpool_limits = None
    with threadpool_limits(1) if threadpool_limits else contextlib.nullcontext():
        results = {name: bench_model(name, args.rounds) for name in args.models}
    if args.json:
        import json

        print(json.dumps(results))
        return 0
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
