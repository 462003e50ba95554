"""Run ONNX's backend test suite on tdflow and say, case by case, what passed and why not.

``python -m tdflow.onnx.suite [-k REGEX] [--kind node] [--failures] [--device CPU]`` prints one
line per case (``pass``, or the first line of the failure) and a total line
``onnx node tests: N/M passed``. Each case is ONNX's own model and data (``onnx.backend.test``),
compared with the stored outputs at the case's tolerances, as ``BackendTest`` compares them.
CI runs the same cases through ``BackendTest`` itself (``tests/onnx/test_backend_suite.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import re
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from tdflow.core.errors import TdflowError

KINDS = ("node", "simple", "pytorch-converted", "pytorch-operator", "real")


@dataclass
class Outcome:
    name: str
    kind: str
    ok: bool
    reason: str
    seconds: float


class _Timeout(TdflowError):
    """A test ran past --timeout (raised from the SIGALRM handler)."""


def cases(kind: str = "node", pattern: str | None = None) -> Iterator[Any]:
    """ONNX's test cases of ``kind`` whose name matches ``pattern`` (a regex, searched)."""
    from onnx.backend.test.loader import load_model_tests

    rx = re.compile(pattern) if pattern else None
    for t in load_model_tests(kind=kind):
        if rx is None or rx.search(t.name):
            yield t


def load_case(t: Any) -> tuple[Any, list[tuple[list[np.ndarray], list[np.ndarray]]]]:
    """The case's model and data sets (``(inputs, expected outputs)`` pairs)."""
    import onnx
    from onnx import numpy_helper

    if t.model is not None:
        return t.model, [(list(i), list(o)) for i, o in t.data_sets]
    light = light_path(t)
    if light is not None:  # ONNX's light zoo: its own dummy inputs and stored outputs
        from onnx.backend.test.runner import Runner

        model = onnx.load(light)
        inits = {i.name for i in model.graph.initializer}
        inputs = [Runner.generate_dummy_data(x, seed=0, name=t.model_name, random=False)
                  for x in model.graph.input if x.name not in inits]
        outputs = []
        for i in range(len(model.graph.output)):
            tp = onnx.TensorProto()
            with open(f"{os.path.splitext(light)[0]}_output_{i}.pb", "rb") as fh:
                tp.ParseFromString(fh.read())
            outputs.append(numpy_helper.to_array(tp))
        return model, [(inputs, outputs)]
    path = os.path.join(t.model_dir, "model.onnx")
    model = onnx.load(path)
    sets = []
    for d in sorted(glob.glob(os.path.join(t.model_dir, "test_data_set_*"))):
        def read(prefix: str, d: str = d) -> list[np.ndarray]:
            out = []
            for f in sorted(glob.glob(os.path.join(d, f"{prefix}_*.pb")),
                            key=lambda p: int(re.findall(r"(\d+)\.pb$", p)[0])):
                tp = onnx.TensorProto()
                with open(f, "rb") as fh:
                    tp.ParseFromString(fh.read())
                out.append(numpy_helper.to_array(tp))
            return out
        sets.append((read("input"), read("output")))
    return model, sets


def light_path(t: Any) -> str | None:
    """The local file of a light-zoo case (``url`` ``onnx/backend/test/data/light/...``)."""
    url = getattr(t, "url", None) or ""
    if not url.startswith("onnx/backend/test/data/light/"):
        return None
    import onnx

    root = os.path.dirname(os.path.dirname(onnx.__file__))
    path = os.path.join(root, url)
    return path if os.path.exists(path) else None


def run_case(t: Any, device: str = "CPU", timeout: int = 120) -> Outcome:
    """Prepare the case's model, run each data set and compare with the stored outputs."""
    from .backend import TdflowBackend

    start = time.perf_counter()

    def alarm(*_: Any) -> None:
        raise _Timeout()

    old = signal.signal(signal.SIGALRM, alarm) if timeout else None
    if timeout:
        signal.alarm(timeout)
    try:
        if t.model is None and light_path(t) is None and not (t.model_dir and os.path.exists(
                os.path.join(t.model_dir, "model.onnx"))):
            return Outcome(t.name, t.kind, False, "model data not available offline", 0.0)
        model, sets = load_case(t)
        rep = TdflowBackend.prepare(model, device)
        for inputs, expected in sets:
            got = rep.run(inputs)
            if len(got) != len(expected):
                return Outcome(t.name, t.kind, False, f"{len(got)} outputs, expected "
                               f"{len(expected)}", time.perf_counter() - start)
            for i, (g, e) in enumerate(zip(got, expected)):
                e = np.asarray(e)
                if e.dtype == object:
                    return Outcome(t.name, t.kind, False, "string outputs",
                                   time.perf_counter() - start)
                if g.shape != e.shape:
                    return Outcome(t.name, t.kind, False, f"output {i}: shape {g.shape}, "
                                   f"expected {e.shape}", time.perf_counter() - start)
                if g.dtype != e.dtype:
                    return Outcome(t.name, t.kind, False, f"output {i}: dtype {g.dtype}, "
                                   f"expected {e.dtype}", time.perf_counter() - start)
                try:
                    np.testing.assert_allclose(g, e, rtol=t.rtol, atol=t.atol)
                except AssertionError as exc:
                    lines = [ln for ln in str(exc).splitlines() if ln.strip()]
                    why = next((ln.strip() for ln in lines if "Mismatch" in ln), "mismatch")
                    return Outcome(t.name, t.kind, False, f"output {i}: {why}",
                                   time.perf_counter() - start)
        return Outcome(t.name, t.kind, True, "", time.perf_counter() - start)
    except _Timeout:
        return Outcome(t.name, t.kind, False, f"timed out after {timeout} s",
                       time.perf_counter() - start)
    except Exception as exc:  # noqa: BLE001 - every failure is a line of the report
        text = str(exc).strip().splitlines()
        return Outcome(t.name, t.kind, False, f"{type(exc).__name__}: "
                       f"{text[0] if text else ''}"[:300], time.perf_counter() - start)
    finally:
        if timeout:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tdflow.onnx.suite", description=__doc__)
    p.add_argument("-k", dest="pattern", help="only cases whose name matches this regex")
    p.add_argument("--kind", choices=KINDS, action="append",
                   help="which tests (repeatable; default: node)")
    p.add_argument("--failures", action="store_true", help="print failing cases only")
    p.add_argument("--device", default="CPU")
    p.add_argument("--timeout", type=int, default=120, help="seconds per case")
    args = p.parse_args(argv)
    import warnings

    warnings.filterwarnings("ignore")
    np.seterr(all="ignore")
    from tdflow.tdparser.progress import progress_bar

    for kind in args.kind or ["node"]:
        results = []
        todo = list(cases(kind, args.pattern))
        bar = progress_bar()  # on a terminal only: a pipe gets the lines and the total
        with bar if bar is not None else contextlib.nullcontext():
            task = bar.add_task(f"onnx {kind}", total=len(todo)) if bar is not None else None
            for t in todo:
                r = run_case(t, args.device, args.timeout)
                results.append(r)
                line = f"{'pass' if r.ok else 'FAIL'}  {r.name}  {r.reason}"
                if bar is None:
                    if not (args.failures and r.ok):
                        print(line, flush=True)
                    continue
                if not (args.failures and r.ok):
                    bar.console.print(line, markup=False, highlight=False)
                bar.update(task, advance=1)
        n_ok = sum(r.ok for r in results)
        print(f"onnx {kind} tests: {n_ok}/{len(results)} passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
