"""Batch norm's channel-broadcast work on the native fused loop against numpy, per launch.

    python bench/bn_channel_bench.py [--rounds 300]

Rows (the ResNet's two activation shapes, float32), each timed with
``lowering.elementwise_native.USE_NATIVE`` on and off in the same process, the two taking
turns call by call (the calling thread's CPU time, median over rounds; one BLAS thread):

* ``normalized``: ``mul(sub(in0, in1), in2)``, the gradient's ``(x - mean) * inv`` with
  ``(1, C, 1, 1)`` operands;
* ``gradient``: the batch norm input gradient's five-input expression
  (``dialect/hooks/norm.py``'s ``_normalized_grad``);
* ``forward``: the training ``normalization`` kernel (``runtime/kernels/norm.py``: the
  centring and the scale and shift on the channel loop, the two einsum statistics as before).

Both columns give the same bits (``tests/runtime/test_elementwise_channels.py``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

GRAD = "mul(in0, sub(sub(in1, mul(in2, 0.0009765625)), mul(in3, mul(in4, 0.0009765625))))"
SHAPES = [(64, 32, 4, 4), (64, 16, 8, 8)]


def _rows(rng: np.random.Generator) -> list[tuple[str, Callable[[], Any]]]:
    from tdflow.dialect.formula.text import parse_expr
    from tdflow.lowering.elementwise_numpy import render_numpy
    from tdflow.runtime.kernels import (
        elementwise,  # noqa: F401 - installs the native builder
        norm,
    )

    rows = []
    for shape in SHAPES:
        c = shape[1]
        full = [rng.standard_normal(shape).astype(np.float32) for _ in range(2)]
        ch = [rng.standard_normal((1, c, 1, 1)).astype(np.float32) for _ in range(3)]
        out = np.empty(shape, np.float32)
        normalized = render_numpy(parse_expr("mul(sub(in0, in1), in2)"), ["f32"] * 3).run
        grad = render_numpy(parse_expr(GRAD), ["f32"] * 5).run
        attrs = {"axis": 1, "epsilon": 1e-5, "training": True, "momentum": 0.9}
        stats = [np.zeros(c, np.float32), np.ones(c, np.float32), np.ones(c, np.float32),
                 np.zeros(c, np.float32)]
        outs = [out, np.empty(c, np.float32), np.empty(c, np.float32)]
        name = "x".join(map(str, shape))
        rows += [
            (f"normalized {name}", lambda f=full, h=ch, o=out, p=normalized: p([f[0], h[0], h[1]], o)),
            (f"gradient {name}", lambda f=full, h=ch, o=out, p=grad: p([h[0], f[0], h[1], f[1], h[2]], o)),
            (f"forward {name}", lambda f=full, s=stats, o=outs, a=attrs:
             norm.normalization(a, [f[0], *s], o)),
        ]
    return rows


def main() -> None:
    """Print the table.

    >>> callable(main)
    True
    """
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=300)
    args = ap.parse_args()
    from tdflow.lowering import elementwise_native

    print("| launch | numpy | native | native/numpy |\n|---|---:|---:|---:|")
    for name, fn in _rows(np.random.default_rng(0)):
        times: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(3):
            fn()  # builds and warms both paths
        for _ in range(args.rounds):
            for on in (False, True):
                elementwise_native.USE_NATIVE = on
                t = time.thread_time_ns()
                fn()
                times[on].append(time.thread_time_ns() - t)
        elementwise_native.USE_NATIVE = True
        a, b = (float(np.median(times[k])) / 1e3 for k in (False, True))
        print(f"| {name} | {a:.1f} us | {b:.1f} us | {b / a:.2f} |")


if __name__ == "__main__":
    main()
