"""Process against process: ``tdflow opt``/``tdflow verify`` of this tree and of an earlier
commit, against ``mlir-opt-19``, on the 100k-op ``varied`` program of ``ir_bench.py``.

Run: ``python bench/ir_process_compare.py [--baseline REF] [--rounds 5] [--ops 100000]
[--funcs 100] [--markdown] [--instructions]``.

``--instructions`` counts instead of timing: each command runs once under ``valgrind
--tool=callgrind`` on the program of ``--ops`` ops and on one a tenth of its size, and the
table gives the instructions per op, ``(Ir(ops) - Ir(ops / 10)) / (0.9 ops)``: start-up
cancels out, and the count does not depend on the machine's load (``--ops 10000`` takes a few
minutes; callgrind runs ~50x slower).

The baseline's tree is ``git archive REF`` in a temporary directory; its CLI runs in this
interpreter with the ``tdflow`` packages mapped onto that tree (pyproject's layout:
``tdflow.dialect`` is ``dialect/``, ...), so both sides share Python and dependencies. The
commands take turns within each round (the machine is shared: the load changes over minutes);
each column reports the best and the median wall time and the child's CPU time (user + system,
from ``os.wait4``), and the ratios to mlir-opt's.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from _common import ROOT, find_tool  # noqa: E402
from ir_bench import generate_varied  # noqa: E402

# Runs a tree's CLI: argv = [TREE, tdflow arguments...]. The finder maps the tdflow packages
# onto TREE before anything imports them (pyproject's package-dir).
_LAUNCH = """
import importlib.util, sys
tree = sys.argv[1]
dirs = {"tdflow": "tdflow", "tdflow.dialect": "dialect", "tdflow.lowering": "lowering",
        "tdflow.runtime": "runtime", "tdflow.tdparser": "tdparser"}
class Tree:
    @staticmethod
    def find_spec(name, path=None, target=None):
        d = dirs.get(name)
        if d is None:
            return None
        return importlib.util.spec_from_file_location(
            name, f"{tree}/{d}/__init__.py", submodule_search_locations=[f"{tree}/{d}"])
sys.meta_path.insert(0, Tree)
sys.argv = ["tdflow"] + sys.argv[2:]
from tdflow.cli import entry
assert sys.modules["tdflow"].__file__.startswith(tree), sys.modules["tdflow"].__file__
status = entry()
assert sys.modules["tdflow.dialect"].__file__.startswith(tree)
sys.exit(status)
"""


def run_child(cmd: list[str]) -> tuple[float, float]:
    """``(wall seconds, CPU seconds)`` of one child process; it must succeed."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        shown = " ".join(a for a in cmd if "\n" not in a)  # without the launcher's code
        raise SystemExit(f"{shown} failed ({proc.returncode}): {err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def baseline_tree(ref: str, dest: Path) -> Path:
    """``git archive ref`` of this repository, unpacked under ``dest``."""
    tree = dest / "baseline"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def callgrind_ir(cmd: list[str]) -> int:
    """The instructions (callgrind's ``Ir``) that ``cmd`` executes; it must succeed."""
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          errors="replace")
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if proc.returncode or found is None:
        shown = " ".join(a for a in cmd if "\n" not in a)  # without the launcher's code
        raise SystemExit(f"valgrind {shown} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return int(found.group(1))


def _commands(trees: dict[str, str], path: Path, mlir: str | None) -> dict[str, list[str]]:
    cmds: dict[str, list[str]] = {}
    for label, tree in trees.items():
        for sub in (["opt", str(path), "-o", os.devnull], ["verify", str(path)]):
            cmds[f"{label}: tdflow {sub[0]}"] = [sys.executable, "-c", _LAUNCH, tree, *sub]
    if mlir:
        cmds["mlir-opt-19"] = [mlir, "--allow-unregistered-dialect", str(path), "-o", os.devnull]
    return cmds


def _instructions(args, trees: dict[str, str], tmp: Path, mlir: str | None) -> int:
    """``--instructions``: the table of instructions per op (see the module notes)."""
    small_ops = args.ops // 10
    sizes = {}
    for ops, funcs in ((args.ops, args.funcs), (small_ops, max(1, args.funcs // 10))):
        path = tmp / f"varied{ops}.mlir"
        path.write_text(generate_varied(ops, funcs))
        sizes[ops] = _commands(trees, path, mlir)
    for cmd in sizes[small_ops].values():  # bytecode and tdflow's caches written first
        run_child(cmd)
    rows = []
    for k in sizes[args.ops]:
        per_op = (callgrind_ir(sizes[args.ops][k]) - callgrind_ir(sizes[small_ops][k])) / (
            args.ops - small_ops)
        rows.append((k, per_op))
    ref = dict(rows).get("mlir-opt-19")
    print(f"instructions per op (callgrind Ir, {args.ops} ops less {small_ops})\n")
    print("| command | instructions per op | vs mlir-opt-19 |\n|---|---:|---:|")
    for k, per_op in rows:
        ratio = f"{per_op / ref:.2f}x" if ref and k != "mlir-opt-19" else ""
        print(f"| {k} | {per_op:,.0f} | {ratio} |")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default=None, metavar="REF",
                    help="a commit to compare with (default: none, this tree only)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ops", type=int, default=100_000)
    ap.add_argument("--funcs", type=int, default=100)
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    ap.add_argument("--instructions", action="store_true",
                    help="instructions per op under callgrind instead of times (a markdown "
                    "table; needs valgrind)")
    args = ap.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="ir_compare_"))
    try:
        trees = {"this tree": str(ROOT)}
        if args.baseline:
            trees = {f"baseline {args.baseline}": str(baseline_tree(args.baseline, tmp)), **trees}
        mlir = find_tool("mlir-opt")
        if args.instructions:
            return _instructions(args, trees, tmp, mlir)
        path = tmp / "varied.mlir"
        path.write_text(generate_varied(args.ops, args.funcs))
        cmds = _commands(trees, path, mlir)
        for cmd in cmds.values():  # warm the file cache and tdflow's caches
            run_child(cmd)
        runs: dict[str, list[tuple[float, float]]] = {k: [] for k in cmds}
        for _ in range(args.rounds):
            for k, cmd in cmds.items():  # taking turns: each round sees the same load
                runs[k].append(run_child(cmd))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    ref = runs.get("mlir-opt-19")
    ref_wall = min(w for w, _ in ref) if ref else None
    ref_cpu = min(c for _, c in ref) if ref else None
    rows = []
    for k, rs in runs.items():
        walls, cpus = [w for w, _ in rs], [c for _, c in rs]
        ratio = (f"{min(walls) / ref_wall:.1f}x wall, {min(cpus) / ref_cpu:.1f}x CPU"
                 if ref and k != "mlir-opt-19" else "")
        rows.append((k, f"{min(walls):.3f} / {statistics.median(walls):.3f}",
                     f"{min(cpus):.3f} / {statistics.median(cpus):.3f}", ratio))
    head = (f"{args.ops} ops in {args.funcs} functions; {args.rounds} rounds; load average "
            f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    if args.markdown:
        print(head + "\n")
        print("| command | wall s (best / median) | CPU s (best / median) | vs mlir-opt-19 "
              "(best) |\n|---|---|---|---|")
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        print(head)
        for r in rows:
            print(f"{r[0]:<40} wall {r[1]:>15}  cpu {r[2]:>15}  {r[3]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
