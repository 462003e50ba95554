"""One MLP training step (forward, backward, SGD) in graph mode, eager mode, numpy and PyTorch.

    python bench/train_bench.py                 # print the table
    python bench/train_bench.py --write-docs    # also the "Training step" section of docs/benchmarks.md
    python bench/train_bench.py --profile graph # cProfile of 300 steps of one column (graph, eager)

The step: a 784->256->10 perceptron (``matmul``, ``bias_add``, ``relu``), the batch mean of
``sparse_softmax_cross_entropy`` over 64 float32 images, its gradient and an SGD update of the
four parameters (lr 0.01), each column with its own copy of the same initial weights:

* ``graph``: ``tdflow.sgd_step`` of the loss program: forward, backward and the four in-place
  ``sgd_update``s lowered into one plan;
* ``graph, value_and_grad + numpy update``: ``tdflow.value_and_grad`` (forward and backward in
  one plan), then ``w -= f32(lr) * dw`` in numpy (``sgd_update``'s float32 arithmetic);
* ``graph, mode=direct``: the latter with ``mode="direct"`` (the launches in a plain loop on
  the calling thread; ``auto`` picks that itself when the work besides BLAS is small);
* ``eager``: tensors with ``requires_grad=True``, ``loss.backward()``, then
  ``tdflow.functional.sgd_update`` under ``tdflow.no_grad()``;
* ``numpy``: the forward and backward pass written out in numpy (in place where it helps);
* ``torch``: PyTorch CPU eager (``cross_entropy``, ``backward``, ``p.sub_``), when
  ``import torch`` works (it is not a dependency of tdflow).

Before timing, all columns compute one step's loss and gradients from the same weights and
must agree (``graph`` and ``eager`` bit for bit, the others to 1e-4). Then the columns take
turns step by step (the order rotating), and each number is the median of its steps.

Targets: graph <= 1.0x numpy, graph <= 1.0x torch, eager <= 1.5x torch. Memory: the peak
bytes of the graph-mode plan (forward and backward) against the plan of the forward alone
(``ExecutablePlan.peak_bytes_after``), and tracemalloc's peak of one call of each.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import platform
import pstats
import shutil
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # bench/_common.py, however this script is run or imported
    sys.path.insert(0, str(HERE))

from _common import DOCS, write_docs_section  # noqa: E402

SECTION = "## Training step"
BATCH, IN, HIDDEN, OUT = 64, 784, 256, 10
LR = 0.01
PARAMS = ("w1", "b1", "w2", "b2")
TARGETS = {"graph/numpy": 1.0, "graph/torch": 1.0, "eager/torch": 1.5}


def program(loss: bool = True) -> str:
    """The loss (or, with ``loss=False``, the logits) as MLIR text."""
    n, i, h, o = BATCH, IN, HIDDEN, OUT
    head = (f"func.func @mlp(%x: tensor<{n}x{i}xf32>, %labels: tensor<{n}xi64>, "
            f"%w1: tensor<{i}x{h}xf32>, %b1: tensor<{h}xf32>, %w2: tensor<{h}x{o}xf32>, "
            f"%b2: tensor<{o}xf32>) -> tensor<f32> {{")
    body = [
        f'  %0 = "tdflow.matmul"(%x, %w1) : (tensor<{n}x{i}xf32>, tensor<{i}x{h}xf32>) -> tensor<{n}x{h}xf32>',
        f'  %1 = "tdflow.bias_add"(%0, %b1) {{axis = 1 : si32}} : (tensor<{n}x{h}xf32>, tensor<{h}xf32>) -> tensor<{n}x{h}xf32>',
        f'  %2 = "tdflow.relu"(%1) : (tensor<{n}x{h}xf32>) -> tensor<{n}x{h}xf32>',
        f'  %3 = "tdflow.matmul"(%2, %w2) : (tensor<{n}x{h}xf32>, tensor<{h}x{o}xf32>) -> tensor<{n}x{o}xf32>',
        f'  %4 = "tdflow.bias_add"(%3, %b2) {{axis = 1 : si32}} : (tensor<{n}x{o}xf32>, tensor<{o}xf32>) -> tensor<{n}x{o}xf32>',
        f'  %p, %l = "tdflow.sparse_softmax_cross_entropy"(%4, %labels) {{depth = {o} : si64}} : (tensor<{n}x{o}xf32>, tensor<{n}xi64>) -> (tensor<{n}x{o}xf32>, tensor<{n}xf32>)',
        f'  %5 = "tdflow.reduce_sum"(%l) {{axis = [0 : si32]}} : (tensor<{n}xf32>) -> tensor<f32>',
        f'  %6 = "tdflow.scalar_mul"(%5) {{has_float_operand = true, float_operand = {1 / n!r} : f64}} : (tensor<f32>) -> tensor<f32>',
        "  return %6 : tensor<f32>",
        "}",
    ]
    return "\n".join([head, *body, ""])


def make_data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    x = rng.random((BATCH, IN), dtype=np.float32)
    y = rng.integers(0, OUT, size=BATCH).astype(np.int64)
    params = {
        "w1": (rng.standard_normal((IN, HIDDEN)) * np.sqrt(2 / IN)).astype(np.float32),
        "b1": np.zeros(HIDDEN, np.float32),
        "w2": (rng.standard_normal((HIDDEN, OUT)) * np.sqrt(1 / HIDDEN)).astype(np.float32),
        "b2": np.zeros(OUT, np.float32),
    }
    return x, y, params


def aligned_copy(a: np.ndarray, align: int = 64) -> np.ndarray:
    """A copy of ``a`` whose data starts on a cache line, for every column's parameters alike.

    A plain ``.copy()`` of the 784x256 weight lands wherever the heap is (0, 16, 32 or 48
    bytes past a line, by process and column order); the 64x784x256 product reading it took
    12-23 us longer by median at 16, 32 or 48 bytes than on a line, its update 3-4 us longer
    at 16 or 48 (thread CPU, the offsets in random order in one process; helper xent, in
    docs/benchmarks.md): each run drew a different handicap for each column.

    >>> aligned_copy(np.arange(3.0)).ctypes.data % 64, aligned_copy(np.arange(3.0)).tolist()
    (0, [0.0, 1.0, 2.0])
    """
    raw = np.empty(a.nbytes + align, np.uint8)
    start = -raw.ctypes.data % align
    out = raw[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


# Each column: make(x, y, params) -> (grads() -> (loss, {name: grad}), step() -> None).
# ``grads`` leaves the parameters as they are; ``step`` is the timed forward+backward+update.
Column = tuple[Callable[[], tuple[float, dict[str, np.ndarray]]], Callable[[], None]]


def graph_column(x: np.ndarray, y: np.ndarray, params: dict[str, np.ndarray],
                 mode: str = "auto") -> Column:
    import tdflow

    vg = tdflow.value_and_grad(program(), wrt=list(PARAMS), mode=mode)
    p = [aligned_copy(params[k]) for k in PARAMS]
    lr = np.float32(LR)

    def grads():
        loss, gs = vg(x, y, *p)
        return float(loss), dict(zip(PARAMS, gs))

    def step():
        _, gs = vg(x, y, *p)
        for w, g in zip(p, gs):
            g *= lr
            w -= g

    return grads, step


def sgd_step_column(x: np.ndarray, y: np.ndarray, params: dict[str, np.ndarray]) -> Column:
    """``tdflow.sgd_step``: forward, backward and the in-place sgd_update in one plan."""
    import tdflow

    grads, _ = graph_column(x, y, params)  # the same gradients (checked), for check()
    st = tdflow.sgd_step(program(), lr=LR, wrt=list(PARAMS))
    p = [aligned_copy(params[k]) for k in PARAMS]

    def step():
        st(x, y, *p)

    return grads, step


def eager_column(x: np.ndarray, y: np.ndarray, params: dict[str, np.ndarray]) -> Column:
    import tdflow

    F = tdflow.functional
    p = {k: tdflow.tensor(params[k].copy(), requires_grad=True) for k in PARAMS}
    xt, yt = tdflow.tensor(x), tdflow.tensor(y)
    scale = 1.0 / BATCH

    def loss_and_backward():
        for t in p.values():
            t.grad = None
        h = F.relu(F.bias_add(F.matmul(xt, p["w1"]), p["b1"], axis=1))
        z = F.bias_add(F.matmul(h, p["w2"]), p["b2"], axis=1)
        _, per = F.sparse_softmax_cross_entropy(z, yt, depth=OUT)
        loss = F.scalar_mul(F.reduce_sum(per, axis=[0]), has_float_operand=True,
                            float_operand=scale)
        loss.backward()
        return loss

    def grads():
        loss = loss_and_backward()
        return float(loss.numpy()), {k: t.grad.numpy() for k, t in p.items()}

    def step():
        loss_and_backward()
        with tdflow.no_grad():
            for t in p.values():
                F.sgd_update(t, t.grad, learning_rate_val=LR)
        # The step is done when every update is: waiting for one parameter (b2) left the
        # w1 product and update running on the engine's worker, outside the clock (issue 23).
        from tdflow.runtime.engine import get_engine

        get_engine().wait_all()

    return grads, step


def numpy_column(x: np.ndarray, y: np.ndarray, params: dict[str, np.ndarray]) -> Column:
    w1, b1, w2, b2 = (aligned_copy(params[k]) for k in PARAMS)
    rows = np.arange(BATCH)
    lr = np.float32(LR)
    inv_n = np.float32(1 / BATCH)

    def grads():
        z1 = x @ w1
        z1 += b1
        h = np.maximum(z1, 0, out=z1)
        z = h @ w2
        z += b2
        m = z.max(axis=1, keepdims=True)
        e = np.exp(z - m)
        s = e.sum(axis=1, keepdims=True)
        loss = float(np.mean(np.log(s[:, 0]) + m[:, 0] - z[rows, y]))
        dz = e
        dz /= s                 # softmax
        dz[rows, y] -= 1
        dz *= inv_n             # d(mean loss)/dz
        dw2 = h.T @ dz
        db2 = dz.sum(axis=0)
        dh = dz @ w2.T
        dh *= h > 0             # relu'
        dw1 = x.T @ dh
        db1 = dh.sum(axis=0)
        return loss, {"w1": dw1, "b1": db1, "w2": dw2, "b2": db2}

    def step():
        _, g = grads()
        for w, k in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2")):
            gk = g[k]
            gk *= lr
            w -= gk

    return grads, step


def torch_column(x: np.ndarray, y: np.ndarray, params: dict[str, np.ndarray]) -> Column | None:
    try:
        import torch
        import torch.nn.functional as tF
    except Exception:  # noqa: BLE001 - torch is optional: any import failure means "absent"
        return None
    p = {k: torch.tensor(params[k].copy(), requires_grad=True) for k in PARAMS}
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)

    def loss_and_backward():
        for t in p.values():
            t.grad = None
        z = torch.relu(xt @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
        loss = tF.cross_entropy(z, yt)
        loss.backward()
        return loss

    def grads():
        loss = loss_and_backward()
        return float(loss.detach()), {k: t.grad.numpy().copy() for k, t in p.items()}

    def step():
        loss_and_backward()
        with torch.no_grad():
            for t in p.values():
                t.sub_(t.grad, alpha=LR)

    return grads, step


def columns(x, y, params) -> dict[str, Column]:
    cols = {"graph": sgd_step_column(x, y, params),
            "graph, value_and_grad + numpy update": graph_column(x, y, params),
            "eager": eager_column(x, y, params),
            "numpy": numpy_column(x, y, params),
            "graph, mode=direct": graph_column(x, y, params, mode="direct")}
    t = torch_column(x, y, params)
    if t is not None:
        cols["torch"] = t
    return cols


def check(cols: dict[str, Column]) -> dict[str, Any]:
    """One step's loss and gradients from the same weights, in every column: they must agree."""
    got = {name: grads() for name, (grads, _) in cols.items()}
    ref_loss, ref = got["numpy"]
    for name, (loss, g) in got.items():
        np.testing.assert_allclose(loss, ref_loss, rtol=1e-5, err_msg=name)
        for k in PARAMS:
            np.testing.assert_allclose(g[k], ref[k], rtol=1e-4, atol=1e-6, err_msg=f"{name} {k}")
    same = all(np.array_equal(got["graph"][1][k], got["eager"][1][k]) for k in PARAMS)
    assert same and got["graph"][0] == got["eager"][0], "graph and eager gradients differ"
    return {"loss": ref_loss, "graph_equals_eager": same}


