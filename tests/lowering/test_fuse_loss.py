"""The sparse cross-entropy and its gradient in one launch (``lowering/passes/fuse_loss.py``,
the kernel ``sparse_softmax_cross_entropy_with_grad``): every result bit for bit the one of the
plan that keeps the two launches (``fuse-elementwise{loss-grad=false}``), for the MLP step and
gradients and a bare loss in f32/f64, on NaN, inf, signed zeros and labels out of range (which
take the general path); the bound launch against the general kernel and against the two kernels
it replaces; and the cases the pass must leave alone.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from bitwise import assert_same_bits
from tdflow.dialect.ir import Rewriter
from tdflow.dialect.ir.parser import parse_module
from tdflow.lowering.pass_manager import default_pipeline
from tdflow.lowering.passes.fuse_loss import SCE_WITH_GRAD, fuse_loss_grad
from tdflow.runtime.kernels import softmax as k

import tdflow

ROOT = Path(__file__).resolve().parents[2]
OFF = default_pipeline("cpu").replace("fuse-elementwise", "fuse-elementwise{loss-grad=false}")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _mlp():
    sys.path.insert(0, str(ROOT / "bench"))
    import train_bench as tb

    x, y, params = tb.make_data()
    return tb, [x, y, *(params[k] for k in tb.PARAMS)]


def _ops(program) -> list[str]:
    return [ln.op for ln in program.plan.launches]


def _bad(args):
    """The MLP's arguments with NaN, infinities and signed zeros in the input and a weight."""
    bad = [a.copy() for a in args]
    bad[0][0, :5] = [np.nan, -0.0, np.inf, -np.inf, 0.0]
    bad[4][:3, 0] = [np.nan, -np.inf, -0.0]
    return bad


def test_mlp_gradients_one_launch_shorter_and_bit_identical():
    tb, args = _mlp()
    on = tdflow.value_and_grad(tb.program(), wrt=list(tb.PARAMS))
    off = tdflow.value_and_grad(tb.program(), wrt=list(tb.PARAMS), pipeline=OFF)
    assert len(_ops(on.program)) == len(_ops(off.program)) - 1
    assert _ops(on.program).count(SCE_WITH_GRAD) == 1 and SCE_WITH_GRAD not in _ops(off.program)
    assert "tdflow.sparse_softmax_cross_entropy_grad" not in _ops(on.program)
    assert_same_bits(on(*args), off(*args))
    assert_same_bits(on(*_bad(args)), off(*_bad(args)))
    labels = [a.copy() for a in args]
    labels[1][:3] = [-1, 10, 2**40]  # out of range: no loss, no one-hot term (general path)
    assert_same_bits(on(*labels), off(*labels))
    assert_same_bits(on(*args), off(*args))  # back on the bound path


def test_mlp_sgd_step_updates_bit_identical():
    tb, args = _mlp()
    p_on, p_off = [a.copy() for a in args[2:]], [a.copy() for a in args[2:]]
    on = tdflow.sgd_step(tb.program(), lr=tb.LR, wrt=list(tb.PARAMS))
    off = tdflow.sgd_step(tb.program(), lr=tb.LR, wrt=list(tb.PARAMS), pipeline=OFF)
    assert len(_ops(on.program)) == len(_ops(off.program)) - 1
    for _ in range(3):
        assert_same_bits(on(*args[:2], *p_on), off(*args[:2], *p_off))
    assert_same_bits(tuple(p_on), tuple(p_off))


LOSS = """func.func @loss(%z: tensor<6x5x{t}>, %y: tensor<6xi64>) -> tensor<{t}> {{
  %p, %l = "tdflow.sparse_softmax_cross_entropy"(%z, %y) {{depth = 5 : si64}} : (tensor<6x5x{t}>, tensor<6xi64>) -> (tensor<6x5x{t}>, tensor<6x{t}>)
  %s = "tdflow.reduce_sum"(%l) {{axis = [0 : si32]}} : (tensor<6x{t}>) -> tensor<{t}>
  return %s : tensor<{t}>
}}
"""


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_bare_loss_gradient_bit_identical(t):
    on = tdflow.value_and_grad(LOSS.format(t=t), wrt=["z"])
    off = tdflow.value_and_grad(LOSS.format(t=t), wrt=["z"], pipeline=OFF)
    assert SCE_WITH_GRAD in _ops(on.program) and SCE_WITH_GRAD not in _ops(off.program)
    rng = np.random.default_rng(1)
    z = rng.normal(size=(6, 5)).astype(t.replace("f", "float"))
    z[0, 1], z[1, 2], z[2, 0], z[3, :] = np.nan, np.inf, -0.0, -np.inf
    z[4, :] = [0.0, -0.0, 1e-40, -1e30, 1e30]
    for y in (np.array([0, 1, 2, 3, 4, 0]), np.array([0, -1, 5, 3, 4, 2])):
        assert_same_bits(on(z, y), off(z, y))


