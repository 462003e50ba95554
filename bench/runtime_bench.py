"""Runtime benchmark: compiled programs vs the same computation hand-written in numpy.

    python bench/runtime_bench.py                 # print the table
    python bench/runtime_bench.py --write-docs    # also update docs/benchmarks.md

Measured in one run, on the same inputs, alternating the two sides call by call so that both
see the same machine state; each number is the median time of one call.

* MLP forward (examples/mlp.mlir: 64x784 -> 256 -> 10, f32, softmax) - target <= 1.1x numpy;
* CNN forward (examples/cnn.mlir) - target <= 1.1x numpy;
* a 1M-element chain of 6 elementwise ops, fused into one kernel - target <= 1.0x the numpy
  expression;
* a 1M-element chain mixing two formula-only ops of a user dialect (``bench/data/yzh_ops.td``)
  with three standard ops, fused into one kernel - target <= 1.0x the numpy expression;
* peak buffer bytes before and after plan-memory for each program.

If ``bench/eager_bench.py`` exists, its ``run()`` is called and its rows are included.

The "Op libraries" section: loading a user library (``load_ops`` on the 10 formula ops of
``bench/data/user_ops.td``, each checked against numpy first) cold (a fresh
``TDFLOW_CACHE_DIR``) and cached (a second process on the same dir), against loading the
standard ``ops.td`` the same two ways, each in a fresh process timing its own load; and the
one-time cost of the formula grammar (the first ``parse_formula`` of a process).

    python bench/runtime_bench.py --cases mixed,load --no-eager   # only the op-library cases
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # bench/_common.py, however this script is run or imported
    sys.path.insert(0, str(HERE))

from _common import ROOT, write_docs_section  # noqa: E402

SECTION = "## Runtime (compiled)"
LIB_SECTION = "## Op libraries"
DATA = HERE / "data"
YZH_OPS = DATA / "yzh_ops.td"  # two formula ops of a user dialect, for MIXED
USER_OPS = DATA / "user_ops.td"  # ten formula ops of a user dialect, for the load times
CASES = ("mlp", "cnn", "chain", "mixed", "load")

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


_T = "tensor<1048576xf32>"
# yzh.leaky_relu_yzh -> tdflow.sigmoid -> yzh.soft_clip -> tdflow.broadcast_mul -> tdflow.tanh
MIXED = f"""
func.func @mixed(%x: {_T}, %limit: {_T}, %w: {_T}) -> {_T} {{
  %0 = "yzh.leaky_relu_yzh"(%x) {{alpha = 0.1 : f32}} : ({_T}) -> {_T}
  %1 = "tdflow.sigmoid"(%0) : ({_T}) -> {_T}
  %2 = "yzh.soft_clip"(%1, %limit) : ({_T}, {_T}) -> {_T}
  %3 = "tdflow.broadcast_mul"(%2, %w) : ({_T}, {_T}) -> {_T}
  %4 = "tdflow.tanh"(%3) : ({_T}) -> {_T}
  return %4 : {_T}
}}
"""
ALPHA = np.float32(0.1)


def mixed_numpy(x, limit, w):
    """MIXED as a numpy expert writes it: one result buffer, every step in place, and leaky
    relu as ``max(x, alpha * x)`` (alpha < 1) rather than a masked select."""
    t = np.multiply(x, ALPHA)
    np.maximum(x, t, out=t)  # leaky_relu_yzh
    np.negative(t, out=t)  # sigmoid: 1 / (1 + exp(-t))
    np.exp(t, out=t)
    np.add(t, 1, out=t)
    np.reciprocal(t, out=t)
    np.divide(t, limit, out=t)  # soft_clip: limit * tanh(t / limit)
    np.tanh(t, out=t)
    np.multiply(t, limit, out=t)
    np.multiply(t, w, out=t)  # broadcast_mul
    return np.tanh(t, out=t)


def mixed_numpy_where(x, limit, w):
    """MIXED with leaky relu transcribed from its formula (``np.where``), for comparison."""
    t = np.where(x > 0, x, x * ALPHA)
    np.negative(t, out=t)
    np.exp(t, out=t)
    np.add(t, 1, out=t)
    np.reciprocal(t, out=t)
    np.divide(t, limit, out=t)
    np.tanh(t, out=t)
    np.multiply(t, limit, out=t)
    np.multiply(t, w, out=t)
    return np.tanh(t, out=t)


def mixed_args(program, rng) -> list[np.ndarray]:
    """x and w standard normal (half of x negative, in random order), limit in [0.5, 1.5)."""
    n = program.plan.arguments[0].shape
    return [rng.standard_normal(n).astype(np.float32),
            (rng.random(n) + 0.5).astype(np.float32),
            rng.standard_normal(n).astype(np.float32)]


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


def run_benchmarks(number: int, repeats: int, cases: frozenset[str] = frozenset(CASES)
                   ) -> list[dict]:
    import tdflow

    rng = np.random.default_rng(0)
    rows = []
    yzh = tdflow.load_ops(YZH_OPS) if "mixed" in cases else None
    for case, name, source, reference, n, ops, make_args in (
        ("mlp", "MLP forward 64x784->256->10 f32", ROOT / "examples" / "mlp.mlir", mlp_numpy,
         number, None, random_args),
        ("cnn", "CNN forward (examples/cnn.mlir)", ROOT / "examples" / "cnn.mlir", cnn_numpy,
         max(1, number // 4), None, random_args),
        ("chain", "1M-element chain, 6 elementwise ops (fused)", CHAIN, chain_numpy,
         max(1, number // 10), None, random_args),
        ("mixed", "1M-element chain, 2 user formula ops + 3 standard ops (fused)", MIXED,
         mixed_numpy, max(1, number // 10), yzh, mixed_args),
    ):
        if case not in cases:
            continue
        program = tdflow.compile(source if isinstance(source, str) else str(source), ops=ops)
        plan = program.plan
        if case == "mixed":  # the point of the case: one kernel across the two dialects
            kernels = [ln.kernel for ln in plan.launches]
            assert kernels == ["cpu.fused_elementwise"], f"MIXED did not fuse: {kernels}"
        args = make_args(program, rng)
        t_c, t_n = compare(program, reference, args, n, repeats)
        rows.append({
            "case": case, "name": name, "compiled_ms": t_c * 1e3, "numpy_ms": t_n * 1e3,
            "ratio": t_c / t_n, "launches": len(plan.launches), "before": plan.peak_bytes_before,
            "after": plan.peak_bytes_after,
        })
        if case == "mixed":  # the formula transcribed to numpy: the where-vs-max difference
            _, t_w = compare(program, mixed_numpy_where, args, n, repeats)
            rows[-1]["numpy_where_ms"] = t_w * 1e3
    return rows


# ---- op libraries: load times ---------------------------------------------------------------

# Each load runs in a fresh interpreter (so nothing is cached in memory) that imports tdflow,
# then times its own load and prints {"wall": s, "cpu": s} (imports of tdflow itself excluded,
# the imports the load triggers included).
_LOAD_CHILD = """
import json, sys, time
import tdflow
from tdflow.dialect.dialect import load_dialect, standard_dialect, standard_ops_path
what, path = sys.argv[1], sys.argv[2]
if what == "increment":
    standard_dialect()  # the standard ops first, untimed: what the user library adds
