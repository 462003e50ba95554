#!/usr/bin/env python3
"""Sweep MLIR's ``.td`` files: does tdflow resolve each exactly as ``llvm-tblgen-19`` does?

    python3 tools/tblgen_sweep.py                 # one line per file, then the summary
    python3 tools/tblgen_sweep.py --summary       # the summary and the files that differ
    python3 tools/tblgen_sweep.py -k SPIRV -j 1   # only paths containing SPIRV, one process
    python3 tools/tblgen_sweep.py --targets       # LLVM's five target descriptions instead

Every ``.td`` under ``$(llvm-config-19 --includedir)/mlir`` is run through ``llvm-tblgen-19
--dump-json -I <includedir> -I <file's dir>``; those it accepts (M) are parsed by tdflow with the
same search path and the record cache off, and compared record by record after anonymous records
are renamed by content (tests/tdparser/jsoncompare.py). Prints ``N/M MLIR files match
llvm-tblgen`` and the first difference of every file that does not. At most 2 worker processes
(the machines this runs on are shared); each file gets ``--timeout`` seconds. Exit status 0 when
every accepted file matches or is on docs/tablegen-compat.md's cannot-match list, else 1.

``--targets`` runs LLVM's target descriptions (``../shared/corpus/llvm19-targets/<T>/<T>.td``,
``-k`` filters by target name) through both tools, tdflow parsing each once for ``--dump-json``
and ``--print-records`` (tests/tdparser/targets_oracle.py), one target at a time (llvm-tblgen
needs 16 GB for AMDGPU). Prints a line per target and ``llvm targets: --dump-json N/M,
--print-records K/M identical, names L/M``; documents and texts are compared with anonymous
records renamed by content, names exactly. Exit status 1 when a document or text differs, or
names differ on a target not in test_llvm_targets.py's TARGET_KNOWN.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "tdparser"))

import oracle  # noqa: E402


def check_file(job: tuple[str, str, str, int]) -> dict:
    """Compare one file; never raises. Runs in a worker process."""
    tblgen, include, rel, timeout = job
    path = Path(include) / rel
    incs = [include, str(path.parent)]
    start = time.perf_counter()
    result = {"file": rel, "status": "match", "first": "", "seconds": 0.0}
    theirs = oracle.run_llvm(tblgen, path, incs)
    if not theirs.ok:
        first = theirs.stderr.strip().splitlines()
        result.update(status="rejected", first=first[0] if first else "")
        return result

    def on_alarm(signum, frame):
        raise TimeoutError(f"no result within {timeout} s")

    old = signal.signal(signal.SIGALRM, on_alarm) if hasattr(signal, "SIGALRM") else None
    if old is not None:
        signal.alarm(timeout)
    try:
        diffs = oracle.compare(tblgen, path, incs, limit=1)
        if diffs:
            result.update(status="differ", first=diffs[0])
    except TimeoutError as exc:
        result.update(status="timeout", first=str(exc))
    except Exception as exc:  # noqa: BLE001 - a crash is a result to report, not a stop
        result.update(status="crash", first=f"{type(exc).__name__}: {exc}".splitlines()[0])
    finally:
        if old is not None:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
    result["seconds"] = round(time.perf_counter() - start, 2)
    return result


def check_targets(tblgen: str, include: Path, name_filter: str, timeout: int) -> int:
    """The ``--targets`` mode: compare each target, print the lines, return the exit status."""
    import targets_oracle
    from test_llvm_targets import TARGET_KNOWN, TARGETS

    names = [t for t in targets_oracle.TARGET_NAMES if name_filter in t]
    if not (TARGETS / "X86").is_dir():
        print(f"llvm targets skipped: shared corpus absent ({TARGETS})")
        return 0
    counts = {"json": 0, "printed": 0, "names": 0}
    bad = 0
    for target in names:
        td = TARGETS / target / f"{target}.td"
        run = targets_oracle.run_target(tblgen, td, [str(td.parent), str(include)], timeout,
                                        printed=True)
        times = f"tdflow {run.ours_s:.0f} s, llvm-tblgen {run.llvm_s:.0f} s"
        if run.ours_error or run.theirs is None or run.theirs_text is None:
            why = run.ours_error or "llvm-tblgen-19 failed"
            print(f"{target}: ERROR {why} ({times})", flush=True)
            bad += 1
            continue
        res = targets_oracle.compare_target(run, limit=3)
        counts["json"] += not res.documents
        counts["printed"] += not res.printed
        counts["names"] += not res.names
        raw = "byte-identical" if res.bytes_identical else "bytes differ in anonymous_N only"
        parts = [f"--dump-json {'identical' if not res.documents else 'DIFFERS'}",
                 f"--print-records {'identical' if not res.printed else 'DIFFERS'}"
                 + (f" ({raw})" if not res.printed else ""),
                 "names identical" if not res.names else
                 "names DIFFER" + (" [known]" if target in TARGET_KNOWN else "")]
        print(f"{target}: {', '.join(parts)} ({times})", flush=True)
        for line in (res.documents + res.printed + res.names)[:6]:
            print(f"    {line}")
        bad += bool(res.documents or res.printed or (res.names and target not in TARGET_KNOWN))
    n = len(names)
    print(f"llvm targets: --dump-json {counts['json']}/{n}, --print-records "
          f"{counts['printed']}/{n} identical, names {counts['names']}/{n}")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--summary", action="store_true",
                    help="print only the summary and the files that differ")
    ap.add_argument("-k", dest="filter", default="", help="only files whose path contains this")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="worker processes (at most 2)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per file")
    ap.add_argument("--json", metavar="OUT", help="also write every result to OUT as JSON")
    ap.add_argument("--targets", action="store_true",
                    help="compare LLVM's five target descriptions (JSON and --print-records)")
    args = ap.parse_args(argv)

    tblgen, include = oracle.find_llvm_tblgen(), oracle.mlir_include_dir()
    if tblgen is None or include is None:
        print("tblgen sweep skipped: llvm-tblgen-19 or MLIR's .td files (Debian llvm-19, "
              "libmlir-19-dev) are not installed")
        return 0
    if args.targets:
        return check_targets(tblgen, include, args.filter, max(args.timeout, 600))
    os.environ["TDFLOW_NO_CACHE"] = "1"
    files = [f for f in oracle.mlir_td_files(include) if args.filter in f]
    jobs = [(tblgen, str(include), rel, args.timeout) for rel in files]
    known = oracle.known_mismatches()
    start = time.perf_counter()
    results = []
    workers = max(1, min(2, args.jobs))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for res in pool.map(check_file, jobs):
            results.append(res)
            if not args.summary and res["status"] != "rejected":
                line = f"{res['status'].upper():8} {res['file']} ({res['seconds']} s)"
                print(line + (f": {res['first']}" if res["first"] else ""), flush=True)

    accepted = [r for r in results if r["status"] != "rejected"]
    matching = [r for r in accepted if r["status"] == "match"]
    bad = [r for r in accepted if r["status"] != "match"]
    elapsed = time.perf_counter() - start
    if args.summary and bad:
        for r in bad:
            note = " [known: docs/tablegen-compat.md]" if r["file"] in known else ""
            print(f"{r['status'].upper():8} {r['file']}{note}: {r['first']}")
    unexpected = [r for r in bad if r["file"] not in known]
    print(f"{len(matching)}/{len(accepted)} MLIR files match llvm-tblgen "
          f"({len(results) - len(accepted)} rejected by llvm-tblgen itself, "
          f"{len(bad) - len(unexpected)} known mismatches; {elapsed:.0f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
