"""layer_norm, normalization (batch norm) and group_norm: forward against numpy references
written from PyTorch's documented formulas, OneFlow's moving-statistics update, training vs
inference, graph mode's in-place update, and the errors. Gradients: grad_cases_norm.py."""

from __future__ import annotations

import numpy as np
import pytest

import tdflow

F = tdflow.functional
rng = np.random.default_rng(1313)


def t(a):
    return tdflow.tensor(np.asarray(a))


# ---- references (torch.nn.functional.layer_norm / batch_norm / group_norm, in numpy) --------

def ref_layer_norm(x, a, gamma=None, beta=None, eps=1e-5):
    axes = tuple(range(a % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)  # biased, as torch
    y = (x - mean) / np.sqrt(var + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y, mean.reshape(x.shape[:a % x.ndim]), 1 / np.sqrt(var + eps).reshape(
        x.shape[:a % x.ndim])


def ref_batch_norm(x, axis, gamma, beta, eps, mean=None, var=None):
    others = tuple(i for i in range(x.ndim) if i != axis % x.ndim)
    bs = [1] * x.ndim
    bs[axis % x.ndim] = -1
    if mean is None:
        mean, var = x.mean(axis=others), x.var(axis=others)
    y = (x - mean.reshape(bs)) / np.sqrt(var.reshape(bs) + eps) * gamma.reshape(bs) \
        + beta.reshape(bs)
    return y, mean, var


def ref_group_norm(x, groups, gamma=None, beta=None, eps=1e-5):
    n, c = x.shape[:2]
    xg = x.reshape(n, groups, -1)
    mean, var = xg.mean(-1, keepdims=True), xg.var(-1, keepdims=True)
    y = ((xg - mean) / np.sqrt(var + eps)).reshape(x.shape)
    if gamma is not None:
        bs = (1, c) + (1,) * (x.ndim - 2)
        y = y * gamma.reshape(bs) + beta.reshape(bs)
    return y, mean.reshape(n, groups), 1 / np.sqrt(var + eps).reshape(n, groups)


# ---- layer_norm ------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, a", [((4, 8), 1), ((2, 3, 5), 2), ((2, 3, 5), 1), ((2, 3, 5), -1),
                                      ((6,), 0)])
