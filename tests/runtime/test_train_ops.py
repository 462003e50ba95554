"""The ops of the reduce, pool, softmax and optim families (formerly ops/train.td), forward against independent numpy references (loops over
windows, the textbook formulas) and their errors: reduce_min, reduce_prod, avg_pool_2d,
adaptive_avg_pool2d (and their gradient ops), softmax_cross_entropy (and grad) and
adam_update, eager and compiled. Their gradients are checked by test_grad_ops.py
(grad_cases_train.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from tdflow.runtime.eager import EagerError

import tdflow

F = tdflow.functional
rng = np.random.default_rng(1313)
T = tdflow.tensor


# ---- reductions -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("axis,keep", [([1], False), ([0, 2], True), ([-1], False), ([], False),
                                       ([], True), ([-3, -1], True)])
def test_reduce_min_and_prod(dtype, axis, keep):
    x = (rng.normal(size=(2, 3, 4)) * 3).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        x = np.clip(x, -3, 3)
    ax = tuple(axis) if axis else None
    np.testing.assert_array_equal(F.reduce_min(T(x), axis=axis, keepdims=keep).numpy(),
                                  np.amin(x, axis=ax, keepdims=keep))
    got = F.reduce_prod(T(x), axis=axis, keepdims=keep).numpy()
    assert got.dtype == x.dtype
    np.testing.assert_allclose(got, np.prod(x, axis=ax, keepdims=keep), rtol=1e-6)


def test_reduce_min_nan_bool_and_empty_extent():
    x = np.array([[1.0, np.nan], [2.0, -1.0]], np.float32)
    assert np.isnan(F.reduce_min(T(x), axis=[1]).numpy()[0])
    b = np.array([[True, False], [True, True]])
    assert F.reduce_min(T(b), axis=[1]).numpy().tolist() == [False, True]
    e = np.zeros((2, 0), np.float32)
    assert F.reduce_min(T(e), axis=[1]).numpy().tolist() == [np.inf, np.inf]
    assert F.reduce_prod(T(e), axis=[1]).numpy().tolist() == [1.0, 1.0]


def test_reduce_prod_f16_and_gradient_at_zeros():
    x = np.array([[0.5, 2.0, 3.0]], np.float16)
    y = F.reduce_prod(T(x), axis=[1]).numpy()
    assert y.dtype == np.float16 and y.tolist() == [3.0]
    x = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]])
    t = T(x, requires_grad=True)
    F.reduce_sum(F.reduce_prod(t, axis=[1]), axis=[]).backward()
    np.testing.assert_array_equal(t.grad.numpy(),
                                  [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0], [8.0, 4.0, 2.0]])


def test_reduce_min_splits_ties_evenly():
    t = T(np.array([[1.0, 1.0, 2.0], [0.0, 3.0, 0.0]]), requires_grad=True)
    F.reduce_sum(F.reduce_min(t, axis=[]), axis=[]).backward()
    np.testing.assert_array_equal(t.grad.numpy(), [[0, 0, 0], [0.5, 0, 0.5]])


def test_reduce_errors_name_the_op_and_attribute():
    with pytest.raises(EagerError, match=r"tdflow.reduce_min.*axis 3 is out of range"):
        F.reduce_min(T(np.zeros((2, 3))), axis=[3])
    with pytest.raises(EagerError, match=r"tdflow.reduce_prod.*names a dimension twice"):
        F.reduce_prod(T(np.zeros((2, 3))), axis=[1, -1])


# ---- avg_pool_2d --------------------------------------------------------------------------------

def ref_avg_pool(x, k, s, p, ceil=False, include=False, divisor=0):
    """PyTorch's avg_pool2d, one window at a time (NCHW)."""
    n, c, h, w = x.shape

    def out_size(size, kk, ss, pp):
        span = size + 2 * pp - kk
        o = (math.ceil(span / ss) if ceil else span // ss) + 1
        if ceil and (o - 1) * ss >= size + pp:
            o -= 1
        return o

    oh, ow = out_size(h, k[0], s[0], p[0]), out_size(w, k[1], s[1], p[1])
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * s[0] - p[0], j * s[1] - p[1]
            h1, w1 = min(h0 + k[0], h + p[0]), min(w0 + k[1], w + p[1])
            pool = (h1 - h0) * (w1 - w0)
            h0c, w0c, h1c, w1c = max(h0, 0), max(w0, 0), min(h1, h), min(w1, w)
            total = x[:, :, h0c:h1c, w0c:w1c].sum(axis=(2, 3))
            div = divisor or (pool if include else (h1c - h0c) * (w1c - w0c))
            y[:, :, i, j] = total / div
    return y


def _pool_attrs(k, s, p, ceil=False, include=False, divisor=0, fmt="channels_first"):
    return dict(padding=list(p), data_format=fmt, kernel_size=list(k), stride=list(s),
                ceil_mode=ceil, count_include_pad=include, divisor_override=divisor)


POOLS = [((2, 2), (2, 2), (0, 0), False), ((3, 3), (2, 2), (1, 1), False),
         ((3, 3), (2, 2), (1, 1), True), ((2, 3), (1, 2), (1, 1), False),
         ((2, 2), (2, 2), (0, 0), True), ((3, 2), (3, 1), (1, 0), True)]


@pytest.mark.parametrize("k,s,p,ceil", POOLS)
@pytest.mark.parametrize("include", [False, True])
@pytest.mark.parametrize("shape", [(2, 3, 7, 6), (1, 1, 5, 5)])
def test_avg_pool_2d_matches_the_window_loop(k, s, p, ceil, include, shape):
    x = rng.normal(size=shape)
    attrs = _pool_attrs(k, s, p, ceil, include)
    want = ref_avg_pool(x, k, s, p, ceil, include)
    np.testing.assert_allclose(F.avg_pool_2d(T(x), **attrs).numpy(), want, rtol=1e-12)
    # channels_last computes the same pooling on NHWC data
    attrs["data_format"] = "channels_last"
    got = F.avg_pool_2d(T(np.moveaxis(x, 1, -1).copy()), **attrs).numpy()
    np.testing.assert_allclose(np.moveaxis(got, -1, 1), want, rtol=1e-12)


@pytest.mark.parametrize("divisor", [1, 5])
def test_avg_pool_2d_divisor_override_and_f32(divisor):
    x = rng.normal(size=(1, 2, 5, 5)).astype(np.float32)
    got = F.avg_pool_2d(T(x), **_pool_attrs((3, 3), (2, 2), (1, 1), True, False, divisor))
    assert got.numpy().dtype == np.float32
    np.testing.assert_allclose(got.numpy(), ref_avg_pool(x.astype(np.float64), (3, 3), (2, 2),
                                                         (1, 1), True, False, divisor),
                               rtol=1e-6, atol=1e-6)


def test_avg_pool_2d_grad_is_the_adjoint():
    """<avg_pool(x), dy> = <x, avg_pool_grad(dy)> for every attribute combination."""
    for k, s, p, ceil in POOLS:
        for include in (False, True):
            x = rng.normal(size=(2, 2, 6, 7))
            attrs = _pool_attrs(k, s, p, ceil, include)
            y = F.avg_pool_2d(T(x), **attrs).numpy()
            dy = rng.normal(size=y.shape)
            dx = F.avg_pool_2d_grad(T(x), T(dy), **attrs).numpy()
            assert dx.shape == x.shape
            np.testing.assert_allclose(np.sum(y * dy), np.sum(x * dx), rtol=1e-10)


def test_avg_pool_2d_errors():
    x = T(np.zeros((1, 1, 4, 4)))
    with pytest.raises(EagerError, match=r"tdflow.avg_pool_2d.*padding \[2, 2\] must be at most "
                                         r"half the kernel size"):
        F.avg_pool_2d(x, **_pool_attrs((2, 2), (1, 1), (2, 2)))
    with pytest.raises(EagerError, match=r"tdflow.avg_pool_2d.*kernel_size must have 2 entries"):
        F.avg_pool_2d(x, **_pool_attrs((2, 2, 2), (1, 1), (0, 0)))
    with pytest.raises(EagerError, match=r"tdflow.avg_pool_2d.*stride entries must be >= 1"):
        F.avg_pool_2d(x, **_pool_attrs((2, 2), (0, 1), (0, 0)))
    with pytest.raises(EagerError, match=r"tdflow.avg_pool_2d.*data_format"):
        F.avg_pool_2d(x, **_pool_attrs((2, 2), (1, 1), (0, 0), fmt="NCWH"))
    with pytest.raises(EagerError, match=r"tdflow.avg_pool_2d.*divisor_override must be >= 0"):
        F.avg_pool_2d(x, **_pool_attrs((2, 2), (1, 1), (0, 0), divisor=-1))
    with pytest.raises(EagerError, match=r"tdflow.avg_pool_2d.*'x' must have rank 4"):
        F.avg_pool_2d(T(np.zeros((4, 4))), **_pool_attrs((2, 2), (1, 1), (0, 0)))
    with pytest.raises(EagerError, match=r"tdflow.avg_pool_2d.*does not fit"):
        F.avg_pool_2d(T(np.zeros((1, 1, 2, 2))), **_pool_attrs((3, 3), (1, 1), (0, 0)))
    with pytest.raises(EagerError, match=r"tdflow.avg_pool_2d.*floating-point"):
        F.avg_pool_2d(T(np.zeros((1, 1, 4, 4), np.int32)), **_pool_attrs((2, 2), (1, 1), (0, 0)))
    with pytest.raises(EagerError, match=r"tdflow.avg_pool_2d_grad.*'dy' has shape \[1, 1, 3, 3\]"):
        F.avg_pool_2d_grad(x, T(np.zeros((1, 1, 3, 3))), **_pool_attrs((2, 2), (2, 2), (0, 0)))


# ---- adaptive_avg_pool2d ------------------------------------------------------------------------

def ref_adaptive(x, oh, ow):
    n, c, h, w = x.shape
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        h0, h1 = math.floor(i * h / oh), math.ceil((i + 1) * h / oh)
        for j in range(ow):
            w0, w1 = math.floor(j * w / ow), math.ceil((j + 1) * w / ow)
            y[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    return y


@pytest.mark.parametrize("shape,size", [((2, 3, 6, 4), [3, 2]),   # divides
                                        ((2, 3, 7, 5), [3, 3]),   # does not: cells overlap
                                        ((1, 2, 5, 7), [1]),      # global average
                                        ((1, 1, 3, 4), [3, 4]),   # identity
                                        ((1, 1, 2, 3), [4, 5])])  # larger than the input
def test_adaptive_avg_pool2d(shape, size):
    x = rng.normal(size=shape)
    oh, ow = (size * 2) if len(size) == 1 else size
    want = ref_adaptive(x, oh, ow)
    got = F.adaptive_avg_pool2d(T(x), data_format="channels_first", output_size=size).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12)
    got = F.adaptive_avg_pool2d(T(np.moveaxis(x, 1, -1).copy()), data_format="channels_last",
                                output_size=size).numpy()
    np.testing.assert_allclose(np.moveaxis(got, -1, 1), want, rtol=1e-12)
    dy = rng.normal(size=want.shape)
    dx = F.adaptive_avg_pool2d_grad(T(x), T(dy), data_format="channels_first",
                                    output_size=size).numpy()
    np.testing.assert_allclose(np.sum(want * dy), np.sum(x * dx), rtol=1e-10)


def test_adaptive_avg_pool2d_f32_and_errors():
    x = rng.normal(size=(1, 2, 5, 5)).astype(np.float32)
    got = F.adaptive_avg_pool2d(T(x), data_format="channels_first", output_size=[2, 2]).numpy()
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ref_adaptive(x.astype(np.float64), 2, 2), rtol=1e-6,
                               atol=1e-6)
    with pytest.raises(EagerError, match=r"tdflow.adaptive_avg_pool2d.*output_size must be"):
        F.adaptive_avg_pool2d(T(x), data_format="channels_first", output_size=[0, 2])
    with pytest.raises(EagerError, match=r"tdflow.adaptive_avg_pool2d.*output_size must be"):
        F.adaptive_avg_pool2d(T(x), data_format="channels_first", output_size=[1, 2, 3])
    with pytest.raises(EagerError, match=r"tdflow.adaptive_avg_pool2d.*'x' must have rank 4"):
        F.adaptive_avg_pool2d(T(x[0]), data_format="channels_first", output_size=[2])


