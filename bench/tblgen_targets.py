"""``tblgen_bench.py --targets X86 ...``: LLVM's target descriptions (issue 12), as processes.

For each target of ``../shared/corpus/llvm19-targets`` and each of ``--target-runs`` rounds, in
turn (so a burst of load from other jobs hits all measures alike):

* ``llvm``: ``llvm-tblgen-19 --dump-json -I <T> -I <llvm include> <T>/<T>.td -o /dev/null``;
* ``cold``: ``python -m tdflow tblgen --dump-json --no-cache`` with the same arguments;
* ``fill``: the same without ``--no-cache``, on an empty cache dir (it stores the entries);
* ``warm``: the same again once the fill's entries are written (a cache hit).

Wall time and peak memory (``ru_maxrss`` of that process alone, from ``os.wait4``) are the
medians of the rounds. Targets (issue 12): cold within 3x of llvm-tblgen's wall time with a
peak memory below llvm-tblgen's; warm within 0.2x; fill no slower than cold.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COLD_X, WARM_X, FILL_X = 3.0, 0.2, 1.0


def corpus_dir(root: Path) -> Path:
    return root.parent / "shared" / "corpus" / "llvm19-targets"


def timed(cmd: list[str], env: dict) -> tuple[float, float]:
    """(wall seconds, peak RSS in bytes) of ``cmd`` run as a process, output discarded."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {err.decode()[-2000:]}")
    return wall, ru.ru_maxrss * 1024.0


def _entries(cdir: Path) -> int:
    """Finished entries: a file being written is ``.tmp-*.rk`` until its rename."""
    return sum(1 for p in cdir.rglob("*.rk") if not p.name.startswith(".tmp-"))


def bench_target(name: str, root: Path, tblgen: str, llvm_inc: str, runs: int) -> dict:
    """Medians of each measure for target ``name``: {measure: (wall, peak RSS)}."""
    tdir = corpus_dir(root) / name
    args = ["--dump-json", "-I", str(tdir), "-I", llvm_inc, str(tdir / f"{name}.td")]
    cli = [sys.executable, "-m", "tdflow", "tblgen", *args]
    env = dict(os.environ)
    env.pop("TDFLOW_NO_CACHE", None)
    out: dict[str, list] = {"llvm": [], "cold": [], "fill": [], "warm": []}
    for _ in range(runs):
        out["llvm"].append(timed([tblgen, *args, "-o", os.devnull], env))
        out["cold"].append(timed([*cli, "--no-cache"], env))
        cdir = Path(tempfile.mkdtemp(prefix="tdflow-bench-target-"))
        try:
            env_c = {**env, "TDFLOW_CACHE_DIR": str(cdir)}
            out["fill"].append(timed(cli, env_c))
            # The fill's entries are written by a child it forked after its output was ready.
            deadline = time.monotonic() + 600
            while _entries(cdir) < 2 and time.monotonic() < deadline:
                time.sleep(0.1)
            time.sleep(0.2)  # its rename is the last thing it does; let it exit
            out["warm"].append(timed(cli, env_c))
        finally:
            shutil.rmtree(cdir, ignore_errors=True)
    return {k: (statistics.median(w for w, _ in v), statistics.median(m for _, m in v))
            for k, v in out.items()}


def verdicts(r: dict) -> list[tuple[str, str, float, str]]:
    """(measure, what is compared, ratio, PASS/MISS) for the targets of one result."""
    llvm_w, llvm_m = r["llvm"]
    cold_w, cold_m = r["cold"]
    rows = [("cold", "wall / llvm-tblgen", cold_w / llvm_w, cold_w / llvm_w <= COLD_X, COLD_X),
            ("cold", "peak memory / llvm-tblgen", cold_m / llvm_m, cold_m < llvm_m, 1.0),
            ("warm", "wall / llvm-tblgen", r["warm"][0] / llvm_w,
             r["warm"][0] / llvm_w <= WARM_X, WARM_X),
            ("fill", "wall / cold", r["fill"][0] / cold_w, r["fill"][0] / cold_w <= FILL_X,
             FILL_X)]
    return [(m, what, ratio, f"<= {t:g}x: {'PASS' if ok else 'MISS'}")
            for m, what, ratio, ok, t in rows]


def report(name: str, r: dict) -> str:
    lines = [f"{name}"]
    for k in ("llvm", "cold", "fill", "warm"):
        w, m = r[k]
        lines.append(f"  {k:5} {w:8.2f} s  peak {m / 2**30:6.2f} GiB")
    for m, what, ratio, verdict in verdicts(r):
        lines.append(f"  {m:5} {what:27} {ratio:6.2f}x  target {verdict}")
    return "\n".join(lines)


def markdown(rows: list[tuple[str, dict]]) -> str:
    out = ["| target | llvm-tblgen | cold (`--no-cache`) | fill (first run) | warm (hit) | "
           "cold / llvm | cold peak / llvm | warm / llvm | fill / cold |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in rows:
        cells = [f"{r[k][0]:.1f} s, {r[k][1] / 2**30:.2f} GiB" for k in ("llvm", "cold", "fill")]
        cells.append(f"{r['warm'][0]:.2f} s")
        ratios = [f"{ratio:.2f}x ({v.split(': ')[1]})" for _, _, ratio, v in verdicts(r)]
        out.append(f"| {name} | " + " | ".join(cells + ratios) + " |")
    return "\n".join(out)