if what == "grammar":
    from tdflow.dialect.formula import parse_formula
    t0, c0 = time.perf_counter(), time.process_time()
    parse_formula("x > 0 ? x : x * alpha", file="a.td", line=1, col=1)
    t1 = time.perf_counter()
    parse_formula("limit * tanh(x / limit)", file="a.td", line=1, col=1)
    t2 = time.perf_counter()
    print(json.dumps({"wall": t1 - t0, "cpu": time.process_time() - c0, "again": t2 - t1}))
    raise SystemExit
t0, c0 = time.perf_counter(), time.process_time()
if what == "ops.td":
    load_dialect(standard_ops_path())
else:
    tdflow.load_ops(path)
print(json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}))
"""
LOADS = (
    ("ops.td", "standard `ops.td` (`load_dialect(standard_ops_path())`)"),
    ("library", "`load_ops(\"user_ops.td\")` (the standard ops + 10 user ops)"),
    ("increment", "`load_ops(\"user_ops.td\")` after the standard ops (loaded untimed, same "
     "process): what the 10 user ops add"),
)


def _load_once(what: str, cache: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TDFLOW_NO_CACHE"}
    env["TDFLOW_CACHE_DIR"] = cache
    out = subprocess.run([sys.executable, "-c", _LOAD_CHILD, what, str(USER_OPS)], env=env,
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def load_benchmarks(runs: int) -> dict:
    """Median wall and CPU seconds of each load in LOADS, cold and cached, and of the formula
    grammar's first use. The loads take turns run by run, so load bursts hit them alike."""
    times: dict[tuple[str, str], list[dict]] = {}
    for _ in range(runs):
        for what, _label in LOADS:
            with tempfile.TemporaryDirectory(prefix="tdflow-bench-cache-") as cache:
                times.setdefault((what, "cold"), []).append(_load_once(what, cache))
                times.setdefault((what, "cached"), []).append(_load_once(what, cache))
        with tempfile.TemporaryDirectory(prefix="tdflow-bench-cache-") as cache:
            times.setdefault(("grammar", "first"), []).append(_load_once("grammar", cache))

    def med(key: tuple[str, str], field: str) -> float:
        return statistics.median(t[field] for t in times[key])

    return {key: {f: med(key, f) for f in times[key][0]} for key in times}