# ---- softmax_cross_entropy ----------------------------------------------------------------------

def _soft(*shape):
    t = rng.uniform(0.1, 1.0, size=shape)
    return t / t.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 6), (7,)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_cross_entropy(shape, dtype):
    x = (rng.normal(size=shape) * 3).astype(dtype)
    label = _soft(*shape).astype(dtype)
    prob, out = F.softmax_cross_entropy(T(x), T(label))
    e = np.exp(x.astype(np.float64) - x.max(axis=-1, keepdims=True))
    want_prob = e / e.sum(axis=-1, keepdims=True)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert prob.numpy().dtype == dtype and out.numpy().shape == shape[:-1]
    np.testing.assert_allclose(prob.numpy(), want_prob, rtol=tol)
    np.testing.assert_allclose(out.numpy(), -np.sum(label * np.log(want_prob), axis=-1),
                               rtol=tol)
    dy = rng.normal(size=shape[:-1]).astype(dtype)
    dp = F.softmax_cross_entropy_grad(T(dy), T(label), prob).numpy()
    np.testing.assert_allclose(dp, (prob.numpy() - label) * dy[..., None], rtol=tol)


def test_softmax_cross_entropy_large_logits_and_one_hot_matches_sparse():
    x = np.array([[1000.0, 0.0, -1000.0], [3.0, 2.0, 1.0]])
    labels = np.array([0, 2])
    one_hot = np.eye(3)[labels]
    _, out = F.softmax_cross_entropy(T(x), T(one_hot))
    _, sparse = F.sparse_softmax_cross_entropy(T(x), T(labels), depth=3)
    assert np.all(np.isfinite(out.numpy()))
    np.testing.assert_allclose(out.numpy(), sparse.numpy(), rtol=1e-12)


