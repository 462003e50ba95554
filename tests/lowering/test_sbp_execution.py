"""Programs lowered by the SBP pipeline (``infer-sbp``, ``physicalize``, the standard passes)
run on 2, 3 and 4 thread ranks and give the single-process result (float64, to 1e-12).
Uneven splits (5 rows on 2, 3 or 4 ranks) are the common case here."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import tdflow
import tdflow.distributed as dist

rng = np.random.default_rng(20261203)
NPROCS = (2, 3, 4)


def check(src: str, *arrays: np.ndarray, nproc: int) -> None:
    want = tdflow.compile(src)(*arrays)
    prog = dist.compile(src, nproc=nproc)
    for got in dist.run_threads(lambda r: prog(*arrays), nproc):
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("nproc", NPROCS)
def test_data_parallel_mlp(nproc):
    src = """
    func.func @f(%x: tensor<5x3xf64> {sbp = [#sbp.S<0>]}, %w1: tensor<3x4xf64>, %b1: tensor<4xf64>,
                 %w2: tensor<4x2xf64>) -> tensor<5x2xf64> {
      %0 = "tdflow.matmul"(%x, %w1) : (tensor<5x3xf64>, tensor<3x4xf64>) -> tensor<5x4xf64>
      %1 = "tdflow.bias_add"(%0, %b1) {axis = 1 : si32} : (tensor<5x4xf64>, tensor<4xf64>) -> tensor<5x4xf64>
      %2 = "tdflow.tanh"(%1) : (tensor<5x4xf64>) -> tensor<5x4xf64>
      %3 = "tdflow.matmul"(%2, %w2) : (tensor<5x4xf64>, tensor<4x2xf64>) -> tensor<5x2xf64>
      %4 = "tdflow.softmax"(%3) : (tensor<5x2xf64>) -> tensor<5x2xf64>
      return %4 : tensor<5x2xf64>
    }"""
    check(src, rng.normal(size=(5, 3)), rng.normal(size=(3, 4)), rng.normal(size=4),
          rng.normal(size=(4, 2)), nproc=nproc)


@pytest.mark.parametrize("nproc", NPROCS)
def test_megatron_tensor_parallel_mlp(nproc):
    """Column-split w1, row-split w2: partial sums all-reduced once before the loss."""
    src = """
    func.func @f(%x: tensor<3x6xf64>, %w1: tensor<6x7xf64> {sbp = [#sbp.S<1>]},
                 %w2: tensor<7x6xf64> {sbp = [#sbp.S<0>]}) -> tensor<f64> {
      %h = "tdflow.matmul"(%x, %w1) : (tensor<3x6xf64>, tensor<6x7xf64>) -> tensor<3x7xf64>
      %a = "tdflow.gelu"(%h) : (tensor<3x7xf64>) -> tensor<3x7xf64>
      %y = "tdflow.matmul"(%a, %w2) : (tensor<3x7xf64>, tensor<7x6xf64>) -> tensor<3x6xf64>
      %e = "tdflow.exp"(%y) : (tensor<3x6xf64>) -> tensor<3x6xf64>
      %s = "tdflow.reduce_sum"(%e) {axis = [0 : si32, 1 : si32], keepdims = false} : (tensor<3x6xf64>) -> tensor<f64>
      return %s : tensor<f64>
    }"""
    check(src, rng.normal(size=(3, 6)), rng.normal(size=(6, 7)) * 0.3,
          rng.normal(size=(7, 6)) * 0.3, nproc=nproc)


@pytest.mark.parametrize("nproc", NPROCS)
def test_all_to_all_and_partial_results(nproc):
    """softmax over a split axis re-splits (all-to-all); the transposed product is partial."""
    src = """
    func.func @f(%x: tensor<5x6xf64> {sbp = [#sbp.S<1>]}, %z: tensor<5x3xf64> {sbp = [#sbp.S<0>]}) -> (tensor<5x6xf64>, tensor<6x3xf64>) {
      %s = "tdflow.softmax"(%x) : (tensor<5x6xf64>) -> tensor<5x6xf64>
      %t = "tdflow.transpose"(%s) {perm = [1 : si32, 0 : si32]} : (tensor<5x6xf64>) -> tensor<6x5xf64>
      %p = "tdflow.matmul"(%t, %z) : (tensor<6x5xf64>, tensor<5x3xf64>) -> tensor<6x3xf64>
      return %s, %p : tensor<5x6xf64>, tensor<6x3xf64>
    }"""
    check(src, rng.normal(size=(5, 6)), rng.normal(size=(5, 3)), nproc=nproc)


@pytest.mark.parametrize("nproc", NPROCS)
def test_shape_attributes_become_physical(nproc):
    """reshape and expand under a batch split: their shape attributes are the rank's."""
    src = """
    func.func @f(%x: tensor<5x4xf64> {sbp = [#sbp.S<0>]}) -> tensor<5x3x2x2xf64> {
      %r = "tdflow.reshape"(%x) {shape = [5, 1, 2, 2]} : (tensor<5x4xf64>) -> tensor<5x1x2x2xf64>
      %e = "tdflow.expand"(%r) {expand_shape = [5, 3, 2, 2]} : (tensor<5x1x2x2xf64>) -> tensor<5x3x2x2xf64>
      return %e : tensor<5x3x2x2xf64>
    }"""
    check(src, rng.normal(size=(5, 4)), nproc=nproc)


@pytest.mark.parametrize("nproc", (2, 3))
def test_conv2d_split_by_filters(nproc):
    """A forced filter split (OneFlow's parallel attribute): each rank's ``filters`` is its
    own count, the result is split along channels and gathered."""
    src = """
    func.func @f(%x: tensor<2x2x4x4xf64>, %w: tensor<5x2x3x3xf64>) -> (tensor<2x5x2x2xf64> {sbp = [#sbp.B]}) {
      %y = "tdflow.conv2d"(%x, %w) {filters = 5 : si32, kernel_size = [3 : si32, 3 : si32], strides = [1 : si32, 1 : si32], padding_before = [0 : si32, 0 : si32], dilation_rate = [1 : si32, 1 : si32], groups = 1 : si32, data_format = "channels_first", operandSegmentSizes = array<i32: 1, 1, 0, 0>, parallel = #sbp.parallel<[#sbp.B, #sbp.S<0>] -> [#sbp.S<1>]>} : (tensor<2x2x4x4xf64>, tensor<5x2x3x3xf64>) -> tensor<2x5x2x2xf64>
      return %y : tensor<2x5x2x2xf64>
    }"""
    check(src, rng.normal(size=(2, 2, 4, 4)), rng.normal(size=(5, 2, 3, 3)), nproc=nproc)


HYBRID = """
func.func @f(%x: tensor<5x6xf64> {sbp = [#sbp.S<0>, #sbp.B]}, %w1: tensor<6x7xf64> {sbp = [#sbp.B, #sbp.S<1>]},
             %w2: tensor<7x3xf64> {sbp = [#sbp.B, #sbp.S<0>]}) -> tensor<5x3xf64> attributes {hierarchy = [2, 2]} {
  %h = "tdflow.matmul"(%x, %w1) : (tensor<5x6xf64>, tensor<6x7xf64>) -> tensor<5x7xf64>
  %a = "tdflow.tanh"(%h) : (tensor<5x7xf64>) -> tensor<5x7xf64>
  %y = "tdflow.matmul"(%a, %w2) : (tensor<5x7xf64>, tensor<7x3xf64>) -> tensor<5x3xf64>
  %s = "tdflow.softmax"(%y) : (tensor<5x3xf64>) -> tensor<5x3xf64>
  return %s : tensor<5x3xf64>
}"""


def test_hybrid_2x2_data_and_tensor_parallel():
    """Batch split over mesh axis 0, Megatron over mesh axis 1: the row-parallel product is
    [S(0), P] and is reduce-scattered over mesh axis 1 only (nested split of the batch)."""
    check(HYBRID, rng.normal(size=(5, 6)), rng.normal(size=(6, 7)), rng.normal(size=(7, 3)),
          nproc=4)


def test_hybrid_2x2_boxing_on_the_outer_axis():
    """Split columns over mesh axis 0 and rows over mesh axis 1; softmax needs whole rows:
    the columns are gathered over mesh axis 0."""
    src = """
    func.func @f(%x: tensor<5x6xf64> {sbp = [#sbp.S<1>, #sbp.S<0>]}) -> (tensor<5x6xf64> {sbp = [#sbp.B, #sbp.B]}) attributes {hierarchy = [2, 2]} {
      %s = "tdflow.softmax"(%x) : (tensor<5x6xf64>) -> tensor<5x6xf64>
      return %s : tensor<5x6xf64>
    }"""
    check(src, rng.normal(size=(5, 6)), nproc=4)


@pytest.mark.parametrize("nproc", (2, 3))
def test_a_value_used_twice_by_one_op_gets_one_sbp_per_operand(nproc):
    """matmul(%x, %x): the data-parallel signature splits a (rows) but not b (its rows are
    the contracted axis): the two operands of one value need two SBPs."""
    src = """
    func.func @f(%x: tensor<5x5xf64> {sbp = [#sbp.S<0>]}) -> tensor<5x5xf64> {
      %y = "tdflow.matmul"(%x, %x) : (tensor<5x5xf64>, tensor<5x5xf64>) -> tensor<5x5xf64>
      return %y : tensor<5x5xf64>
    }"""
    check(src, rng.normal(size=(5, 5)), nproc=nproc)


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _example_inputs(src: str) -> list[np.ndarray]:
    from tdflow.dialect.ir import parse_module

    gen = np.random.default_rng(0)
    out = []
    for t in parse_module(src).funcs[0].arg_types:
        shape = tuple(t.shape)
        if t.dtype.startswith("i"):  # tokens, labels: small valid ids
            out.append(gen.integers(0, 2, shape).astype(np.int64))
        else:
            out.append((gen.normal(size=shape) * 0.1).astype(np.float32))
    return out


@pytest.mark.parametrize("name, batch", [("resnet", ["x", "labels"]), ("gpt", ["tokens", "targets"]),
                                         ("cnn", ["x"])])
def test_examples_split_by_batch_give_the_single_process_result(name, batch):
    """The example programs with their batch split over 3 ranks (uneven): batch norm and
    attention need gathers and re-splits, which infer-sbp inserts."""
    src = (EXAMPLES / f"{name}.mlir").read_text()
    for arg in batch:
        src = re.sub(rf"(%{arg}: tensor<[^>]*>)", r"\1 {sbp = [#sbp.S<0>]}", src, count=1)
    args = _example_inputs(src)
    want = tdflow.compile(src)(*args)
    prog = dist.compile(src, nproc=3)
    for got in dist.run_threads(lambda r: prog(*args), 3):
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
