#!/usr/bin/env python3
"""Fill tdflow's cubin cache, without a GPU, with every kernel the GPU tests will compile.

    TDFLOW_CACHE_DIR=.gpucache python bench/gpu_precompile.py --shard 0/2 &
    TDFLOW_CACHE_DIR=.gpucache python bench/gpu_precompile.py --shard 1/2

A lent GPU machine has minutes, not hours: ``tests/cuda/test_cuda_gpu.py`` compiles ~1,500
translation units, one nvcc call each (about a second apiece), which alone would outlast the
lease. nvcc needs no GPU, and the cubin cache is keyed on the source, nvcc's version text and
the flags (``kernel_build.compile_cubin``), so the same workloads run here through the real
cuda backend over a driver that only pretends to execute (``tests/cuda/fake_pycuda.py``'s
memory, launches that do nothing) leave in the cache exactly the cubins the GPU run will ask
for. ``bench/gpu_check.sh`` carries the folder there; where the GPU machine's nvcc reports
another version the keys differ and it compiles as usual (it says so).

Results computed here are meaningless (no kernel runs); only the cache matters. Each workload's
failure is printed and the next one runs.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "cuda"))

import numpy as np  # noqa: E402


def null_backend() -> Any:
    """The real :class:`CudaBackend` (its real nvcc ``compile_cubin``) over a driver whose
    modules launch nothing."""
    from fake_pycuda import FakeDriver
    from tdflow.runtime.backends.cuda import CudaBackend

    class NullDriver(FakeDriver):
        def module_from_buffer(self, cubin: bytes) -> Any:
            assert cubin[:4] == b"\x7fELF", "compile_cubin gave no cubin"
            fn = SimpleNamespace(prepare=lambda sig: None,
                                 prepared_async_call=lambda *a: None)
            return SimpleNamespace(get_function=lambda name: fn)

    return CudaBackend(driver=NullDriver())


def as_cuda(backend: Any) -> None:
    """``get_backend("cuda")`` and ``cuda_status()`` answer as on a GPU machine."""
    import tdflow.runtime.backends as backends
    import tdflow.runtime.backends.cuda_status as cs

    real = backends.get_backend
    backends.get_backend = lambda name: backend if name.split(":")[0] == "cuda" else real(name)
    ok = cs.CudaStatus(True, "ok", 1)
    cs.cuda_status = lambda: ok


def workloads(shard: int, shards: int) -> list[tuple[str, Any]]:
    """``(name, thunk)`` of this shard: the family cases by index, the rest on shard 0."""
    import test_cuda_gpu as gpu
    from cuda_harness import full_attrs, result_types, run

    def case(op: str, inputs: list, attrs: dict) -> Any:
        def go() -> None:
            a = full_attrs(op, attrs)
            run("cuda", op, list(inputs), a, result_types(op, inputs, a))
        return go

    out = [(f"case {i} {op}", case(op, ins, at))
           for i, (op, ins, at) in enumerate(gpu.family_cases()) if i % shards == shard]
    if shard == 0:
        for ex in ("mlp.mlir", "cnn.mlir", "resnet.mlir", "gpt.mlir"):
            out.append((f"example {ex}", lambda ex=ex: gpu.test_examples_on_cuda_match_the_cpu(ex)))
        out += [("user kernel", gpu.test_user_cuda_kernel_on_cuda),
                ("eager", gpu.test_eager_on_cuda),
                ("training script", gpu.test_training_script_gradients_on_cuda)]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shard", default="0/1", help="k/n: run the k-th of n slices")
    args = p.parse_args(argv)
    shard, shards = (int(x) for x in args.shard.split("/"))
    as_cuda(null_backend())
    todo = workloads(shard, shards)
    t0, failed = time.perf_counter(), 0
    for n, (name, thunk) in enumerate(todo, 1):
        try:
            thunk()
        except AssertionError:
            pass  # results are garbage by design; the compile happened
        except Exception:  # noqa: BLE001 - report and go on
            failed += 1
            print(f"{name}: {traceback.format_exc().splitlines()[-1]}", flush=True)
        if n % 50 == 0:
            print(f"shard {shard}/{shards}: {n}/{len(todo)} in {time.perf_counter() - t0:.0f} s",
                  flush=True)
    print(f"shard {shard}/{shards}: {len(todo)} workloads, {failed} raised, "
          f"{time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