@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-5), (np.float64, 1e-12)])
def test_layer_norm_matches_reference(shape, a, dtype, tol):
    x = rng.normal(size=shape).astype(dtype) * 3 + 1
    y, mean, inv = F.layer_norm(t(x), a, a, 1e-5)  # OneFlow's signature
    ry, rm, ri = ref_layer_norm(x.astype(np.float64), a)
    assert y.dtype == mean.dtype == tdflow.tensor(x).dtype
    np.testing.assert_allclose(y.numpy(), ry, rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(mean.numpy(), rm, rtol=tol, atol=tol)
    np.testing.assert_allclose(inv.numpy(), ri, rtol=tol * 10)


@pytest.mark.parametrize("shape, a, p", [((4, 8), 1, 1), ((2, 3, 4), 1, 1), ((2, 3, 4), 1, 2),
                                         ((2, 3, 4), 2, 1)])
def test_layer_norm_affine(shape, a, p):
    x = rng.normal(size=shape)
    gamma, beta = rng.normal(size=shape[p:]), rng.normal(size=shape[p:])
    y, _, _ = F.layer_norm(t(x), beta=t(beta), gamma=t(gamma), center=True, scale=True,
                           begin_norm_axis=a, begin_params_axis=p, epsilon=1e-5)
    np.testing.assert_allclose(y.numpy(), ref_layer_norm(x, a, gamma, beta)[0], rtol=1e-12,
                               atol=1e-12)
    only_beta = F.layer_norm(t(x), beta=t(beta), center=True, begin_norm_axis=a,
                             begin_params_axis=p, epsilon=1e-5)[0]
    np.testing.assert_allclose(only_beta.numpy(), ref_layer_norm(x, a, None, beta)[0],
                               atol=1e-12)


def test_layer_norm_constant_rows_and_f16():
    x = np.ones((2, 4))
    y, _, inv = F.layer_norm(t(x), 1, 1, 1e-5)
    np.testing.assert_array_equal(y.numpy(), 0.0)
    np.testing.assert_allclose(inv.numpy(), 1 / np.sqrt(1e-5))
    h = rng.normal(size=(3, 8)).astype(np.float16)
    yh, mh, _ = F.layer_norm(t(h), 1, 1, 1e-5)
    assert yh.dtype == "f16" and mh.dtype == "f32"
    np.testing.assert_allclose(yh.numpy(), ref_layer_norm(h.astype(np.float64), 1)[0], atol=3e-3)


@pytest.mark.parametrize("kwargs, match", [
    ({"begin_norm_axis": 2, "begin_params_axis": 1}, r"begin_norm_axis 2 is out of range for 'x' of shape \[2, 3\] \(expected -2 <= "
                                                      r"begin_norm_axis < 2\)"),
    ({"begin_norm_axis": 1, "begin_params_axis": -3}, "begin_params_axis"),
    ({"begin_norm_axis": 1, "begin_params_axis": 1, "center": True}, "center = true needs the 'beta'"),
])
def test_layer_norm_errors(kwargs, match):
    with pytest.raises(tdflow.TdflowError, match=f"layer_norm.*{match}"):
        F.layer_norm(t(np.ones((2, 3))), **kwargs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm_into_its_output_is_the_fresh_path_bit_for_bit(dtype, affine):
    """Graph plans hand layer_norm its output buffers: computing in them (f32/f64) gives the
    bits of the path that allocates (NaN, inf, signed zeros, constant rows included)."""
    from tdflow.runtime.kernels.norm import layer_norm

    x = (rng.standard_normal((6, 4, 8)) * 10.0 ** rng.integers(-3, 4, (6, 4, 8))).astype(dtype)
    x[0, 0] = 3.0  # a constant row: zero variance
    x[1, 1, 2], x[2, 0, 5], x[3, 3, 1], x[4, 2, 0] = np.nan, np.inf, -0.0, -np.inf
    attrs = {"begin_norm_axis": 1, "begin_params_axis": 1, "epsilon": 1e-5,
             "center": affine, "scale": affine}
    beta = rng.standard_normal((4, 8)).astype(dtype) if affine else None
    gamma = rng.standard_normal((4, 8)).astype(dtype) if affine else None
    inputs = [x, beta, gamma]
    with np.errstate(all="ignore"):
        fresh = layer_norm(attrs, inputs, [None, None, None])
        wide = np.float32 if dtype == np.float16 else dtype
        outs = [np.full(x.shape, 7, dtype), np.empty(6, wide), np.empty(6, wide)]
        into = layer_norm(attrs, inputs, outs)
    assert into[0] is outs[0]
    for a, b in zip(fresh, into):
        assert a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))
    assert np.isnan(into[0][1, 1]).all() and np.signbit(fresh[0]).any()


def test_layer_norm_parameter_errors():
    x = t(np.ones((2, 3)))
    with pytest.raises(tdflow.TdflowError, match="layer_norm.*'gamma' has shape \\[4\\], expected \\[3\\]"):
        F.layer_norm(x, gamma=t(np.ones(4)), scale=True, begin_norm_axis=1, begin_params_axis=1)
    with pytest.raises(tdflow.TdflowError, match="layer_norm.*'gamma' is given but scale = false"):
        F.layer_norm(x, gamma=t(np.ones(3)), begin_norm_axis=1, begin_params_axis=1)
    with pytest.raises(tdflow.TdflowError, match="layer_norm.*scalar"):
        F.layer_norm(t(np.float64(1.0)), 0, 0)


# ---- normalization ---------------------------------------------------------------------------

def _bn_inputs(shape, axis=1, dtype=np.float64):
    c = shape[axis]
    return (rng.normal(size=shape).astype(dtype) * 2 + 0.5, rng.normal(size=c).astype(dtype),
            rng.uniform(0.5, 2, size=c).astype(dtype), rng.normal(size=c).astype(dtype),
            rng.normal(size=c).astype(dtype))


@pytest.mark.parametrize("shape, axis", [((8, 3), 1), ((4, 3, 5, 5), 1), ((4, 5, 3), -1),
                                         ((3, 4, 2), 0)])
