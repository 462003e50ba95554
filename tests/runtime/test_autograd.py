"""Eager autograd and graph-mode autodiff: the API, and both against numpy's own derivatives."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import numpy as np
import pytest
from finite_diff import central_differences
from tdflow.dialect.grad import GradError

import tdflow

F = tdflow.functional
DATA = Path(__file__).resolve().parents[1] / "data" / "gradlib"
rng = np.random.default_rng(0)


def t(a, grad=True):
    return tdflow.tensor(np.asarray(a, np.float64), requires_grad=grad)


def total(y):
    return F.reduce_sum(y, axis=[])


def test_backward_accumulates_into_leaves():
    x = t([1.0, 2.0, 3.0])
    total(F.mul(x, x)).backward()
    assert x.grad.numpy().tolist() == [2.0, 4.0, 6.0]
    total(F.mul(x, 3.0)).backward()  # a second backward adds
    assert x.grad.numpy().tolist() == [5.0, 7.0, 9.0]


def test_results_require_grad_and_have_grad_fn():
    x, c = t([1.0]), t([2.0], grad=False)
    y = F.mul(x, c)
    assert y.requires_grad and not y.is_leaf and repr(y.grad_fn) == "<broadcast_mul backward>"
    z = F.mul(c, c)
    assert not z.requires_grad and z.grad_fn is None


def test_no_grad_and_detach():
    x = t([1.0, 2.0])
    with tdflow.no_grad():
        y = F.exp(x)
        with tdflow.enable_grad():
            assert F.exp(x).requires_grad
    assert not y.requires_grad
    d = x.detach()
    assert not d.requires_grad and F.exp(d).grad_fn is None
    assert np.shares_memory(d.numpy(), x.numpy())


def test_graph_released_unless_retained():
    x = t([1.0, 2.0])
    y = total(F.exp(x))
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]))
    with pytest.raises(GradError, match="a second time"):
        y.backward()


def test_backward_errors():
    x = t([1.0, 2.0])
    with pytest.raises(GradError, match="one-element"):
        F.exp(x).backward()
    with pytest.raises(GradError, match="does not require a gradient"):
        t([1.0], grad=False).backward()
    with pytest.raises(TypeError, match="floating-point"):
        tdflow.tensor([1, 2], requires_grad=True)
    y = F.exp(x)
    y.backward(tdflow.tensor(np.array([1.0, 0.5])))
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0]) * [1.0, 0.5])
    with pytest.raises(GradError, match="shape"):
        F.exp(x).backward(tdflow.tensor(np.ones(3)))


def test_nograd_op_and_integer_inputs():
    logits, labels = t(rng.normal(size=(4, 5))), tdflow.tensor(np.array([0, 1, 2, 3]))
    prob, loss = F.sparse_softmax_cross_entropy(logits, labels, depth=5)
    total(loss).backward()
    p = np.exp(logits.numpy()) / np.exp(logits.numpy()).sum(1, keepdims=True)
    p[np.arange(4), labels.numpy()] -= 1
    np.testing.assert_allclose(logits.grad.numpy(), p, rtol=1e-10)
    assert labels.grad is None


def test_broadcasting_gradients_are_summed_back():
    x, b = t(rng.normal(size=(3, 4))), t(rng.normal(size=(4,)))
    total(F.mul(F.add(x, b), b)).backward()
    np.testing.assert_allclose(b.grad.numpy(), (x.numpy() + 2 * b.numpy()).sum(0))
    np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to(b.numpy(), (3, 4)))
    k = t(rng.normal(size=(3, 1)))
    total(F.mul(x, k)).backward()
    np.testing.assert_allclose(k.grad.numpy(), x.numpy().sum(1, keepdims=True))


def test_saved_tensors_are_only_those_the_gradient_reads():
    x = t(rng.normal(size=(1000,)))
    y = F.add(x, 1.0)  # d(x + 1) = dy: the forward value of x is not kept by the node
    z = F.exp(y)       # exp's gradient reads its input y
    node_y, node_z = y.grad_fn, z.grad_fn
    (saved_y,) = node_y.inputs.values()
    (saved_z,) = node_z.inputs.values()
    assert saved_y.numpy().strides == (0,)  # a shape, no memory
    assert saved_z.numpy().strides != (0,) and np.shares_memory(saved_z.numpy(), y.numpy())


def test_long_chain_does_not_recurse():
    x = t([0.5])
    y = x
    for _ in range(3000):
        y = F.mul(y, 1.0)
    y.backward()
    assert x.grad.numpy().tolist() == [1.0]


def test_graph_freed_after_backward():
    x = t(rng.normal(size=(10,)))
    y = total(F.tanh(x))
    ref = weakref.ref(F.tanh(x).grad_fn)
    gc.collect()
    assert ref() is None  # no cycle keeps a node alive once its results are gone
    y.backward()
    assert y.grad_fn.released


def test_activations_freed_by_backward_without_the_collector():
    # A backward's replay used to keep each node's saved tensors in a reference cycle (a
    # recursive closure), freed only when the garbage collector ran: a training step then
    # allocated fresh memory for every activation (issue 23).
    x = t(rng.normal(size=(4, 3)))
    w = t(rng.normal(size=(3, 5)))
    h = F.tanh(F.matmul(x, w))
    buf = weakref.ref(h.numpy())
    loss = total(F.mul(h, h))
    was = gc.isenabled()
    gc.disable()
    try:
        del h
        loss.backward()
        del loss
        assert buf() is None
        assert x.grad is not None and w.grad is not None
    finally:
        if was:
            gc.enable()


def test_a_trace_step_repeating_an_earlier_one_is_read_from_it():
    # batch normalization's gradient computes its normalized input twice: the replay runs it
    # once (as graph mode's CSE does); a signed zero in an attribute keeps two steps apart
    from tdflow.dialect.context import standard_context
    from tdflow.runtime import autograd

    x = ("in", "x", None)
    steps = [("tdflow.relu", [x], {}), ("tdflow.relu", [x], {}),
             ("tdflow.broadcast_add", [("step", 0, 0), ("step", 1, 0)], {}),
             ("tdflow.scalar_mul", [("step", 2, 0)], {"has_float_operand": True,
                                                     "float_operand": 0.0}),
             ("tdflow.scalar_mul", [("step", 2, 0)], {"has_float_operand": True,
                                                     "float_operand": -0.0})]
    out, grads, _ = autograd._compile_trace(standard_context(), steps,
                                            {"x": ("step", 4, 0), "y": ("step", 1, 0)}, {})
    assert [s[0][0] for s in out] == ["tdflow.relu", "tdflow.broadcast_add",
                                      "tdflow.scalar_mul", "tdflow.scalar_mul"]
    add_operands = out[1][2]
    assert add_operands[0] == add_operands[1] == (autograd._STEP, 0, 0)
    assert dict(grads) == {"x": (autograd._STEP, 3, 0), "y": (autograd._STEP, 0, 0)}


def test_user_library_gradients_match_numpy():
    lib = tdflow.load_ops(DATA / "grad_ops.td", hooks=[DATA / "grad_hooks.py"])
    G = lib.functional
    xn = rng.normal(size=(3, 4))
    x = t(xn)
    total(G.glib.softplus(x, beta=2.0)).backward()  # derived from the formula
    np.testing.assert_allclose(x.grad.numpy(), 1 / (1 + np.exp(-2 * xn)), rtol=1e-12)
    x.grad = None
    total(G.glib.cube(x)).backward()  # a Python rule
    np.testing.assert_allclose(x.grad.numpy(), 3 * xn ** 2, rtol=1e-12)
    a, b = t(rng.normal(size=(3, 4))), t(rng.normal(size=(4, 2)))
    total(G.glib.scaled_matmul(a, b, k=3.0)).backward()  # a grad field
    np.testing.assert_allclose(a.grad.numpy(), 3 * np.ones((3, 2)) @ b.numpy().T, rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), 3 * a.numpy().T @ np.ones((3, 2)), rtol=1e-12)


MLP = """func.func @mlp(%x: tensor<8x6xf64>, %w1: tensor<6x5xf64>, %b1: tensor<5xf64>,
                     %w2: tensor<5x3xf64>, %labels: tensor<8xi64>) -> tensor<f64> {
  %0 = "tdflow.matmul"(%x, %w1) : (tensor<8x6xf64>, tensor<6x5xf64>) -> tensor<8x5xf64>
  %1 = "tdflow.bias_add"(%0, %b1) {axis = 1 : si32} : (tensor<8x5xf64>, tensor<5xf64>) -> tensor<8x5xf64>
  %2 = "tdflow.tanh"(%1) : (tensor<8x5xf64>) -> tensor<8x5xf64>
  %3 = "tdflow.matmul"(%2, %w2) : (tensor<8x5xf64>, tensor<5x3xf64>) -> tensor<8x3xf64>
  %p, %l = "tdflow.sparse_softmax_cross_entropy"(%3, %labels) {depth = 3 : si64} : (tensor<8x3xf64>, tensor<8xi64>) -> (tensor<8x3xf64>, tensor<8xf64>)
  %4 = "tdflow.reduce_sum"(%l) {axis = [0 : si32]} : (tensor<8xf64>) -> tensor<f64>
  return %4 : tensor<f64>
}
"""


def _mlp_args():
    r = np.random.default_rng(1)
    return [r.normal(size=(8, 6)), r.normal(size=(6, 5)), r.normal(size=(5,)),
            r.normal(size=(5, 3)), r.integers(0, 3, size=8)]


def test_value_and_grad_matches_eager_bit_for_bit():
    args = _mlp_args()
    f = tdflow.value_and_grad(MLP)
    assert f.wrt == ("x", "w1", "b1", "w2")
    loss, grads = f(*args)
    ts = [t(a) for a in args[:4]] + [tdflow.tensor(args[4])]
    x, w1, b1, w2, labels = ts
    h = F.tanh(F.bias_add(F.matmul(x, w1), b1, axis=1))
    _, per = F.sparse_softmax_cross_entropy(F.matmul(h, w2), labels, depth=3)
    eager_loss = total(per)
    eager_loss.backward()
    assert float(loss) == float(eager_loss.numpy())
    for g, leaf in zip(grads, ts[:4]):
        assert np.array_equal(g, leaf.grad.numpy())


def test_value_and_grad_against_finite_differences():
    args = _mlp_args()
    f = tdflow.value_and_grad(MLP, wrt=["w1", "b1"])
    _, (gw1, gb1) = f(*args)
    plain = tdflow.compile(MLP)

    def loss(w1, b1):
        return float(plain(args[0], w1, b1, args[3], args[4]))

    np.testing.assert_allclose(gw1, central_differences(lambda w: loss(w, args[2]), args[1]),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb1, central_differences(lambda b: loss(args[1], b), args[2]),
                               rtol=1e-6, atol=1e-8)


def test_autodiff_pass_prints_the_gradient_function():
    from tdflow.dialect.ir import parse_module, print_module
    from tdflow.runtime.compiled import lower

    m = parse_module(MLP, "<mlp>")
    lower(m, pipeline="autodiff{wrt=w1,b1},infer-shapes,canonicalize")
    text = print_module(m)
    assert "func.func @mlp_grad(%x: tensor<8x6xf64>" in text
    assert "%seed0: tensor<f64>) -> (tensor<f64>, tensor<6x5xf64>, tensor<5xf64>)" in text
    assert "tdflow.sparse_softmax_cross_entropy_grad" in text


def test_autodiff_errors():
    with pytest.raises(GradError, match="no argument %nope"):
        tdflow.value_and_grad(MLP, wrt=["nope"])
    with pytest.raises(GradError, match="not floating-point"):
        tdflow.value_and_grad(MLP, wrt=["labels"])


def test_sgd_step_updates_in_place_like_value_and_grad():
    args = _mlp_args()
    before = [a.copy() for a in args]
    _, grads = tdflow.value_and_grad(MLP, wrt=["w1", "b1", "w2"])(*args)
    step = tdflow.sgd_step(MLP, lr=0.5, wrt=["w1", "b1", "w2"])
    loss = step(*args)
    assert float(loss) == float(tdflow.compile(MLP)(*before))  # the loss before the update
    for i, g in zip((1, 2, 3), grads):
        np.testing.assert_allclose(args[i], before[i] - 0.5 * g, rtol=1e-12, atol=1e-15)
    assert np.array_equal(args[0], before[0]) and np.array_equal(args[4], before[4])
    assert "tdflow.sgd_update" in str(step.program.lowering.module)


def test_backward_after_an_in_place_update_is_refused():
    w = t(rng.normal(size=(3, 2)))
    loss = total(F.mul(F.exp(w), 2.0))  # exp saves w
    ok = total(F.add(w, 1.0))  # add's gradient reads nothing: an update does not matter
    with tdflow.no_grad():
        F.sgd_update(w, tdflow.tensor(np.ones((3, 2))), learning_rate_val=0.1)
    ok.backward()
    with pytest.raises(GradError, match="'tdflow.exp' saved its input 'x'.*modified in place"):
        loss.backward()
