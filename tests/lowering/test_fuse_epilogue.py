"""Epilogue fusion (``lowering/passes/fuse_epilogue.py``): a last-axis ``bias_add`` and the
activation after it become one launch, relu gradients read relu's output, a bias before a
softmax or loss joins its product (``matmul_bias``), and every result is
bit for bit the one of the unfused plan (``fuse-elementwise{epilogue=false}``): the MLP and
GPT training programs, and random layer graphs fed NaN, inf and signed zeros.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from bitwise import assert_same_bits
from tdflow.dialect.formula.expr import Const, Input, maximum, where
from tdflow.lowering.pass_manager import default_pipeline
from tdflow.lowering.passes.fuse_epilogue import is_relu, only_positive_tests

import tdflow

ROOT = Path(__file__).resolve().parents[2]
OFF = default_pipeline("cpu").replace("fuse-elementwise", "fuse-elementwise{epilogue=false}")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def test_predicates():
    x = Input(0)
    assert is_relu(maximum(x, Const(0))) and not is_relu(maximum(Input(1), Const(0)))
    assert only_positive_tests(where(x > 0, Input(1), 0), 0)
    assert only_positive_tests(where(Const(0) < x, Input(1), 0), 0)
    assert not only_positive_tests(where(x >= 0, Input(1), 0), 0)  # relu(-1) = 0 >= 0
    assert not only_positive_tests(where(x > 0, x, 0), 0)
    assert not only_positive_tests(Input(1) * 2, 0)  # input 0 unused: nothing to rewrite


def _mlp():
    sys.path.insert(0, str(ROOT / "bench"))
    import train_bench as tb

    x, y, params = tb.make_data()
    return tb, [x, y, *(params[k] for k in tb.PARAMS)]


def test_mlp_step_is_two_launches_shorter_and_bit_identical():
    tb, args = _mlp()
    on = tdflow.value_and_grad(tb.program(), wrt=list(tb.PARAMS))
    off = tdflow.value_and_grad(tb.program(), wrt=list(tb.PARAMS), pipeline=OFF)
    # layer 1's bias joins its relu, layer 2's its product
    assert len(on.program.plan.launches) == len(off.program.plan.launches) - 2
    assert [ln.op for ln in on.program.plan.launches].count("tdflow.matmul_bias") == 1
    assert on.program.plan.peak_bytes_after < off.program.plan.peak_bytes_after
    exprs = [str(ln.attrs.get("expr")) for ln in on.program.plan.launches]
    assert "max(add(in0, in1), 0)" in exprs
    assert_same_bits(on(*args), off(*args))
    bad = [a.copy() for a in args]
    bad[0][0, :5] = [np.nan, -0.0, np.inf, -np.inf, 0.0]
    bad[2][:3, 0] = [np.nan, -np.inf, -0.0]
    assert_same_bits(on(*bad), off(*bad))


def test_mlp_sgd_step_updates_bit_identical():
    tb, args = _mlp()
    p_on = [a.copy() for a in args[2:]]
    p_off = [a.copy() for a in args[2:]]
    on = tdflow.sgd_step(tb.program(), lr=tb.LR, wrt=list(tb.PARAMS))
    off = tdflow.sgd_step(tb.program(), lr=tb.LR, wrt=list(tb.PARAMS), pipeline=OFF)
    for _ in range(3):
        assert_same_bits(on(*args[:2], *p_on), off(*args[:2], *p_off))
    assert_same_bits(tuple(p_on), tuple(p_off))


def test_gpt_example_gradients_bit_identical():
    sys.path.insert(0, str(ROOT / "examples"))
    import gpt

    cfg = gpt.EXAMPLE
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, cfg.vocab, (cfg.batch, cfg.context)).astype(np.int64)
    targets = rng.integers(0, cfg.vocab, (cfg.batch, cfg.context)).astype(np.int64)
    params = gpt.init_params(cfg, 0)
    names = list(params)
    on = tdflow.value_and_grad(gpt.program(cfg), wrt=names)
    off = tdflow.value_and_grad(gpt.program(cfg), wrt=names, pipeline=OFF)
    assert len(on.program.plan.launches) < len(off.program.plan.launches)
    args = [tokens, targets, *params.values()]
    assert_same_bits(on(*args), off(*args))


def _random_layers(rng: np.random.Generator, n: int, d: int) -> str:
    """A random stack of dense layers: bias along the last axis or the first, relu or not,
    pre-activations reused by later ops (masks, products, sums)."""
    lines, vals = [], ["%x"]
    t = f"tensor<{n}x{d}xf32>"
    args = [f"%x: {t}"]
    for i in range(int(rng.integers(2, 5))):
        args += [f"%w{i}: tensor<{d}x{d}xf32>", f"%b{i}: tensor<{d}xf32>"]
        h = vals[-1]
        lines.append(f'%m{i} = "tdflow.matmul"({h}, %w{i}) : ({t}, tensor<{d}x{d}xf32>) -> {t}')
        axis = int(rng.choice([1, 1, 0])) if n == d else 1
        lines.append(f'%a{i} = "tdflow.bias_add"(%m{i}, %b{i}) {{axis = {axis} : si32}} : '
                     f"({t}, tensor<{d}xf32>) -> {t}")
        kind = rng.choice(["relu", "relu", "neg", "none", "softmax"])
        if kind == "softmax":  # not elementwise: the bias stays, and may join its product
            lines.append(f'%r{i} = "tdflow.softmax"(%a{i}) : ({t}) -> {t}')
        elif kind == "relu":
            lines.append(f'%r{i} = "tdflow.relu"(%a{i}) : ({t}) -> {t}')
        elif kind == "neg":
            lines.append(f'%r{i} = "tdflow.negative"(%a{i}) : ({t}) -> {t}')
        else:
            lines.append(f'%r{i} = "tdflow.broadcast_mul"(%a{i}, %a{i}) : ({t}, {t}) -> {t}')
        if rng.random() < 0.4:  # the pre-activation used again: it must stay materialised
            lines.append(f'%s{i} = "tdflow.broadcast_add"(%r{i}, %a{i}) : ({t}, {t}) -> {t}')
            vals.append(f"%s{i}")
        else:
            vals.append(f"%r{i}")
    lines.append(f'%out = "tdflow.reduce_sum"({vals[-1]}) {{axis = [0 : si32, 1 : si32]}} : '
                 f"({t}) -> tensor<f32>")
    body = "\n  ".join(lines)
    return (f"func.func @f({', '.join(args)}) -> tensor<f32> {{\n  {body}\n"
            f"  return %out : tensor<f32>\n}}")


@pytest.mark.parametrize("seed", range(10))
def test_random_layer_graphs_bit_identical(seed):
    rng = np.random.default_rng(seed)
    n = d = 8 if seed % 2 else 6
    text = _random_layers(rng, n, d)
    on = tdflow.value_and_grad(text)
    off = tdflow.value_and_grad(text, pipeline=OFF)
    names = on.program.argument_names  # the seed is a constant of the program
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], np.float32)
    args = []
    for name in names:
        shape = (n, d) if name == "x" else ((d, d) if name.startswith("w") else (d,))
        a = (rng.standard_normal(shape) * 0.5).astype(np.float32)
        if rng.random() < 0.5:
            a.reshape(-1)[rng.integers(0, a.size, 2)] = rng.choice(special, 2)
        args.append(a)
    assert_same_bits(on(*args), off(*args))
    fwd_on, fwd_off = tdflow.compile(text), tdflow.compile(text, pipeline=OFF)
    assert_same_bits(fwd_on(*args), fwd_off(*args))