def test_batch_norm_training_uses_batch_statistics_and_updates_moving_in_place(shape, axis):
    x, mm, mv, gamma, beta = _bn_inputs(shape, axis)
    tm, tv = tdflow.tensor(mm), tdflow.tensor(mv)
    y, mean, inv = F.normalization(t(x), tm, tv, t(gamma), t(beta), axis=axis, epsilon=1e-5,
                                   momentum=0.9, training=True)
    ry, rmean, rvar = ref_batch_norm(x, axis, gamma, beta, 1e-5)
    np.testing.assert_allclose(y.numpy(), ry, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mean.numpy(), rmean, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(inv.numpy(), 1 / np.sqrt(rvar + 1e-5), rtol=1e-12)
    # OneFlow: moving = moving * momentum + batch * (1 - momentum), the variance unbiased
    # (momentum is an f32 attribute: 0.9 as float32)
    n, m = x.size // x.shape[axis], float(np.float32(0.9))
    np.testing.assert_allclose(tm.numpy(), mm * m + rmean * (1 - m), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(tv.numpy(), mv * m + rvar * n / (n - 1) * (1 - m), rtol=1e-12)
    # torch.nn.functional.batch_norm(momentum=1 - m) gives the same moving statistics
    np.testing.assert_allclose(tv.numpy(), m * mv + (1 - m) * x.var(
        axis=tuple(i for i in range(x.ndim) if i != axis % x.ndim), ddof=1), rtol=1e-12)


def test_batch_norm_inference_uses_moving_statistics_and_leaves_them():
    x, mm, mv, gamma, beta = _bn_inputs((4, 3, 2, 2))
    tm, tv = tdflow.tensor(mm), tdflow.tensor(mv)
    y, mean, inv = F.normalization(t(x), tm, tv, t(gamma), t(beta), axis=1, epsilon=1e-3)
    ry = ref_batch_norm(x, 1, gamma, beta, float(np.float32(1e-3)), mm, mv)[0]  # f32 attr
    np.testing.assert_allclose(y.numpy(), ry, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(tm.numpy(), mm)
    np.testing.assert_array_equal(tv.numpy(), mv)
    np.testing.assert_array_equal(mean.numpy(), mm)
    np.testing.assert_allclose(inv.numpy(), 1 / np.sqrt(mv + float(np.float32(1e-3))))


def test_batch_norm_repeated_training_steps_converge_to_the_data_statistics():
    x, _, _, gamma, beta = _bn_inputs((16, 2))
    tm, tv = tdflow.tensor(np.zeros(2)), tdflow.tensor(np.ones(2))
    ys = [F.normalization(t(x), tm, tv, t(gamma), t(beta), momentum=0.5, training=True)[0]
          for _ in range(40)]
    np.testing.assert_array_equal(ys[0].numpy(), ys[-1].numpy())  # y ignores moving stats
    np.testing.assert_allclose(tm.numpy(), x.mean(0), rtol=1e-9)
    np.testing.assert_allclose(tv.numpy(), x.var(0, ddof=1), rtol=1e-9)


def test_batch_norm_without_moving_statistics_and_add_to_output_f32():
    x, _, _, gamma, beta = _bn_inputs((5, 3), dtype=np.float32)
    add = rng.normal(size=(5, 3)).astype(np.float32)
    y = F.normalization(t(x), None, None, t(gamma), t(beta), t(add), training=True)[0]
    assert y.dtype == "f32"
    np.testing.assert_allclose(y.numpy(), ref_batch_norm(x.astype(np.float64), 1, gamma, beta,
                                                         1e-5)[0] + add, rtol=1e-5, atol=1e-5)


def test_batch_norm_errors():
    x, mm, mv, gamma, beta = _bn_inputs((4, 3))
    with pytest.raises(tdflow.TdflowError, match="normalization.*inference .* needs 'moving_mean'"):
        F.normalization(t(x), None, None, t(gamma), t(beta))
    with pytest.raises(tdflow.TdflowError, match="normalization.*'moving_variance' is missing"):
        F.normalization(t(x), t(mm), None, t(gamma), t(beta), training=True)
    with pytest.raises(tdflow.TdflowError, match="normalization.*'gamma' has shape \\[4\\]"):
        F.normalization(t(x), t(mm), t(mv), t(np.ones(4)), t(beta))
    with pytest.raises(tdflow.TdflowError, match=r"normalization.*axis 2 is out of range for 'x' of shape "
                                                   r"\[4, 3\] \(expected -2 <= axis < 2\)"):
        F.normalization(t(x), t(mm), t(mv), t(gamma), t(beta), axis=2)
    with pytest.raises(tdflow.TdflowError, match="normalization.*'_add_to_output'"):
        F.normalization(t(x), t(mm), t(mv), t(gamma), t(beta), t(np.ones((4, 2))))


def test_batch_norm_moving_statistics_take_no_gradient():
    x, mm, mv, gamma, beta = _bn_inputs((6, 3))
    tx = tdflow.tensor(x, requires_grad=True)
    tg = tdflow.tensor(gamma, requires_grad=True)
    tm, tv = tdflow.tensor(mm), tdflow.tensor(mv)
    y = F.normalization(tx, tm, tv, tg, t(beta), training=True)[0]
    F.reduce_sum(F.mul(y, y), axis=[]).backward()
    # sum(y^2) = sum((xh * gamma + beta)^2); xh has zero mean and unit variance per channel
    xh = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)
    np.testing.assert_allclose(tg.grad.numpy(), (2 * (xh * gamma + beta) * xh).sum(0),
                               rtol=1e-9)
    assert tm.grad is None and tv.grad is None


TRAIN_BN = """func.func @f(%x: tensor<6x3xf64>, %mm: tensor<3xf64>, %mv: tensor<3xf64>, %g: tensor<3xf64>, %b: tensor<3xf64>) -> tensor<f64> {
  %y, %m, %i = "tdflow.normalization"(%x, %mm, %mv, %g, %b) {axis = 1 : si32, epsilon = 1.0e-05 : f32, momentum = 0.75 : f32, training = true, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>} : (tensor<6x3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<6x3xf64>, tensor<3xf64>, tensor<3xf64>)
  %s = "tdflow.broadcast_mul"(%y, %y) : (tensor<6x3xf64>, tensor<6x3xf64>) -> tensor<6x3xf64>
  %l = "tdflow.reduce_sum"(%s) {axis = []} : (tensor<6x3xf64>) -> tensor<f64>
  return %l : tensor<f64>
}
"""


def test_batch_norm_graph_mode_updates_the_callers_moving_statistics():
    """A compiled training step writes the moving statistics in place, in the caller's arrays,
    each call; its gradients equal eager mode's, which the moving statistics do not change."""
    x, mm, mv, gamma, beta = _bn_inputs((6, 3))
    mm0, mv0 = mm.copy(), mv.copy()
    step = tdflow.value_and_grad(TRAIN_BN, wrt=["x", "g"])
    _, (dx1, dg1) = step(x, mm, mv, gamma, beta)
    n = 6
    np.testing.assert_allclose(mm, mm0 * 0.75 + x.mean(0) * 0.25, rtol=1e-12)
    np.testing.assert_allclose(mv, mv0 * 0.75 + x.var(0) * n / (n - 1) * 0.25, rtol=1e-12)
    _, (dx2, dg2) = step(x, mm, mv, gamma, beta)
    assert not np.allclose(mm, mm0 * 0.75 + x.mean(0) * 0.25)  # updated again
    np.testing.assert_array_equal(dx1, dx2)
    np.testing.assert_array_equal(dg1, dg2)
    tx = tdflow.tensor(x, requires_grad=True)
    tg = tdflow.tensor(gamma, requires_grad=True)
    y = F.normalization(tx, t(mm), t(mv), tg, t(beta), epsilon=1e-5, momentum=0.75,
                        training=True)[0]
    F.reduce_sum(F.mul(y, y), axis=[]).backward()
    np.testing.assert_array_equal(tx.grad.numpy(), dx1)
    np.testing.assert_array_equal(tg.grad.numpy(), dg1)


def test_batch_norm_program_with_y_only():
    """A program may keep y alone (OneFlow's inference form); its gradient recomputes the
    batch statistics when training."""
    x, mm, mv, gamma, beta = _bn_inputs((6, 3))
    text = TRAIN_BN.replace('%y, %m, %i = ', '%y = ').replace(
        '-> (tensor<6x3xf64>, tensor<3xf64>, tensor<3xf64>)', '-> tensor<6x3xf64>')
    loss, (dx,) = tdflow.value_and_grad(text, wrt=["x"])(x, mm.copy(), mv.copy(), gamma, beta)
    loss3, (dx3,) = tdflow.value_and_grad(TRAIN_BN, wrt=["x"])(x, mm.copy(), mv.copy(), gamma,
                                                                beta)
    np.testing.assert_allclose(loss, loss3, rtol=1e-12)
    np.testing.assert_allclose(dx, dx3, rtol=1e-9, atol=1e-12)


# ---- group_norm ------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, groups", [((2, 4, 3), 2), ((2, 6, 2, 2), 3), ((3, 4, 5), 1),
                                           ((2, 4, 3), 4), ((2, 4), 2)])