def time_steps(steps: dict[str, Callable[[], None]], rounds: int) -> dict[str, float]:
    """Median seconds per step of each column; the columns take turns, the order rotating
    each round, so a change in machine load hits them all alike."""
    for fn in steps.values():
        for _ in range(10):
            fn()
    names = list(steps)
    times: dict[str, list[float]] = {n: [] for n in names}
    clock = time.perf_counter
    for r in range(rounds):
        k = r % len(names)
        for n in names[k:] + names[:k]:
            fn = steps[n]
            t0 = clock()
            fn()
            times[n].append(clock() - t0)
    return {n: statistics.median(v) for n, v in times.items()}


def memory(x, y, params) -> dict[str, int]:
    """Plan peaks (forward+backward vs forward) and tracemalloc peaks of one call each."""
    import tdflow

    vg = tdflow.value_and_grad(program(), wrt=list(PARAMS))
    fwd = tdflow.compile(program())
    args = [x, y, *(params[k] for k in PARAMS)]
    out = {"plan_step": vg.program.plan.peak_bytes_after,
           "plan_step_before": vg.program.plan.peak_bytes_before,
           "plan_forward": fwd.plan.peak_bytes_after,
           "plan_forward_before": fwd.plan.peak_bytes_before}
    eager_grads, eager_step = eager_column(x, y, params)
    cases = {"traced_graph_step": lambda: vg(*args), "traced_forward": lambda: fwd(*args),
             "traced_eager_step": eager_step, "traced_numpy_step": numpy_column(x, y, params)[1]}
    for name, fn in cases.items():
        fn()
        tracemalloc.start()
        fn()
        out[name] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return out


