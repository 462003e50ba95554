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
that read programs, ``llvm-tblgen-19`` for ``tblgen``) measured in the same rounds. Two rows
give the scale of the machine in the same rounds: ``python -c pass`` (the interpreter's start)
and ``import numpy`` (with ``numpy.random``, and numpy's BLAS pool sized as the ``tdflow``
command sizes it: ``tdflow run``'s floor).

The processes get a private cache dir and a bytecode cache of their own (this environment may
set ``PYTHONDONTWRITEBYTECODE=1``; an installed package has its ``.pyc`` files).

``--baseline REV`` also measures the tdflow of a git revision (``git archive`` of this checkout,
laid out as the installed package, with its own cache dir) in the same rounds, each of its
commands right after this tree's, and adds the ratio of the two median CPU times::

    python3 bench/startup_bench.py --rounds 9 --baseline main --markdown
    python3 bench/startup_bench.py --rounds 21 --baseline main --only lower --only run mlp.mlir

After the table, ``run``'s floor in the same rounds: numpy's share of a process and tdflow's
share of ``run`` (medians of per-round differences of CPU time).
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
        # conv, pool and a formula kernel (relu) outside a fused loop
        "run cnn.mlir": ([*tdflow, "run", str(ROOT / "examples" / "cnn.mlir")], "mlir-opt"),
        "tblgen": ([*tdflow, "tblgen", td], "llvm-tblgen"),
        "ops --json": ([*tdflow, "ops", "--json"], None),
        "ops (table)": ([*tdflow, "ops"], None),
        "view --help": ([*tdflow, "view", "--help"], None),
        # the interpreter's own start and numpy's import, for scale (`run` needs numpy)
        "python -c pass": ([sys.executable, "-c", "pass"], None),
        "import numpy": ([sys.executable, "-c", "import numpy, numpy.random"], None),
        "mlir-opt": (["mlir-opt-19", "--allow-unregistered-dialect", small], None),
        "llvm-tblgen": (["llvm-tblgen-19", td], None),
    }


#: Measured in every run (``--only`` or not): the reference tools and the interpreter's scale.
REFERENCES = ("mlir-opt", "llvm-tblgen", "python -c pass", "import numpy")

#: Where each top-level package of the installed tdflow lives in a checkout (pyproject.toml).
PACKAGE_DIRS = {"tdparser": "tdparser", "dialect": "dialect", "lowering": "lowering",
                "runtime": "runtime"}


def package_tree(rev: str | None, work: Path) -> Path:
    """A folder to put on ``PYTHONPATH`` that imports ``tdflow`` as this checkout (``rev``
    ``None``) or its git revision ``rev`` (``git archive``), with ``tdflow/<sub>`` linked to the
    checkout's top-level package folders as the installed package has them: both trees are
    then found alike (not one through the editable install's finder)."""
    src = ROOT
    if rev is not None:
        src = work / f"src-{rev}"
        src.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    pkg = work / f"pkg-{rev or 'tree'}" / "tdflow"
    pkg.mkdir(parents=True)
    for entry in (src / "tdflow").iterdir():
        (pkg / entry.name).symlink_to(entry)
    for name, folder in PACKAGE_DIRS.items():
        (pkg / name).symlink_to(src / folder)
    return pkg.parent


def run_once(argv: list[str], env: dict, cwd: Path | None = None) -> tuple[float, float, int]:
    """(wall s, child CPU s, exit status) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                       cwd=cwd)
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
    ap.add_argument("--baseline", metavar="REV", default=None,
                    help="also measure the tdflow of this git revision, in the same rounds")
    ap.add_argument("--only", action="append", metavar="NAME", default=None,
                    help="measure only this command (repeatable; e.g. 'lower', 'ops (table)'); "
                    "the reference tools are always measured")
    args = ap.parse_args(argv)

    tdflow = args.tdflow.split() if args.tdflow else [sys.executable, "-m", "tdflow"]
    work = Path(tempfile.mkdtemp(prefix="tdflow-startup-"))
    (work / "small.mlir").write_text(SMALL_MLIR)
    (work / "small.td").write_text(SMALL_TD)
    env = dict(os.environ, TDFLOW_CACHE_DIR=str(work / "cache"),
               PYTHONPYCACHEPREFIX=str(work / "pyc"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cmds = {name: spec for name, spec in commands(work, tdflow).items()
            if (shutil.which(spec[0][0]) or os.path.exists(spec[0][0]))
            and (not args.only or name in args.only or name in REFERENCES)}
    envs = {name: env for name in cmds}
    if "import numpy" in cmds:  # numpy's BLAS pool as the tdflow command sizes it (blas_pool)
        from tdflow.core.blas_pool import size_blas_pool

        envs["import numpy"] = dict(env)
        size_blas_pool(envs["import numpy"])
    if args.baseline:
        # `python -m tdflow` run in `work` (not this checkout) finds each tree's package on
        # PYTHONPATH, before this checkout's editable install
        env["PYTHONPATH"] = str(package_tree(None, work))
        base_env = dict(env, TDFLOW_CACHE_DIR=str(work / "cache-base"),
                        PYTHONPATH=str(package_tree(args.baseline, work)))
        for name, (cmd, ref) in list(commands(work, [sys.executable, "-m", "tdflow"]).items()):
            if name in cmds and cmd[0] == sys.executable and name not in REFERENCES:
                cmds[f"{name} ({args.baseline})"] = (cmd, ref)
                envs[f"{name} ({args.baseline})"] = base_env
        order = [n for n in cmds if not n.endswith(f" ({args.baseline})")]
        cmds = {n: cmds[n] for name in order
                for n in (name, f"{name} ({args.baseline})") if n in cmds}
    load_before = os.getloadavg()[0]
    try:
        for name, (cmd, _) in cmds.items():  # warm-up: caches, bytecode; and a sanity check
            _, _, status = run_once(cmd, envs[name], work)
            if status != 0:
                print(f"{name}: exit status {status}: {' '.join(cmd)}", file=sys.stderr)
                return 1
        walls: dict[str, list[float]] = {n: [] for n in cmds}
        cpus: dict[str, list[float]] = {n: [] for n in cmds}
        for _ in range(args.rounds):
            for name, (cmd, _) in cmds.items():
                wall, cpu, _ = run_once(cmd, envs[name], work)
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
        base = f"{name} ({args.baseline})"
        if args.baseline and base in cpus:
            ratio += f"{'; ' if ratio else ''}{cpu / statistics.median(cpus[base]):.2f}x " \
                     f"{args.baseline}"
        verdict = "" if name in REFERENCES else (
            "PASS" if statistics.median(walls[name]) < 0.1 else "MISS")
        rows.append((name, ms(statistics.median(walls[name])), ms(min(walls[name])), ms(cpu),
                     ratio, verdict))
    head = ("command", "wall median ms", "wall best ms", "CPU median ms", "CPU ratio",
            "< 100 ms")
    if args.markdown:
        print(f"{args.rounds} rounds; load average {load_before:.1f} before, "
              f"{os.getloadavg()[0]:.1f} after\n")
        print("| " + " | ".join(head) + " |")
        print("|---|" + "---:|" * (len(head) - 1))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        print(f"{args.rounds} rounds, load {os.getloadavg()[0]:.1f}")
        print(f"{head[0]:<14} {head[1]:>15} {head[2]:>13} {head[3]:>14}  {head[4]}")
        for r in rows:
            print(f"{r[0]:<14} {r[1]:>15} {r[2]:>13} {r[3]:>14}  {r[4]:<18} {r[5]}")
    for line in floor_lines(cpus, args.baseline):
        print(("\n" if args.markdown else "") + line)
    return 0


def floor_lines(cpus: dict[str, list[float]], baseline: str | None) -> list[str]:
    """``run``'s floor in the same rounds: numpy's share (``import numpy`` less ``python -c
    pass``) and tdflow's (``run mlp.mlir`` less ``import numpy``), each the median of the
    per-round differences of CPU time (one round's processes ran side by side in time)."""
    def diff(a: str, b: str) -> str:
        return f"{statistics.median(x - y for x, y in zip(cpus[a], cpus[b])) * 1e3:.0f} ms"

    out = []
    if "import numpy" in cpus and "python -c pass" in cpus:
        out.append(f"numpy's share (`import numpy` - `python -c pass`): "
                   f"{diff('import numpy', 'python -c pass')}")
    for name in ("run mlp.mlir", f"run mlp.mlir ({baseline})"):
        if name in cpus and "import numpy" in cpus:
            out.append(f"tdflow's share of `{name}` (`{name}` - `import numpy`): "
                       f"{diff(name, 'import numpy')}")
    return out


if __name__ == "__main__":
    sys.exit(main())
