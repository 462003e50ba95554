#!/usr/bin/env python3
"""Benchmark tdflow's TableGen front end against ``llvm-tblgen-19 --dump-json``, in one run.

    python3 bench/tblgen_bench.py                    # ArithOps.td and SPIRVOps.td
    python3 bench/tblgen_bench.py --runs 9 --cold-runs 3 --markdown
    python3 bench/tblgen_bench.py --targets X86 AMDGPU   # LLVM's targets (bench/tblgen_targets.py)

For each file, the median of N runs of:

* ``llvm-tblgen``: ``llvm-tblgen-19 --dump-json -I <inc> -I <dir> FILE``, timed as a subprocess
  (output to /dev/null) -- the reference;
* ``cold``: ``parse_file(..., use_cache=False)`` in this process (parse + resolve), and the same
  followed by ``to_json``;
* ``warm``: ``parse_file(...)`` answered by the on-disk cache (a private cache dir, primed once);
* ``cli cold`` / ``cli warm``: ``tdflow tblgen --dump-json [--no-cache]`` end to end as a
  subprocess, for a like-for-like comparison with llvm-tblgen (Python start-up and JSON output
  included; a warm call reads the cached JSON text back).

Targets (issue 2): cold within 10x of llvm-tblgen, warm no slower than llvm-tblgen. Each line
prints the ratio and PASS or MISS.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # bench/_common.py, however this script is run or imported
    sys.path.insert(0, str(HERE))

from _common import DOCS, ROOT, find_tool, mlir_include_dir, write_docs_section  # noqa: E402

FILES = ["mlir/Dialect/Arith/IR/ArithOps.td", "mlir/Dialect/SPIRV/IR/SPIRVOps.td"]
COLD_TARGET, WARM_TARGET = 10.0, 1.0


def _cpu_children() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_quiet(cmd: list[str], env: dict | None = None) -> None:
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)


def tdflow_cmd() -> list[str]:
    # `python -m tdflow` rather than the `tdflow` script: on PATH that may be a version
    # manager's shell shim (pyenv), which would add its own start-up to every measurement.
    return [sys.executable, "-m", "tdflow"]


def bench_file(rel: str, inc: Path, tblgen: str, runs: int, cold_runs: int) -> dict:
    """Median wall and CPU seconds of each measure. The measures take turns run by run, so a
    burst of load from other jobs on the machine hits all of them alike."""
    from tdflow.tdparser import cache, parse_file, to_json

    path = inc / rel
    incs = [str(inc), str(path.parent)]
    flags = [f"-I{d}" for d in incs]
    env = dict(os.environ)
    env.pop("TDFLOW_NO_CACHE", None)
    cli = [*tdflow_cmd(), "tblgen", "--dump-json", *flags, str(path)]

    def warm():
        parse_file(path, incs)
        assert cache.last_event == "hit", f"expected a cache hit, got {cache.last_event!r}"

    # (name, callable, runs in a subprocess?, cold?)
    measures = [
        ("llvm", lambda: run_quiet([tblgen, "--dump-json", *flags, str(path)]), True, False),
        ("cold", lambda: parse_file(path, incs, use_cache=False), False, True),
        ("cold+json", lambda: to_json(parse_file(path, incs, use_cache=False)), False, True),
        ("warm", warm, False, False),
        ("cli cold", lambda: run_quiet([*cli, "--no-cache"], env), True, True),
        ("cli warm", lambda: run_quiet(cli, env), True, False),
    ]
    parse_file(path, incs)  # prime the cache (in-process and CLI use the same entry)
    run_quiet(cli, env)
    wall: dict[str, list[float]] = {m[0]: [] for m in measures}
    cpu: dict[str, list[float]] = {m[0]: [] for m in measures}
    for r in range(runs):
        for name, fn, sub, cold in measures:
            if cold and r >= cold_runs:
                continue
            gc.collect()  # garbage of the previous measure is not this one's cost
            c0 = _cpu_children() if sub else time.process_time()
            t0 = time.perf_counter()
            fn()
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append((_cpu_children() if sub else time.process_time()) - c0)
    res: dict = {name: statistics.median(v) for name, v in wall.items()}
    res["cpu"] = {name: statistics.median(v) for name, v in cpu.items()}
    rk = parse_file(path, incs)
    res["records"] = len(rk)
    res["files"] = len(rk.files)
    return res


MEASURES = (("cold", "cold parse+resolve", COLD_TARGET),
            ("cold+json", "cold + to_json", None),
            ("warm", "warm (cache hit)", WARM_TARGET),
            ("cli cold", "CLI --no-cache (process)", None),
            ("cli warm", "CLI cached (process)", None))


def markdown_table(rows: list[tuple[str, dict]]) -> str:
    out = ["| file | measure | wall | ratio | CPU | CPU ratio | target |",
           "|---|---|---:|---:|---:|---:|---|"]
    for rel, r in rows:
        name = f"`{Path(rel).name}` ({r['files']} files, {r['records']} defs)"
        out.append(f"| {name} | llvm-tblgen --dump-json | {r['llvm'] * 1e3:.0f} ms | 1x | "
                   f"{r['cpu']['llvm'] * 1e3:.0f} ms | 1x | |")
        for key, label, target in MEASURES:
            ratio, cratio = r[key] / r["llvm"], r["cpu"][key] / max(r["cpu"]["llvm"], 1e-9)
            verdict = "" if target is None else (
                f"<= {target:g}x: **{'PASS' if ratio <= target else 'MISS'}**")
            out.append(f"| | {label} | {r[key] * 1e3:.0f} ms | {ratio:.2f}x | "
                       f"{r['cpu'][key] * 1e3:.0f} ms | {cratio:.2f}x | {verdict} |")
    return "\n".join(out)


SECTION = "## TableGen front end"


def write_docs(rows, args, load: float) -> None:
    """Replace (or append) this benchmark's section of docs/benchmarks.md; others stay."""
    import platform

    body = (
        f"{SECTION}\n\n"
        f"Command: `python bench/tblgen_bench.py --write-docs` (`--runs {args.runs} --cold-runs "
        f"{args.cold_runs}`; medians). Machine: {platform.machine()}, {os.cpu_count()} CPUs "
        f"shared with other jobs (load average {load:.1f} at the start), Python "
        f"{platform.python_version()}. The measures take turns run by run so bursts of load hit "
        "them alike; wall time is what the targets are about, CPU time (this process, or the "
        "child process for the subprocess rows) is what the work itself cost.\n\n"
        f"{markdown_table(rows)}\n\n"
        "Targets (issue 2): cold parse+resolve within 10x of `llvm-tblgen --dump-json`, warm "
        "(cache hit) load no slower than it. *cold*: `parse_file(..., use_cache=False)` in "
        "process; *warm*: `parse_file(...)` answered by the on-disk cache (stat check of every "
        "file read, CRC of the entry, restricted unpickling of tdflow's record classes only, with the "
        "cyclic GC paused). The CLI rows run "
        "`python -m tdflow tblgen --dump-json` as a process, like llvm-tblgen, so they include "
        "Python's start-up and imports (about 40 ms here: this environment sets "
        "`PYTHONDONTWRITEBYTECODE=1`, so every import compiles its module afresh). A cached CLI "
        "call neither imports the parser nor unpickles records: the JSON text itself is cached "
        "next to the records (`cache.load_or_render`), under the same validity checks.\n"
    )
    write_docs_section(SECTION, body)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7, help="runs per warm / llvm measurement")
    ap.add_argument("--cold-runs", type=int, default=3, help="runs per cold measurement")
    ap.add_argument("--markdown", action="store_true", help="also print a markdown table")
    ap.add_argument("--write-docs", action="store_true",
                    help=f"replace (or append) the '{SECTION}' section of docs/benchmarks.md")
    ap.add_argument("--targets", nargs="+", metavar="T",
                    help="LLVM target descriptions of the shared corpus (X86, AMDGPU, ...) "
                         "instead of files: cold/fill/warm CLI processes vs llvm-tblgen")
    ap.add_argument("--target-runs", type=int, default=1, help="rounds per target")
    ap.add_argument("files", nargs="*", default=FILES, help="paths under the include dir")
    args = ap.parse_args(argv)
    if args.targets:
        return main_targets(args)

    tblgen, inc = find_tool("llvm-tblgen"), mlir_include_dir()
    if tblgen is None or inc is None:
        print("needs llvm-tblgen-19 and MLIR's .td files (Debian llvm-19, libmlir-19-dev)")
        return 2
    sys.path.insert(0, str(ROOT))
    os.environ["TDFLOW_CACHE_DIR"] = tempfile.mkdtemp(prefix="tdflow-bench-cache-")
    os.environ.pop("TDFLOW_NO_CACHE", None)

    load = os.getloadavg()[0]
    rows = []
    for rel in args.files:
        r = bench_file(rel, inc, tblgen, args.runs, args.cold_runs)
        llvm = r["llvm"]
        print(f"{rel}  ({r['files']} files, {r['records']} defs)")
        print(f"  {'llvm-tblgen --dump-json':26} {llvm * 1e3:9.1f} ms  "
              f"(CPU {r['cpu']['llvm'] * 1e3:.1f} ms)")
        for key, label, target in MEASURES:
            ratio = r[key] / llvm
            verdict = ""
            if target is not None:
                verdict = f"  target <= {target:g}x: {'PASS' if ratio <= target else 'MISS'}"
            print(f"  {label:26} {r[key] * 1e3:9.1f} ms  {ratio:6.2f}x  "
                  f"(CPU {r['cpu'][key] * 1e3:.1f} ms){verdict}")
        rows.append((rel, r))
    if args.markdown:
        print()
        print(markdown_table(rows))
    if args.write_docs:
        write_docs(rows, args, load)
        print(f"wrote the '{SECTION}' section of {DOCS}")
    return 0


