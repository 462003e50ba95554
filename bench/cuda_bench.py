#!/usr/bin/env python3
"""Benchmark tdflow's generated CUDA kernels on a GPU against PyTorch on the same GPU.

    python3 bench/cuda_bench.py              # on a GPU machine (bench/gpu_check.sh runs it)
    python3 bench/cuda_bench.py --scale 0.01 # smaller problems (a quick try)

With a GPU (``cuda_status()`` available), each measure is the median of several runs, with the
reference measured in the same run:

* **fused elementwise chain** on 256M float32 (``tanh(sigmoid(x) * x)``, one kernel after
  fusion): bytes moved per second against a device-to-device copy of the same buffer
  (PyTorch's ``copy_``). Target: at least 85%.
* **matmul 4096^3** float32 (PyTorch with TF32 off, i.e. cuBLAS's FP32 path) and float16:
  TFLOP/s and the ratio to PyTorch. Target: at least 50% for float32.
* **MLP forward at batch 4096** (1024 -> 4096 -> 4096 -> 1024 with bias and ReLU, softmax):
  tdflow's plan against the same ops in PyTorch eager. Target: no slower.

tdflow's side runs the compiled plan's launches on device-resident buffers (what a compiled
program does between its host copies), so the numbers are the kernels' and the launch path's.

Without a GPU it prints the reason and the ptxas resource report (registers, shared memory,
spills) of every kernel these programs generate, for ``sm_90``.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402


def chain_program(n: int) -> str:
    t = f"tensor<{n}xf32>"
    return f"""func.func @chain(%x: {t}) -> {t} {{
  %0 = "tdflow.sigmoid"(%x) : ({t}) -> {t}
  %1 = "tdflow.broadcast_mul"(%0, %x) : ({t}, {t}) -> {t}
  %2 = "tdflow.tanh"(%1) : ({t}) -> {t}
  return %2 : {t}
}}"""


def matmul_program(m: int, n: int, k: int, dt: str) -> str:
    a, b, c = f"tensor<{m}x{k}x{dt}>", f"tensor<{k}x{n}x{dt}>", f"tensor<{m}x{n}x{dt}>"
    return f"""func.func @mm(%a: {a}, %b: {b}) -> {c} {{
  %0 = "tdflow.matmul"(%a, %b) : ({a}, {b}) -> {c}
  return %0 : {c}
}}"""


def mlp_program(batch: int, sizes: tuple[int, ...]) -> str:
    args, body = [f"%x: tensor<{batch}x{sizes[0]}xf32>"], []
    cur, v = f"tensor<{batch}x{sizes[0]}xf32>", "%x"
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        args += [f"%w{i}: tensor<{a}x{b}xf32>", f"%b{i}: tensor<{b}xf32>"]
        out = f"tensor<{batch}x{b}xf32>"
        body.append(f'  %m{i} = "tdflow.matmul"({v}, %w{i}) : ({cur}, tensor<{a}x{b}xf32>) -> {out}')
        body.append(f'  %a{i} = "tdflow.bias_add"(%m{i}, %b{i}) {{axis = 1 : si32}} : ({out}, '
                    f'tensor<{b}xf32>) -> {out}')
        v = f"%a{i}"
        if i < len(sizes) - 2:
            body.append(f'  %r{i} = "tdflow.relu"({v}) : ({out}) -> {out}')
            v = f"%r{i}"
        cur = out
    body.append(f'  %y = "tdflow.softmax"({v}) : ({cur}) -> {cur}')
    return (f"func.func @mlp({', '.join(args)}) -> {cur} {{\n" + "\n".join(body)
            + f"\n  return %y : {cur}\n}}")


class DevicePlan:
    """A program lowered for a GPU device, run launch by launch on device buffers."""

    def __init__(self, text: str, device: str) -> None:
        from tdflow.dialect.ir import parse_module
        from tdflow.runtime.backends import get_backend
        from tdflow.runtime.compiled import lower
        from tdflow.runtime.kernels.registry import kernel_table

        module = parse_module(text)
        entry = next(iter(module)).name
        self.plan = lower(module, device, entry).plan(entry)
        self.be = be = get_backend(device)
        table = kernel_table(device)
        bufs = {b.id: be.allocate(b.shape, b.dtype) for b in self.plan.buffers}

        def view(b: int, shape: tuple[int, ...]):
            base = bufs[b]
            if base.shape == shape:
                return base
            if isinstance(base, np.ndarray):  # cudasim: a numpy buffer's first elements
                return base.reshape(-1)[:int(np.prod(shape))].reshape(shape)
            return base.view(shape)

        def steps(launches):
            out = []
            for ln in launches:
                ins = [None if b is None else view(b, s) for b, s in zip(ln.inputs, ln.input_shapes)]
                outs = [view(b, s) for b, s in zip(ln.outputs, ln.output_shapes)]
                out.append((table.get(ln.kernel).fn.code_for(ln.attrs, ins, outs), ins, outs))
            return out

        self.prologue, self.steps = steps(self.plan.prologue), steps(self.plan.launches)
        self.codes = [c for c, _, _ in self.prologue + self.steps]
        self.bufs = bufs

    def compile(self) -> None:
        self.be.prepare(self.codes)
        for code, ins, outs in self.prologue:
            self.be.run(code, ins, outs)

    def bind(self, arrays: list[np.ndarray]) -> None:
        for a, arr in zip(self.plan.arguments, arrays):
            self.be.copy_from_host(self.bufs[a.buffer], np.ascontiguousarray(arr))

    def __call__(self) -> None:
        for code, ins, outs in self.steps:
            self.be.run(code, ins, outs)

    def result(self, k: int = 0) -> np.ndarray:
        return self.be.to_numpy(self.bufs[self.plan.results[k].buffer])


PARTS = ("chain", "matmul", "mlp")


def timed(fn, sync, runs: int) -> float:
    """Median seconds of ``fn()`` over ``runs`` (after a warm-up), synchronising each time."""
    fn()
    sync()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def gpu(args: argparse.Namespace) -> int:
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    sync = torch.cuda.synchronize
    dev = torch.device("cuda")
    lines = []

    def report(name: str, ours: float, ref: float, unit: str, target: float | None,
               higher_better: bool = True) -> None:
        ratio = ours / ref if higher_better else ref / ours
        verdict = "" if target is None else (" PASS" if ratio >= target else " MISS")
        line = f"{name:<40} tdflow {ours:10.3f} {unit:<6} ref {ref:10.3f} {unit:<6} ratio {ratio:5.2f}{verdict}"
        lines.append(line)
        print(line, flush=True)

    print(f"GPU: {torch.cuda.get_device_name(0)}; torch {torch.__version__}", flush=True)
    if "chain" in args.only:
        chain(args, report, sync, dev, torch)
    if "matmul" in args.only:
        matmul(args, report, sync, dev, torch)
    if "mlp" in args.only:
        mlp(args, report, sync, dev, torch)
    return 0


def chain(args, report, sync, dev, torch) -> None:
    """The fused chain's bytes per second against a device-to-device copy."""
    n = int(256 * 2**20 * args.scale)
    p = DevicePlan(chain_program(n), "cuda")
    print(f"chain: {len(p.steps)} launch(es) after fusion", flush=True)
    p.compile()
    x = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    p.bind([x])
    t = timed(p, p.be.synchronize, args.runs)
    got = p.result()
    want = np.tanh(x / (1 + np.exp(-x)) * x) if args.scale < 0.2 else None
    if want is not None:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    tx = torch.from_numpy(x).to(dev)
    ty = torch.empty_like(tx)
    tc = timed(lambda src=tx, dst=ty: dst.copy_(src), sync, args.runs)
    report(f"fused chain {n / 2**20:.0f}M f32 (GB/s)", 8 * n / t / 1e9, 8 * n / tc / 1e9,
           "GB/s", 0.85)
    del tx, ty