def test_softmax_cross_entropy_label_takes_no_gradient():
    """OneFlow marks the targets requires_grad=False: the gradient is for prediction only."""
    from tdflow.dialect.context import standard_context
    from tdflow.dialect.grad import gradient_of

    ctx = standard_context()
    gd = gradient_of(ctx, ctx.lookup("tdflow.softmax_cross_entropy"))
    assert gd.differentiable == {"prediction"}
    x = T(rng.normal(size=(3, 4)), requires_grad=True)
    label = _soft(3, 4)
    prob, out = F.softmax_cross_entropy(x, T(label))
    F.reduce_sum(out, axis=[]).backward()
    np.testing.assert_allclose(x.grad.numpy(), prob.numpy() - label, rtol=1e-12)


def test_softmax_cross_entropy_errors():
    with pytest.raises(EagerError, match=r"tdflow.softmax_cross_entropy.*'label' has shape "
                                         r"\[2, 4\] but 'prediction' has \[2, 3\]"):
        F.softmax_cross_entropy(T(np.zeros((2, 3))), T(np.zeros((2, 4))))
    with pytest.raises(EagerError, match=r"tdflow.softmax_cross_entropy.*'label' has element type"):
        F.softmax_cross_entropy(T(np.zeros((2, 3))), T(np.zeros((2, 3), np.float32)))
    with pytest.raises(EagerError, match=r"tdflow.softmax_cross_entropy.*floating-point"):
        F.softmax_cross_entropy(T(np.zeros((2, 3), np.int64)), T(np.zeros((2, 3), np.int64)))
    with pytest.raises(EagerError, match=r"tdflow.softmax_cross_entropy_grad.*'dy' has shape"):
        F.softmax_cross_entropy_grad(T(np.zeros(3)), T(np.zeros((2, 3))), T(np.zeros((2, 3))))


