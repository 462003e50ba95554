"""The communicators' collectives, checked against numpy on 2 and 4 thread ranks (uneven
sizes included), and a failing rank: the others raise, never hang."""

from __future__ import annotations

import time

import numpy as np
import pytest

from tdflow.distributed.comm import CommAborted, SelfComm, ThreadComm, current, use
from tdflow.distributed.threads import run_threads


def _data(rank: int, n: int) -> np.ndarray:
    return np.random.default_rng(rank).standard_normal(n)


@pytest.mark.parametrize("nproc", [2, 4])
def test_allreduce_is_the_sum_in_rank_order(nproc):
    out = run_threads(lambda r: current().allreduce(_data(r, 7).reshape(7, 1)), nproc)
    expect = _data(0, 7)
    for r in range(1, nproc):
        expect = expect + _data(r, 7)
    for o in out:
        assert o.shape == (7, 1)
        np.testing.assert_array_equal(o.ravel(), expect)  # bitwise: fixed order


@pytest.mark.parametrize("nproc", [2, 4])
def test_reduce_scatter_uneven_counts(nproc):
    counts = [3, 0, 2, 5][:nproc]
    total = sum(counts)
    out = run_threads(lambda r: current().reduce_scatter(_data(r, total), counts), nproc)
    full = sum(_data(r, total) for r in range(nproc))
    starts = np.cumsum([0] + counts)
    for r in range(nproc):
        np.testing.assert_allclose(out[r], full[starts[r]:starts[r + 1]], rtol=0, atol=1e-14)


@pytest.mark.parametrize("nproc", [2, 4])
def test_allgatherv_of_uneven_pieces(nproc):
    out = run_threads(lambda r: current().allgather(np.arange(r + 1) + 10 * r), nproc)
    expect = np.concatenate([np.arange(r + 1) + 10 * r for r in range(nproc)])
    for o in out:
        np.testing.assert_array_equal(o, expect)


@pytest.mark.parametrize("nproc", [2, 4])
def test_alltoallv_routes_piece_j_to_rank_j(nproc):
    def body(r):
        # rank r sends rank j the values (r, j) repeated j + r + 1 times
        return current().alltoall([np.full(j + r + 1, 100 * r + j) for j in range(nproc)])

    out = run_threads(body, nproc)
    for j in range(nproc):
        for r in range(nproc):
            np.testing.assert_array_equal(out[j][r], np.full(j + r + 1, 100 * r + j))


def test_counts_of_bytes_sent_follow_the_ring_minimum():
    comms = run_threads(lambda r: (current().allreduce(np.zeros(1000)), current())[1], 4)
    assert [c.bytes_sent for c in comms] == [2 * 3 * 8000 // 4] * 4


def test_a_failing_rank_aborts_the_others_quickly():
    def body(r):
        if r == 2:
            raise ValueError("rank two broke")
        current().barrier()
        return current().allreduce(np.ones(3))

    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="rank two broke") as info:
        run_threads(body, 4, timeout=60)
    assert time.perf_counter() - t0 < 5
    assert any("rank 2" in n for n in getattr(info.value, "__notes__", ["rank 2"]))


def test_a_rank_that_never_arrives_times_out_instead_of_hanging():
    def body(r):
        if r == 0:
            return None  # skips the collective
        return current().allreduce(np.ones(2))

    with pytest.raises(CommAborted, match="timed out"):
        run_threads(body, 2, timeout=0.5)


def test_mismatched_shapes_are_an_error_on_every_rank():
    with pytest.raises(CommAborted, match="different shapes"):
        run_threads(lambda r: current().allreduce(np.ones(r + 1)), 2)


def test_current_is_per_thread_and_restored():
    assert isinstance(current(), SelfComm)
    a, _ = ThreadComm.group(2)
    with use(a):
        assert current() is a
    assert isinstance(current(), SelfComm)


def test_bad_reduce_scatter_counts_name_the_problem():
    with pytest.raises(Exception, match="summing to the input's 3 elements"):
        SelfComm().reduce_scatter(np.ones(3), [2])


def test_split_and_mesh_axis_groups_of_a_2x3_hierarchy():
    from tdflow.distributed.comm import MeshComm

    def body(r):
        mesh = MeshComm(current(), (2, 3))
        rows = mesh.mesh_axis_comm(1)  # the 3 ranks of my row
        cols = mesh.mesh_axis_comm(0)  # the 2 ranks of my column
        return (rows.rank, rows.size, rows.allgather(np.array([r])).tolist(),
                cols.rank, cols.size, cols.allgather(np.array([r])).tolist())

    out = run_threads(body, 6)
    for r, (rr, rs, rg, cr, cs, cg) in enumerate(out):
        assert (rr, rs, cr, cs) == (r % 3, 3, r // 3, 2)
        assert rg == [3 * (r // 3) + k for k in range(3)]
        assert cg == [r % 3, 3 + r % 3]


def test_a_failure_wakes_ranks_waiting_in_a_sub_group():
    from tdflow.distributed.comm import MeshComm

    def body(r):
        sub = MeshComm(current(), (2, 2)).mesh_axis_comm(1)
        if r == 3:
            raise RuntimeError("rank three broke")
        return sub.allreduce(np.ones(2))  # rank 2 waits for rank 3 here

    t0 = time.perf_counter()
    with pytest.raises(RuntimeError, match="rank three broke"):
        run_threads(body, 4, timeout=60)
    assert time.perf_counter() - t0 < 5
