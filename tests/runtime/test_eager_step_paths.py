"""The eager training step's shorter paths (issue 23, lever 5), each against the path it
replaces or against numpy, bit for bit:

* ``sgd_update`` called as ``F.sgd_update(w, g, learning_rate_val=...)`` binds its attribute
  values alone and runs the kernel's ``bind`` specialisation, absent optional operands
  included; given optional operands keep the general kernel.
* An op of several results (the loss and its softmax) runs at once on ready inputs, as a
  one-result op does (no vars for its results), and through the engine's queue when an input is
  pending.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from tdflow.dialect.context import standard_context
from tdflow.runtime import eager, eager_entry
from tdflow.runtime.eager import OpRunner
from tdflow.runtime.engine import ThreadedEngine, get_engine, set_engine
from tdflow.runtime.kernels.optim import sgd_update as sgd_kernel
from tdflow.runtime.kernels.registry import complete_kernel_attrs
from tdflow.runtime.tensor_glue import var_of

import tdflow

F = tdflow.functional
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the special values
rng = np.random.default_rng(23)
SPECIAL = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, 3e38, -3e38, 1.5],
                   np.float32)


def values(*shape: int, dtype=np.float32) -> np.ndarray:
    a = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(dtype)
    flat = a.reshape(-1)
    flat[: min(len(SPECIAL), flat.size)] = SPECIAL[: flat.size].astype(dtype)
    return a


def bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lr", [0.1, -0.0, 3e-7])
def test_sgd_update_through_functional_equals_numpy(dtype, lr, engine):
    w0, g0 = values(40, 3, dtype=dtype), values(40, 3, dtype=dtype)
    w, g = tdflow.tensor(w0.copy()), tdflow.tensor(g0.copy())
    F.sgd_update(w, g, learning_rate_val=lr)
    # learning_rate_val is an f32 attribute: the step uses it rounded to float32
    want = np.subtract(w0, np.multiply(g0, dtype(np.float32(lr))))
    assert bits(w.numpy()) == bits(want)
    assert bits(g.numpy()) == bits(g0)  # the gradient is read, never scaled in place


def test_an_eager_sgd_update_runs_the_bound_kernel(monkeypatch):
    """The eager call passes all six operand slots (``None`` where absent): the entry holds
    the bind specialisation, and it computes what the general kernel does."""
    ctx = standard_context()

    def run(bound: bool):
        runner = OpRunner(ctx.lookup("tdflow.sgd_update"), ("learning_rate_val",), ctx)
        with monkeypatch.context() as m:
            if not bound:
                m.setattr(eager_entry, "bind_for_entry", lambda fn, *a: fn)
            w = tdflow.tensor(w0.copy())
            runner.run((w, tdflow.tensor(g0), None, None, None, None), (0.375,))
            get_engine().wait_all()
        (entry,) = runner.cache.values()
        return w.numpy(), entry.fn

    w0, g0 = values(9, 5), values(9, 5)
    got, fast = run(True)
    want, general = run(False)
    assert general is sgd_kernel and fast is not sgd_kernel
    assert bits(got) == bits(want)


def test_sgd_update_with_padded_absent_operands_binds():
    attrs = complete_kernel_attrs("tdflow.sgd_update", {"learning_rate_val": 0.25})
    spec = ((5, 4), np.dtype(np.float32))
    fast = sgd_kernel.bind(attrs, [spec, spec, None, None, None, None], [], frozenset())
    assert fast is not None
    w0, g0 = values(5, 4), values(5, 4)
    w1, w2 = w0.copy(), w0.copy()
    fast(attrs, [w1, g0, None, None, None, None], [])
    sgd_kernel(attrs, [w2, g0, None, None, None, None], [])
    assert bits(w1) == bits(w2)
    # an optional operand given (a learning-rate tensor) keeps the general kernel
    assert sgd_kernel.bind(attrs, [spec, spec, None, ((1,), np.dtype(np.float32)), None, None],
                           [], frozenset()) is None


def test_sgd_update_with_a_learning_rate_tensor_keeps_the_general_path(engine):
    w0, g0 = values(6), values(6)
    w = tdflow.tensor(w0.copy())
    F.sgd_update(w, tdflow.tensor(g0), None, tdflow.tensor(np.float32([0.5])))
    want = w0.copy()
    attrs = complete_kernel_attrs("tdflow.sgd_update", {})
    sgd_kernel(attrs, [want, g0, None, np.float32([0.5]), None, None], [])
    assert bits(w.numpy()) == bits(want)


def test_sgd_update_positional_and_keyword_forms_agree(engine):
    w0, g0 = values(7), values(7)
    a, b = tdflow.tensor(w0.copy()), tdflow.tensor(w0.copy())
    F.sgd_update(a, tdflow.tensor(g0), learning_rate_val=0.5, l2=0.25)
    F.sgd_update(b, tdflow.tensor(g0), None, None, None, None, 0.5, 1.0, 1.0, 0.0, 0.25)
    assert bits(a.numpy()) == bits(b.numpy())
    with pytest.raises(TypeError, match="learning_rate_vall"):
        F.sgd_update(a, tdflow.tensor(g0), learning_rate_vall=0.5)


def _xent(bound_general: bool, z: np.ndarray, labels: np.ndarray, monkeypatch) -> list:
    ctx = standard_context()
    runner = OpRunner(ctx.lookup("tdflow.sparse_softmax_cross_entropy"), ("depth",), ctx)
    with monkeypatch.context() as m:
        if bound_general:  # the pre-existing path: no run at once for several results
            m.setattr(eager_entry, "NOW_COST", -1)
        outs = runner.run((tdflow.tensor(z), tdflow.tensor(labels)), (z.shape[1],))
    return outs


@pytest.mark.parametrize("labels", [[0, 2, 1, 3], [0, 5, -1, 3]])  # in range, and not
def test_a_tiny_op_of_two_results_runs_at_once_and_equals_the_queued_path(labels, engine,
                                                                         monkeypatch):
    z, lab = values(4, 4), np.array(labels, np.int64)
    now = _xent(False, z, lab, monkeypatch)
    queued = _xent(True, z, lab, monkeypatch)
    assert all(t._sync is None for t in now)  # ran at once: no var made for either result
    assert all(t._sync is not None for t in queued)
    assert [bits(t.numpy()) for t in now] == [bits(t.numpy()) for t in queued]


def test_a_two_result_op_waits_for_a_pending_write_of_its_input():
    engine = ThreadedEngine(workers=1)
    old = set_engine(engine)
    try:
        z = tdflow.tensor(np.zeros((4, 3), np.float32))
        buf = z.buffer
        release = threading.Event()
        fill = values(4, 3)

        def slow_fill():
            release.wait(5)
            buf[:] = fill

        engine.push(slow_fill, writes=(var_of(z),), name="fill", inline=False)
        labels = tdflow.tensor(np.array([0, 1, 2, 1]))
        loss, prob = F.sparse_softmax_cross_entropy(z, labels, depth=3)
        assert loss._sync is not None and prob._sync is not None  # queued behind the fill
        release.set()
        want = F.sparse_softmax_cross_entropy(tdflow.tensor(fill), labels, depth=3)
        assert [bits(t.numpy()) for t in (loss, prob)] == [bits(t.numpy()) for t in want]
    finally:
        engine.wait_all()
        set_engine(old)


def test_the_eager_step_with_two_result_loss_equals_graph_mode_gradients(engine):
    x, w = values(8, 5) / 1e3, rng.standard_normal((5, 3)).astype(np.float32)
    x[np.isnan(x) | np.isinf(x)] = 0.5
    labels = np.array([0, 1, 2, 0, 1, 2, 0, 1])
    wt = tdflow.tensor(w, requires_grad=True)
    _, per = F.sparse_softmax_cross_entropy(F.matmul(tdflow.tensor(x), wt),
                                            tdflow.tensor(labels), depth=3)
    F.reduce_sum(per, axis=[0]).backward()
    z = x @ w
    e = np.exp(z - z.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    p[np.arange(8), labels] -= 1
    np.testing.assert_allclose(wt.grad.numpy(), x.T @ p, rtol=1e-5, atol=1e-6)
    assert get_engine() is engine


MLP = """func.func @mlp(%x: tensor<8x6xf32>, %w1: tensor<6x5xf32>, %b1: tensor<5xf32>,
                     %w2: tensor<5x3xf32>, %labels: tensor<8xi64>) -> tensor<f32> {
  %0 = "tdflow.matmul"(%x, %w1) : (tensor<8x6xf32>, tensor<6x5xf32>) -> tensor<8x5xf32>
  %1 = "tdflow.bias_add"(%0, %b1) {axis = 1 : si32} : (tensor<8x5xf32>, tensor<5xf32>) -> tensor<8x5xf32>
  %2 = "tdflow.relu"(%1) : (tensor<8x5xf32>) -> tensor<8x5xf32>
  %3 = "tdflow.matmul"(%2, %w2) : (tensor<8x5xf32>, tensor<5x3xf32>) -> tensor<8x3xf32>
  %p, %l = "tdflow.sparse_softmax_cross_entropy"(%3, %labels) {depth = 3 : si64} : (tensor<8x3xf32>, tensor<8xi64>) -> (tensor<8x3xf32>, tensor<8xf32>)
  %4 = "tdflow.reduce_sum"(%l) {axis = [0 : si32]} : (tensor<8xf32>) -> tensor<f32>
  return %4 : tensor<f32>
}
"""


def _eager_grads(args: list) -> list[bytes]:
    ts = [tdflow.tensor(a, requires_grad=True) for a in args[:4]] + [tdflow.tensor(args[4])]
    x, w1, b1, w2, labels = ts
    h = F.relu(F.bias_add(F.matmul(x, w1), b1, axis=1))
    _, per = F.sparse_softmax_cross_entropy(F.matmul(h, w2), labels, depth=3)
    F.reduce_sum(per, axis=[0]).backward()
    return [bits(leaf.grad.numpy()) for leaf in ts[:4]]


def test_replayed_backwards_equal_graph_mode_bit_for_bit(engine, monkeypatch):
    """The first backward of a trace runs its steps through the emitter's general call, later
    ones through the calls bound to the steps (``EagerEmitter.fixed``); every one of them, and
    a run with the bound calls switched off, equals graph mode's gradients bit for bit."""
    r = np.random.default_rng(3)
    args = [r.normal(size=(8, 6)).astype(np.float32), r.normal(size=(6, 5)).astype(np.float32),
            r.normal(size=(5,)).astype(np.float32), r.normal(size=(5, 3)).astype(np.float32),
            r.integers(0, 3, size=8)]
    args[0][0, :3] = [-0.0, 0.0, 1e-45]  # signed zeros and a subnormal through relu's gradient
    _, want = tdflow.value_and_grad(MLP)(*args)
    want = [bits(np.asarray(g)) for g in want]
    from tdflow.runtime import autograd

    made = []
    real = autograd.EagerEmitter.fixed

    def counting(self, key, vals):
        made.append(key[0])
        return real(self, key, vals)

    monkeypatch.setattr(autograd.EagerEmitter, "fixed", counting)
    monkeypatch.setattr(autograd, "_TRACES", {})  # traced anew: the first replay, then the rest
    for _ in range(3):
        assert _eager_grads(args) == want
    assert {"tdflow.fused_elementwise", "tdflow.matmul"} <= set(made)  # bound calls ran
    monkeypatch.setattr(autograd.EagerEmitter, "fixed",
                        lambda self, key, vals: lambda ops: self.run(key, vals, ops))
    assert _eager_grads(args) == want