# ---- adam_update --------------------------------------------------------------------------------

def ref_adam_oneflow(w, g, m, v, max_v, *, lr, bc1, bc2, beta1=0.9, beta2=0.999, eps=0.0,
                     wd=0.0, l1=0.0, l2=0.0, scale=1.0, amsgrad=False):
    """OneFlow's AdamUpdateFunctor, element by element in Python floats (its f32 attributes
    rounded to float32, as the op holds them)."""
    lr, bc1, bc2, beta1, beta2, eps, wd, l1, l2 = (float(np.float32(a)) for a in (
        lr, bc1, bc2, beta1, beta2, eps, wd, l1, l2))
    w, m, v, max_v = (list(map(float, a)) for a in (w, m, v, max_v))
    for i, gi in enumerate(map(float, g)):
        gi = gi * scale + l1 * ((w[i] >= 0) - (w[i] <= 0)) + l2 * w[i]
        m[i] = beta1 * m[i] + (1 - beta1) * gi
        v[i] = beta2 * v[i] + (1 - beta2) * gi * gi
        vv = v[i]
        if amsgrad:
            max_v[i] = max(max_v[i], v[i])
            vv = max_v[i]
        denom = math.sqrt(vv) / math.sqrt(bc2) + eps
        w[i] = w[i] - lr / bc1 * (m[i] / denom) - lr * wd * w[i]
    return [np.array(a) for a in (w, m, v, max_v)]