def matmul(args, report, sync, dev, torch) -> None:
    """f32 and f16 matmul TFLOP/s against cuBLAS (TF32 off)."""
    s = max(256, int(4096 * args.scale ** (1 / 3)) // 128 * 128)
    for dt in ("f32", "f16"):
        p = DevicePlan(matmul_program(s, s, s, dt), "cuda")
        p.compile()
        rng = np.random.default_rng(1)
        a = rng.standard_normal((s, s)).astype(np.float16 if dt == "f16" else np.float32)
        b = rng.standard_normal((s, s)).astype(a.dtype)
        p.bind([a, b])
        t = timed(p, p.be.synchronize, args.runs)
        ta, tb = torch.from_numpy(a).to(dev), torch.from_numpy(b).to(dev)
        tr = timed(lambda a_=ta, b_=tb: a_ @ b_, sync, args.runs)
        ref = (ta @ tb).float().cpu().numpy()
        err = float(np.max(np.abs(p.result().astype(np.float32) - ref)) / np.max(np.abs(ref)))
        print(f"matmul {s}^3 {dt}: max error {err:.2e} of the largest value", flush=True)
        flops = 2 * s ** 3
        report(f"matmul {s}^3 {dt} (TFLOP/s)", flops / t / 1e12, flops / tr / 1e12, "TF/s",
               0.5 if dt == "f32" else None)


def mlp(args, report, sync, dev, torch) -> None:
    """The MLP forward at batch 4096 against the same ops in PyTorch eager."""
    batch = max(64, int(4096 * args.scale))
    sizes = (1024, 4096, 4096, 1024)
    p = DevicePlan(mlp_program(batch, sizes), "cuda")
    p.compile()
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((batch, sizes[0])).astype(np.float32)]
    for a_, b_ in zip(sizes, sizes[1:]):
        arrays += [(rng.standard_normal((a_, b_)) / np.sqrt(a_)).astype(np.float32),
                   np.zeros(b_, np.float32)]
    p.bind(arrays)
    t = timed(p, p.be.synchronize, args.runs)
    tt = [torch.from_numpy(a).to(dev) for a in arrays]

    def torch_mlp():
        h = tt[0]
        for i in range(len(sizes) - 1):
            h = h @ tt[1 + 2 * i] + tt[2 + 2 * i]
            if i < len(sizes) - 2:
                h = torch.relu(h)
        return torch.softmax(h, dim=1)

    tr = timed(torch_mlp, sync, args.runs)
    np.testing.assert_allclose(p.result(), torch_mlp().cpu().numpy(), rtol=1e-3, atol=1e-5)
    report(f"MLP forward batch {batch} (ms)", t * 1e3, tr * 1e3, "ms", 1.0, higher_better=False)