def test_a_value_read_by_consumers_at_several_depths_gets_every_gradient(engine):
    """The backward order puts a node after every consumer of its results, however the
    consumers are reached (a diamond whose arms have different lengths, and a fan-out of 3)."""
    a0 = np.array([0.5, -1.5, 2.0], np.float64)
    x = tdflow.tensor(a0, requires_grad=True)
    a = F.mul(x, x)                 # a = x^2
    b = F.mul(F.mul(a, a), a)       # a^3, through a longer arm
    c = F.add(b, a)                 # a^3 + a
    d = F.mul(c, F.relu(a))         # (a^3 + a) * a = a^4 + a^2
    F.reduce_sum(d, axis=[0]).backward()
    # d/dx (x^8 + x^4) = 8 x^7 + 4 x^3
    np.testing.assert_allclose(x.grad.numpy(), 8 * a0 ** 7 + 4 * a0 ** 3, rtol=1e-12)


def test_gradient_traces_are_shared_by_equal_applications_and_kept_apart_otherwise(
        engine, monkeypatch):
    from tdflow.runtime import autograd

    monkeypatch.setattr(autograd, "_TRACES", {})

    def step(scale: float) -> np.ndarray:
        w = tdflow.tensor(np.array([1.0, -2.0, 3.0], np.float32), requires_grad=True)
        y = F.scalar_mul(w, has_float_operand=True, float_operand=scale)
        F.reduce_sum(F.mul(y, y), axis=[0]).backward()
        return w.grad.numpy()

    step(0.5)
    n = len(autograd._TRACES)
    step(0.5)
    assert len(autograd._TRACES) == n  # the same op, attributes and types: the same traces
    np.testing.assert_array_equal(step(0.25), np.float32([0.125, -0.25, 0.375]))
    assert len(autograd._TRACES) > n  # another attribute value: its own trace
    np.testing.assert_array_equal(step(2.0), np.float32([8.0, -16.0, 24.0]))


