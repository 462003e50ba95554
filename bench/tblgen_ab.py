#!/usr/bin/env python3
"""``tdflow tblgen`` before and after, in one run: a baseline commit against this checkout.

    python3 bench/tblgen_ab.py --baseline e1bc01a                  # ArithOps.td, warm and cold
    python3 bench/tblgen_ab.py --baseline e1bc01a --x86 --x86-rounds 2

The baseline commit is exported (``git archive``) to a temporary directory laid out as the
installed package (``tdflow.tdparser`` = ``tdparser/`` and so on, from pyproject.toml) and run
with ``PYTHONPATH`` pointing at it; *after* is this checkout. Every measure is a whole process,
as a user runs it (``python -m tdflow tblgen --dump-json ...``, output discarded), and the
versions take turns round by round with llvm-tblgen-19, so a burst of load on a shared machine
hits them alike. Printed: the minimum and median wall and CPU time (user + system of the child)
per measure and the ratio to llvm-tblgen's in the same rounds. CPU time is the steadier one on a
busy machine.

* *warm*: a cache hit (each version fills its own entry first; the entries differ since the
  parser's fingerprint is part of the key);
* *cold*: ``--no-cache``;
* *X86 cold* (``--x86``): LLVM's X86 target, ``--no-cache``, as ``bench/tblgen_targets.py``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from _common import ROOT, find_tool, mlir_include_dir  # noqa: E402

ARITH = "mlir/Dialect/Arith/IR/ArithOps.td"


def export_baseline(commit: str, dest: Path) -> Path:
    """``commit``'s tree under ``dest/src``, and a package layout of it under ``dest/pkg``
    (symbolic links per pyproject's package-dir); returns the folder for PYTHONPATH."""
    src = dest / "src"
    src.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    return package_layout(src, dest / "pkg")


def package_layout(src: Path, pkg: Path) -> Path:
    """The installed package's layout of the source tree ``src`` under ``pkg`` (symbolic links
    per pyproject's package-dir); returns ``pkg``, the folder for PYTHONPATH.

    The checkout is laid out so too: through the editable install, ``tdflow.tdparser`` and the
    other mapped packages would come from wherever it was installed from, which need not be
    this checkout (a git worktree, say)."""
    import tomllib  # Python 3.11+, as this machine's; the package needs 3.10

    conf = tomllib.loads((src / "pyproject.toml").read_text())
    dirs = conf["tool"]["setuptools"]["package-dir"]
    (pkg / "tdflow").mkdir(parents=True)
    for entry in (src / dirs["tdflow"]).iterdir():
        os.symlink(entry, pkg / "tdflow" / entry.name)
    for name, folder in sorted(dirs.items(), key=lambda kv: kv[0].count(".")):
        if name == "tdflow" or name.count(".") != 1:
            continue  # nested packages come with their parent's folder
        os.symlink(src / folder, pkg / Path(*name.split(".")))
    return pkg


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def timed(cmd: list[str], env: dict) -> tuple[float, float]:
    """(wall, CPU) seconds of ``cmd`` as a process, output discarded."""
    c0, t0 = _cpu(), time.perf_counter()
    # Not from the checkout: `python -m` puts the working directory first on sys.path, and
    # the checkout's tdflow/ would then shadow the baseline's.
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   env=env, cwd=tempfile.gettempdir())
    return time.perf_counter() - t0, _cpu() - c0


def run_rounds(measures: dict, rounds: int) -> dict:
    """Each measure ``name -> (cmd, env)`` once per round, in turn; name -> [(wall, cpu)]."""
    out: dict = {name: [] for name in measures}
    for _ in range(rounds):
        for name, (cmd, env) in measures.items():
            out[name].append(timed(cmd, env))
    return out