def ref_adam_torch(w, grads, *, lr, beta1, beta2, eps, amsgrad=False):
    """torch.optim.Adam's documented algorithm (weight_decay=0), written in numpy."""
    m, v, vmax = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(grads, start=1):
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        bc1, bc2 = 1 - beta1 ** t, 1 - beta2 ** t
        if amsgrad:
            vmax = np.maximum(vmax, v)
            denom = np.sqrt(vmax) / math.sqrt(bc2) + eps
        else:
            denom = np.sqrt(v) / math.sqrt(bc2) + eps
        w = w - lr / bc1 * m / denom
    return w


@pytest.mark.parametrize("amsgrad", [False, True])
def test_adam_update_eager_several_steps_against_numpy_and_torch(amsgrad):
    lr, beta1, beta2, eps = 0.01, 0.9, 0.999, 1e-8
    w0 = rng.normal(size=6)
    grads = [rng.normal(size=6) for _ in range(5)]
    w, m, v, max_v = (T(a) for a in (w0.copy(), np.zeros(6), np.zeros(6), np.zeros(6)))
    rw, rm, rv, rmax = w0.copy(), np.zeros(6), np.zeros(6), np.zeros(6)
    for step, g in enumerate(grads, start=1):
        bc1, bc2 = 1 - beta1 ** step, 1 - beta2 ** step
        with tdflow.no_grad():
            out = F.adam_update(w, T(g), m=m, v=v, max_v=max_v if amsgrad else None,
                                learning_rate_val=lr, beta1=beta1, beta2=beta2, epsilon=eps,
                                bias_correction1_val=bc1, bias_correction2_val=bc2,
                                amsgrad=amsgrad)
        assert out is None
        rw, rm, rv, rmax = ref_adam_oneflow(rw, g, rm, rv, rmax, lr=lr, bc1=bc1, bc2=bc2,
                                            eps=eps, amsgrad=amsgrad)
    # the attributes are f32, as in OneFlow: compare with float32 tolerance
    np.testing.assert_allclose(w.numpy(), rw, rtol=1e-6)
    np.testing.assert_allclose(m.numpy(), rm, rtol=1e-6)
    np.testing.assert_allclose(v.numpy(), rv, rtol=1e-6)
    if amsgrad:
        np.testing.assert_allclose(max_v.numpy(), rmax, rtol=1e-6)
    # torch.optim.Adam's formula, with exact (double) hyperparameters
    np.testing.assert_allclose(w.numpy(), ref_adam_torch(w0, grads, lr=lr, beta1=beta1,
                                                         beta2=beta2, eps=eps, amsgrad=amsgrad),
                               rtol=1e-5)