def test_the_update_form_orders_reads_before_and_after_and_refuses_what_run_refuses(engine):
    w0, g0 = values(6), values(6)
    w, g = tdflow.tensor(w0.copy()), tdflow.tensor(g0.copy())
    before = F.relu(w)  # read before the update
    F.sgd_update(w, g, learning_rate_val=0.5)
    F.sgd_update(w, g, learning_rate_val=0.5)  # the second call: the update form
    after = F.relu(w)
    want = np.subtract(w0, np.multiply(g0, np.float32(0.5)))
    want = np.subtract(want, np.multiply(g0, np.float32(0.5)))
    assert bits(before.numpy()) == bits(np.maximum(w0, np.float32(0)))
    assert bits(w.numpy()) == bits(want)
    assert bits(after.numpy()) == bits(np.maximum(want, np.float32(0)))
    # the same tensor as model and gradient: w -= lr * w
    F.sgd_update(g, g, learning_rate_val=0.25)
    F.sgd_update(g, g, learning_rate_val=0.25)
    twice = np.subtract(g0, np.multiply(g0, np.float32(0.25)))
    assert bits(g.numpy()) == bits(np.subtract(twice, np.multiply(twice, np.float32(0.25))))
    ro = np.ones(3, np.float32)
    F.sgd_update(tdflow.tensor(ro), tdflow.tensor(ro), learning_rate_val=0.5)  # entry made
    ro.flags.writeable = False
    with pytest.raises(eager.EagerError, match="read-only"):
        F.sgd_update(tdflow.Tensor.from_numpy(ro), tdflow.tensor(np.ones(3, np.float32)),
                     learning_rate_val=0.5)