@contextmanager
def threads(n: int) -> Iterator[str]:
    """Run with ``n`` BLAS threads (numpy's OpenBLAS, through threadpoolctl, which
    scikit-learn brings) and ``n`` torch intra-op threads; yields what was set. On 2 cores
    shared with other jobs, BLAS threads, tdflow's engine worker and torch's OpenMP threads
    otherwise oversubscribe the cores and the times measure the scheduler (torch's step went
    from 1 ms to 14 ms in one such run)."""
    try:
        import torch

        old_torch = torch.get_num_threads()
        torch.set_num_threads(n)
    except Exception:  # noqa: BLE001 - torch is optional
        torch = None
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        threadpool_limits = None
    try:
        if threadpool_limits is None:
            yield "BLAS threads: library default (threadpoolctl absent)"
        else:
            with threadpool_limits(n, user_api="blas"):
                yield f"{n} BLAS thread(s)" + (f", {n} torch thread(s)" if torch else "")
    finally:
        if torch is not None:
            torch.set_num_threads(old_torch)


def run(rounds: int = 1000, n_threads: int = 1) -> dict[str, Any]:
    with threads(n_threads) as note:
        res = _run(rounds)
    res["meta"]["threads"] = note
    return res


def _run(rounds: int) -> dict[str, Any]:
    x, y, params = make_data()
    cols = columns(x, y, params)
    checked = check(cols)
    load = os.getloadavg()[0]
    t = time_steps({n: step for n, (_, step) in cols.items()}, rounds)
    ratios = {"graph/numpy": t["graph"] / t["numpy"], "eager/numpy": t["eager"] / t["numpy"]}
    if "torch" in t:
        ratios["graph/torch"] = t["graph"] / t["torch"]
        ratios["eager/torch"] = t["eager"] / t["torch"]
    return {"seconds": t, "ratios": ratios, "memory": memory(x, y, params), **checked,
            "meta": meta(load, rounds)}


