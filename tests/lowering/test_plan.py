"""select-kernels + plan-memory: the plan's buffers, reuse, in-place decisions and numerics."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from tdflow.dialect import standard_dialect
from tdflow.dialect.ir import parse_module
from tdflow.lowering.pass_manager import PassFailure, PassManager
from tdflow.runtime.executor import Executor
from tdflow.runtime.kernels.registry import kernel_table

CHAIN = """
    func.func @f(%x: tensor<64x32xf32>, %y: tensor<64x32xf32>) -> tensor<64x32xf32> {
      %0 = "tdflow.broadcast_mul"(%x, %y) : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
      %1 = "tdflow.exp"(%0) : (tensor<64x32xf32>) -> tensor<64x32xf32>
      %2 = "tdflow.broadcast_add"(%1, %0) : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
      %3 = "tdflow.tanh"(%2) : (tensor<64x32xf32>) -> tensor<64x32xf32>
      %4 = "tdflow.broadcast_mul"(%3, %x) : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
      %5 = "tdflow.sigmoid"(%4) : (tensor<64x32xf32>) -> tensor<64x32xf32>
      return %5 : tensor<64x32xf32>
    }"""


def reference(x, y):
    a = x * y
    return 1 / (1 + np.exp(-(np.tanh(np.exp(a) + a) * x)))


def plan_for(text: str, pipeline: str, **kw):
    module = parse_module(textwrap.dedent(text), "t.mlir")
    pm = PassManager.parse(pipeline, dialect=standard_dialect(), kernel_table=kernel_table("cpu"),
                           **kw)
    return pm.run(module).plan()


def run(plan, *args):
    table = kernel_table("cpu")
    return Executor(plan, lambda n: table.get(n).fn).run(list(args))


@pytest.fixture
def xy():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((64, 32)).astype(np.float32),
            rng.standard_normal((64, 32)).astype(np.float32))


def test_plan_memory_reuses_and_goes_in_place_and_stays_correct(xy):
    plan = plan_for(CHAIN, "select-kernels{device=cpu},plan-memory")
    assert [ln.kernel for ln in plan.launches] == [
        "cpu.broadcast_mul", "cpu.exp", "cpu.broadcast_add", "cpu.tanh", "cpu.broadcast_mul",
        "cpu.sigmoid"]
    # 8 values of 8 KiB each without planning; arguments (2) + result (1) + 2 temporaries.
    assert plan.peak_bytes_before == 8 * 64 * 32 * 4
    assert plan.peak_bytes_after < plan.peak_bytes_before
    assert plan.peak_bytes_after <= 5 * 64 * 32 * 4
    assert any(ln.in_place for ln in plan.launches)
    arg_buffers = {a.buffer for a in plan.arguments}
    for ln in plan.launches:  # never writes over an argument
        assert not set(ln.outputs) & arg_buffers
    (out,) = run(plan, *xy)
    np.testing.assert_allclose(out, reference(*xy), rtol=1e-5, atol=1e-6)


def test_without_reuse_every_value_has_its_buffer(xy):
    plan = plan_for(CHAIN, "select-kernels{device=cpu},plan-memory{reuse=false}")
    assert plan.peak_bytes_after == plan.peak_bytes_before
    (out,) = run(plan, *xy)
    np.testing.assert_allclose(out, reference(*xy), rtol=1e-5, atol=1e-6)


def test_donated_argument_is_written_in_place(xy):
    plan = plan_for(CHAIN.replace("%4 = \"tdflow.broadcast_mul\"(%3, %x)",
                                  "%4 = \"tdflow.broadcast_mul\"(%3, %3)"),
                    "select-kernels{device=cpu},plan-memory{donate=x;y}")
    assert plan.launches[0].in_place == ((0, 0),)
    assert plan.launches[0].outputs[0] == plan.argument("x").buffer


def test_fused_chain_runs_and_matches(xy):
    plan = plan_for(CHAIN, "fuse-elementwise,select-kernels{device=cpu},plan-memory")
    assert [ln.kernel for ln in plan.launches] == ["cpu.fused_elementwise"]
    (out,) = run(plan, *xy)
    np.testing.assert_allclose(out, reference(*xy), rtol=1e-5, atol=1e-6)


def test_select_kernels_error_lists_candidates():
    text = """
        func.func @f(%x: tensor<4xi1>) -> tensor<4xi1> {
          %0 = "tdflow.exp"(%x) : (tensor<4xi1>) -> tensor<4xi1>
          return %0 : tensor<4xi1>
        }"""
    with pytest.raises(PassFailure) as err:
        plan_for(text, "select-kernels{device=cpu}")
    msg = err.value.render()
    assert "t.mlir:3:" in msg and "cpu.exp" in msg and "candidates" in msg


def test_plan_needs_static_shapes():
    text = """
        func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
          %0 = "tdflow.exp"(%x) : (tensor<?xf32>) -> tensor<?xf32>
          return %0 : tensor<?xf32>
        }"""
    with pytest.raises(PassFailure) as err:
        plan_for(text, "select-kernels{device=cpu},plan-memory", entry="f")
    assert "static shapes" in err.value.render()
    # Planning every function: a dynamic one is skipped with a warning.
    module = parse_module(textwrap.dedent(text), "t.mlir")
    result = PassManager.parse("select-kernels{device=cpu},plan-memory", dialect=standard_dialect(),
                               kernel_table=kernel_table("cpu")).run(module)
    assert result.plans == {}
    assert any("@f not planned" in w.message for w in result.context.warnings)


def test_large_elementwise_launches_run_in_tiles(xy):
    # 64x32 = 2048 elements; tiles of 300 leave a ragged last tile.
    plan = plan_for(CHAIN, "select-kernels{device=cpu},plan-memory{tile=300}")
    assert all(ln.tile == 300 for ln in plan.launches)
    (out,) = run(plan, *xy)
    np.testing.assert_allclose(out, reference(*xy), rtol=1e-5, atol=1e-6)
    # A non-contiguous argument falls back to one call per launch.
    x = np.asfortranarray(xy[0])
    (out,) = run(plan, x, xy[1])
    np.testing.assert_allclose(out, reference(*xy), rtol=1e-5, atol=1e-6)
    # a fused launch is not tiled: its kernel goes block by block (or one native loop) itself
    fused = plan_for(CHAIN, "fuse-elementwise,select-kernels{device=cpu},plan-memory{tile=256}")
    assert [ln.op for ln in fused.launches] == ["tdflow.fused_elementwise"]
    assert fused.launches[0].tile == 0
    (out,) = run(fused, *xy)
    np.testing.assert_allclose(out, reference(*xy), rtol=1e-5, atol=1e-6)


def test_broadcasting_and_small_launches_are_not_tiled():
    text = """
        func.func @f(%x: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<64x32xf32> {
          %0 = "tdflow.broadcast_add"(%x, %b) : (tensor<64x32xf32>, tensor<32xf32>) -> tensor<64x32xf32>
          %1 = "tdflow.exp"(%0) : (tensor<64x32xf32>) -> tensor<64x32xf32>
          return %1 : tensor<64x32xf32>
        }"""
    plan = plan_for(text, "select-kernels{device=cpu},plan-memory{tile=512}")
    assert [ln.tile for ln in plan.launches] == [0, 512]
    plan = plan_for(text, "select-kernels{device=cpu},plan-memory{tile=4096}")
    assert [ln.tile for ln in plan.launches] == [0, 0]


def test_float32_erf_formulas_are_not_tiled():
    # gelu/gelu_grad in f32: native loops over blocks of their own (tiles only add calls); in
    # f64 their erf is the numpy path, which tiles as before; exp (no erf) tiles in f32
    def ops(dt):
        return f"""
        func.func @f(%x: tensor<64x32x{dt}>, %dy: tensor<64x32x{dt}>) -> tensor<64x32x{dt}> {{
          %0 = "tdflow.gelu"(%x) : (tensor<64x32x{dt}>) -> tensor<64x32x{dt}>
          %1 = "tdflow.gelu_grad"(%0, %dy) : (tensor<64x32x{dt}>, tensor<64x32x{dt}>) -> tensor<64x32x{dt}>
          %2 = "tdflow.exp"(%1) : (tensor<64x32x{dt}>) -> tensor<64x32x{dt}>
          return %2 : tensor<64x32x{dt}>
        }}"""
    plan = plan_for(ops("f32"), "select-kernels{device=cpu},plan-memory{tile=512}")
    assert [ln.tile for ln in plan.launches] == [0, 0, 512]
    plan = plan_for(ops("f64"), "select-kernels{device=cpu},plan-memory{tile=512}")
    assert [ln.tile for ln in plan.launches] == [512, 512, 512]


def test_a_reshape_of_a_live_value_is_a_view_not_a_copy():
    text = """
        func.func @f(%x: tensor<8x6xf32>, %y: tensor<8x6xf32>) -> (tensor<8x6xf32>, tensor<4x12xf32>) {
          %0 = "tdflow.broadcast_mul"(%x, %y) : (tensor<8x6xf32>, tensor<8x6xf32>) -> tensor<8x6xf32>
          %1 = "tdflow.reshape"(%0) {shape = [4, 12]} : (tensor<8x6xf32>) -> tensor<4x12xf32>
          %2 = "tdflow.exp"(%0) : (tensor<8x6xf32>) -> tensor<8x6xf32>
          %3 = "tdflow.tanh"(%1) : (tensor<4x12xf32>) -> tensor<4x12xf32>
          %4 = "tdflow.reshape"(%x) {shape = [4, 12]} : (tensor<8x6xf32>) -> tensor<4x12xf32>
          %5 = "tdflow.broadcast_add"(%3, %4) : (tensor<4x12xf32>, tensor<4x12xf32>) -> tensor<4x12xf32>
          return %2, %5 : tensor<8x6xf32>, tensor<4x12xf32>
        }"""
    rng = np.random.default_rng(0)
    x, y = (rng.normal(size=(8, 6)).astype(np.float32) for _ in range(2))
    want = (np.exp(x * y), np.tanh((x * y).reshape(4, 12)) + x.reshape(4, 12))
    plan = plan_for(text, "select-kernels{device=cpu},plan-memory")
    mul, view, exp, tanh, copy, add = plan.launches
    assert view.op == "tdflow.reshape" and view.inputs == view.outputs  # %0 lives on after it
    assert view.in_place == ((0, 0),)
    assert exp.outputs != mul.outputs  # %0's last reader: not over it, its view is still read
    assert tanh.outputs == mul.outputs and tanh.in_place  # the view's last reader: over it
    assert copy.outputs != copy.inputs  # a reshape of an argument copies it
    for got, ref in zip(run(plan, x, y), want):
        assert np.array_equal(got, ref)
    # a donated argument is not viewed either (the executor binds the caller's array, of the
    # argument's shape, to its buffer)
    plan = plan_for(text, "select-kernels{device=cpu},plan-memory{donate=x}")
    assert plan.launches[4].inputs != plan.launches[4].outputs
    for got, ref in zip(run(plan, x.copy(), y), want):
        assert np.array_equal(got, ref)
    # without reuse, no views either
    plan = plan_for(text, "select-kernels{device=cpu},plan-memory{reuse=false}")
    assert plan.launches[1].inputs != plan.launches[1].outputs
    for got, ref in zip(run(plan, x, y), want):
        assert np.array_equal(got, ref)
