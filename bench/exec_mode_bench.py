"""One training step compiled twice, ``mode="engine"`` and ``mode="direct"``, calls taking turns
in one process: what pushing a plan's launches to the engine costs against the executor's direct
loop (the reason ``mode="auto"`` is the direct loop; docs/benchmarks.md, "compiled plans run in
the direct loop on any engine").

    python bench/exec_mode_bench.py resnet 40   # the ResNet example's sgd_step, 40 calls each
    python bench/exec_mode_bench.py gpt 16      # the GPT example's, at model_bench's size

Prints the median and best CPU time per call of each mode (BLAS on one thread).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "bench"))

import model_bench as mb  # noqa: E402

import tdflow  # noqa: E402


def steps(which: str) -> tuple[dict, list]:
    """``({mode: compiled step}, arguments)`` of the ResNet or GPT example."""
    rng = np.random.default_rng(0)
    if which == "resnet":
        import resnet
        import train_resnet as tr

        x = rng.random((resnet.BATCH, 64), dtype=np.float32)
        y = rng.integers(0, 10, resnet.BATCH).astype(np.int64)
        params, stats = resnet.init_params(0), resnet.init_stats()
        args = [tr.images(x), y, *[v.copy() for v in params.values()],
                *[v.copy() for v in stats.values()]]
        prog, names = resnet.program(resnet.BATCH), list(tr.PARAMS)
    else:
        import gpt

        cfg = gpt.Config(**mb.GPT_SIZE)
        tokens = rng.integers(0, cfg.vocab, (cfg.batch, cfg.context)).astype(np.int64)
        params = gpt.init_params(cfg, 0)
        names = list(params)
        args = [tokens, tokens.copy(), *[params[k].copy() for k in names]]
        prog = gpt.program(cfg)
    # lr 0: the parameters stay as they are, so every call does the same work
    return {m: tdflow.sgd_step(prog, lr=0.0, wrt=names, mode=m) for m in ("engine", "direct")}, args


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    which = args[0] if args else "resnet"
    calls = int(args[1]) if len(args) > 1 else 30
    fs, inputs = steps(which)
    res: dict[str, list[float]] = {m: [] for m in fs}
    with mb.threads(1):
        for f in fs.values():
            for _ in range(3):
                f(*inputs)
        for r in range(calls):
            for m, f in (fs.items() if r % 2 else reversed(fs.items())):
                t = time.process_time()
                f(*inputs)
                res[m].append((time.process_time() - t) * 1e3)
    for m, v in res.items():
        print(f"{which} {m:6s} median {statistics.median(v):.2f} ms  best {min(v):.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
