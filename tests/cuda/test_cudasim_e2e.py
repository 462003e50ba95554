"""Programs end to end on the cudasim device: ``tdflow.compile(..., device="cudasim")``, the CLI's
``--device cudasim`` and eager tensors, against the CPU (numpy) backend; ``--device cuda`` without
a GPU says why; an op without a GPU kernel names the devices that have one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cuda_harness import need_gxx
from tdflow.runtime.backends.cuda_status import cuda_status

import tdflow
from tdflow.core.errors import TdflowError

ROOT = Path(__file__).resolve().parents[2]
USERLIB = ROOT / "tests" / "data" / "userlib"


@pytest.fixture(autouse=True)
def _gxx():
    need_gxx()


def _inputs(program):
    from tdflow.commands.run import random_array

    rng = np.random.default_rng(0)
    return [random_array(rng, shape, dt) for _, shape, dt in program.arguments]


@pytest.mark.parametrize("example", ["mlp.mlir", "cnn.mlir", "resnet.mlir", "gpt.mlir"])
def test_examples_on_cudasim_match_the_cpu(example):
    path = ROOT / "examples" / example
    sim = tdflow.compile(path, device="cudasim")
    cpu = tdflow.compile(path)
    args = _inputs(cpu)
    got, want = sim(*args), cpu(*args)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert sim.plan.device == "cudasim" and len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6)


def test_same_named_weights_of_two_programs_stay_their_own(tmp_path):
    """Two models whose weights are blobs of one name and type (every ONNX import names its
    first weight alike): each program uploads its own data (found on an H200 in ONNX's
    pytorch-converted Conv tests, where a model ran with the previous model's weights)."""
    def program(name: str, blob: str):
        path = tmp_path / f"{name}.mlir"
        path.write_text(
            'func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n'
            '  %w = "tdflow.dense_constant"() {value = dense_resource<w> : tensor<2xf32>} : '
            '() -> tensor<2xf32>\n'
            '  %y = "tdflow.broadcast_add"(%x, %w) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n'
            '  return %y : tensor<2xf32>\n}\n'
            '{-#\n  dialect_resources: {\n    builtin: {\n'
            f'      w: "0x04000000{blob}"\n    }}\n  }}\n#-}}\n')
        return path

    x = np.zeros(2, np.float32)
    one_two = program("a", "0000803F00000040")  # [1, 2]
    three_four = program("b", "0000404000008040")  # [3, 4]
    for path, want in ((one_two, [1, 2]), (three_four, [3, 4])):
        np.testing.assert_array_equal(tdflow.compile(path, device="cudasim")(x), want)
        np.testing.assert_array_equal(tdflow.compile(path)(x), want)


def test_a_scalar_stays_0d_on_cudasim():
    """The host backends copy into C order keeping the shape (``np.ascontiguousarray`` makes a
    0-d array 1-d; the cuda backend had the same bug on the H200)."""
    from tdflow.runtime.backends import get_backend

    sim = get_backend("cudasim")
    assert sim.from_numpy(np.array(5.0, np.float32)).shape == ()
    t = sim.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3).T)
    assert t.flags.c_contiguous and t.shape == (3, 2)


def test_mlp_from_the_cli_on_cudasim(tmp_path):
    outs = {}
    for device in ("cpu", "cudasim"):
        p = tmp_path / f"{device}.npz"
        done = subprocess.run([sys.executable, "-m", "tdflow", "run", "examples/mlp.mlir",
                               "--device", device, "--output", str(p)], cwd=ROOT,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        outs[device] = np.load(p)["result0"]
    np.testing.assert_allclose(outs["cudasim"], outs["cpu"], rtol=1e-4, atol=1e-7)


def test_device_cuda_without_a_gpu_says_why():
    status = cuda_status()
    if status.available:
        pytest.skip("a usable GPU is present")
    done = subprocess.run([sys.executable, "-m", "tdflow", "run", "examples/mlp.mlir", "--device",
                           "cuda"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert f"CUDA unavailable: {status.reason}" in done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr


def test_an_op_without_a_gpu_kernel_names_the_devices():
    ops = tdflow.load_ops(str(USERLIB / "my_ops.td"), hooks=[str(USERLIB / "my_hooks.py")])
    text = ('func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n'
            '  %0 = "mylib.scale_shift"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n'
            '  return %0 : tensor<4xf32>\n}')
    with pytest.raises(TdflowError) as e:
        tdflow.compile(text, device="cudasim", ops=ops)
    msg = e.value.render()
    assert "no kernel for mylib.scale_shift on device 'cudasim'" in msg
    assert "device=cpu" in msg


def test_eager_tensors_on_cudasim():
    import tdflow.functional as F

    x = np.array([[-1.0, 2.0, -3.0], [4.0, -5.0, 0.5]], np.float32)
    b = np.array([0.5, -1.0, 2.0], np.float32)
    t = tdflow.tensor(x, device="cudasim")
    u = tdflow.tensor(b, device="cudasim")
    r = F.relu(t + u)
    assert r.device == "cudasim"
    np.testing.assert_allclose(r.numpy(), np.maximum(x + b, 0), rtol=1e-6)
    assert r.to("cpu").device == "cpu" and r.to("cudasim") is r
    with pytest.raises(TdflowError, match="devices 'cudasim' and 'cpu'"):
        t + tdflow.tensor(x)


def test_eager_backward_on_cudasim_equals_the_cpu():
    import tdflow.functional as F

    x = np.random.default_rng(3).standard_normal((4, 6)).astype(np.float32)
    b = np.random.default_rng(4).standard_normal(6).astype(np.float32)
    grads = {}
    for device in ("cpu", "cudasim"):
        t = tdflow.tensor(x, device=device, requires_grad=True)
        u = tdflow.tensor(b, device=device, requires_grad=True)
        loss = F.reduce_sum(F.relu(t + u) * t, axis=[0, 1])
        loss.backward()
        assert t.grad.device == device
        grads[device] = (loss.numpy(), t.grad.numpy(), u.grad.numpy())
    for g, w in zip(grads["cudasim"], grads["cpu"]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("script", ["train_mlp", "train_cnn"])
def test_example_models_eager_forward_and_backward_on_cudasim(script):
    """The training scripts' eager models: the loss and every parameter's gradient on cudasim
    equal the CPU's for one batch."""
    import importlib

    sys.path.insert(0, str(ROOT / "examples"))
    try:
        mod = importlib.import_module(script)
    finally:
        sys.path.remove(str(ROOT / "examples"))
    params = mod.init_params(0)
    rng = np.random.default_rng(5)
    n = 8
    shape = (n, 64) if script == "train_mlp" else (n, 1, 8, 8)
    x = rng.uniform(0, 1, shape).astype(np.float32)
    y = rng.integers(0, 10, n).astype(np.int32)
    out = {}
    for device in ("cpu", "cudasim"):
        p = {k: tdflow.tensor(v, device=device, requires_grad=True) for k, v in params.items()}
        loss = mod.eager_loss(p, tdflow.tensor(x, device=device), tdflow.tensor(y, device=device))
        loss.backward()
        assert loss.device == device
        out[device] = [loss.numpy()] + [p[k].grad.numpy() for k in sorted(p)]
    for g, w in zip(out["cudasim"], out["cpu"]):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6)