def report(title: str, results: dict, ref: str) -> None:
    print(title)
    rw = statistics.median(w for w, _ in results[ref])
    rc = statistics.median(c for _, c in results[ref])
    for name, xs in results.items():
        w = [x[0] for x in xs]
        c = [x[1] for x in xs]
        print(f"  {name:22} wall min {min(w) * 1e3:8.1f} med {statistics.median(w) * 1e3:8.1f} ms"
              f"  CPU min {min(c) * 1e3:8.1f} med {statistics.median(c) * 1e3:8.1f} ms"
              f"  vs {ref}: wall {statistics.median(w) / rw:5.2f}x CPU "
              f"{statistics.median(c) / max(rc, 1e-9):5.2f}x")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", required=True, help="the commit to compare with")
    ap.add_argument("--rounds", type=int, default=21, help="rounds of the ArithOps.td measures")
    ap.add_argument("--cold-rounds", type=int, default=5, help="rounds of the cold measures")
    ap.add_argument("--x86", action="store_true", help="also LLVM's X86 target, cold")
    ap.add_argument("--x86-rounds", type=int, default=1)
    ap.add_argument("--bytecode", action="store_true",
                    help="let Python write and use bytecode (a private PYTHONPYCACHEPREFIX, "
                         "filled by the first runs), as an installed package runs")
    args = ap.parse_args(argv)
    tblgen, inc = find_tool("llvm-tblgen"), mlir_include_dir()
    if tblgen is None or inc is None:
        print("needs llvm-tblgen-19 and MLIR's .td files (Debian llvm-19, libmlir-19-dev)")
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="tdflow-tblgen-ab-"))
    base_pkg = export_baseline(args.baseline, tmp / "baseline")
    env = {k: v for k, v in os.environ.items() if k not in ("TDFLOW_NO_CACHE", "PYTHONPATH")}
    env["TDFLOW_CACHE_DIR"] = str(tmp / "cache")
    if args.bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    before_env = {**env, "PYTHONPATH": str(base_pkg)}
    env["PYTHONPATH"] = str(package_layout(ROOT, tmp / "after"))
    py = [sys.executable, "-m", "tdflow", "tblgen", "--dump-json"]
    arith = [f"-I{inc}", str(inc / ARITH)]
    for e in (before_env, env):  # fill each version's entry, then let it settle (racy stats)
        for _ in range(2):
            timed([*py, *arith], e)
        timed([*py, "--no-cache", *arith], e)  # the cold path's modules' bytecode
    time.sleep(2.5)
    for e in (before_env, env):
        timed([*py, *arith], e)
    print(f"baseline {args.baseline} vs this checkout; load average {os.getloadavg()[0]:.1f}"
          + ("; with bytecode" if args.bytecode else
             "; no bytecode" if env.get("PYTHONDONTWRITEBYTECODE") else ""))
    llvm = ([tblgen, "--dump-json", *arith], env)
    report("ArithOps.td, warm (cache hit):", run_rounds({
        "llvm-tblgen": llvm, "before": ([*py, *arith], before_env),
        "after": ([*py, *arith], env)}, args.rounds), "llvm-tblgen")
    report("ArithOps.td, cold (--no-cache):", run_rounds({
        "llvm-tblgen": llvm, "before": ([*py, "--no-cache", *arith], before_env),
        "after": ([*py, "--no-cache", *arith], env)}, args.cold_rounds), "llvm-tblgen")
    if args.x86:
        d = ROOT.parent / "shared" / "corpus" / "llvm19-targets" / "X86"
        x86 = [f"-I{d}", f"-I{inc}", str(d / "X86.td")]  # LLVM's include dir is MLIR's
        report("X86, cold (--no-cache):", run_rounds({
            "llvm-tblgen": ([tblgen, "--dump-json", *x86], env),
            "before": ([*py, "--no-cache", *x86], before_env),
            "after": ([*py, "--no-cache", *x86], env)}, args.x86_rounds), "llvm-tblgen")
    return 0


if __name__ == "__main__":
    sys.exit(main())
