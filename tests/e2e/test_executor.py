"""The executor on its own: direct and engine modes agree; kernel failures name the op."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tdflow.dialect.types import DTYPES
from tdflow.runtime.executor import Executor, KernelFailure
from tdflow.runtime.kernels.registry import kernel_table

import tdflow

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("example", ["mlp.mlir", "cnn.mlir"])
def test_engine_mode_matches_direct_mode(example):
    direct = tdflow.compile(EXAMPLES / example, mode="direct")
    engine = tdflow.compile(EXAMPLES / example, mode="engine")
    rng = np.random.default_rng(0)
    for _ in range(5):
        args = [(rng.standard_normal(a.shape) * 0.1).astype(DTYPES[a.dtype])
                for a in direct.plan.arguments]
        np.testing.assert_array_equal(direct(*args), engine(*args))


@pytest.mark.parametrize("mode", ["direct", "engine"])
def test_kernel_failure_names_op_and_location(mode):
    program = tdflow.compile(EXAMPLES / "mlp.mlir", mode="direct")
    table = kernel_table("cpu")

    def resolve(name):
        if name == "cpu.softmax":
            def broken(attrs, inputs, outs):
                raise FloatingPointError("overflow in exp")
            return broken
        return table.get(name).fn

    from tdflow.runtime.engine import NaiveEngine

    ex = Executor(program.plan, resolve, mode=mode, engine=NaiveEngine())
    args = [np.zeros(a.shape, np.float32) for a in program.plan.arguments]
    with pytest.raises(KernelFailure) as err:
        ex.run(args)
    msg = err.value.render()
    assert "'tdflow.softmax'" in msg and "mlp.mlir:13:5" in msg and "overflow in exp" in msg


def test_results_are_fresh_and_argument_results_are_copies():
    f = tdflow.compile("""
        func.func @f(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
          %0 = "tdflow.relu"(%x) : (tensor<3xf32>) -> tensor<3xf32>
          return %x, %0 : tensor<3xf32>, tensor<3xf32>
        }""")
    x = np.array([-1, 0, 1], np.float32)
    a, b = f(x)
    assert not np.shares_memory(a, x)
    c, d = f(x)
    assert not np.shares_memory(b, d)


@pytest.mark.parametrize("mode", ["direct", "engine"])
def test_concurrent_calls_do_not_share_intermediates(mode):
    from concurrent.futures import ThreadPoolExecutor

    program = tdflow.compile(EXAMPLES / "mlp.mlir", mode=mode)
    rng = np.random.default_rng(1)
    calls = [[(rng.standard_normal(a.shape) * 0.1).astype(np.float32)
              for a in program.plan.arguments] for _ in range(8)]
    expected = [program(*args) for args in calls]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda args: program(*args), calls * 4))
    for i, g in enumerate(got):
        np.testing.assert_array_equal(g, expected[i % len(calls)])
