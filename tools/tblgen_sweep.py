#!/usr/bin/env python3
"""Sweep MLIR's ``.td`` files: does tdflow resolve each exactly as ``llvm-tblgen-19`` does?

    python3 tools/tblgen_sweep.py                 # one line per file, then the summary
    python3 tools/tblgen_sweep.py --summary       # the summary and the files that differ
    python3 tools/tblgen_sweep.py -k SPIRV -j 1   # only paths containing SPIRV, one process

Every ``.td`` under ``$(llvm-config-19 --includedir)/mlir`` is run through ``llvm-tblgen-19
--dump-json -I <includedir> -I <file's dir>``; those it accepts (M) are parsed by tdflow with the
same search path and the record cache off, and compared record by record after anonymous records
are renamed by content (tests/tdparser/jsoncompare.py). Prints ``N/M MLIR files match
llvm-tblgen`` and the first difference of every file that does not. At most 2 worker processes
(the machines this runs on are shared); each file gets ``--timeout`` seconds. Exit status 0 when
every accepted file matches or is on docs/tablegen-compat.md's cannot-match list, else 1.
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--summary", action="store_true",
                    help="print only the summary and the files that differ")
    ap.add_argument("-k", dest="filter", default="", help="only files whose path contains this")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="worker processes (at most 2)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per file")
    ap.add_argument("--json", metavar="OUT", help="also write every result to OUT as JSON")
    args = ap.parse_args(argv)

    tblgen, include = oracle.find_llvm_tblgen(), oracle.mlir_include_dir()
    if tblgen is None or include is None:
        print("tblgen sweep skipped: llvm-tblgen-19 or MLIR's .td files (Debian llvm-19, "
              "libmlir-19-dev) are not installed")
        return 0
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
