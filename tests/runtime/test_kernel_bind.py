"""Kernels bound to one launch of a plan (the executor's ``bind`` protocol) give the general
kernel's values bit for bit: NaN (payloads and signs), inf, signed zeros, strided and in-place
operands, and the cases a bound kernel hands back to the general path (labels out of range).
A whole training step with binding on and off agrees bit for bit."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from tdflow.runtime import executor
from tdflow.runtime.kernels.elementwise import bias_add, fused_elementwise
from tdflow.runtime.kernels.linalg import matmul
from tdflow.runtime.kernels.optim import sgd_update
from tdflow.runtime.kernels.reduce import reduce_sum, reduce_sum_like
from tdflow.runtime.kernels.registry import complete_kernel_attrs, select_kernel
from tdflow.runtime.kernels.shape import broadcast_like
from tdflow.runtime.kernels.softmax import (
    sparse_softmax_cross_entropy,
    sparse_softmax_cross_entropy_grad,
)

import tdflow

RNG = np.random.default_rng(23)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf inputs


def _special(shape: tuple[int, ...], dt: str) -> np.ndarray:
    """Random values with NaNs (both signs, a payload), infs and signed zeros sprinkled in."""
    a = np.asarray(RNG.standard_normal(shape)).astype(dt)
    if a.dtype.kind == "f" and a.size >= 8:
        flat = a.reshape(-1)
        idx = RNG.choice(a.size, size=min(a.size, 8), replace=False)
        nan = np.array(np.nan, dt)
        neg_nan = -nan
        payload = nan.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]) | 5
        flat[idx] = [np.inf, -np.inf, 0.0, -0.0, nan, neg_nan,
                     payload.view(a.dtype), {"f2": 1e-7, "f4": 1e-40}.get(dt, 1e-310)][:len(idx)]
    return a


def _bits(a: np.ndarray) -> bytes:
    a = np.ascontiguousarray(a)
    return a.dtype.str.encode() + repr(a.shape).encode() + a.tobytes()


def _specs(arrays):
    return [None if a is None else (a.shape, a.dtype) for a in arrays]


def _check(fn, attrs, inputs, out_specs, bound_expected=True, in_place=None,
           dead=frozenset()):
    """The bound kernel's outputs (and in-place inputs) equal the general kernel's; the
    inputs in ``dead`` are scratch the bound kernel may overwrite."""
    attrs = complete_kernel_attrs(fn_op(fn), attrs) if fn_op(fn) else attrs
    run = fn.bind(attrs, _specs(inputs), out_specs, dead)
    assert (run is not None) == bound_expected
    if run is None:
        return
    gen_in = [None if a is None else a.copy() for a in inputs]
    bnd_in = [None if a is None else a.copy() for a in inputs]
    gen_out = [np.empty(s, d) for s, d in out_specs]
    bnd_out = [np.empty(s, d) for s, d in out_specs]
    if in_place is not None:  # output o is input i's buffer
        o, i = in_place
        gen_out[o], bnd_out[o] = gen_in[i], bnd_in[i]
    got_gen = fn(attrs, gen_in, gen_out)
    got_bnd = run(attrs, bnd_in, bnd_out)
    assert len(got_gen) == len(got_bnd)
    for g, b, go in zip(got_gen, got_bnd, gen_out):
        assert b.shape == go.shape
        np.copyto(go, g, casting="unsafe")  # the executor's settle
        assert _bits(b) == _bits(go)
    for i, (g, b) in enumerate(zip(gen_in, bnd_in)):
        assert g is None or i in dead or _bits(g) == _bits(b)


_OPS = {matmul: "tdflow.matmul", bias_add: "tdflow.bias_add", reduce_sum: "tdflow.reduce_sum",
        reduce_sum_like: "tdflow.reduce_sum_like", broadcast_like: "tdflow.broadcast_like",
        sparse_softmax_cross_entropy: "tdflow.sparse_softmax_cross_entropy",
        sparse_softmax_cross_entropy_grad: "tdflow.sparse_softmax_cross_entropy_grad",
        sgd_update: "tdflow.sgd_update"}


def fn_op(fn):
    return _OPS.get(fn)


@pytest.mark.parametrize("dt", ["f4", "f8", "i4"])
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul(dt, ta, tb):
    m, k, n = 5, 7, 3
    a = _special((k, m) if ta else (m, k), dt)
    b = _special((n, k) if tb else (k, n), dt)
    _check(matmul, {"transpose_a": ta, "transpose_b": tb}, [a, b], [((m, n), np.dtype(dt))])
    # a strided operand (a column slice) is read as the general path reads it
    wide = _special((a.shape[0], a.shape[1] * 2), dt)[:, ::2]
    _check(matmul, {"transpose_a": ta, "transpose_b": tb}, [wide, b], [((m, n), np.dtype(dt))])


def test_matmul_cases_left_to_the_general_path():
    a = _special((2, 2), "f4")
    spec = [((2, 2), np.dtype("f4"))]
    _check(matmul, {"alpha": 2.0}, [a, a], spec, bound_expected=False)
    _check(matmul, {}, [a, a, a], spec, bound_expected=False)  # accumulates into an input
    h = a.astype(np.float16)
    _check(matmul, {}, [h, h], [((2, 2), np.dtype("f2"))], bound_expected=False)


@pytest.mark.parametrize("shape,axis", [((6, 10), 1), ((6, 10), 0), ((2, 3, 4), 1)])
def test_bias_add(shape, axis):
    a = _special(shape, "f4")
    b = _special((shape[axis],), "f4")
    _check(bias_add, {"axis": axis}, [a, b], [(shape, np.dtype("f4"))])
    _check(bias_add, {"axis": axis}, [a, b], [(shape, np.dtype("f4"))], in_place=(0, 0))


@pytest.mark.parametrize("expr", ["max(add(in0, in1), 0)", "where(gt(in0, 0), in1, 0)",
                                  "mul(in0, 0.015625)"])
def test_fused_elementwise(expr):
    x, y = _special((64, 256), "f4"), _special((64, 256), "f4")
    ins = [x, y[0]] if expr.startswith("max") else [x, y][:1 + ("in1" in expr)]
    attrs = {"expr": expr, "out_dtype": "f32"}
    _check(fused_elementwise, attrs, ins, [((64, 256), np.dtype("f4"))])
    _check(fused_elementwise, attrs, ins, [((64, 256), np.dtype("f4"))], in_place=(0, 0))


def test_formula_kernel():
    k = select_kernel("tdflow.scalar_mul", "cpu", ("f32",),
                      {"has_float_operand": True, "float_operand": 0.015625})
    attrs = complete_kernel_attrs("tdflow.scalar_mul",
                                  {"has_float_operand": True, "float_operand": 0.015625})
    for shape in ((), (64,)):
        x = _special(shape, "f4") if shape else np.array(np.nan, np.float32)
        _check(k.fn, attrs, [x], [(shape, np.dtype("f4"))])


@pytest.mark.parametrize("shape,axes,keepdims", [((64,), [0], False), ((6, 10), [0], False),
                                                 ((6, 10), [1], True), ((6, 10), [], False),
                                                 ((2, 3, 4), [0, 2], True),
                                                 ((64, 32, 4, 4), [0, 2, 3], True),
                                                 ((6, 5, 7, 3), [0, 2, 3], False)])
@pytest.mark.parametrize("dt", ["f4", "f8", "i4"])
def test_reduce_sum(shape, axes, keepdims, dt):
    x = _special(shape, dt)
    ax = tuple(axes) or tuple(range(len(shape)))
    out = tuple(1 if i in ax else n for i, n in enumerate(shape)) if keepdims else \
        tuple(n for i, n in enumerate(shape) if i not in ax)
    # the (outer, C, inner) sums of _sum_but_one are bound to its einsum for floats; integer
    # ones keep the general path (numpy's sum)
    kept = [i for i in range(len(shape)) if i not in ax]
    bound = not (len(ax) >= 2 and len(kept) == 1 and kept[0] != len(shape) - 1) or dt != "i4"
    _check(reduce_sum, {"axis": axes, "keepdims": keepdims}, [x], [(out, np.dtype(dt))],
           bound_expected=bound)


def test_reduce_sum_half_keeps_the_general_path():
    x = _special((4, 4), "f2")
    _check(reduce_sum, {"axis": [0], "keepdims": False}, [x], [((4,), np.dtype("f2"))],
           bound_expected=False)


@pytest.mark.parametrize("shape,axes,like", [((64, 10), [0], (10,)), ((64, 256), [0], (256,)),
                                             ((4, 5), [1], (4,)), ((4, 5), [1], (4, 1))])
def test_reduce_sum_like(shape, axes, like):
    x = _special(shape, "f4")
    _check(reduce_sum_like, {"axis": axes}, [x, np.empty(like, np.float32)],
           [(like, np.dtype("f4"))], bound_expected=len(like) == 1)


@pytest.mark.parametrize("xs,like,axes", [((), (64,), [0]), ((3,), (2, 3), []),
                                          ((2,), (2, 3), [1]), ((1, 3), (4, 3), [])])
def test_broadcast_like(xs, like, axes):
    x = _special(xs, "f4") if xs else np.array(-0.0, np.float32)
    _check(broadcast_like, {"broadcast_axes": axes}, [x, np.empty(like, np.float32)],
           [(like, np.dtype("f4"))])


@pytest.mark.parametrize("dt", ["f4", "f8"])
@pytest.mark.parametrize("labels", ["in range", "out of range", "int32", "bool", "int64 view"])
def test_sparse_softmax_cross_entropy(dt, labels):
    n, depth = 64, 10
    x = _special((n, depth), dt)
    x[3] = 1e30  # a row whose shifted logits are all zero
    lab = RNG.integers(0, depth, n)
    if labels == "out of range":
        lab[[1, 5]] = [-1, depth]
    if labels == "int32":
        lab = lab.astype(np.int32)
    if labels == "bool":  # i1 labels index as 0 and 1, never as a mask
        lab = lab % 2 == 1
    if labels == "int64 view":  # strided labels: the unsigned view reads the same elements
        lab = np.stack([lab, -lab - 1], axis=1)[:, 0]
    specs = [((n, depth), np.dtype(dt)), ((n,), np.dtype(dt))]
    _check(sparse_softmax_cross_entropy, {"depth": depth}, [x, lab], specs)
    dy = _special((n,), dt)
    prob = np.abs(_special((n, depth), dt))
    _check(sparse_softmax_cross_entropy_grad, {"depth": depth}, [lab, dy, prob],
           [((n, depth), np.dtype(dt))])


@pytest.mark.parametrize("shape", [(784, 256), (10,)])
def test_sgd_update(shape):
    w, g = _special(shape, "f4"), _special(shape, "f4")
    _check(sgd_update, {"learning_rate_val": 0.01}, [w, g], [])
    _check(sgd_update, {"learning_rate_val": 0.01}, [w, g], [], dead=frozenset({1}))
    _check(sgd_update, {"learning_rate_val": 0.01, "l2": 0.5}, [w, g], [],
           bound_expected=False)


def test_training_step_bound_equals_unbound(monkeypatch):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import train_bench as tb

    x, y, params = tb.make_data(3)
    special = x.copy()
    special[0, :4] = [np.nan, np.inf, -np.inf, -0.0]

    def run_steps(x):
        st = tdflow.sgd_step(tb.program(), lr=tb.LR, wrt=list(tb.PARAMS))
        p = [params[k].copy() for k in tb.PARAMS]
        losses = [st(x, y, *p) for _ in range(3)]
        return [_bits(v) for v in (*losses, *p)]

    bound = [run_steps(x), run_steps(special)]
    plan = tdflow.sgd_step(tb.program(), lr=tb.LR, wrt=list(tb.PARAMS)).program.plan
    dead = executor.dead_inputs(plan.launches, {a.buffer for a in plan.arguments})
    # the w1 gradient's buffer dies at its update, which scales it in place
    assert any(ln.op == "tdflow.sgd_update" and ln.inputs[1] in d
               for ln, d in zip(plan.launches, dead))
    monkeypatch.setattr(executor, "bound_kernel", lambda fn, ln, dtypes, dead: fn)
    assert [run_steps(x), run_steps(special)] == bound


def test_training_step_on_the_engine_equals_direct():
    """With dead inputs written in place, the engine orders the write after every read."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import train_bench as tb

    x, y, params = tb.make_data(4)
    got = []
    for mode in ("direct", "engine"):
        st = tdflow.sgd_step(tb.program(), lr=tb.LR, wrt=list(tb.PARAMS), mode=mode)
        p = [params[k].copy() for k in tb.PARAMS]
        got.append([_bits(v) for v in (*[st(x, y, *p) for _ in range(3)], *p)])
    assert got[0] == got[1]


@pytest.mark.parametrize("dt", ["f4", "f8"])
def test_softmax(dt):
    from tdflow.runtime.kernels.softmax import softmax

    x = _special((64, 10), dt)
    x[5] = -np.inf  # a row of -inf: NaN, as the general path gives
    _check(softmax, {}, [x], [((64, 10), np.dtype(dt))])
    _check(softmax, {}, [x], [((64, 10), np.dtype(dt))], in_place=(0, 0))
    _check(softmax, {}, [x.astype(np.float16)], [((64, 10), np.dtype("f2"))],
           bound_expected=False)
