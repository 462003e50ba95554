#!/usr/bin/env python3
"""Compare tdflow's ``--dump-json`` with ``llvm-tblgen-19``'s for one or more .td files.

    python tools/tblgen_diff.py FILE.td [-I DIR]... [-v]

Anonymous records are renamed by content before comparing. Exit status 1 if any file differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time

_ANON = re.compile(r"anonymous_\d+")


def _sub(obj, f):
    if isinstance(obj, str):
        return _ANON.sub(lambda m: f(m.group()), obj)
    if isinstance(obj, list):
        return [_sub(x, f) for x in obj]
    if isinstance(obj, dict):
        return {k: _sub(v, f) for k, v in obj.items()}
    return obj


def canonical(doc: dict) -> dict:
    """Rename ``anonymous_N`` records by a hash of their content."""
    recs = {k: v for k, v in doc.items() if not k.startswith("!")}
    anon = [k for k, v in recs.items() if v.get("!anonymous")]
    label = {k: "A" for k in anon}
    for _ in range(3):
        new = {}
        for k in anon:
            body = {f: v for f, v in recs[k].items() if f != "!name"}
            body = _sub(body, lambda n, lab=label: lab.get(n, n))
            new[k] = hashlib.sha1(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12]
        label = new
    names = {}
    seen: dict[str, int] = {}
    for k in sorted(anon, key=lambda k: (label[k], int(k.split("_")[1]))):
        i = seen.get(label[k], 0)
        seen[label[k]] = i + 1
        names[k] = f"anon#{label[k]}#{i}"
    out = {}
    for k, v in doc.items():
        out[names.get(k, k)] = _sub(v, lambda n: names.get(n, n))
    if "!instanceof" in out:
        out["!instanceof"] = {c: sorted(v) for c, v in out["!instanceof"].items()}
    return out


def llvm_json(path, incs):
    args = ["llvm-tblgen-19", "--dump-json", *[f"-I{d}" for d in incs], path]
    t = time.perf_counter()
    p = subprocess.run(args, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if p.returncode != 0:
        return None, p.stderr, dt
    return json.loads(p.stdout), "", dt


def ours_json(path, incs):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    from tdflow.tdparser import parse_file, to_json

    t = time.perf_counter()
    try:
        rk = parse_file(path, include_dirs=incs, use_cache=False)
    except Exception as e:  # report, keep going
        return None, e.render() if hasattr(e, "render") else repr(e), time.perf_counter() - t
    return to_json(rk), "", time.perf_counter() - t


def diff(a: dict, b: dict, limit=5) -> list[str]:
    out = []
    ka = {k for k in a if k != "!instanceof"}
    kb = {k for k in b if k != "!instanceof"}
    for k in sorted(ka - kb)[:limit]:
        out.append(f"missing record {k}")
    for k in sorted(kb - ka)[:limit]:
        out.append(f"extra record {k}")
    for k in sorted(ka & kb):
        if a[k] != b[k]:
            ra, rb = a[k], b[k]
            if not isinstance(ra, dict):
                out.append(f"{k}: {ra!r} != {rb!r}")
                continue
            for f in sorted(set(ra) | set(rb)):
                if ra.get(f, "<absent>") != rb.get(f, "<absent>"):
                    out.append(f"{k}.{f}: llvm={json.dumps(ra.get(f, '<absent>'))[:400]}\n"
                               f"      ours={json.dumps(rb.get(f, '<absent>'))[:400]}")
                    break
            if len(out) >= limit:
                break
    if not out and a.get("!instanceof") != b.get("!instanceof"):
        ia, ib = a.get("!instanceof", {}), b.get("!instanceof", {})
        for c in sorted(set(ia) | set(ib)):
            if ia.get(c) != ib.get(c):
                out.append(f"!instanceof[{c}]: llvm={ia.get(c)} ours={ib.get(c)}")
                break
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("-I", dest="incs", action="append", default=[])
    ap.add_argument("--mlir", action="store_true", help="add MLIR include dir and file's dir")
    ap.add_argument("-q", action="store_true")
    ns = ap.parse_args(argv)
    bad = 0
    ok = 0
    skipped = 0
    for f in ns.files:
        incs = list(ns.incs)
        if ns.mlir:
            incs = ["/usr/lib/llvm-19/include", os.path.dirname(f)] + incs
        ref, rerr, t1 = llvm_json(f, incs)
        if ref is None:
            skipped += 1
            if not ns.q:
                print(f"SKIP {f}: llvm-tblgen rejects it")
            continue
        mine, merr, t2 = ours_json(f, incs)
        if mine is None:
            bad += 1
            print(f"FAIL {f}: ours raised\n{merr[:2000]}")
            continue
        d = diff(canonical(ref), canonical(mine))
        if d:
            bad += 1
            print(f"DIFF {f} ({len(ref)} records)", flush=True)
            for line in d:
                print("   ", line)
        else:
            ok += 1
            if not ns.q:
                print(f"OK   {f} ({len(ref)} records, llvm {t1*1000:.0f} ms, ours {t2*1000:.0f} ms)")
    print(f"{ok} match, {bad} differ, {skipped} rejected by llvm-tblgen", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