def check_user_ops() -> int:
    """Each op of USER_OPS, called through ``lib.functional``, against numpy; returns the count."""
    import tdflow

    lib = tdflow.load_ops(USER_OPS)
    rng = np.random.default_rng(1)
    x = np.concatenate([np.linspace(-8, 8, 1001), rng.standard_normal(1000) * 3]).astype(np.float32)
    xd = x.astype(np.float64)

    def sig(v):
        return 1 / (1 + np.exp(-v))

    references: dict[str, tuple[dict, Callable[[np.ndarray], np.ndarray]]] = {
        "hard_sigmoid": ({}, lambda v: np.clip(v + 3, 0, 6) / 6),
        "hard_swish": ({}, lambda v: v * np.clip(v + 3, 0, 6) / 6),
        "softsign": ({}, lambda v: v / (1 + np.abs(v))),
        "mish": ({}, lambda v: v * np.tanh(np.log1p(np.exp(v)))),
        "celu": ({"alpha": 0.5}, lambda v: np.maximum(v, 0) + np.minimum(0.5 * np.expm1(v / 0.5), 0)),
        "selu": ({}, lambda v: 1.0507009873554805 * np.where(v > 0, v, 1.6732632423543772 * np.expm1(v))),
        "elu": ({"alpha": 0.7}, lambda v: np.where(v > 0, v, 0.7 * np.expm1(v))),
        "softplus": ({"beta": 2.0, "threshold": 10.0},
                     lambda v: np.where(v * 2 > 10, v, np.log1p(np.exp(2 * v)) / 2)),
        "clamp": ({"lo": -0.5, "hi": 2.0}, lambda v: np.clip(v, -0.5, 2.0)),
        "swish": ({"beta": 1.5}, lambda v: v * sig(1.5 * v)),
    }
    ops = sorted(op.name.split(".", 1)[1] for op in lib.user_ops())
    assert ops == sorted(references), f"user_ops.td has {ops}, the bench checks {sorted(references)}"
    for name, (attrs, ref) in references.items():
        got = getattr(lib.functional, name)(tdflow.tensor(x), **attrs).numpy()
        np.testing.assert_allclose(got, ref(xd), rtol=2e-5, atol=2e-6, err_msg=f"uact.{name}")
    return len(references)


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


def machine_note() -> str:
    """Where and when: the numbers depend on both (the cores are shared with other jobs)."""
    gpu = "a GPU present but not used" if shutil.which("nvidia-smi") else "no GPU"
    return (f"{time.strftime('%Y-%m-%d')}; {platform.machine()}, {os.cpu_count()} cores shared "
            f"with other jobs (load average {os.getloadavg()[0]:.1f} when the run started), "
            f"{gpu}; Python {platform.python_version()}, numpy {np.__version__}")