@pytest.mark.parametrize("affine", [False, True])
def test_group_norm_matches_reference(shape, groups, affine):
    x = rng.normal(size=shape) * 2 - 1
    c = shape[1]
    gamma, beta = (rng.normal(size=c), rng.normal(size=c)) if affine else (None, None)
    kw = {"gamma": t(gamma), "beta": t(beta)} if affine else {}
    y, mean, inv = F.group_norm(t(x), **kw, affine=affine, num_groups=groups, epsilon=1e-5)
    ry, rm, ri = ref_group_norm(x, groups, gamma, beta)
    np.testing.assert_allclose(y.numpy(), ry, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mean.numpy(), rm, atol=1e-14)
    np.testing.assert_allclose(inv.numpy(), ri, rtol=1e-12)


def test_group_norm_channels_last_silu_and_f32():
    x = rng.normal(size=(2, 3, 3, 4)).astype(np.float32)  # NHWC, C = 4
    gamma, beta = rng.normal(size=4).astype(np.float32), rng.normal(size=4).astype(np.float32)
    y = F.group_norm(t(x), gamma=t(gamma), beta=t(beta), affine=True, num_groups=2,
                     data_format="channels_last", activation="silu")[0]
    z = ref_group_norm(np.moveaxis(x, -1, 1).astype(np.float64), 2, gamma, beta)[0]
    z = np.moveaxis(z, 1, -1)
    assert y.dtype == "f32"
    np.testing.assert_allclose(y.numpy(), z / (1 + np.exp(-z)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kwargs, match", [
    ({"num_groups": 3}, "the 4 channels of 'x' do not split into num_groups = 3"),
    ({"num_groups": 0}, "num_groups must be >= 1"),
    ({"num_groups": 2, "affine": True}, "affine = true needs the 'beta'"),
    ({"num_groups": 2, "data_format": "NCHW"}, "data_format must be"),
    ({"num_groups": 2, "activation": "relu"}, "activation must be"),
])
def test_group_norm_errors(kwargs, match):
    with pytest.raises(tdflow.TdflowError, match=f"group_norm.*{match}"):
        F.group_norm(t(np.ones((2, 4, 3))), **kwargs)


def test_norm_ops_verify_in_programs():
    """The description examples parse, verify and run through the compiler."""
    from tdflow.dialect.context import standard_context

    ctx = standard_context()
    for name in ("layer_norm", "normalization", "group_norm"):
        desc = ctx.lookup(f"tdflow.{name}").description
        line = next(s.strip() for s in desc.splitlines() if s.strip().startswith("%y"))
        types = line.rsplit(" : ", 1)[1]
        ins, outs = types.split(" -> ")
        args = [a.strip() for a in ins.strip("()").split(", ")]
        names = [v.strip().lstrip("%") for v in line.split("(", 2)[1].split(")")[0].split(",")]
        sig = ", ".join(f"%{n}: {ty}" for n, ty in zip(names, args))
        first = outs.strip("()").split(", ")[0]
        text = f"func.func @f({sig}) -> {first} {{\n  {line}\n  return %y : {first}\n}}\n"
        f = tdflow.compile(text)
        arrays = [rng.uniform(0.5, 1.5, size=[int(d) for d in ty[7:-1].split("x")[:-1]])
                  .astype(np.float32) for ty in args]
        out = f(*arrays)
        assert np.all(np.isfinite(out)), name