def meta(load: float, rounds: int) -> dict[str, Any]:
    try:
        import torch

        torch_v = torch.__version__
    except Exception:  # noqa: BLE001
        torch_v = None
    return {"date": time.strftime("%Y-%m-%d"), "machine": platform.machine(),
            "cpus": os.cpu_count(), "gpu": bool(shutil.which("nvidia-smi")),
            "load_average": round(load, 2), "python": platform.python_version(),
            "numpy": np.__version__, "torch": torch_v, "rounds": rounds}


def profile(column: str, steps: int = 300, top: int = 15) -> str:
    """cProfile of ``steps`` steps of one column, the functions with the most own time."""
    x, y, params = make_data()
    _, step = columns(x, y, params)[column]
    for _ in range(10):
        step()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        step()
    prof.disable()
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(top)
    return s.getvalue()


def verdicts(res: dict[str, Any]) -> list[tuple[str, float | None, float, str]]:
    out = []
    for key, target in TARGETS.items():
        v = res["ratios"].get(key)
        out.append((key, v, target, "n/a (torch absent)" if v is None else
                    ("PASS" if v <= target else "MISS")))
    return out


def format_table(res: dict[str, Any]) -> str:
    t, m = res["seconds"], res["memory"]
    rows = ["| column | median per step | vs numpy | vs torch |", "|---|---:|---:|---:|"]
    for n, s in t.items():
        vt = f"{s / t['torch']:.2f}x" if "torch" in t else "n/a"
        rows.append(f"| {n} | {s * 1e3:.3f} ms | {s / t['numpy']:.2f}x | {vt} |")
    rows += ["", "| target | measured | limit | verdict |", "|---|---:|---:|---|"]
    for key, v, target, verdict in verdicts(res):
        rows.append(f"| {key} | {'-' if v is None else f'{v:.2f}x'} | <= {target:.1f}x | "
                    f"{verdict} |")
    rows += ["", "| memory | bytes |", "|---|---:|",
             f"| graph-mode step plan, peak (before plan-memory) | {kib(m['plan_step'])} "
             f"({kib(m['plan_step_before'])}) |",
             f"| forward-only plan, peak (before plan-memory) | {kib(m['plan_forward'])} "
             f"({kib(m['plan_forward_before'])}) |",
             f"| step plan / forward plan | {m['plan_step'] / m['plan_forward']:.2f}x |",
             f"| tracemalloc peak: graph step call / forward call | "
             f"{kib(m['traced_graph_step'])} / {kib(m['traced_forward'])} |",
             f"| tracemalloc peak: eager step / numpy step | {kib(m['traced_eager_step'])} / "
             f"{kib(m['traced_numpy_step'])} |"]
    mt = res["meta"]
    rows += ["", f"loss {res['loss']:.4f} in every column; graph and eager gradients bit for "
             f"bit equal: {res['graph_equals_eager']}; {mt['rounds']} steps per column; "
             f"python {mt['python']}, numpy {mt['numpy']}, torch "
             f"{mt['torch'] or 'not installed'}; {mt.get('threads', '')}; {mt['cpus']} CPUs, load average "
             f"{mt['load_average']} at the start"]
    return "\n".join(rows)