def render(rows: list[dict], eager: list[dict] | None, cmd: str, machine: str) -> str:
    lines = [
        SECTION, "",
        f"Command: `{cmd}` (median time per call; compiled and numpy calls alternate one by one "
        f"in the same process, on the same inputs). Run: {machine}.", "",
        "| program | compiled | hand-written numpy | ratio | launches | buffer bytes before "
        "plan-memory | after |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['name']} | {r['compiled_ms']:.3f} ms | {r['numpy_ms']:.3f} ms | "
                     f"{r['ratio']:.2f}x | {r['launches']} | {kib(r['before'])} | "
                     f"{kib(r['after'])} |")
    lines.append("")
    lines.append("Targets: MLP and CNN <= 1.1x numpy; the fused chains <= 1.0x the numpy "
                 "expression. Buffer bytes count every value of the function (arguments "
                 "included) with one buffer each (before) and the buffers of the plan (after). "
                 "The chain across dialects is described under [Op libraries](#op-libraries).")
    target = {"mlp": 1.1, "cnn": 1.1, "chain": 1.0, "mixed": 1.0}
    missed = [f"{r['name']} ({r['ratio']:.2f}x)" for r in rows if r["ratio"] > target[r["case"]]]
    if missed:
        lines.append(f"Above target in this run: {'; '.join(missed)}.")
    if eager is not None:
        lines += ["", "Eager calls on 16-element tensors, from `bench/eager_bench.py` (its `run()`, "
                  "same process):", ""]
        lines += eager_table(eager)
    return "\n".join(lines) + "\n"


def render_library(mixed: dict | None, loads: dict, runs: int, n_checked: int, cmd: str,
                   machine: str) -> str:
    """The "Op libraries" section: the chain across dialects in detail (when it ran), then the
    load times."""
    lines = [LIB_SECTION, "", f"Command: `{cmd}`. Run: {machine}."]
    if mixed is not None:
        lines += render_mixed(mixed)
    return "\n".join(lines + render_loads(loads, runs, n_checked)) + "\n"


def render_mixed(mixed: dict) -> list[str]:
    verdict = "**PASS**" if mixed["ratio"] <= 1.0 else "**MISS**"
    lines = [
        "", "### A fused chain across dialects", "",
        "`yzh.leaky_relu_yzh` (alpha 0.1) -> `tdflow.sigmoid` -> `yzh.soft_clip` (a tensor "
        "limit) -> `tdflow.broadcast_mul` -> `tdflow.tanh` on 1M float32 elements; the two "
        "`yzh` ops are formula-only records of `bench/data/yzh_ops.td` (no Python). "
        "`tdflow.compile(..., ops=tdflow.load_ops(\"bench/data/yzh_ops.td\"))` fuses the five "
        "into one `cpu.fused_elementwise` launch (the bench asserts it). Inputs: x and w "
        "standard normal (so half of x is negative, in random order), limit in [0.5, 1.5); "
        "the results match numpy (rtol 2e-4) before timing.", "",
        "| measure | median per call | compiled / this |",
        "|---|---:|---:|",
        f"| compiled (one fused kernel) | {mixed['compiled_ms']:.3f} ms | |",
        f"| numpy, written well (in place; leaky relu as `np.maximum(x, alpha * x)`) | "
        f"{mixed['numpy_ms']:.3f} ms | {mixed['ratio']:.2f}x |",
        f"| numpy, the formula transcribed (`np.where(x > 0, x, x * alpha)`, then in place) | "
        f"{mixed['numpy_where_ms']:.3f} ms | "
        f"{mixed['compiled_ms'] / mixed['numpy_where_ms']:.2f}x |", "",
        f"Target: no slower than the numpy written well (<= 1.0x): {verdict}.",
    ]
    if mixed["ratio"] > 1.0:
        lines += ["", SELECT_NOTE]
    return lines


