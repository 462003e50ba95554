"""Distributed programs: logical arrays in, logical results out, on 2 and 4 thread ranks.

Per-rank programs written by hand (the physical shapes of OneFlow's split rule, uneven
included) check the runner on its own; programs lowered by the SBP pipeline are checked in
test_sbp_programs.py."""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.dialect.sbp import S, physical_shape

import tdflow.distributed as dist
from tdflow.distributed.layout import assemble, shard


def _matmul_relu(rank: int, nproc: int, n: int = 5) -> str:
    rows = physical_shape((n, 3), (S(0),), (nproc,), rank)[0]
    return (f"func.func @f(%x: tensor<{rows}x3xf64>, %w: tensor<3x4xf64>) -> tensor<{rows}x4xf64> {{\n"
            f'  %y = "tdflow.matmul"(%x, %w) : (tensor<{rows}x3xf64>, tensor<3x4xf64>) -> tensor<{rows}x4xf64>\n'
            f'  %z = "tdflow.relu"(%y) : (tensor<{rows}x4xf64>) -> tensor<{rows}x4xf64>\n'
            f"  return %z : tensor<{rows}x4xf64>\n}}")


def _prog(nproc: int, n: int = 5):
    return dist.compile_physical(lambda r: _matmul_relu(r, nproc, n), nproc=nproc,
                                 arg_sbp=["S(0)", "B"], result_sbp=["S(0)"],
                                 arg_shapes=[(n, 3), (3, 4)], result_shapes=[(n, 4)])


@pytest.mark.parametrize("nproc", [2, 4])
def test_data_parallel_matmul_from_a_driver_thread(nproc):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((5, 3)), rng.standard_normal((3, 4))
    # BLAS may sum a 2-row block in another order than a 5-row one: float64 to 1e-12
    np.testing.assert_allclose(_prog(nproc)(x, w), np.maximum(x @ w, 0), rtol=1e-12, atol=1e-15)


def test_every_rank_gets_the_logical_result_and_from_local_pieces_are_kept():
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((5, 3)), rng.standard_normal((3, 4))
    prog = _prog(2)

    def body(rank):
        a = prog(x, w)
        b = prog(dist.from_local(dist.to_local(x, "S(0)")), w)
        return a, b, dist.rank(), dist.world_size()

    for r, (a, b, rank, size) in enumerate(dist.run_threads(body, 2)):
        np.testing.assert_allclose(a, np.maximum(x @ w, 0), rtol=1e-12, atol=1e-15)
        np.testing.assert_array_equal(b, a)
        assert (rank, size) == (r, 2)


def test_a_wrong_logical_shape_names_the_argument():
    with pytest.raises(dist.DistributedError, match=r"argument #0 has shape \(4, 3\)"):
        _prog(2)(np.zeros((4, 3)), np.zeros((3, 4)))


def test_a_program_for_two_ranks_refuses_a_group_of_four():
    prog = _prog(2)
    with pytest.raises(dist.DistributedError, match="compiled for 2 ranks"):
        dist.run_threads(lambda r: prog(np.zeros((5, 3)), np.zeros((3, 4))), 4)


@pytest.mark.parametrize("sbp", [("S(0)", "S(1)"), ("B", "S(0)"), ("P", "S(1)"), ("S(1)", "P")])
def test_shard_then_assemble_is_the_identity_on_a_2x2_hierarchy(sbp):
    nd = dist.program.as_nd_sbp(list(sbp))
    x = np.arange(35.0).reshape(5, 7)
    pieces = [shard(x, nd, (2, 2), r) for r in range(4)]
    np.testing.assert_array_equal(assemble(pieces, x.shape, nd, (2, 2)), x)