def ptxas_table(scale: float) -> int:
    """No GPU: the resource report of every kernel the benchmark programs generate."""
    from tdflow.lowering.cuda import translation_unit
    from tdflow.lowering.cuda.common import prelude
    from tdflow.runtime.backends.kernel_build import CompileError, ptxas_report

    progs = {"chain": chain_program(int(256 * 2**20 * scale)),
             "matmul f32": matmul_program(4096, 4096, 4096, "f32"),
             "matmul f16": matmul_program(4096, 4096, 4096, "f16"),
             "mlp": mlp_program(4096, (1024, 4096, 4096, 1024))}
    codes = []
    for name, text in progs.items():
        p = DevicePlan(text, "cudasim")  # the same generated source as on the GPU
        print(f"{name}: {len(p.steps)} launch(es): " + ", ".join(c.op for c in p.codes))
        codes += p.codes
    try:
        report = ptxas_report(translation_unit(codes, prelude("nvcc")))
    except CompileError as e:
        print(e)
        return 1
    print(f"\n{'kernel':<52} {'regs':>5} {'smem B':>7} {'spill st/ld B':>14}")
    fn, spills = None, "?"
    for line in report.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            fn = m.group(1)
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and fn:
            spills = f"{m.group(1)}/{m.group(2)}"
        m = re.search(r"Used (\d+) registers.*?(?:(\d+) bytes smem)?", line)
        if m and fn:
            smem = re.search(r"(\d+) bytes smem", line)
            print(f"{fn:<52} {m.group(1):>5} {smem.group(1) if smem else '0':>7} {spills:>14}")
            fn = None
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=float, default=1.0, help="problem size factor (default 1)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--only", nargs="+", choices=PARTS, default=PARTS,
                    help="the measures to take (default: all)")
    args = ap.parse_args(argv)
    from tdflow.runtime.backends.cuda_status import cuda_status

    status = cuda_status()
    if not status.available:
        print(f"{status}: printing the generated kernels' ptxas resource report (sm_90) instead")
        return ptxas_table(args.scale)
    return gpu(args)


if __name__ == "__main__":
    sys.exit(main())