def test_adam_update_regularisation_weight_decay_tensors_and_skip():
    w0, g = np.array([1.0, -2.0, 0.0, 0.5]), np.array([0.3, -0.1, 0.2, 0.0])
    kw = dict(beta1=0.5, beta2=0.75, epsilon=0.125, weight_decay=0.25, l1=0.5, l2=0.25)
    w, m, v = T(w0.copy()), T(np.full(4, 0.1)), T(np.full(4, 0.2))
    with tdflow.no_grad():
        F.adam_update(w, T(g), m=m, v=v, learning_rate=T(np.array([0.5], np.float32)),
                      scale_by_tensor=T(np.array([2.0])), bias_correction1=T(np.array([0.5],
                                                                                     np.float32)),
                      bias_correction2=T(np.array([0.25], np.float32)), learning_rate_val=99.0,
                      learning_rate_scale=0.5, scale=1.5, **kw)
    rw, rm, rv, _ = ref_adam_oneflow(w0, g, np.full(4, 0.1), np.full(4, 0.2), np.zeros(4),
                                     lr=0.25, bc1=0.5, bc2=0.25, beta1=0.5, beta2=0.75,
                                     eps=0.125, wd=0.25, l1=0.5, l2=0.25, scale=3.0)
    np.testing.assert_allclose(w.numpy(), rw, rtol=1e-12)
    np.testing.assert_allclose(m.numpy(), rm, rtol=1e-12)
    np.testing.assert_allclose(v.numpy(), rv, rtol=1e-12)
    # do_bias_correction = false: corrections are 1 whatever the attributes say
    g2 = np.array([0.3, -0.1, 0.2, 0.4])
    w, m, v = T(w0.copy()), T(np.zeros(4)), T(np.zeros(4))
    with tdflow.no_grad():
        F.adam_update(w, T(g2), m=m, v=v, learning_rate_val=0.5, bias_correction1_val=0.1,
                      bias_correction2_val=0.01, do_bias_correction=False)
    np.testing.assert_allclose(w.numpy(), ref_adam_oneflow(w0, g2, np.zeros(4), np.zeros(4),
                                                           np.zeros(4), lr=0.5, bc1=1.0,
                                                           bc2=1.0)[0], rtol=1e-6)
    # skip_if != 0 leaves everything untouched; model_copy receives the new model
    w, m, v = T(w0.copy()), T(np.zeros(4)), T(np.zeros(4))
    with tdflow.no_grad():
        F.adam_update(w, T(g), m=m, v=v, skip_if=T(np.array([1], np.int64)), learning_rate_val=1.0)
    assert w.numpy().tolist() == w0.tolist() and m.numpy().tolist() == [0.0] * 4
    copy = T(np.zeros(4, np.float16))
    with tdflow.no_grad():
        F.adam_update(w, T(g2), m=m, v=v, model_copy=copy, learning_rate_val=0.1)
    np.testing.assert_allclose(copy.numpy(), w.numpy().astype(np.float16))


