"""Random ops under a split: dropout of an S(0) tensor gives the single-process mask (every
rank draws the logical mask from the same counters, then takes its slice), forward and
backward, and the process's counters advance as one process's would."""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.dialect import standard_dialect
from tdflow.dialect.ir.parser import parse_module
from tdflow.lowering.pass_manager import PassManager
from tdflow.runtime import rng

import tdflow
import tdflow.distributed as dist

DROP = """func.func @f(%x: tensor<7x5xf64> {sbp = [#sbp.S<0>]}, %w: tensor<5x3xf64>) -> tensor<f64> {
  %out, %mask = "tdflow.dropout"(%x) {rate = 5.000000e-01 : f32, seed = 0 : si64} : (tensor<7x5xf64>) -> (tensor<7x5xf64>, tensor<7x5xi1>)
  %h = "tdflow.matmul"(%out, %w) : (tensor<7x5xf64>, tensor<5x3xf64>) -> tensor<7x3xf64>
  %s = "tdflow.reduce_sum"(%h) {axis = [0 : si32, 1 : si32]} : (tensor<7x3xf64>) -> tensor<f64>
  return %s : tensor<f64>
}"""


def _args():
    g = np.random.default_rng(0)
    return g.standard_normal((7, 5)), g.standard_normal((5, 3))


@pytest.mark.parametrize("nproc", [2, 3])
def test_dropout_of_a_split_tensor_gives_the_single_process_result(nproc):
    x, w = _args()
    rng.manual_seed(11)
    single = tdflow.value_and_grad(DROP, wrt=["x", "w"])(x, w)
    rng.manual_seed(11)
    got = dist.value_and_grad(DROP, nproc, wrt=["x", "w"])(x, w)
    np.testing.assert_allclose(got[0], single[0], rtol=1e-12)
    for a, b in zip(got[1], single[1]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    assert (single[1][0] == 0).any()  # the mask dropped something: the test can fail


def test_the_counters_advance_as_one_process_s():
    x, w = _args()
    prog, one = dist.compile(DROP, 2), tdflow.compile(DROP)
    rng.manual_seed(3)
    expect = [one(x, w), one(x, w)]
    rng.manual_seed(3)
    got = [prog(x, w), one(x, w)]  # the distributed call draws once, like one process
    np.testing.assert_allclose(got, expect, rtol=1e-12)
    assert expect[0] != expect[1]


def test_a_random_op_is_broadcast_by_infer_sbp():
    m = parse_module(DROP)
    PassManager.parse("infer-sbp{nproc=2}", dialect=standard_dialect()).run(m)
    drop = next(op for op in m["f"].body if op.name == "tdflow.dropout")
    assert str(drop.attributes["sbp"]) == "[[#sbp.B], [#sbp.B]]"
