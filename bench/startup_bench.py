#!/usr/bin/env python3
"""Start-up of every ``tdflow`` command on a small program, process against process
(issue 23, lever 6: each under 100 ms), with ``mlir-opt-19`` / ``llvm-tblgen-19`` as references.

    python3 bench/startup_bench.py                  # 15 rounds
    python3 bench/startup_bench.py --rounds 30 --markdown

Each round runs every command once as a fresh process, the commands taking turns (so a busy
machine slows every column alike), after one warm-up round that fills tdflow's caches and the
bytecode cache. Reported per command: the median and best wall time, the median CPU time
(user + system of the child, from ``getrusage``; steadier than wall time on a shared machine),
and the ratio of the median CPU time to the reference tool's (``mlir-opt-19`` for commands
that read programs, ``llvm-tblgen-19`` for ``tblgen``) measured in the same rounds.

The processes get a private cache dir and a bytecode cache of their own (this environment may
set ``PYTHONDONTWRITEBYTECODE=1``; an installed package has its ``.pyc`` files).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

SMALL_MLIR = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "tdflow.exp"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "tdflow.negative"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}
"""

SMALL_TD = """class Shape<int n> { int rank = n; string name = "s" # n; }
def Scalar : Shape<0>;
def Matrix : Shape<2>;
multiclass Pair<int n> { def _a : Shape<n>; def _b : Shape<!add(n, 1)>; }
defm P : Pair<3>;
"""


def commands(work: Path, tdflow: list[str]) -> dict[str, tuple[list[str], str | None]]:
    """name -> (argv, reference name or None)."""
    small, td = str(work / "small.mlir"), str(work / "small.td")
    mlp = str(ROOT / "examples" / "mlp.mlir")
    return {
        "--help": ([*tdflow, "--help"], None),
        "verify": ([*tdflow, "verify", small], "mlir-opt"),
        "opt": ([*tdflow, "opt", small], "mlir-opt"),
        "lower": ([*tdflow, "lower", small], "mlir-opt"),
        "run mlp.mlir": ([*tdflow, "run", mlp, "--random-inputs", "0"], "mlir-opt"),
        "tblgen": ([*tdflow, "tblgen", td], "llvm-tblgen"),
        "ops --json": ([*tdflow, "ops", "--json"], None),
        "view --help": ([*tdflow, "view", "--help"], None),
        "mlir-opt": (["mlir-opt-19", "--allow-unregistered-dialect", small], None),
        "llvm-tblgen": (["llvm-tblgen-19", td], None),
    }


def run_once(argv: list[str], env: dict) -> tuple[float, float, int]:
    """(wall s, child CPU s, exit status) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, r.returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--tdflow", default=None,
                    help="the tdflow command (default: this interpreter's -m tdflow)")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = ap.parse_args(argv)

    tdflow = args.tdflow.split() if args.tdflow else [sys.executable, "-m", "tdflow"]
    work = Path(tempfile.mkdtemp(prefix="tdflow-startup-"))
    (work / "small.mlir").write_text(SMALL_MLIR)
    (work / "small.td").write_text(SMALL_TD)
    env = dict(os.environ, TDFLOW_CACHE_DIR=str(work / "cache"),
               PYTHONPYCACHEPREFIX=str(work / "pyc"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cmds = {name: spec for name, spec in commands(work, tdflow).items()
            if shutil.which(spec[0][0]) or os.path.exists(spec[0][0])}
    try:
        for name, (cmd, _) in cmds.items():  # warm-up: caches, bytecode; and a sanity check
            _, _, status = run_once(cmd, env)
            if status != 0:
                print(f"{name}: exit status {status}: {' '.join(cmd)}", file=sys.stderr)
                return 1
        walls: dict[str, list[float]] = {n: [] for n in cmds}
        cpus: dict[str, list[float]] = {n: [] for n in cmds}
        for _ in range(args.rounds):
            for name, (cmd, _) in cmds.items():
                wall, cpu, _ = run_once(cmd, env)
                walls[name].append(wall)
                cpus[name].append(cpu)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def ms(x: float) -> str:
        return f"{x * 1e3:.0f}"

    rows = []
    for name, (_, ref) in cmds.items():
        cpu = statistics.median(cpus[name])
        ratio = ""
        if ref in cpus:
            ratio = f"{cpu / statistics.median(cpus[ref]):.1f}x {ref}"
        rows.append((name, ms(statistics.median(walls[name])), ms(min(walls[name])), ms(cpu),
                     ratio, "" if name in ("mlir-opt", "llvm-tblgen") else
                     "PASS" if statistics.median(walls[name]) < 0.1 else "MISS"))
    head = ("command", "wall median ms", "wall best ms", "CPU median ms", "CPU ratio",
            "< 100 ms")
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|---|" + "---:|" * (len(head) - 1))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        print(f"{args.rounds} rounds, load {os.getloadavg()[0]:.1f}")
        print(f"{head[0]:<14} {head[1]:>15} {head[2]:>13} {head[3]:>14}  {head[4]}")
        for r in rows:
            print(f"{r[0]:<14} {r[1]:>15} {r[2]:>13} {r[3]:>14}  {r[4]:<18} {r[5]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