def test_a_backward_after_the_update_form_is_refused(engine):
    w = tdflow.tensor(np.ones(3, np.float32), requires_grad=True)
    g = tdflow.tensor(np.ones(3, np.float32))
    with tdflow.no_grad():
        F.sgd_update(w, g, learning_rate_val=0.5)  # a first call: entry made
    y = F.reduce_sum(F.mul(w, w), axis=[0])
    with tdflow.no_grad():
        F.sgd_update(w, g, learning_rate_val=0.5)  # the update form: bumps the version
    with pytest.raises(tdflow.dialect.grad.GradError, match="modified in place"):
        y.backward()


def test_attribute_keys_tell_signed_zeros_and_nans_apart_inside_tuples():
    from tdflow.runtime.eager_call import attrs_cache_key

    plain = ((0, 1), 2.5, True, "x")
    assert attrs_cache_key(plain) is plain  # nothing to rewrite: the tuple itself
    assert attrs_cache_key(((0.0, 1.0),)) != attrs_cache_key(((-0.0, 1.0),))
    assert attrs_cache_key(((float("nan"),),)) == attrs_cache_key(((float("nan"),),))
    assert attrs_cache_key(((np.float64(-0.0),),)) != attrs_cache_key(((0.0,),))
    # eager calls that differ only there are separate entries, with their own results
    x = tdflow.tensor(np.float32([1.0, -2.0]))
    pos = F.scalar_mul(x, has_float_operand=True, float_operand=0.0).numpy()
    neg = F.scalar_mul(x, has_float_operand=True, float_operand=-0.0).numpy()
    assert bits(pos) == bits(np.float32([0.0, -0.0]))
    assert bits(neg) == bits(np.float32([-0.0, 0.0]))


def _reference_order(root) -> list:
    """Depth-first from ``root``, producers in operand order, reversed post-order (the order
    autograd has always accumulated gradients in, and graph mode's autodiff matches)."""
    order, seen = [], {id(root)}

    def visit(node):
        for e in node.edges.values():
            for edge in (e if isinstance(e, list) else (e,)):
                if edge is not None and edge[0] == "node" and id(edge[1]) not in seen:
                    seen.add(id(edge[1]))
                    visit(edge[1])
        order.append(node)

    visit(root)
    return order[::-1]


@pytest.mark.parametrize("seed", range(12))
def test_the_backward_order_is_the_depth_first_one(seed):
    """Random graphs with fan-out, shared producers at several depths and variadic operands:
    the order decides how contributions to a gradient are summed (rounding), so it must stay
    the one graph mode matches (tests/e2e/test_gpt.py compares whole runs)."""
    from tdflow.runtime import autograd

    r = np.random.default_rng(seed)
    x = tdflow.tensor(r.standard_normal(4).astype(np.float32), requires_grad=True)
    values = [x]
    for _ in range(25):
        kind = r.integers(0, 3)
        a, b = (values[i] for i in r.integers(0, len(values), 2))
        if kind == 0:
            values.append(F.mul(a, b))
        elif kind == 1:
            values.append(F.add(a, b))
        else:
            values.append(F.add_n([a, b, values[-1]]))
    root = F.reduce_sum(F.add_n(values[-3:]), axis=[0]).grad_fn
    assert [id(n) for n in autograd._topo(root)] == [id(n) for n in _reference_order(root)]
