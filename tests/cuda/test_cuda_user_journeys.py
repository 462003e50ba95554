"""A user's own op library on the GPU devices, as a new user drives it: a formula op with
attributes and a broadcast operand, a two-result formula op and a hand-written CUDA kernel
(data/hqlib), run on cudasim from the CLI, through ``tdflow.compile`` and eagerly, equal to the
CPU and to numpy; the generated CUDA C and ``tdflow kernels`` name every launch; the cached
cubin listing's shared memory is ptxas's; a few eager SGD steps of the example MLP on cudasim
leave the CPU's parameters."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cuda_harness import need_gxx
from tdflow.runtime.backends.cuda_status import find_nvcc

import tdflow

HERE = Path(__file__).resolve().parent
LIB = HERE / "data" / "hqlib"
ROOT = HERE.parent.parent


@pytest.fixture(scope="module")
def lib():
    need_gxx()
    return tdflow.load_ops(str(LIB / "hq.td"), hooks=[str(LIB / "hq_hooks.py")])


def _reference(x, lim):
    """hq.mlir in numpy: soft_clip (alpha 2, beta 0.25), split_pos (scale 3), relu, row sums."""
    c = np.minimum(np.maximum(x * 2, -lim), lim) + 0.25
    p, n = np.maximum(c, 0) * 3, np.tanh(np.minimum(c, 0))
    return p.sum(axis=1) + 0.5, n, np.maximum(c, 0)


def _inputs(shape=(5, 7), seed=3):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape).astype(np.float32),
            rng.uniform(0.2, 1.5, shape[-1]).astype(np.float32))


@pytest.mark.parametrize("device", ["cpu", "cudasim"])
def test_the_program_compiled_equals_numpy(lib, device):
    x, lim = _inputs()
    got = tdflow.compile((LIB / "hq.mlir").read_text(), ops=lib, device=device)(x, lim)
    for g, w in zip(got, _reference(x, lim)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(3, 130), (1, 1)])  # a tail past 64 threads, one element
def test_eager_calls_on_cudasim_equal_the_cpu(lib, shape):
    F = lib.functional
    x, lim = _inputs(shape, seed=shape[1])
    out = {}
    for device in ("cpu", "cudasim"):
        tx, tl = tdflow.tensor(x, device=device), tdflow.tensor(lim, device=device)
        c = F.soft_clip(tx, tl, alpha=2.0, beta=0.25)
        p, n = F.split_pos(c, scale=3.0)
        r = F.row_sum_plus(p, shift=0.5)
        assert {t.device for t in (c, p, n, r)} == {device}
        out[device] = [r.numpy(), n.numpy(), tdflow.functional.relu(c).numpy()]
    for g, w, ref in zip(out["cudasim"], out["cpu"], _reference(x, lim)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(w, ref, rtol=1e-5, atol=1e-6)


def test_the_cli_on_cudasim_equals_cpu_and_lowers_every_launch(lib, tmp_path):
    out = {}
    args = ["--ops", "hq.td", "--hooks", "hq_hooks.py"]
    for device in ("cpu", "cudasim"):
        path = tmp_path / f"{device}.npz"
        done = subprocess.run([sys.executable, "-m", "tdflow", "run", "hq.mlir", *args,
                               "--device", device, "--output", str(path)], cwd=LIB,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        out[device] = np.load(path)
    for k in ("result0", "result1", "result2"):
        np.testing.assert_allclose(out["cudasim"][k], out["cpu"][k], rtol=1e-5, atol=1e-6)
    done = subprocess.run([sys.executable, "-m", "tdflow", "lower", "hq.mlir", *args, "--emit",
                           "cuda"], cwd=LIB, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for op, loc in (("hq.soft_clip", "2:3"), ("hq.split_pos", "3:3"), ("hq.row_sum_plus", "5:3")):
        assert f": {op} at hq.mlir:{loc}: " in done.stdout, op
    assert 'extern "C" __global__ void user_hq_row_sum_plus_' in done.stdout


def test_the_cached_listing_shows_ptxas_shared_memory(lib, tmp_path, monkeypatch):
    """The cubin's .nv.shared.<kernel> section also holds sm_90's reserved 1 KiB: the cached
    listing said 1280 bytes where ptxas (and `tdflow kernels PROGRAM`) say 256; both tables
    keep whole kernel names in a narrow terminal."""
    if find_nvcc() is None:
        pytest.skip("nvcc not found")
    from tdflow.runtime.backends.kernel_build import compile_cubin

    from tdflow.commands.kernels import cubin_kernels

    src = ('extern "C" __global__ void k(float* o) { __shared__ float s[10]; '
           's[threadIdx.x] = o[threadIdx.x]; __syncthreads(); o[threadIdx.x] = s[9 - threadIdx.x]; }\n'
           'extern "C" __global__ void none(float* o) { o[threadIdx.x] += 1; }\n')
    for arch in ("sm_90", "sm_80"):
        got = cubin_kernels(compile_cubin(src, arch=arch))
        assert got["k"]["smem"] == 40 and got["none"]["smem"] == 0, (arch, got)
    monkeypatch.setenv("TDFLOW_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TDFLOW_NO_CACHE", raising=False)
    # an 80-column terminal: the tables used to cut kernel names to "user_hq…"
    env = {**os.environ, "COLUMNS": "80"}
    cmd = [sys.executable, "-m", "tdflow", "kernels"]
    done = subprocess.run(cmd + ["hq.mlir", "--ops", "hq.td", "--hooks", "hq_hooks.py"],
                          cwd=LIB, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    listed = subprocess.run(cmd, cwd=LIB, capture_output=True, text=True, timeout=300, env=env)
    assert listed.returncode == 0, listed.stderr
    for text in (done.stdout, listed.stdout):
        rows = [ln for ln in text.splitlines() if "user_hq_row_sum_plus_" in ln]
        assert len(rows) == 1, text + listed.stderr
        assert re.search(r"│\s+256 │", rows[0]), rows[0]


def test_eager_sgd_steps_on_cudasim_equal_the_cpu():
    """Three steps of examples/train_mlp.py's eager model (backward, in-place sgd_update) on
    batches of 8: losses and parameters on cudasim equal the CPU's."""
    need_gxx()
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import train_mlp as m
    finally:
        sys.path.remove(str(ROOT / "examples"))
    F = tdflow.functional
    rng = np.random.default_rng(5)
    # test_cudasim_e2e's batch shape and label type, so a whole run compiles these kernels once
    batches = [(rng.uniform(0, 1, (8, 64)).astype(np.float32),
                rng.integers(0, 10, 8).astype(np.int32)) for _ in range(3)]
    out = {}
    for device in ("cpu", "cudasim"):
        p = {k: tdflow.tensor(v, device=device, requires_grad=True)
             for k, v in m.init_params(0).items()}
        losses = []
        for x, y in batches:
            loss = m.eager_loss(p, tdflow.tensor(x, device=device), tdflow.tensor(y, device=device))
            loss.backward()
            losses.append(float(loss.numpy()))
            with tdflow.no_grad():
                for k in m.PARAMS:
                    assert p[k].grad.device == device
                    F.sgd_update(p[k], p[k].grad, learning_rate_val=0.1)
                    p[k].grad = None
        out[device] = losses, {k: p[k].numpy() for k in m.PARAMS}
    np.testing.assert_allclose(out["cudasim"][0], out["cpu"][0], rtol=1e-5)
    assert out["cpu"][1]["w1"].std() != m.init_params(0)["w1"].std()  # the steps moved them
    for k in m.PARAMS:
        np.testing.assert_allclose(out["cudasim"][1][k], out["cpu"][1][k], rtol=1e-4, atol=1e-6)