TARGETS_SECTION = "## TableGen: LLVM's target descriptions"


def main_targets(args) -> int:
    """``--targets``: see ``bench/tblgen_targets.py``."""
    import platform

    import tblgen_targets as tt

    tblgen, inc = find_tool("llvm-tblgen"), mlir_include_dir()
    if tblgen is None or inc is None or not tt.corpus_dir(ROOT).is_dir():
        print("needs llvm-tblgen-19, LLVM 19's include dir and ../shared/corpus/llvm19-targets")
        return 2
    load = os.getloadavg()[0]
    rows = []
    for name in args.targets:
        r = tt.bench_target(name, ROOT, tblgen, str(inc), args.target_runs)
        print(tt.report(name, r), flush=True)
        rows.append((name, r))
    table = tt.markdown(rows)
    if args.markdown:
        print()
        print(table)
    if args.write_docs:
        cmd = "python bench/tblgen_bench.py --write-docs --targets " + " ".join(args.targets)
        body = (f"{TARGETS_SECTION}\n\nCommand: `{cmd}` (`--target-runs {args.target_runs}`; "
                f"medians). Machine: {platform.machine()}, {os.cpu_count()} CPUs shared with "
                f"other jobs (load average {load:.1f} at the start), Python "
                f"{platform.python_version()}. Every measure is a process with the same "
                "arguments as `llvm-tblgen-19 --dump-json -I <T> -I <llvm include> <T>/<T>.td`, "
                "output discarded; peak memory is that process's own `ru_maxrss`. *fill* is the "
                "first cached run on an empty cache dir (its entries are written by a child it "
                "forks after the output is ready), *warm* the run after it. Targets (issue 12): "
                "cold within 3x of llvm-tblgen and below its peak memory, warm within 0.2x, fill "
                f"no slower than cold.\n\n{table}\n")
        write_docs_section(TARGETS_SECTION, body)
        print(f"wrote the '{TARGETS_SECTION}' section of {DOCS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
