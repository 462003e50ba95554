"""Compile latency: ``tdflow.compile`` and ``tdflow.value_and_grad`` of the example models.

    python bench/compile_bench.py                    # every model, cold and warm
    python bench/compile_bench.py --models gpt --kinds vag
    python bench/compile_bench.py --profile resnet50 vag [--warm]  # cProfile of one cold
                                                     # (a second) compile
    python bench/compile_bench.py --outputs DIR      # run each compiled program on seeded
                                                     # inputs; the first run writes DIR/*.npz,
                                                     # later runs compare bit for bit
    python bench/compile_bench.py --cached           # tdflow's caches on, filled first
    python bench/compile_bench.py --write-docs       # also the "Compile latency" section of
                                                     # docs/benchmarks.md

Models: the GPT example (``examples/gpt.py`` at the size of ``bench/model_bench.py``: batch 16,
context 64, 4 layers, width 128), the ResNet example (``examples/resnet.py``'s training
program, batch 64) and ResNet-50 (ONNX's light zoo with seeded weights, ``tdflow.onnx.zoo``;
imported and converted to ``tdflow.*`` ops first, weights as constants for ``compile`` and as
arguments for ``value_and_grad``). Kinds: ``fwd`` is ``tdflow.compile``, ``vag`` is
``tdflow.value_and_grad`` (differentiation included).

Each (model, kind) runs in a fresh process with ``TDFLOW_NO_CACHE=1`` (``--cached``: with
tdflow's on-disk caches, filled by a first run, as a user's second session has them): *cold*
is the first call in that process (the standard library's dialect is loaded before the clock
starts, as the model's program is built with it; kernel tables, formula parsing and lazy
imports count), *warm* the median of five further calls in the same process; each row is the
median (by cold CPU time) of ``--repeat`` such processes. Wall and CPU (process) time are both
printed: the machine is shared, so CPU time is the steadier number. The per-pass breakdown is
the pass manager's own timing (``LoweringResult.timings``) of the cold call; *other* is the
rest (verification before lowering, differentiation, copying the module, loading the
executor). *prepare* is what ResNet-50 needs before ``compile``: the onnx dialect's load,
``import_model`` and ``convert``.
Goal (issue 23, item 7): under 1 s each on CPU.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, write_docs_section  # noqa: E402

HEADING = "## Compile latency, caches off (bench/compile_bench.py)"
HEADING_CACHED = "## Compile latency, caches on (bench/compile_bench.py --cached)"
GOAL_S = 1.0
MODELS = ("gpt", "resnet", "resnet50")
KINDS = ("fwd", "vag")
WARM_ROUNDS = 5  # warm: the median of this many further compiles in the same process
GPT_SIZE = dict(batch=16, context=64, layers=4, width=128, heads=4, vocab=64)


def _gpt(kind: str) -> tuple[Any, list[np.ndarray], list[str] | None, dict[str, float]]:
    import gpt

    cfg = gpt.Config(**GPT_SIZE)
    params = gpt.init_params(cfg, seed=0)
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, cfg.vocab, (cfg.batch, cfg.context)).astype(np.int64)
    targets = rng.integers(0, cfg.vocab, (cfg.batch, cfg.context)).astype(np.int64)
    return gpt.program(cfg), [tokens, targets, *params.values()], list(params), {}


def _resnet(kind: str) -> tuple[Any, list[np.ndarray], list[str] | None, dict[str, float]]:
    import resnet

    rng = np.random.default_rng(0)
    x = rng.random((resnet.BATCH, 1, 8, 8), dtype=np.float32)
    y = rng.integers(0, resnet.N_CLASSES, resnet.BATCH).astype(np.int64)
    params, stats = resnet.init_params(0), resnet.init_stats()
    return (resnet.program(), [x, y, *params.values(), *stats.values()], list(resnet.PARAMS),
            {})


def _resnet50(kind: str) -> tuple[Any, list[np.ndarray], list[str] | None, dict[str, float]]:
    from tdflow.onnx.convert import convert
    from tdflow.onnx.importer import import_model, initializers, onnx_context, value_name
    from tdflow.onnx.zoo import load_light, randomized

    model, feeds = randomized(load_light("resnet50"), seed=0)
    inputs = [feeds[k] for k in feeds]
    t = time.process_time()
    onnx_context()  # the onnx dialect (onnx.td, its hooks), loaded once per process
    dialect = {"onnx dialect": time.process_time() - t}
    t = time.process_time()
    if kind == "fwd":
        module = import_model(model)
        t1 = time.process_time()
        program = convert(module)
        return program, inputs, None, {**dialect, "import": t1 - t,
                                       "convert": time.process_time() - t1}
    module = import_model(model, weights_as_args=True)
    t1 = time.process_time()
    weights = {value_name(k): v for k, v in initializers(model).items()}
    # integer initializers (Reshape's target shapes) are specialised on; the float ones are
    # differentiated, but for batch norm's running statistics (no gradient, as in PyTorch)
    fixed = {k: v for k, v in weights.items() if v.dtype.kind != "f"}
    stats = {value_name(n.input[i]) for n in model.graph.node
             if n.op_type == "BatchNormalization" for i in (3, 4) if i < len(n.input)}
    program = convert(module, values=fixed)
    wrt = [k for k, v in weights.items() if v.dtype.kind == "f" and k not in stats]
    args = [*inputs, *weights.values()]
    return program, args, wrt, {**dialect, "import": t1 - t, "convert": time.process_time() - t1}


BUILDERS = {"gpt": _gpt, "resnet": _resnet, "resnet50": _resnet50}


def _compile(program: Any, kind: str, wrt: list[str] | None) -> Any:
    import tdflow

    if kind == "fwd":
        return tdflow.compile(program)
    return tdflow.value_and_grad(program, wrt=wrt)


def _lowering(compiled: Any) -> Any:
    return (compiled if hasattr(compiled, "lowering") else compiled.program).lowering


def measure(model: str, kind: str) -> dict[str, Any]:
    """One cold and ``WARM_ROUNDS`` warm compiles of ``model`` in this process (run it in a
    fresh one)."""
    from tdflow.dialect.context import standard_context

    sys.path.insert(0, str(ROOT / "examples"))
    standard_context()
    program, _, wrt, prep = BUILDERS[model](kind)
    out: dict[str, Any] = {"model": model, "kind": kind, "prepare_cpu": prep}
    warm = []
    for i in range(1 + WARM_ROUNDS):
        w, c = time.perf_counter(), time.process_time()
        compiled = _compile(program, kind, wrt)
        took = {"wall": time.perf_counter() - w, "cpu": time.process_time() - c}
        if i == 0:
            out["cold"] = took
            out["passes"] = [(t.name, t.seconds) for t in _lowering(compiled).timings]
        else:
            warm.append(took)
        del compiled
    out["warm"] = sorted(warm, key=lambda t: t["cpu"])[len(warm) // 2]
    return out


def run_outputs(model: str, kind: str, directory: Path) -> str:
    """Run the compiled program on seeded inputs; write ``directory/MODEL_KIND.npz`` the first
    time, compare bit for bit afterwards. Returns a one-line verdict."""
    from tdflow.dialect.context import standard_context

    sys.path.insert(0, str(ROOT / "examples"))
    standard_context()
    program, args, wrt, _ = BUILDERS[model](kind)
    compiled = _compile(program, kind, wrt)
    out = compiled(*[a.copy() for a in args])
    flat: list[np.ndarray] = []
    for v in out if isinstance(out, tuple) else (out,):
        flat.extend(v if isinstance(v, tuple) else (v,))
    arrays = {f"r{i}": np.asarray(v) for i, v in enumerate(flat)}
    path = directory / f"{model}_{kind}.npz"
    if not path.is_file():
        directory.mkdir(parents=True, exist_ok=True)
        np.savez(path, **arrays)
        return f"{model} {kind}: wrote {len(arrays)} results to {path}"
    ref = np.load(path)
    same = sorted(ref.files) == sorted(arrays) and all(
        ref[k].dtype == arrays[k].dtype and ref[k].shape == arrays[k].shape
        and ref[k].tobytes() == arrays[k].tobytes() for k in arrays)
    return f"{model} {kind}: {len(arrays)} results {'identical' if same else 'DIFFER'} ({path})"


def profile(model: str, kind: str, warm: bool = False, top: int = 40) -> str:
    """cProfile of one cold compile (with ``warm``: of a second one), cumulative order then
    own time."""
    import cProfile
    import io
    import pstats

    from tdflow.dialect.context import standard_context

    sys.path.insert(0, str(ROOT / "examples"))
    standard_context()
    program, _, wrt, _ = BUILDERS[model](kind)
    if warm:
        _compile(program, kind, wrt)
    prof = cProfile.Profile()
    prof.runcall(_compile, program, kind, wrt)
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(top)
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(top // 2)
    return s.getvalue()


CACHED = False  # --cached: tdflow's caches on (a folder of the bench's own, filled first)


def _child_env() -> dict[str, str]:
    """A fresh process's environment: tdflow's caches off (on with ``--cached``); Python's
    bytecode cache on, in a folder of its own (an environment with PYTHONDONTWRITEBYTECODE
    would otherwise time byte-compiling tdflow's sources on every cold start, which an
    installed package never does)."""
    env = {**os.environ, "TDFLOW_NO_CACHE": "1"}
    if CACHED:
        del env["TDFLOW_NO_CACHE"]
        env["TDFLOW_CACHE_DIR"] = os.path.join(tempfile.gettempdir(), "tdflow-bench-cache")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "tdflow-bench-pycache")
    return env


def _prime() -> None:
    """Byte-compile tdflow's sources (and the examples) into the bench's bytecode cache."""
    dirs = [str(ROOT / d) for d in ("dialect", "lowering", "runtime", "tdflow", "tdparser",
                                    "examples")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *dirs], env=_child_env(),
                   capture_output=True, check=False)


def _child(args: list[str]) -> Any:
    env = _child_env()
    cmd = [sys.executable, str(Path(__file__).resolve()), *args]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def table(results: list[dict[str, Any]]) -> str:
    rows = ["| model | kind | cold wall | cold CPU | warm wall | warm CPU | cold CPU / goal (1 s) "
            "| prepare (CPU) | cold CPU with prepare | passes (cold, slowest first) |",
            "|---|---|---:|---:|---:|---:|---:|---|---:|---|"]
    for r in results:
        passes = sorted(r["passes"], key=lambda p: -p[1])
        other = r["cold"]["wall"] - sum(s for _, s in passes)
        parts = [f"{n.split('{')[0]} {s * 1e3:.0f}" for n, s in passes if s >= 0.005]
        parts.append(f"other {other * 1e3:.0f}")
        prep = ", ".join(f"{k} {v:.2f} s" for k, v in r["prepare_cpu"].items()) or "-"
        rows.append(f"| {r['model']} | {r['kind']} | {r['cold']['wall']:.3f} s | "
                    f"{r['cold']['cpu']:.3f} s | {r['warm']['wall']:.3f} s | "
                    f"{r['warm']['cpu']:.3f} s | {r['cold']['cpu'] / GOAL_S:.2f}x | {prep} | "
                    f"{r['cold']['cpu'] + sum(r['prepare_cpu'].values()):.2f} s | "
                    f"{', '.join(parts)} (ms, wall) |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    ap.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    ap.add_argument("--profile", nargs=2, metavar=("MODEL", "KIND"))
    ap.add_argument("--warm", action="store_true", help="profile a second compile")
    ap.add_argument("--outputs", type=Path, metavar="DIR")
    ap.add_argument("--repeat", type=int, default=3,
                    help="fresh processes per row; the median one (by cold CPU) is shown")
    ap.add_argument("--cached", action="store_true",
                    help="tdflow's caches on (TableGen, kernels), filled by a first run")
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    global CACHED
    CACHED = args.cached
    if args.child:
        what, model, kind = args.child
        if what == "measure":
            print(json.dumps(measure(model, kind)))
        elif what in ("profile", "profile-warm"):
            print(profile(model, kind, warm=what == "profile-warm"))
        else:
            print(run_outputs(model, kind, Path(what)))
        return 0
    _prime()
    if args.profile:
        what = "profile-warm" if args.warm else "profile"
        print(_child(["--child", what, *args.profile]))
        return 0
    pairs = [(m, k) for m in args.models for k in args.kinds]
    if args.outputs:
        for m, k in pairs:
            print(_child(["--child", str(args.outputs.resolve()), m, k]).strip())
        return 0
    results = []
    for m, k in pairs:
        if CACHED:
            _child(["--child", "measure", m, k])  # fills the caches
        runs = [json.loads(_child(["--child", "measure", m, k]).strip().splitlines()[-1])
                for _ in range(args.repeat)]
        # the whole record of the run with the median cold CPU time (the parts add up)
        results.append(sorted(runs, key=lambda r: r["cold"]["cpu"])[len(runs) // 2])
    text = table(results)
    meta = (f"{datetime.date.today()}, Python {platform.python_version()}, numpy "
            f"{np.__version__}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    print(text)
    print(meta)
    if args.write_docs:
        cmd = " ".join(["python bench/compile_bench.py", *(argv or sys.argv[1:])])
        heading = HEADING_CACHED if CACHED else HEADING
        write_docs_section(heading, f"{heading}\n\n`{cmd}` ({meta}):\n\n{text}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