def kib(n: int) -> str:
    return f"{n / 1024:,.0f} KiB"


DOC_TEXT = """\
One SGD step of a 784->256->10 perceptron on a batch of 64 float32 rows: forward
(`matmul`, `bias_add`, `relu`, `matmul`, `bias_add`, `sparse_softmax_cross_entropy`, the batch
mean by `reduce_sum` and `scalar_mul`), backward and the update of the four parameters.
`graph` is `tdflow.value_and_grad` of that program (forward and backward lowered together into
one plan) plus the update in numpy; `eager` is tensors with `requires_grad`, `backward()` and
`sgd_update` under `no_grad()`; `numpy` the same step written out by hand; `torch` PyTorch CPU
eager (installed only for the measurement, never a dependency). Every column first computes one
step from the same weights and must agree with the others (graph and eager bit for bit); then
the columns take turns step by step and each time is the median of its steps. numpy's BLAS
and torch run one thread each (`--threads`): on two cores shared with other jobs, more BLAS
threads, tdflow's engine worker and torch's OpenMP threads oversubscribe the cores (torch's
step took 14 ms instead of 1 ms in one such run).
"""


DOC_NOTES = """\
The ratios move with the load of the shared cores: over seven runs on 2026-12-01 (load average
1.7-3.3) graph/numpy was 1.39-1.75x, graph/torch 0.94-1.04x and eager/torch 1.14-1.85x, the
eager step the most sensitive (its big products run on the engine's worker thread, and the
main thread waits for them). graph <= 1.0x numpy is missed in every run; the other two
targets are met in some runs and missed in others.

Where the time goes (measured on 2026-12-01 on this machine, 1 BLAS thread; the per-launch
times by timing each launch of the `mode="direct"` loop, the eager parts with
`TDFLOW_ENGINE=naive` so that cProfile sees every op):

* **graph**: the plan has 17 launches over 18 buffers (about 0.5 M elements, above the
  executor's `SMALL_PLAN_ELEMENTS` = 2^18), so `mode="auto"` pushes every launch to the
  threaded engine: about 0.15-0.2 ms a step, the difference between the `graph` and
  `graph, mode=direct` rows. In the direct loop the two big products (`x @ w1` forward and
  `x^T @ dh` for `dw1`, about 270 µs each) cost what numpy's cost in the same process; the
  other 15 launches take about 180 µs where numpy's hand-written rest takes about 120 µs:
  `sparse_softmax_cross_entropy` about 40 µs on 64x10 (generic: validity masks,
  `take_along_axis`), its gradient 22 µs, the fused relu gradient 22 µs on 64x256 (numpy's
  `dh *= h > 0`: 6 µs), `reduce_sum` of 64 values 10 µs and `broadcast_like` of the scalar
  seed to 64 rows 9 µs; the executor's loop and the fresh result arrays add about 60 µs.
* **eager**: forward about 0.45 ms (0.65 ms with the threaded engine, which hands the big
  product to its worker thread and waits for it), backward 0.6-0.8 ms (three products, about
  0.3 ms; the rest is six small gradient kernels and, around all nine gradient ops, the tape
  walk, the emitter and the op runner's binding), the four `sgd_update`s about 0.2 ms (the kernel copies `model_diff`
  before scaling it: one more pass over `dw1`'s 784 KiB than numpy's in-place `g *= lr; w -= g`).
  With `TDFLOW_ENGINE=naive` the eager step took 1.49 ms against 1.67 ms in the same conditions.
* **memory**: the step's plan peaks at 1.87x the forward's; the difference is mostly `dw1`
  (784 KiB, a result, so never reused) and the backward's activations. Forward activations
  the backward reads are kept in their buffers and overwritten in place by the relu
  gradient; plan-memory saves 135 KiB of the 2,117 KiB one buffer per value would need.
"""


