"""Hand-written per-rank programs with boxing ops (the physical shapes of OneFlow's split
rule), run on 2 and 4 thread ranks: tensor-parallel (Megatron) MLPs and every boxing op in
a program give the single-process numpy result."""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.dialect.sbp import S, physical_shape

import tdflow.distributed as dist


def _t(shape) -> str:
    return "tensor<" + "x".join(map(str, shape)) + "xf64>"


def _rows(n, nproc, rank):
    return physical_shape((n,), (S(0),), (nproc,), rank)[0]


def _megatron(nproc: int, rank: int, n=3, d=4, h=6, o=5) -> str:
    """Column-split w1 (S(1)), row-split w2 (S(0)): the partial product is all-reduced."""
    hr = _rows(h, nproc, rank)
    return (f"func.func @mlp(%x: {_t((n, d))}, %w1: {_t((d, hr))}, %w2: {_t((hr, o))}) -> {_t((n, o))} {{\n"
            f'  %h = "tdflow.matmul"(%x, %w1) : ({_t((n, d))}, {_t((d, hr))}) -> {_t((n, hr))}\n'
            f'  %a = "tdflow.relu"(%h) : ({_t((n, hr))}) -> {_t((n, hr))}\n'
            f'  %p = "tdflow.matmul"(%a, %w2) : ({_t((n, hr))}, {_t((hr, o))}) -> {_t((n, o))}\n'
            f'  %y = "tdflow.boxing_all_reduce"(%p) {{out_shape = [{n}, {o}]}} : ({_t((n, o))}) -> {_t((n, o))}\n'
            f"  return %y : {_t((n, o))}\n}}")


@pytest.mark.parametrize("nproc", [2, 4])  # hidden 6 over 4 ranks: 2, 2, 1, 1
def test_megatron_mlp_all_reduces_the_row_parallel_product(nproc):
    rng = np.random.default_rng(0)
    x, w1, w2 = rng.standard_normal((3, 4)), rng.standard_normal((4, 6)), rng.standard_normal((6, 5))
    prog = dist.compile_physical(lambda r: _megatron(nproc, r), nproc,
                                 arg_sbp=["B", "S(1)", "S(0)"], result_sbp=["B"],
                                 arg_shapes=[(3, 4), (4, 6), (6, 5)], result_shapes=[(3, 5)])
    np.testing.assert_allclose(prog(x, w1, w2), np.maximum(x @ w1, 0) @ w2, rtol=1e-12,
                               atol=1e-14)


def _chain(nproc: int, rank: int, n=5, m=7) -> str:
    """x P -> reduce_scatter S(0) -> all_to_all S(1) -> all_gather B -> slice S(0) -> all_gather B."""
    s0 = (_rows(n, nproc, rank), m)
    s1 = (n, _rows(m, nproc, rank))
    return (f"func.func @f(%x: {_t((n, m))}) -> ({_t((n, m))}, {_t(s0)}) {{\n"
            f'  %a = "tdflow.boxing_reduce_scatter"(%x) {{axis = 0, out_shape = [{s0[0]}, {m}]}} : ({_t((n, m))}) -> {_t(s0)}\n'
            f'  %b = "tdflow.boxing_all_to_all"(%a) {{in_axis = 0, out_axis = 1, out_shape = [{n}, {s1[1]}]}} : ({_t(s0)}) -> {_t(s1)}\n'
            f'  %c = "tdflow.boxing_all_gather"(%b) {{axis = 1, out_shape = [{n}, {m}]}} : ({_t(s1)}) -> {_t((n, m))}\n'
            f'  %d = "tdflow.boxing_slice"(%c) {{axis = 0, out_shape = [{s0[0]}, {m}]}} : ({_t((n, m))}) -> {_t(s0)}\n'
            f'  %e = "tdflow.boxing_to_partial"(%c) {{out_shape = [{n}, {m}]}} : ({_t((n, m))}) -> {_t((n, m))}\n'
            f'  %f = "tdflow.boxing_all_reduce"(%e) {{out_shape = [{n}, {m}]}} : ({_t((n, m))}) -> {_t((n, m))}\n'
            f"  return %f, %d : {_t((n, m))}, {_t(s0)}\n}}")


@pytest.mark.parametrize("nproc", [2, 4])
def test_every_boxing_op_in_one_program(nproc):
    x = np.random.default_rng(1).standard_normal((5, 7))
    prog = dist.compile_physical(lambda r: _chain(nproc, r), nproc, arg_sbp=["P"],
                                 result_sbp=["B", "S(0)"], arg_shapes=[(5, 7)],
                                 result_shapes=[(5, 7), (5, 7)])
    full, split = prog(x)
    np.testing.assert_allclose(full, x, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(split, x, rtol=1e-15, atol=1e-15)


def _hybrid(rank: int, n=5, m=3) -> str:
    """On hierarchy [2, 2]: x [S(0), P] -> all-reduce over mesh axis 1 -> [S(0), B] ->
    all-gather over mesh axis 0 -> [B, B]; and the [S(0), B] piece itself."""
    rows = physical_shape((n,), (S(0),), (2,), rank // 2)[0]
    return (f"func.func @f(%x: {_t((rows, m))}) -> ({_t((n, m))}, {_t((rows, m))}) {{\n"
            f'  %a = "tdflow.boxing_all_reduce"(%x) {{mesh_axis = 1, out_shape = [{rows}, {m}]}} : ({_t((rows, m))}) -> {_t((rows, m))}\n'
            f'  %b = "tdflow.boxing_all_gather"(%a) {{axis = 0, mesh_axis = 0, out_shape = [{n}, {m}]}} : ({_t((rows, m))}) -> {_t((n, m))}\n'
            f"  return %b, %a : {_t((n, m))}, {_t((rows, m))}\n}}")


def test_boxing_over_each_axis_of_a_2x2_hierarchy():
    x = np.random.default_rng(2).standard_normal((5, 3))
    prog = dist.compile_physical(_hybrid, 4, arg_sbp=[["S(0)", "P"]],
                                 result_sbp=[["B", "B"], ["S(0)", "B"]], arg_shapes=[(5, 3)],
                                 result_shapes=[(5, 3), (5, 3)], hierarchy=(2, 2))
    full, rows = prog(x)
    np.testing.assert_allclose(full, x, rtol=0, atol=1e-15)
    np.testing.assert_allclose(rows, x, rtol=0, atol=1e-15)
