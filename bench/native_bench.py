"""The native (C) loop of fused elementwise expressions against the numpy renderer and numpy.

    python bench/native_bench.py            # print the table (CPU time, best of rounds)

Rows, each timed with ``lowering.elementwise_native.USE_NATIVE`` on and off in the same
process, the columns taking turns round by round (``time.process_time``, one BLAS thread):

* ``relu grad 64x256``: the MLP step's ``where(gt(x, 0), dy, 0)``; numpy reference the
  hand-written ``dy * (x > 0)`` (which differs from ``where`` on NaN and -0, see the issue);
* ``exact chain 1M f32``: ``square(max(x * y + x, 0) * 0.5)`` (the 6-op chain of
  ``fused_bench.py`` without its ``tanh``, which stays numpy); reference the numpy expression;
* ``MLP sgd_step b64``: ``tdflow.sgd_step`` of ``train_bench.py``'s program, also with the
  epilogue fusion off (``fuse-elementwise{epilogue=false}``) and with both off (the plan and
  kernels as before this work); reference ``train_bench.py``'s hand-written numpy step;
* ``MLP forward b64``: ``tdflow.compile`` of the same program; reference the numpy forward.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _toggle(on: bool, fn: Callable[[], Any]) -> Callable[[], Any]:
    from tdflow.lowering import elementwise_native

    def run() -> Any:
        elementwise_native.USE_NATIVE = on
        try:
            return fn()
        finally:
            elementwise_native.USE_NATIVE = True
    return run


def rows() -> dict[str, dict[str, Callable[[], Any]]]:
    import train_bench as tb
    from tdflow.dialect.formula.expr import Const, Input, maximum, where
    from tdflow.lowering.elementwise_numpy import render_numpy

    import tdflow

    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 256)).astype(np.float32)
    dy = rng.standard_normal((64, 256)).astype(np.float32)
    out = np.empty_like(x)
    relu_grad = render_numpy(where(Input(0) > 0, Input(1), 0), ["f32", "f32"], "f32")
    a = rng.standard_normal(1 << 20).astype(np.float32)
    b = rng.standard_normal(1 << 20).astype(np.float32)
    big = np.empty_like(a)
    e = maximum(Input(0) * Input(1) + Input(0), Const(0.0)) * 0.5
    chain = render_numpy(e * e, ["f32", "f32"], "f32")
    half = np.float32(0.5)

    def chain_numpy() -> np.ndarray:
        t = np.maximum(a * b + a, 0) * half
        return t * t

    from tdflow.lowering.pass_manager import default_pipeline

    off = default_pipeline("cpu").replace("fuse-elementwise", "fuse-elementwise{epilogue=false}")
    xs, ys, params = tb.make_data()
    st = tdflow.sgd_step(tb.program(), lr=tb.LR, wrt=list(tb.PARAMS))
    st_off = tdflow.sgd_step(tb.program(), lr=tb.LR, wrt=list(tb.PARAMS), pipeline=off)
    p = [params[k].copy() for k in tb.PARAMS]
    q = [params[k].copy() for k in tb.PARAMS]
    numpy_step = tb.numpy_column(xs, ys, params)[1]
    fwd = tdflow.compile(tb.program())
    fwd_off = tdflow.compile(tb.program(), pipeline=off)
    fargs = [xs, ys, *(params[k] for k in tb.PARAMS)]
    w1, b1, w2, b2 = (params[k] for k in tb.PARAMS)
    rows_ = np.arange(tb.BATCH)
    inv_n = np.float32(1 / tb.BATCH)

    def numpy_forward() -> np.float32:
        z1 = xs @ w1
        z1 += b1
        h = np.maximum(z1, 0, out=z1)
        z = h @ w2
        z += b2
        m = z.max(axis=1, keepdims=True)
        s = np.exp(z - m).sum(axis=1)
        return (np.log(s) + m[:, 0] - z[rows_, ys]).sum() * inv_n
    return {
        "relu grad 64x256": {"native": _toggle(True, lambda: relu_grad([x, dy], out)),
                             "numpy renderer": _toggle(False, lambda: relu_grad([x, dy], out)),
                             "numpy dy*(x>0)": lambda: dy * (x > 0)},
        "exact chain 1M f32": {"native": _toggle(True, lambda: chain([a, b], big)),
                               "numpy renderer": _toggle(False, lambda: chain([a, b], big)),
                               "numpy expression": chain_numpy},
        "MLP sgd_step b64": {"native": _toggle(True, lambda: st(xs, ys, *p)),
                             "numpy renderer": _toggle(False, lambda: st(xs, ys, *p)),
                             "native, epilogue off": _toggle(True, lambda: st_off(xs, ys, *q)),
                             "neither (as before)": _toggle(False, lambda: st_off(xs, ys, *q)),
                             "numpy step": numpy_step},
        "MLP forward b64": {"native": _toggle(True, lambda: fwd(*fargs)),
                            "numpy renderer": _toggle(False, lambda: fwd(*fargs)),
                            "neither (as before)": _toggle(False, lambda: fwd_off(*fargs)),
                            "numpy forward": numpy_forward},
    }


def measure(cols: dict[str, Callable[[], Any]], rounds: int, inner: int) -> dict[str, float]:
    for fn in cols.values():
        for _ in range(3):
            fn()
    best = dict.fromkeys(cols, float("inf"))
    names = list(cols)
    for r in range(rounds):
        k = r % len(names)
        for n in names[k:] + names[:k]:
            fn = cols[n]
            t0 = time.process_time()
            for _ in range(inner):
                fn()
            best[n] = min(best[n], (time.process_time() - t0) / inner)
    return best


def main() -> int:
    try:
        from threadpoolctl import threadpool_limits
        limit = threadpool_limits(1, user_api="blas")
    except ImportError:
        limit = None
    print("| row | column | best CPU time | vs numpy renderer | vs numpy reference |")
    print("|---|---|---:|---:|---:|")
    for row, cols in rows().items():
        inner = 200 if "64x256" in row else (5 if "1M" in row else 10)
        t = measure(cols, rounds=15, inner=inner)
        ref = next((t[k] for k in ("numpy dy*(x>0)", "numpy expression", "numpy step",
                                   "numpy forward") if k in t), None)
        for n, s in t.items():
            vs_ref = f"{s / ref:.2f}x" if ref else "-"
            print(f"| {row} | {n} | {s * 1e6:.1f} us | {s / t['numpy renderer']:.2f}x | "
                  f"{vs_ref} |")
    if limit is not None:
        limit.restore_original_limits()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
