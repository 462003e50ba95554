"""Gradient seeds as constants (``differentiate(..., ones_seeds=True)``, used by
``value_and_grad`` and ``sgd_step``) and the rule that folds ``broadcast_like`` of a constant
(``TDF_BroadcastLikeConstant`` in ``tdflow/ops/canonical.td``): the seed's chain of a mean loss
(the seed, its ``* 1/n`` and its broadcast over the rows) is computed at compile time, and every
result is bit for bit what the program with seed arguments fed ones gives, NaN, inf and signed
zeros included.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from bitwise import assert_same_bits
from tdflow.dialect.context import standard_context
from tdflow.dialect.ir import parse_module, print_module
from tdflow.lowering.pass_manager import PassManager
from tdflow.runtime.compiled import compile as compile_program
from tdflow.runtime.kernels.registry import kernel_table
from tdflow.runtime.value_and_grad import prepare_grad

import tdflow

BENCH = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
import train_bench  # noqa: E402

PLAIN = "infer-shapes,select-kernels{device=cpu},plan-memory"  # nothing rewritten
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _seeded(text: str, wrt=None):
    """The gradient program as before: seeds as arguments, called with ones."""
    ctx, module, func, _, g = prepare_grad(text, None, wrt, None, ones_seeds=False)
    prog = compile_program(module, entry=g.name, ops=ctx)
    seeds = [np.ones(tuple(r.shape), r.np_dtype) for r in func.result_types]
    n = len(func.result_types)

    def call(*args):
        out = prog(*args, *[s.copy() for s in seeds])
        return (out[0] if n == 1 else tuple(out[:n])), tuple(out[n:])

    return call


def _special(rng, shape, dtype=np.float32) -> np.ndarray:
    a = rng.standard_normal(shape).astype(dtype)
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0], dtype)
    a.reshape(-1)[rng.integers(0, a.size, 4)] = rng.choice(special, 4)
    return a


# -- the rule ------------------------------------------------------------------------------------

@pytest.mark.parametrize("fill,dtype,axes", [("0.25 : f64, is_floating_value = true", "f32", "[]"),
                                             ("-0.0 : f64, is_floating_value = true", "f64", "[0 : si32]"),
                                             ("0.0 : f64, integer_value = 3", "i32", "[]")])
def test_broadcast_like_of_a_constant_folds(fill, dtype, axes):
    small = "" if axes == "[]" else "6x"
    ct, t = f"tensor<{small}{dtype}>", f"tensor<4x6x{dtype}>"
    cshape = "[]" if axes == "[]" else "[6]"
    text = textwrap.dedent(f"""
        func.func @f(%x: {t}) -> {t} {{
          %c = "tdflow.constant"() {{dtype = {dtype}, floating_value = {fill}, shape = {cshape}}} : () -> {ct}
          %b = "tdflow.broadcast_like"(%c, %x) {{broadcast_axes = {axes}}} : ({ct}, {t}) -> {t}
          %y = "tdflow.broadcast_mul"(%b, %x) : ({t}, {t}) -> {t}
          return %y : {t}
        }}""")
    ctx = standard_context()
    module = parse_module(text, "t.mlir")
    rng = np.random.default_rng(0)
    x = (_special(rng, (4, 6), {'f32': np.float32, 'f64': np.float64}[dtype]) if dtype != "i32"
         else rng.integers(-5, 5, (4, 6)).astype(np.int32))
    before = tdflow.compile(text, ops=ctx, pipeline=PLAIN)(x)
    pm = PassManager.parse("canonicalize", dialect=ctx, kernel_table=kernel_table("cpu"))
    pm.run(module)
    ops = [op.name for op in module.funcs[0].ops]
    assert "tdflow.broadcast_like" not in ops
    assert "TDF_BroadcastLikeConstant" in [f.pattern for p in pm.passes
                                           for f in getattr(p, "fired", [])]
    const = next(op for op in module.funcs[0].ops if op.name == "tdflow.constant")
    assert tuple(const.results[0].type.shape) == (4, 6)
    after = tdflow.compile(print_module(module), ops=ctx, pipeline=PLAIN)(x)
    assert_same_bits(after, before)


def test_broadcast_like_of_a_value_stays():
    text = """func.func @f(%s: tensor<f32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %b = "tdflow.broadcast_like"(%s, %x) {broadcast_axes = []} : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  return %b : tensor<3xf32>
}"""
    module = parse_module(text, "t.mlir")
    PassManager.parse("canonicalize", dialect=standard_context(),
                      kernel_table=kernel_table("cpu")).run(module)
    assert [op.name for op in module.funcs[0].ops] == ["tdflow.broadcast_like", "func.return"]


# -- seeds as constants ----------------------------------------------------------------------------

def test_mlp_step_has_no_seed_and_no_seed_chain():
    x, y, params = train_bench.make_data(0)
    text = train_bench.program()
    vg = tdflow.value_and_grad(text, wrt=list(train_bench.PARAMS))
    st = tdflow.sgd_step(text, lr=train_bench.LR, wrt=list(train_bench.PARAMS))
    for prog in (vg.program, st.program):
        assert prog.argument_names == ("x", "labels", "w1", "b1", "w2", "b2")
        ops = [ln.op for ln in prog.plan.launches]
        # the loss's reduce and 1/n stay (the loss is a result); the seed's 1/n and its
        # broadcast are constants of the plan, computed once when it is loaded
        assert "tdflow.broadcast_like" not in ops
        assert ops.count("tdflow.scalar_mul") == 1
        assert [ln.op for ln in prog.plan.prologue] == ["tdflow.constant"]
    # 16: the loss and its gradient are one launch too (fuse_loss, test_fuse_loss.py)
    assert len(st.program.plan.launches) == 16
    args = [x, y, *(params[k] for k in train_bench.PARAMS)]
    loss, grads = vg(*args)
    want_loss, want_grads = _seeded(text, list(train_bench.PARAMS))(*args)
    assert_same_bits(loss, want_loss)
    assert_same_bits(grads, want_grads)
    # the step: the same loss, each parameter updated as g *= lr; w -= g
    ws = [params[k].copy() for k in train_bench.PARAMS]
    assert_same_bits(st(x, y, *ws), want_loss)
    lr = np.float32(train_bench.LR)
    for w, k, g in zip(ws, train_bench.PARAMS, want_grads):
        assert_same_bits(w, params[k] - g * lr)


@pytest.mark.parametrize("seed", range(4))
def test_value_and_grad_equals_seeded_program(seed):
    """Several results (a vector and a mean), special values, f32 and f64."""
    dt = "f32" if seed % 2 else "f64"
    t, s = f"tensor<5x3x{dt}>", f"tensor<{dt}>"
    text = f"""func.func @f(%x: {t}, %w: {t}) -> ({t}, {s}) {{
  %0 = "tdflow.broadcast_mul"(%x, %w) : ({t}, {t}) -> {t}
  %1 = "tdflow.tanh"(%0) : ({t}) -> {t}
  %2 = "tdflow.reduce_sum"(%1) {{axis = [0 : si32, 1 : si32]}} : ({t}) -> {s}
  %3 = "tdflow.scalar_mul"(%2) {{has_float_operand = true, float_operand = 0.0625 : f64}} : ({s}) -> {s}
  return %1, %3 : {t}, {s}
}}"""
    rng = np.random.default_rng(seed)
    npdt = np.float32 if dt == "f32" else np.float64
    args = [_special(rng, (5, 3), npdt), _special(rng, (5, 3), npdt)]
    vg = tdflow.value_and_grad(text)
    assert vg.program.argument_names == ("x", "w")
    assert_same_bits(vg(*args), _seeded(text)(*args))
