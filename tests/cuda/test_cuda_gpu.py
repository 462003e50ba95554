"""On a real GPU (marked ``cuda``; skipped with cuda_status()'s reason elsewhere): generated ops
on "cuda" against numpy, the examples and user kernels through tdflow.compile, eager tensors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tdflow.runtime.backends.cuda_status import cuda_status

import tdflow

pytestmark = pytest.mark.cuda
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def _gpu():
    status = cuda_status()
    if not status.available:
        pytest.skip(str(status))


def _cases():
    from tdflow.lowering.elementwise_ops import ELEMENTWISE_OPS
    from tdflow.runtime.kernels.registry import kernel_table

    cpu = kernel_table("cpu")
    return sorted(op for op, d in ELEMENTWISE_OPS.items() if len(d.inputs) == 1
                  and any(k.dtypes is None or "f32" in k.dtypes for k in cpu.candidates(op)))


@pytest.mark.parametrize("op", _cases())
def test_unary_generated_ops_on_cuda_match_numpy(op):
    from tdflow.runtime.backends import get_backend
    from tdflow.runtime.kernels.registry import kernel_table

    be = get_backend("cuda")
    x = np.random.default_rng(0).uniform(0.5, 2.0, (37, 129)).astype(np.float32)
    cpu = kernel_table("cpu").select(op, ("f32",), {})
    gpu = kernel_table("cuda").select(op, ("f32",), {})
    (want,) = cpu({}, [x])
    out = be.allocate(want.shape, str(want.dtype).replace("float", "f").replace("bool", "i1"))
    gpu({}, [be.from_numpy(x)], [out])
    np.testing.assert_allclose(be.to_numpy(out), want, rtol=1e-5, atol=1e-6)


def test_mlp_on_cuda_matches_the_cpu():
    from tdflow.commands.run import random_array

    path = ROOT / "examples" / "mlp.mlir"
    gpu, cpu = tdflow.compile(path, device="cuda"), tdflow.compile(path)
    rng = np.random.default_rng(0)
    args = [random_array(rng, s, d) for _, s, d in cpu.arguments]
    np.testing.assert_allclose(gpu(*args), cpu(*args), rtol=1e-4, atol=1e-6)


def test_eager_on_cuda():
    import tdflow.functional as F

    x = np.array([[-1.0, 2.0], [3.0, -4.0]], np.float32)
    t = tdflow.tensor(x, device="cuda")
    r = F.relu(t) + t
    assert r.device == "cuda"
    np.testing.assert_array_equal(r.numpy(), np.maximum(x, 0) + x)
