"""Rewrite tests/onnx/backend_filters.json: run ONNX's backend suite on tdflow's CPU backend with
no filters and list every failing case with its reason.

    $ python tools/onnx_filters.py            # run everything, rewrite the file
    $ python tools/onnx_filters.py -k resize  # only cases matching a regex; others keep their entries

A reason already in the file is kept for a case that still fails (write better ones by hand: the
derived reason is the first line of the error); cases that pass now are dropped.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "onnx"))

from backend_suite import FILTERS, backend_test, case_name, load_filters  # noqa: E402

# error text -> the reason written for it (first match wins)
_REASONS = [
    (r"unsupported numpy dtype object|dtype.*str|string", "string tensors: tdflow has no string "
     "element type"),
    (r"float8|float4|int4|uint4|FLOAT8|FLOAT4|INT4|UINT4", "8-bit/4-bit floats and 4-bit ints: "
     "tdflow has no such element type"),
    (r"complex", "complex tensors: tdflow has no complex element type"),
    (r"sequence|optional|Sequence|Optional", "sequence and optional values: tdflow values are "
     "tensors"),
    (r"graph attributes", "control flow (If, Loop, Scan): graph attributes are not lowered"),
]


def reason_of(err: str) -> str:
    text = err.strip().splitlines()
    heads = [i for i, line in enumerate(text) if re.match(r"^[\w.]*(Error|Exception)\b", line)]
    at = heads[-1] if heads else len(text) - 1
    last = text[at] if text else "failed"
    missing = [f"{m[1]}-{m[2]}" for line in text[at:]
               for m in [re.search(r"ONNX op (\w+) \(version (\d+)\) has no lowering", line)] if m]
    if missing:
        return "no lowering to tdflow ops for " + ", ".join(dict.fromkeys(missing))
    for pattern, reason in _REASONS:
        if re.search(pattern, last):
            return reason
    last = re.sub(r"^tdflow\.\S+\.", "", last)
    return last[:240]


class _Collect(unittest.TextTestResult):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.failed: dict[str, str] = {}
        self.ran: set[str] = set()
        self.slow: list[tuple[float, str]] = []

    def startTest(self, test):
        self._t0 = time.perf_counter()
        super().startTest(test)

    def stopTest(self, test):
        self.slow.append((time.perf_counter() - self._t0, test._testMethodName))
        super().stopTest(test)

    def addSuccess(self, test):
        self.ran.add(test._testMethodName)
        super().addSuccess(test)

    def _fail(self, test, err):
        self.ran.add(test._testMethodName)
        self.failed[test._testMethodName] = reason_of(self._exc_info_to_string(err, test))

    def addFailure(self, test, err):
        self._fail(test, err)
        super().addFailure(test, err)

    def addError(self, test, err):
        self._fail(test, err)
        super().addError(test, err)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-k", help="only cases whose name matches this regex")
    p.add_argument("--fresh", action="store_true", help="derive every reason anew")
    args = p.parse_args(argv)
    bt = backend_test(__name__, with_filters=False)
    if args.k:
        bt.include(args.k)
    suite = unittest.TestSuite()
    for cls in bt.test_cases.values():
        for name in unittest.TestLoader().getTestCaseNames(cls):
            if name.endswith("_cpu") and (not args.k or re.search(args.k, name)):
                suite.addTest(cls(name))
    result = unittest.TextTestRunner(resultclass=_Collect, verbosity=0,
                                     stream=open("/dev/null", "w")).run(suite)
    old = {} if args.fresh else load_filters()
    new = {pat: why for pat, why in old.items()
           if args.k and not any(re.fullmatch(pat, case_name(t)) for t in result.ran)}
    for test, why in sorted(result.failed.items()):
        name = case_name(test)
        key = re.escape(name)
        new[key] = old.get(key, why)
    FILTERS.write_text(json.dumps({
        "about": "ONNX backend cases tdflow fails, each with its reason; rewritten by "
                 "tools/onnx_filters.py. Keys are regexes over case names (no _cpu suffix).",
        "expected_failures": dict(sorted(new.items())),
    }, indent=1) + "\n")
    passed = len(result.ran) - len(result.failed)
    print(f"{passed}/{len(result.ran)} passed; {len(new)} expected failures written to {FILTERS}")
    for secs, name in sorted(result.slow, reverse=True)[:8]:
        print(f"  {secs:6.2f} s  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
