"""Compile and run the example programs against independent numpy references."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import references
from tdflow.dialect.types import DTYPES
from tdflow.runtime.executor import ArgumentError

import tdflow

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def inputs(program, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(a.shape) * 0.1).astype(DTYPES[a.dtype])
            for a in program.plan.arguments]


@pytest.fixture(scope="module")
def mlp():
    return tdflow.compile(EXAMPLES / "mlp.mlir")


@pytest.fixture(scope="module")
def cnn():
    return tdflow.compile(str(EXAMPLES / "cnn.mlir"))


def test_mlp_matches_numpy(mlp):
    args = inputs(mlp)
    out = mlp(*args)
    assert out.shape == (64, 10) and out.dtype == np.float32
    np.testing.assert_allclose(out, references.mlp(*args), rtol=1e-4, atol=1e-6)
    # Calling again gives the same, and earlier results are not overwritten.
    again = mlp(*inputs(mlp, seed=1))
    np.testing.assert_allclose(out, references.mlp(*args), rtol=1e-4, atol=1e-6)
    assert not np.shares_memory(out, again)


def test_mlp_by_argument_name(mlp):
    args = inputs(mlp)
    named = dict(zip(mlp.argument_names, args))
    np.testing.assert_array_equal(mlp(**named), mlp(*args))
    np.testing.assert_array_equal(mlp(args[0], **dict(list(named.items())[1:])), mlp(*args))


def test_mlp_plan_saves_memory(mlp):
    plan = mlp.plan
    assert plan.peak_bytes_after < plan.peak_bytes_before


def test_cnn_matches_numpy(cnn):
    args = inputs(cnn)
    out = cnn(*args)
    assert out.shape == (8, 10)
    np.testing.assert_allclose(out, references.cnn(*args), rtol=1e-4, atol=1e-6)


def test_cnn_dynamic_types_are_inferred(cnn):
    shapes = {op.name: op.result_types for op in cnn.lowering.module.walk()}
    assert all(t.is_static for ts in shapes.values() for t in ts if hasattr(t, "is_static"))


@pytest.mark.parametrize("call, fragment", [
    (lambda p, a: p(*a[:4]), "missing argument %b2"),
    (lambda p, a: p(a[0][:10], *a[1:]), "argument %x must be tensor<64x784xf32>"),
    (lambda p, a: p(a[0].astype(np.float64), *a[1:]), "got float64 array of shape 64x784"),
    (lambda p, a: p(*a, a[0]), "takes 5 arguments"),
    (lambda p, a: p(*a[:4], bias=a[4]), "has no argument 'bias'"),
    (lambda p, a: p(*a, x=a[0]), "argument 'x' given twice"),
])
def test_bad_arguments_name_the_argument(mlp, call, fragment):
    args = inputs(mlp)
    with pytest.raises(ArgumentError) as err:
        call(mlp, args)
    assert fragment in str(err.value)


def test_compile_from_text_and_entry():
    text = """
func.func @first(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
func.func @twice(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = "tdflow.broadcast_add"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "tdflow.relu"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}"""
    f = tdflow.compile(text, entry="twice")
    a, b = f(np.array([-1, 0, 2], np.float32))
    np.testing.assert_array_equal(a, [-2, 0, 4])
    np.testing.assert_array_equal(b, [0, 0, 4])


def test_tensor_in_tensor_out(mlp):
    from tdflow.runtime import tensor as tensor_mod
    args = inputs(mlp)
    out = mlp(tensor_mod.tensor(args[0]), *args[1:])
    assert not isinstance(out, np.ndarray)
    np.testing.assert_allclose(np.asarray(out.numpy()), mlp(*args))


DYNAMIC = """
func.func @dyn(%x: tensor<?x4xf32>, %w: tensor<4x3xf32>) -> tensor<?x3xf32> {
  %0 = "tdflow.matmul"(%x, %w) : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %1 = "tdflow.relu"(%0) : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %1 : tensor<?x3xf32>
}"""


def test_dynamic_argument_shapes_specialise_per_call():
    f = tdflow.compile(DYNAMIC)
    assert f.plan is None and f.arguments[0] == ("x", (None, 4), "f32")
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    for n in (2, 7, 2):
        x = rng.standard_normal((n, 4)).astype(np.float32)
        np.testing.assert_allclose(f(x, w), np.maximum(x @ w, 0), rtol=1e-6)
        assert f.plan.results[0].shape == (n, 3)
    assert len(f._variants) == 2
    with pytest.raises(ArgumentError, match=r"%x must be tensor<\?x4xf32>.*got float32 array of "
                                            r"shape 2x5"):
        f(np.ones((2, 5), np.float32), w)