def _kernel_inputs(dt, n=7, c=5, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, c)).astype(dt) * 3
    x[0, 0], x[1, 1], x[2, :2], x[3, 3] = np.nan, np.inf, [-0.0, 0.0], -np.inf
    dy = rng.normal(size=n).astype(dt)
    dy[4], dy[5] = -0.0, np.inf
    return x, rng.integers(0, c, n), dy


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("labels", ["in", "out"])
def test_kernel_equals_the_two_kernels(dt, labels):
    x, lab, dy = _kernel_inputs(dt)
    if labels == "out":
        lab[:2] = [-3, 5]
    attrs = {"depth": 5}
    prob, loss = k.sparse_softmax_cross_entropy(attrs, [x, lab], [None, None])
    diff = k.sparse_softmax_cross_entropy_grad(attrs, [lab, dy, prob], [None])[0]
    got = k.sparse_softmax_cross_entropy_with_grad(attrs, [x, lab, dy], [None, None])
    assert_same_bits(tuple(got), (loss, diff))
    if dt is np.float16:
        return
    d = np.dtype(dt)
    run = k.sparse_softmax_cross_entropy_with_grad.bind(
        attrs, [((7, 5), d), ((7,), lab.dtype), ((7,), d)], [((7,), d), ((7, 5), d)])
    outs = [np.full(7, 9, dt), np.full((7, 5), 9, dt)]
    assert_same_bits(tuple(run(attrs, [x, lab, dy], outs)), (loss, diff))
    assert all(np.shares_memory(a, b) for a, b in zip(run(attrs, [x, lab, dy], outs), outs))
    strided = [np.full(7, 9, dt), np.full((7, 10), 9, dt)[:, ::2]]  # the general path
    assert_same_bits(tuple(run(attrs, [x, lab, dy], strided)), (loss, diff))
    assert_same_bits(strided[1], diff)


def test_bind_declines_what_it_does_not_serve():
    f4, f8, i8 = np.dtype("f4"), np.dtype("f8"), np.dtype("i8")
    bind = k.sparse_softmax_cross_entropy_with_grad.bind
    ok = ([((4, 3), f4), ((4,), i8), ((4,), f4)], [((4,), f4), ((4, 3), f4)])
    assert bind({"depth": 3}, *ok) is not None
    assert bind({"depth": 3}, [((4, 3), f4), ((4,), i8), ((4,), f8)], ok[1]) is None  # dy type
    assert bind({"depth": 3}, [((2, 4, 3), f4), ((2, 4), i8), ((2, 4), f4)],
                [((2, 4), f4), ((2, 4, 3), f4)]) is None  # 3-D: the general path
    assert bind({"depth": 3}, [((4, 3), np.dtype("f2")), ok[0][1], ((4,), np.dtype("f2"))],
                [((4,), np.dtype("f2")), ((4, 3), np.dtype("f2"))]) is None


def _func(text: str):
    return next(iter(parse_module(text)))


HEAD = ("func.func @f(%x: tensor<2x3xf32>, %l: tensor<2xi64>, %dy: tensor<2xf32>) -> "
        "(tensor<2xf32>, tensor<2x3xf32>{extra}) {{\n"
        '  %p, %o = "tdflow.sparse_softmax_cross_entropy"(%x, %l) {{depth = 3 : si64}} : '
        "(tensor<2x3xf32>, tensor<2xi64>) -> (tensor<2x3xf32>, tensor<2xf32>)\n")
GRAD = ('  %g = "tdflow.sparse_softmax_cross_entropy_grad"(%l, {dy}, %p) {{depth = 3 : si64}} : '
        "(tensor<2xi64>, tensor<2xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>\n")


def test_pass_leaves_alone_a_used_prob_and_a_late_dy():
    used = _func(HEAD.format(extra=", tensor<2x3xf32>") + GRAD.format(dy="%dy")
                 + "  return %o, %g, %p : tensor<2xf32>, tensor<2x3xf32>, tensor<2x3xf32>\n}\n")
    assert fuse_loss_grad(used, Rewriter()) == 0  # prob is a result: it must be computed
    late = _func(HEAD.format(extra="")
                 + '  %d = "tdflow.scalar_mul"(%o) {has_float_operand = true, '
                   "float_operand = 2.0 : f64} : (tensor<2xf32>) -> tensor<2xf32>\n"
                 + GRAD.format(dy="%d") + "  return %o, %g : tensor<2xf32>, tensor<2x3xf32>\n}\n")
    assert fuse_loss_grad(late, Rewriter()) == 0  # dy needs the loss: no launch can do both
    ready = _func(HEAD.format(extra="") + GRAD.format(dy="%dy")
                  + "  return %o, %g : tensor<2xf32>, tensor<2x3xf32>\n}\n")
    assert fuse_loss_grad(ready, Rewriter()) == 1
    fused = next(iter(ready.body.ops))
    assert fused.name == SCE_WITH_GRAD and len(list(ready.body.ops)) == 2


def test_pass_moves_a_constant_seed_before_the_loss():
    f = _func(HEAD.format(extra="")
              + '  %c = "tdflow.constant"() {floating_value = 0.5 : f64, is_floating_value = true, '
                "dtype = f32, shape = [2 : si64]} : () -> tensor<2xf32>\n"
              + GRAD.format(dy="%c") + "  return %o, %g : tensor<2xf32>, tensor<2x3xf32>\n}\n")
    assert fuse_loss_grad(f, Rewriter()) == 1
    assert [op.name for op in f.body.ops][:2] == ["tdflow.constant", SCE_WITH_GRAD]


def test_mlp_plan_binds_the_fused_launch(monkeypatch):
    from tdflow.runtime import executor

    seen = []
    real = executor.bound_kernel

    def spy(fn, ln, dtypes, dead=frozenset()):
        got = real(fn, ln, dtypes, dead)
        if ln.op == SCE_WITH_GRAD:
            seen.append(got is not fn)
        return got

    monkeypatch.setattr(executor, "bound_kernel", spy)
    tb, args = _mlp()
    tdflow.sgd_step(tb.program(), lr=tb.LR, wrt=list(tb.PARAMS))(*args)
    assert seen == [True]
