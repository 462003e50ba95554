#!/usr/bin/env python3
"""Benchmark tdflow's TableGen front end against ``llvm-tblgen-19 --dump-json``, in one run.

    python3 bench/tblgen_bench.py                    # ArithOps.td and SPIRVOps.td
    python3 bench/tblgen_bench.py --runs 9 --cold-runs 3 --markdown

For each file, the median of N runs of:

* ``llvm-tblgen``: ``llvm-tblgen-19 --dump-json -I <inc> -I <dir> FILE``, timed as a subprocess
  (output to /dev/null) -- the reference;
* ``cold``: ``parse_file(..., use_cache=False)`` in this process (parse + resolve), and the same
  followed by ``to_json``;
* ``warm``: ``parse_file(...)`` answered by the on-disk cache (a private cache dir, primed once);
* ``cli cold`` / ``cli warm``: ``tdflow tblgen --dump-json [--no-cache]`` end to end as a
  subprocess, for a like-for-like comparison with llvm-tblgen (Python start-up and JSON output
  included).

Targets (issue 2): cold within 10x of llvm-tblgen, warm no slower than llvm-tblgen. Each line
prints the ratio and PASS or MISS.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = ["mlir/Dialect/Arith/IR/ArithOps.td", "mlir/Dialect/SPIRV/IR/SPIRVOps.td"]
COLD_TARGET, WARM_TARGET = 10.0, 1.0


def find_tool(name: str) -> str | None:
    for cand in (f"{name}-19", name, f"/usr/lib/llvm-19/bin/{name}"):
        path = shutil.which(cand)
        if path:
            return path
    return None


def mlir_include() -> Path | None:
    cfg = find_tool("llvm-config")
    cands = []
    if cfg:
        out = subprocess.run([cfg, "--includedir"], capture_output=True, text=True)
        cands.append(Path(out.stdout.strip()))
    cands.append(Path("/usr/lib/llvm-19/include"))
    return next((c for c in cands if (c / "mlir" / "IR" / "OpBase.td").is_file()), None)


def median_time(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run_quiet(cmd: list[str], env: dict | None = None) -> None:
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)


def tdflow_cmd() -> list[str]:
    # `python -m tdflow` rather than the `tdflow` script: on PATH that may be a version
    # manager's shell shim (pyenv), which would add its own start-up to every measurement.
    return [sys.executable, "-m", "tdflow"]


def bench_file(rel: str, inc: Path, tblgen: str, runs: int, cold_runs: int) -> dict:
    from tdflow.tdparser import cache, parse_file, to_json

    path = inc / rel
    incs = [str(inc), str(path.parent)]
    flags = [f"-I{d}" for d in incs]
    res: dict[str, float] = {}
    res["llvm"] = median_time(lambda: run_quiet([tblgen, "--dump-json", *flags, str(path)]),
                              runs)
    res["cold"] = median_time(lambda: parse_file(path, incs, use_cache=False), cold_runs)
    res["cold+json"] = median_time(lambda: to_json(parse_file(path, incs, use_cache=False)),
                                   cold_runs)
    parse_file(path, incs)  # prime the cache

    def warm():
        parse_file(path, incs)
        assert cache.last_event == "hit", f"expected a cache hit, got {cache.last_event!r}"

    res["warm"] = median_time(warm, runs)
    env = dict(os.environ)
    env.pop("TDFLOW_NO_CACHE", None)
    cli = [*tdflow_cmd(), "tblgen", "--dump-json", *flags, str(path)]
    res["cli cold"] = median_time(lambda: run_quiet([*cli, "--no-cache"], env), cold_runs)
    run_quiet(cli, env)
    res["cli warm"] = median_time(lambda: run_quiet(cli, env), runs)
    rk = parse_file(path, incs)
    res["records"] = len(rk)
    res["files"] = len(rk.files)
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7, help="runs per warm / llvm measurement")
    ap.add_argument("--cold-runs", type=int, default=3, help="runs per cold measurement")
    ap.add_argument("--markdown", action="store_true", help="also print a markdown table")
    ap.add_argument("files", nargs="*", default=FILES, help="paths under the include dir")
    args = ap.parse_args(argv)

    tblgen, inc = find_tool("llvm-tblgen"), mlir_include()
    if tblgen is None or inc is None:
        print("needs llvm-tblgen-19 and MLIR's .td files (Debian llvm-19, libmlir-19-dev)")
        return 2
    sys.path.insert(0, str(ROOT))
    os.environ["TDFLOW_CACHE_DIR"] = tempfile.mkdtemp(prefix="tdflow-bench-cache-")
    os.environ.pop("TDFLOW_NO_CACHE", None)

    rows = []
    for rel in args.files:
        r = bench_file(rel, inc, tblgen, args.runs, args.cold_runs)
        llvm = r["llvm"]
        print(f"{rel}  ({r['files']} files, {r['records']} defs)")
        print(f"  {'llvm-tblgen --dump-json':26} {llvm * 1e3:9.1f} ms")
        for key, label, target in (("cold", "cold parse+resolve", COLD_TARGET),
                                   ("cold+json", "cold + to_json", None),
                                   ("warm", "warm (cache hit)", WARM_TARGET),
                                   ("cli cold", "CLI --no-cache (process)", None),
                                   ("cli warm", "CLI cached (process)", None)):
            ratio = r[key] / llvm
            verdict = ""
            if target is not None:
                verdict = f"  target <= {target:g}x: {'PASS' if ratio <= target else 'MISS'}"
            print(f"  {label:26} {r[key] * 1e3:9.1f} ms  {ratio:6.2f}x{verdict}")
        rows.append((rel, r))
    if args.markdown:
        print()
        print("| file | llvm-tblgen | cold | cold+json | warm | CLI cold | CLI warm |")
        print("|---|---|---|---|---|---|---|")
        for rel, r in rows:
            cells = [f"{r['llvm'] * 1e3:.0f} ms"] + [
                f"{r[k] * 1e3:.0f} ms ({r[k] / r['llvm']:.2f}x)"
                for k in ("cold", "cold+json", "warm", "cli cold", "cli warm")]
            print(f"| `{Path(rel).name}` | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
