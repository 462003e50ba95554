"""Runtime benchmark: compiled programs vs the same computation hand-written in numpy.

    python bench/runtime_bench.py                 # print the table
    python bench/runtime_bench.py --write-docs    # also update docs/benchmarks.md

Measured in one run, on the same inputs, alternating the two sides call by call so that both
see the same machine state; each number is the median time of one call.

* MLP forward (examples/mlp.mlir: 64x784 -> 256 -> 10, f32, softmax) - target <= 1.1x numpy;
* CNN forward (examples/cnn.mlir) - target <= 1.1x numpy;
* a 1M-element chain of 6 elementwise ops, fused into one kernel - target <= 1.0x the numpy
  expression;
* peak buffer bytes before and after plan-memory for each program.

If ``bench/eager_bench.py`` exists, its ``run()`` is called and its rows are included.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # bench/_common.py, however this script is run or imported
    sys.path.insert(0, str(HERE))

from _common import ROOT, write_docs_section  # noqa: E402

SECTION = "## Runtime (compiled)"

CHAIN = """
func.func @chain(%x: tensor<1048576xf32>, %y: tensor<1048576xf32>) -> tensor<1048576xf32> {
  %0 = "tdflow.broadcast_mul"(%x, %y) : (tensor<1048576xf32>, tensor<1048576xf32>) -> tensor<1048576xf32>
  %1 = "tdflow.broadcast_add"(%0, %x) : (tensor<1048576xf32>, tensor<1048576xf32>) -> tensor<1048576xf32>
  %2 = "tdflow.tanh"(%1) : (tensor<1048576xf32>) -> tensor<1048576xf32>
  %3 = "tdflow.scalar_mul"(%2) {has_float_operand = true, float_operand = 0.5 : f64} : (tensor<1048576xf32>) -> tensor<1048576xf32>
  %4 = "tdflow.relu"(%3) : (tensor<1048576xf32>) -> tensor<1048576xf32>
  %5 = "tdflow.square"(%4) : (tensor<1048576xf32>) -> tensor<1048576xf32>
  return %5 : tensor<1048576xf32>
}
"""


def chain_numpy(x, y):
    return np.square(np.maximum(np.tanh(x * y + x) * np.float32(0.5), 0))


def mlp_numpy(x, w1, b1, w2, b2):
    h = np.maximum(x @ w1 + b1, 0)
    z = h @ w2 + b2
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def cnn_numpy(x, k, kb, w, b):
    n, c, hh, ww = x.shape
    f, _, kh, kw = k.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))  # n c h w kh kw
    y = np.tensordot(win, k, axes=([1, 4, 5], [1, 2, 3]))  # n h w f
    y = y.transpose(0, 3, 1, 2) + kb[None, :, None, None]
    y = np.maximum(y, 0)
    p = y.reshape(n, f, hh // 2, 2, ww // 2, 2).max(axis=(3, 5))
    z = p.reshape(n, -1) @ w + b
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def compare(compiled, reference, args, number: int, repeats: int) -> tuple[float, float]:
    """Median seconds per call of ``compiled(*args)`` and ``reference(*args)``.

    Calls alternate one by one (and which side goes first alternates too), so a change in
    machine load hits both sides alike; ``repeats * number`` calls per side.
    """
    out = compiled(*args)
    np.testing.assert_allclose(out, reference(*args), rtol=2e-4, atol=1e-5)
    for _ in range(5):
        compiled(*args)
        reference(*args)
    clock = time.perf_counter
    a, b = [], []
    for i in range(repeats * number):
        first, second = (compiled, reference) if i % 2 == 0 else (reference, compiled)
        t0 = clock()
        first(*args)
        t1 = clock()
        second(*args)
        t2 = clock()
        ta, tb = (t1 - t0, t2 - t1) if i % 2 == 0 else (t2 - t1, t1 - t0)
        a.append(ta)
        b.append(tb)
    return statistics.median(a), statistics.median(b)


def random_args(program, rng):
    out = []
    for a in program.plan.arguments:
        out.append((rng.standard_normal(a.shape) * 0.1).astype(np.float32))
    return out


def run_benchmarks(number: int, repeats: int) -> list[dict]:
    import tdflow

    rng = np.random.default_rng(0)
    rows = []
    for name, source, reference, n in (
        ("MLP forward 64x784->256->10 f32", ROOT / "examples" / "mlp.mlir", mlp_numpy, number),
        ("CNN forward (examples/cnn.mlir)", ROOT / "examples" / "cnn.mlir", cnn_numpy,
         max(1, number // 4)),
        ("1M-element chain, 6 elementwise ops (fused)", CHAIN, chain_numpy, max(1, number // 10)),
    ):
        program = tdflow.compile(source if isinstance(source, str) else str(source))
        args = random_args(program, rng)
        t_c, t_n = compare(program, reference, args, n, repeats)
        plan = program.plan
        rows.append({
            "name": name, "compiled_ms": t_c * 1e3, "numpy_ms": t_n * 1e3, "ratio": t_c / t_n,
            "launches": len(plan.launches), "before": plan.peak_bytes_before,
            "after": plan.peak_bytes_after,
        })
    return rows


def eager_rows() -> list[dict] | None:
    path = ROOT / "bench" / "eager_bench.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("eager_bench", path)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["eager_bench"] = mod
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    run = getattr(mod, "run", None)
    if run is None:
        return None
    result = run()
    return result if isinstance(result, list) else [result]


def kib(n: int) -> str:
    return f"{n / 1024:,.0f} KiB"


def render(rows: list[dict], eager: list[dict] | None, cmd: str) -> str:
    lines = [
        SECTION, "",
        f"Command: `{cmd}` (median time per call; compiled and numpy calls alternate one by one "
        f"in the same process, on the same inputs). Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, numpy {np.__version__}, load average "
        f"{os.getloadavg()[0]:.1f} when the run started (other jobs share the cores).", "",
        "| program | compiled | hand-written numpy | ratio | launches | buffer bytes before "
        "plan-memory | after |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['name']} | {r['compiled_ms']:.3f} ms | {r['numpy_ms']:.3f} ms | "
                     f"{r['ratio']:.2f}x | {r['launches']} | {kib(r['before'])} | "
                     f"{kib(r['after'])} |")
    lines.append("")
    lines.append("Targets: MLP and CNN <= 1.1x numpy; the fused chain <= 1.0x the numpy "
                 "expression. Buffer bytes count every value of the function (arguments "
                 "included) with one buffer each (before) and the buffers of the plan (after).")
    if eager is not None:
        lines += ["", "Eager calls on 16-element tensors, from `bench/eager_bench.py` (its `run()`, "
                  "same process):", ""]
        lines += eager_table(eager)
    return "\n".join(lines) + "\n"


def eager_table(results: list) -> list[str]:
    """A markdown table of ``{"ops": {op: {metric: value}}, "meta": {...}}`` results."""
    out: list[str] = []
    for r in results:
        ops = r.get("ops") if isinstance(r, dict) else None
        if not isinstance(ops, dict) or not ops:
            out.append(f"- {r}")
            continue
        cols = list(next(iter(ops.values())))
        out.append("| op | " + " | ".join(c.replace("_", " ") for c in cols) + " |")
        out.append("|---|" + "---:|" * len(cols))
        for op, row in ops.items():
            cells = [f"{row[c]:.2f}" if isinstance(row.get(c), float) else str(row.get(c))
                     for c in cols]
            out.append(f"| {op} | " + " | ".join(cells) + " |")
        meta = r.get("meta")
        if meta:
            out += ["", "(" + ", ".join(f"{k}: {v}" for k, v in meta.items()) + ")"]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--number", type=int, default=200, help="calls per round (MLP; CNN /4, "
                    "chain /10)")
    ap.add_argument("--repeats", type=int, default=5, help="rounds")
    ap.add_argument("--write-docs", action="store_true", help="update docs/benchmarks.md")
    ap.add_argument("--no-eager", action="store_true", help="skip bench/eager_bench.py")
    args = ap.parse_args(argv)
    rows = run_benchmarks(args.number, args.repeats)
    eager = None if args.no_eager else eager_rows()
    cmd = "python bench/runtime_bench.py --write-docs"
    section = render(rows, eager, cmd)
    print(section)
    if args.write_docs:
        write_docs_section(SECTION, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
