"""Shared checks for generated CUDA kernels: cudasim against the numpy backend, and nvcc.

``check(op, inputs, attrs)`` infers the result types with the standard dialect's hooks, runs the
op's CPU kernel (numpy: the reference) and its cudasim kernel (the generated CUDA C, compiled by
g++) on the same inputs, and asserts the results match (rtol 1e-5 for float32 by default). Each
generated :class:`KernelCode` is remembered; ``nvcc_compile_all()`` compiles every one of them
in one ``nvcc -arch=sm_90 --cubin -Xptxas -v,-warn-spills,-Werror`` call (a test module ends with
a test calling it; it skips without nvcc).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tdflow.dialect import standard_dialect
from tdflow.dialect.attr_kinds import as_stored
from tdflow.dialect.types import DTYPES, TensorType, dtype_from_numpy
from tdflow.lowering.cuda import KernelCode, translation_unit
from tdflow.lowering.cuda.common import prelude
from tdflow.runtime.backends import get_backend
from tdflow.runtime.backends.cuda_status import find_nvcc
from tdflow.runtime.kernels.registry import kernel_table

RTOL = {"f16": 2e-3, "bf16": 1.6e-2, "f32": 1e-5, "f64": 1e-12}
GENERATED: list[KernelCode] = []


def need_gxx() -> None:
    if shutil.which("g++") is None and shutil.which("c++") is None:
        pytest.skip("no C++ compiler (g++): cudasim cannot build kernels")


def full_attrs(op: str, attrs: Mapping[str, Any], opdef: Any = None) -> dict[str, Any]:
    """``attrs`` with the op's ``.td`` defaults filled in, as kernels receive them."""
    d = opdef or standard_dialect().lookup(op)
    out = {a.name: as_stored(a.kind, a.default) for a in d.attributes if a.default is not None}
    out.update(attrs)
    return out


def result_types(op: str, inputs: Sequence[np.ndarray | None], attrs: Mapping[str, Any],
                 dialect: Any = None) -> list[TensorType]:
    dialect = dialect or standard_dialect()
    types = [None if a is None else TensorType(a.shape, dtype_from_numpy(a.dtype)) for a in inputs]
    return dialect.infer_result_types(op, types, dict(attrs))


def run(device: str, op: str, inputs: Sequence[np.ndarray | None], attrs: Mapping[str, Any],
        out_types: Sequence[TensorType], prefill: Sequence[np.ndarray] | None = None
        ) -> list[np.ndarray]:
    """Run ``op``'s kernel of ``device`` on copies of ``inputs`` (results preallocated; ops that
    update an operand in place return their operands after the call)."""
    dts = [None if a is None else dtype_from_numpy(a.dtype) for a in inputs]
    k = kernel_table(device).select(op, dts, attrs)
    ins = [None if a is None else np.ascontiguousarray(a).copy() for a in inputs]
    outs = [np.empty(t.shape, DTYPES[t.dtype]) for t in out_types]
    if prefill is not None:
        for o, p in zip(outs, prefill):
            o[...] = p
    if device == "cudasim":
        sim = get_backend("cudasim")
        GENERATED.append(sim.code_for(op, attrs, ins, outs, None))
    got = k(attrs, ins, outs)
    return [np.asarray(g) for g in got] if out_types else [a for a in ins if a is not None]


def check(op: str, inputs: Sequence[np.ndarray | None], attrs: Mapping[str, Any] | None = None,
          rtol: float | None = None, atol: float | None = None, exact: bool = False
          ) -> list[np.ndarray]:
    """cudasim's results of ``op`` equal numpy's; returns the cudasim results."""
    need_gxx()
    attrs = full_attrs(op, attrs or {})
    types = result_types(op, inputs, attrs)
    want = run("cpu", op, inputs, attrs, types)
    got = run("cudasim", op, inputs, attrs, types)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, (op, k, g.shape, w.shape, g.dtype, w.dtype)
        dt = dtype_from_numpy(w.dtype)
        if exact or dt not in RTOL:
            np.testing.assert_array_equal(g, w, err_msg=f"{op} result {k}")
        else:
            r = RTOL[dt] if rtol is None else rtol
            finite = np.abs(w.astype(np.float64))
            finite = finite[np.isfinite(finite)]  # an inf must not make every atol infinite
            scale = float(finite.max()) if finite.size else 0.0
            a = r * max(scale, 1.0) * 1e-2 if atol is None else atol
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=r,
                                       atol=a, err_msg=f"{op} result {k}")
    return got