def test_adam_update_f32_and_f16_models():
    for dtype in (np.float32, np.float16):
        w0, g = np.array([1.0, -1.0], dtype), np.array([0.5, 0.25], dtype)
        w, m, v = T(w0.copy()), T(np.zeros(2, dtype)), T(np.zeros(2, dtype))
        with tdflow.no_grad():
            F.adam_update(w, T(g), m=m, v=v, learning_rate_val=0.01, bias_correction1_val=0.1,
                          bias_correction2_val=0.001, epsilon=1e-8)
        assert w.numpy().dtype == dtype
        np.testing.assert_allclose(w.numpy(), [0.99, -1.01], rtol=1e-3)


def test_adam_update_errors():
    w, g = T(np.zeros(3)), T(np.zeros(3))
    with tdflow.no_grad():
        with pytest.raises(EagerError, match=r"tdflow.adam_update.*'m' has shape \[4\]"):
            F.adam_update(w, g, m=T(np.zeros(4)), v=T(np.zeros(3)))
        with pytest.raises(EagerError, match=r"tdflow.adam_update.*'v' has element type f32"):
            F.adam_update(w, g, m=T(np.zeros(3)), v=T(np.zeros(3, np.float32)))
        with pytest.raises(EagerError, match=r"tdflow.adam_update.*amsgrad = true needs"):
            F.adam_update(w, g, m=T(np.zeros(3)), v=T(np.zeros(3)), amsgrad=True)
        with pytest.raises(EagerError, match=r"tdflow.adam_update.*'learning_rate' must hold "
                                             r"exactly one element"):
            F.adam_update(w, g, m=T(np.zeros(3)), v=T(np.zeros(3)), learning_rate=T(np.zeros(2)))


ADAM_PROGRAM = """
func.func @adam(%w: tensor<2x3xf32>, %dw: tensor<2x3xf32>, %m: tensor<2x3xf32>, %v: tensor<2x3xf32>, %bc1: tensor<1xf32>, %bc2: tensor<1xf32>) -> tensor<f32> {
  %0 = "tdflow.reduce_sum"(%w) {axis = [0 : si32, 1 : si32]} : (tensor<2x3xf32>) -> tensor<f32>
  "tdflow.adam_update"(%w, %dw, %bc1, %bc2, %m, %v) {learning_rate_val = 0.01 : f32, epsilon = 1.0e-08 : f32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0>} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<1xf32>, tensor<1xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> ()
  return %0 : tensor<f32>
}
"""


def test_adam_update_in_a_compiled_program_updates_the_callers_arrays():
    f = tdflow.compile(ADAM_PROGRAM)
    w = rng.normal(size=(2, 3)).astype(np.float32)
    m, v = np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32)
    w0, grads = w.copy(), [rng.normal(size=(2, 3)).astype(np.float32) for _ in range(3)]
    ew, em, ev = T(w0.copy()), T(m.copy()), T(v.copy())
    for step, g in enumerate(grads, start=1):
        bc1 = np.array([1 - 0.9 ** step], np.float32)
        bc2 = np.array([1 - 0.999 ** step], np.float32)
        before = float(w.sum(dtype=np.float32))
        loss = f(w, g, m, v, bc1, bc2)
        assert float(np.asarray(loss)) == pytest.approx(before, rel=1e-6)  # read before the step
        with tdflow.no_grad():
            F.adam_update(ew, T(g), m=em, v=ev, bias_correction1=T(bc1), bias_correction2=T(bc2),
                          learning_rate_val=0.01, epsilon=1e-8)
    # the same kernel: compiled and eager give the same bits
    assert np.array_equal(w, ew.numpy()) and np.array_equal(m, em.numpy())
    assert np.array_equal(v, ev.numpy())
    want = ref_adam_torch(w0.astype(np.float64), [g.astype(np.float64) for g in grads],
                          lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8)
    np.testing.assert_allclose(w, want, rtol=1e-5)