def render_docs(res: dict[str, Any]) -> str:
    mt = res["meta"]
    machine = (f"Run: {mt['date']}; {mt['machine']}, {mt['cpus']} cores shared with other jobs "
               f"(load average {mt['load_average']} when the run started), "
               f"{'a GPU present but not used' if mt['gpu'] else 'no GPU'}.")
    missed = [f"{k} {v:.2f}x (target {t:.1f}x)" for k, v, t, verdict in verdicts(res)
              if verdict == "MISS"]
    verdict = ("Above target in this run: " + "; ".join(missed) + "." if missed
               else "Every target met in this run.")
    return (f"{SECTION}\n\nCommand: `python bench/train_bench.py --write-docs` (`--rounds "
            f"{mt['rounds']}`, {mt['threads']}). {machine}\n\n{DOC_TEXT}\n{format_table(res)}\n\n{verdict}\n\n"
            f"{DOC_NOTES}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=1000, help="timed steps per column")
    ap.add_argument("--threads", type=int, default=1,
                    help="BLAS and torch threads (default 1: the cores are shared)")
    ap.add_argument("--write-docs", action="store_true",
                    help=f"update the {SECTION[3:]!r} section of docs/benchmarks.md")
    ap.add_argument("--profile", choices=("graph", "eager", "numpy", "torch",
                                          "graph, mode=direct"),
                    help="print a cProfile of one column's steps instead")
    args = ap.parse_args(argv)
    if args.profile:
        with threads(args.threads):
            print(profile(args.profile))
        return 0
    res = run(args.rounds, args.threads)
    print(format_table(res))
    if args.write_docs:
        write_docs_section(SECTION, render_docs(res))
        print(f"wrote the {SECTION!r} section of {DOCS}")
    return 0 if all(v[3] != "MISS" for v in verdicts(res)) else 1


if __name__ == "__main__":
    sys.exit(main())
