"""Random elementwise DAGs: the whole pipeline (fusion, CSE, in-place, reuse) vs plain numpy.

Each program mixes unary and broadcasting binary ops over a few arguments, with values used
several times, dead values and repeated subexpressions; the reference interprets the same
op list with numpy formulas written here, independently of tdflow's kernels.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import tdflow

UNARY = {
    "relu": lambda x: np.maximum(x, 0),
    "negative": np.negative,
    "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "square": np.square,
}
BINARY = {
    "broadcast_add": np.add,
    "broadcast_sub": np.subtract,
    "broadcast_mul": np.multiply,
    "broadcast_maximum": np.maximum,
}
SHAPES = [(6, 5), (5,), (1, 5), (6, 1)]


def ttype(shape):
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


def random_program(rng: random.Random):
    args = [(f"a{i}", rng.choice(SHAPES)) for i in range(rng.randint(1, 3))]
    values = [(f"%{n}", s) for n, s in args]
    lines, ops = [], []
    for i in range(rng.randint(1, 10)):
        if rng.random() < 0.5:
            name = rng.choice(list(UNARY))
            x = rng.choice(values)
            ops.append((name, [x[0]]))
            shape = x[1]
            lines.append(f'  %v{i} = "tdflow.{name}"({x[0]}) : ({ttype(shape)}) -> {ttype(shape)}')
        else:
            name = rng.choice(list(BINARY))
            x, y = rng.choice(values), rng.choice(values)
            shape = tuple(np.broadcast_shapes(x[1], y[1]))
            ops.append((name, [x[0], y[0]]))
            lines.append(f'  %v{i} = "tdflow.{name}"({x[0]}, {y[0]}) : ({ttype(x[1])}, '
                         f'{ttype(y[1])}) -> {ttype(shape)}')
        values.append((f"%v{i}", shape))
    results = rng.sample(values[len(args):], rng.randint(1, min(2, len(values) - len(args))))
    sig = ", ".join(f"%{n}: {ttype(s)}" for n, s in args)
    rets = ", ".join(v for v, _ in results)
    rtypes = ", ".join(ttype(s) for _, s in results)
    text = (f"func.func @r({sig}) -> ({rtypes}) {{\n" + "\n".join(lines)
            + f"\n  return {rets} : {rtypes}\n}}\n")
    return text, args, ops, [v for v, _ in results]


def reference(args, ops, results, arrays):
    env = {f"%{n}": a.astype(np.float64) for (n, _), a in zip(args, arrays)}
    for i, (name, operands) in enumerate(ops):
        fn = UNARY.get(name) or BINARY[name]
        env[f"%v{i}"] = fn(*(env[o] for o in operands))
    return [env[r] for r in results]


UNFUSED = "infer-shapes,canonicalize,select-kernels{device=cpu},plan-memory"
TILED = "infer-shapes,canonicalize,fuse-elementwise,select-kernels{device=cpu},plan-memory{tile=4}"


@pytest.mark.parametrize("pipeline", [None, UNFUSED, TILED], ids=["fused", "unfused", "tiled"])
@pytest.mark.parametrize("seed", range(40))
def test_random_elementwise_program(seed, pipeline):
    rng = random.Random(seed)
    text, args, ops, results = random_program(rng)
    program = tdflow.compile(text, pipeline=pipeline)
    nprng = np.random.default_rng(seed)
    for _ in range(2):  # twice: buffers reused across calls must not leak state
        arrays = [nprng.standard_normal(s).astype(np.float32) for _, s in args]
        keep = [a.copy() for a in arrays]
        got = program(*arrays)
        got = got if isinstance(got, tuple) else (got,)
        for g, want in zip(got, reference(args, ops, results, arrays)):
            np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5, err_msg=text)
        for a, k in zip(arrays, keep):  # arguments are never written
            np.testing.assert_array_equal(a, k, err_msg=text)