def render_loads(loads: dict, runs: int, n_checked: int) -> list[str]:
    ms = 1e3
    lines = [
        "", "### Loading a user library", "",
        f"`bench/data/user_ops.td`: 10 formula-only elementwise ops of a `uact` dialect "
        "(hard_sigmoid, hard_swish, softsign, mish, celu, selu, elu, softplus, clamp, swish; "
        f"attributes with defaults), each called through `lib.functional` and checked against "
        f"numpy before timing (all {n_checked} match). Every load runs in a fresh Python "
        "process that imports tdflow and then times its own load (the imports the load "
        "triggers, such as the TableGen and formula parsers, are included). *Cold*: a fresh "
        "empty `TDFLOW_CACHE_DIR`; *cached*: a second process on the same dir. Median of "
        f"{runs} runs each, the loads taking turns; CPU is that process's `time.process_time`.",
        "",
        "| load | cold wall | cold CPU | cached wall | cached CPU | cold / ops.td | "
        "cached / ops.td |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    std = loads[("ops.td", "cold")]["wall"], loads[("ops.td", "cached")]["wall"]
    for what, label in LOADS:
        cold, cached = loads[(what, "cold")], loads[(what, "cached")]
        lines.append(f"| {label} | {cold['wall'] * ms:.0f} ms | {cold['cpu'] * ms:.0f} ms | "
                     f"{cached['wall'] * ms:.0f} ms | {cached['cpu'] * ms:.0f} ms | "
                     f"{cold['wall'] / std[0]:.2f}x | {cached['wall'] / std[1]:.2f}x |")
    g = loads[("grammar", "first")]
    lines += [
        "", f"The formula grammar's one-time cost, in a fresh process: the first "
        f"`parse_formula` takes {g['wall'] * ms:.0f} ms ({g['cpu'] * ms:.0f} ms CPU; it imports "
        f"Lark and builds the LALR parser from `formula.lark`), a later one "
        f"{g['again'] * 1e6:.0f} us. A process pays it only when it checks a formula: "
        "checked formulas are cached with the library (JSON of their expression text, "
        "`dialect/formula/cache.py`), so a cached load imports neither Lark nor the parser. "
        "Before that cache (earlier on 2026-12-01) a cached `ops.td` load took about 100 ms, "
        "three quarters of it checking its 25 formulas.",
    ]
    return lines


# Why the chain across dialects can be slower than numpy (printed only while it is).
SELECT_NOTE = (
    "Where the time goes: `yzh.leaky_relu_yzh`'s formula is a select "
    "(`x > 0 ? x : x * alpha`). Binding folds it to `max(x, x * alpha)` for 0 < alpha <= 1 "
    "(`dialect/formula/expr.py`, exact for NaNs, infinities and signed zeros), and other "
    "selects run branch-free (`dest = b ^ ((a ^ b) * cond)` on the bits, "
    "`lowering/elementwise_numpy.py`): before these two (2026-12-01) the chain ran at 3.2x, "
    "the select a masked copy that mispredicts on every other element. The gap left is shared "
    "with the 6-op standard chain (about 1.2x) and only partly explained: running the kernel "
    "in slices (the executor's tiling, a Python call per slice and step) costs some of it "
    "(that chain's kernel unsplit: about 1.33 ms, in slices 1.49 ms, numpy 1.23 ms)."
)


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
            cells = [f"{row[c]:.2f}" if isinstance(row.get(c), float)
                     else "n/a" if row.get(c) is None else str(row.get(c)) for c in cols]
            out.append(f"| {op} | " + " | ".join(cells) + " |")
        meta = r.get("meta")
        if meta:
            out += ["", "(" + ", ".join(f"{k}: {'not installed' if v is None else v}"
                                        for k, v in meta.items()) + ")"]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--number", type=int, default=200, help="calls per round (MLP; CNN /4, "
                    "chain /10)")
    ap.add_argument("--repeats", type=int, default=5, help="rounds")
    ap.add_argument("--write-docs", action="store_true", help="update docs/benchmarks.md")
    ap.add_argument("--no-eager", action="store_true", help="skip bench/eager_bench.py")
    ap.add_argument("--cases", default=",".join(CASES),
                    help=f"comma-separated cases to run (default: all of {', '.join(CASES)}); "
                    "--write-docs writes each section whose cases all ran")
    ap.add_argument("--load-runs", type=int, default=5, help="processes per load measure")
    args = ap.parse_args(argv)
    cases = frozenset(c.strip() for c in args.cases.split(",") if c.strip())
    unknown = sorted(cases - set(CASES))
    if unknown:
        ap.error(f"unknown case(s) {', '.join(unknown)}; the cases are {', '.join(CASES)}")
    cmd = " ".join(["python bench/runtime_bench.py", *(sys.argv[1:] if argv is None else argv)])
    machine = machine_note()
    rows = run_benchmarks(args.number, args.repeats, cases)
    sections: list[tuple[str, str]] = []
    if {"mlp", "cnn", "chain", "mixed"} <= cases:
        eager = None if args.no_eager else eager_rows()
        sections.append((SECTION, render(rows, eager, cmd, machine)))
    else:
        sections.append(("", render(rows, None, cmd, machine)))  # printed, never written
    if "load" in cases:
        n_checked = check_user_ops()
        loads = load_benchmarks(args.load_runs)
        mixed = next((r for r in rows if r["case"] == "mixed"), None)
        section = render_library(mixed, loads, args.load_runs, n_checked, cmd, machine)
        sections.append((LIB_SECTION if mixed is not None else "", section))
    for heading, section in sections:
        print(section)
        if args.write_docs and heading:
            write_docs_section(heading, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
