"""Gradient all-reduces in buckets, overlapped with the backward pass: the same results as
without (bitwise), the buckets really formed, and the bytes at the ring minimum."""

from __future__ import annotations

import numpy as np
import pytest

import tdflow
import tdflow.distributed as dist
from tdflow.distributed import overlap
from tdflow.distributed.comm import CommError, SelfComm

# three data-parallel layers: each weight's gradient is a partial sum, all-reduced
CHAIN = """func.func @f(%x: tensor<48x16xf64> {sbp = [#sbp.S<0>]}, %w1: tensor<16x32xf64>,
                  %w2: tensor<32x8xf64>, %w3: tensor<8x4xf64>) -> tensor<f64> {
  %h1 = "tdflow.matmul"(%x, %w1) : (tensor<48x16xf64>, tensor<16x32xf64>) -> tensor<48x32xf64>
  %a1 = "tdflow.tanh"(%h1) : (tensor<48x32xf64>) -> tensor<48x32xf64>
  %h2 = "tdflow.matmul"(%a1, %w2) : (tensor<48x32xf64>, tensor<32x8xf64>) -> tensor<48x8xf64>
  %a2 = "tdflow.tanh"(%h2) : (tensor<48x8xf64>) -> tensor<48x8xf64>
  %y = "tdflow.matmul"(%a2, %w3) : (tensor<48x8xf64>, tensor<8x4xf64>) -> tensor<48x4xf64>
  %s = "tdflow.reduce_sum"(%y) {axis = [0 : si32, 1 : si32]} : (tensor<48x4xf64>) -> tensor<f64>
  return %s : tensor<f64>
}"""


def _chain_args(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in ((48, 16), (16, 32), (32, 8), (8, 4))]


def _step(nproc, **options):
    args = _chain_args()
    vg = dist.value_and_grad(CHAIN, nproc, wrt=["w1", "w2", "w3"], **options)

    def rank(_r):
        comm = dist.current()
        before = comm.bytes_sent
        loss, grads = vg(*args)
        return loss, grads, comm.bytes_sent - before, len(vg.program.plan(comm.rank).async_ids)

    return dist.run_threads(rank, nproc)


@pytest.mark.parametrize("nproc", [2, 3])
def test_overlapped_buckets_give_the_same_bits_as_plain_all_reduces(nproc, monkeypatch):
    calls = []
    real = overlap._reduce_bucket
    monkeypatch.setattr(overlap, "_reduce_bucket",
                        lambda comm, bucket: calls.append(len(bucket)) or real(comm, bucket))
    # 1 KiB buckets: w3's gradient (256 B) and w2's (2 KiB) close one each, w1's (4 KiB) too
    fast = _step(nproc, overlap=True, bucket_bytes=1024)
    plain = _step(nproc, overlap=False)
    n_async = fast[0][3]
    assert n_async == 3 and len(calls) == 3 * nproc, (n_async, calls)
    for (l1, g1, sent1, _), (l2, g2, sent2, n_plain) in zip(fast, plain):
        assert n_plain == 0 and sent1 == sent2  # the same collectives, only earlier
        assert l1 == l2
        for a, b in zip(g1, g2):
            assert np.array_equal(a, b)
    single = tdflow.value_and_grad(CHAIN, wrt=["w1", "w2", "w3"])(*_chain_args())
    np.testing.assert_allclose(fast[0][0], single[0], rtol=1e-12)
    for a, b in zip(fast[0][1], single[1]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_one_bucket_holds_every_gradient_of_a_plan_when_they_fit(monkeypatch):
    calls = []
    real = overlap._reduce_bucket
    monkeypatch.setattr(overlap, "_reduce_bucket",
                        lambda comm, bucket: calls.append(len(bucket)) or real(comm, bucket))
    n_async = _step(2, overlap=True)[0][3]
    assert calls == [n_async, n_async]  # DDP's 25 MiB default: one bucket per rank


def test_an_error_in_a_bucket_reaches_the_caller():
    class Broken(SelfComm):
        def allreduce(self, x):
            raise CommError("wire cut")

    r = overlap.Reducer({1, 2}, 2, bucket_bytes=8)
    r.submit(1, Broken(), np.ones(2), np.empty(2))   # a full bucket: sent at once
    with pytest.raises(CommError, match="wire cut"):
        r.submit(2, Broken(), np.ones(2), np.empty(2))
    r.close()