def prebuild(cases: Sequence[tuple[str, Sequence[np.ndarray | None], Mapping[str, Any]]]) -> None:
    """Generate the cudasim code of every ``(op, inputs, attrs)`` case and compile it all in one
    g++ call (one call per kernel would cost ~0.3 s each); later :func:`check` calls of the same
    cases find their kernels loaded. The same kernels start compiling with nvcc in the
    background (the second core), for the module's final :func:`nvcc_compile_all`."""
    need_gxx()
    sim = get_backend("cudasim")
    codes = []
    for op, inputs, attrs in cases:
        attrs = full_attrs(op, attrs)
        types = result_types(op, inputs, attrs)
        outs = [np.empty(t.shape, DTYPES[t.dtype]) for t in types]
        codes.append(sim.code_for(op, attrs, list(inputs), outs, None))
    if find_nvcc() is not None and not any(j.running() for j in _NVCC_JOBS):
        _NVCC_JOBS.append(_NvccJob(codes))
    sim.prepare(codes)


class _NvccJob:
    """One nvcc run over a translation unit of ``codes``, in a background process."""

    def __init__(self, codes: Sequence[KernelCode]) -> None:
        self.codes = list({c.digest: c for c in codes}.values())
        self.src = translation_unit(self.codes, prelude("nvcc"))
        self.tmp = tempfile.TemporaryDirectory()
        path = Path(self.tmp.name) / "k.cu"
        path.write_text(self.src)
        self.proc = subprocess.Popen(
            [find_nvcc(), "-arch=sm_90", "--cubin", "-std=c++17", "-O3", "-Xptxas",
             "-v,-warn-spills,-Werror", str(path), "-o", str(Path(self.tmp.name) / "k.cubin")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def running(self) -> bool:
        return self.proc.poll() is None

    def result(self) -> str:
        """ptxas's report; fails the test with the quoted lines if nvcc rejected the code."""
        _, err = self.proc.communicate(timeout=900)
        self.tmp.cleanup()
        if self.proc.returncode != 0:
            _fail_with(err, self.src)
        return err


_NVCC_JOBS: list[_NvccJob] = []


def _fail_with(stderr: str, src: str) -> None:
    lines = src.splitlines()
    errors = [m for m in stderr.splitlines() if "error" in m.lower()] or stderr.splitlines()
    msgs = []
    for m in errors[:30]:
        msgs.append(m)
        if "k.cu(" in m:
            n = int(m.split("k.cu(")[1].split(")")[0])
            msgs.append(f"    {n} | {lines[n - 1].strip()}")
    pytest.fail("nvcc rejected generated kernels:\n" + "\n".join(msgs))


def nvcc_compile_all(codes: Sequence[KernelCode] | None = None) -> str:
    """Compile ``codes`` with nvcc for sm_90 with ptxas warnings as errors (spills included);
    returns ptxas's report.

    Without ``codes``: every kernel generated since the previous call (then forgotten); those a
    :func:`prebuild` already sent to a background nvcc are taken from that run."""
    nvcc = find_nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found on PATH or under /usr/local/cuda/bin; CUDA compile check skipped")
    reports = []
    done: set[str] = set()
    if codes is None:
        # what this module generated since the last call (modules end with this test), once:
        # compiling everything every module generated again would grow quadratically
        codes = list(GENERATED)
        GENERATED.clear()
        jobs = list(_NVCC_JOBS)
        _NVCC_JOBS.clear()
        for job in jobs:
            reports.append(job.result())
            done.update(c.digest for c in job.codes)
    codes = [c for c in {c.digest: c for c in codes}.values() if c.digest not in done]
    assert codes or reports, "no generated kernels to compile"
    if codes:
        job = _NvccJob(codes)
        reports.append(job.result())
    return "\n".join(reports)


def rand(shape: Sequence[int], dtype: str = "f32", lo: float = -2.0, hi: float = 2.0,
         seed: int = 0) -> np.ndarray:
    """Random test data of an MLIR dtype."""
    rng = np.random.default_rng(seed)
    if dtype == "i1":
        return rng.random(shape) < 0.5
    if dtype.startswith(("i", "ui")):
        # unsigned types get small non-negative values (their arithmetic still wraps: 2 - 5)
        low = 0 if dtype.startswith("u") else max(-5, int(lo))
        return rng.integers(low, 6, size=shape).astype(DTYPES[dtype])
    return rng.uniform(lo, hi, size=shape).astype(DTYPES[dtype])
