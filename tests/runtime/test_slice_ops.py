"""slice and slice_grad against numpy's basic slicing, their gradients eagerly and in graph mode,
and cat's gradient (a slice of the output gradient per input)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from tdflow.dialect import InferError, standard_dialect
from tdflow.dialect.types import TensorType as T
from tdflow.runtime.eager import EagerError

import tdflow

F = tdflow.functional
D = standard_dialect()
rng = np.random.default_rng(0)
BIG = (1 << 63) - 1

# (start, stop, step) for one dim of size 6: plain, negative, out of range, empty, strided
DIM_SLICES = [(0, 6, 1), (1, 4, 1), (-4, -1, 1), (-100, 100, 1), (2, 2, 1), (5, 1, 1),
              (0, BIG, 2), (1, 6, 4), (-5, 6, 3), (3, -100, 1), (7, 9, 1), (-1, BIG, 5),
              (0, 6, 10), (-6, -6, 2)]


def _np_slice(a, start, stop, step):
    return a[tuple(slice(s, e, k) for s, e, k in zip(start, stop, step))]


def _np_slice_grad(dy, like_shape, start, stop, step):
    """numpy's scatter: zeros with ``dy`` added at the positions the slice reads."""
    dx = np.zeros(like_shape, dy.dtype)
    idx = np.arange(int(np.prod(like_shape))).reshape(like_shape)
    picked = _np_slice(idx, start, stop, step)
    np.add.at(dx.reshape(-1), picked.reshape(-1), dy.reshape(-1))
    return dx


def _attrs(sl):
    start, stop, step = (list(v) for v in zip(*sl)) if sl else ([], [], [])
    return {"start": start, "stop": stop, "step": step}


def _cases(shape, n):
    """``n`` per-dim slice combinations for ``shape`` (fixed seed)."""
    choices = [DIM_SLICES] * len(shape)
    combos = list(itertools.product(*choices)) if shape else [()]
    picks = rng.choice(len(combos), size=min(n, len(combos)), replace=False)
    return [combos[i] for i in picks]


# -- slice: forward ---------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(6,), (6, 6), (3, 6, 4), (2, 3, 6, 2)])
def test_slice_matches_numpy_slicing(shape):
    a = rng.normal(size=shape)
    x = tdflow.tensor(a)
    for sl in _cases(shape, 40):
        at = _attrs(sl)
        y = F.slice(x, **at).numpy()
        expected = _np_slice(a, **at)
        assert y.shape == expected.shape, (sl, y.shape, expected.shape)
        assert np.array_equal(y, expected), sl


def test_slice_of_a_scalar_is_the_scalar():
    x = tdflow.tensor(np.array(2.5))
    assert F.slice(x, start=[], stop=[], step=[]).numpy().tolist() == 2.5


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64", "bool"])
def test_slice_keeps_every_dtype(dtype):
    a = (rng.normal(size=(5, 6)) * 4).astype(dtype)
    x = tdflow.tensor(a)
    for sl in [((1, 4, 1), (-1, -100, 1)), ((0, BIG, 2), (-5, 6, 3)), ((-100, 100, 1), (2, 2, 1))]:
        at = _attrs(sl)
        y = F.slice(x, **at)
        expected = _np_slice(a, **at)
        assert y.numpy().dtype == a.dtype and np.array_equal(y.numpy(), expected)


def test_slice_shape_inference_matches_numpy():
    for shape in [(6,), (6, 6), (3, 6, 4)]:
        a = np.empty(shape)
        for sl in _cases(shape, 25):
            at = _attrs(sl)
            (ty,) = D.infer_result_types("tdflow.slice", [T(shape, "f32")], at)
            assert ty == T(_np_slice(a, **at).shape, "f32"), sl
    # unknown dims stay unknown, known ones are sliced; an unranked x gives rank len(start)
    (ty,) = D.infer_result_types("tdflow.slice", [T((None, 6), "f32")],
                                 {"start": [1, 1], "stop": [3, BIG], "step": [1, 2]})
    assert ty.shape == (None, 3)
    (ty,) = D.infer_result_types("tdflow.slice", [T(None, "f64")],
                                 {"start": [0, 0], "stop": [1, 1], "step": [1, 1]})
    assert ty == T((None, None), "f64")


@pytest.mark.parametrize("attrs, attr, match", [
    ({"start": [0], "stop": [1, 1], "step": [1, 1]}, "start", "start has 1 entries"),
    ({"start": [0, 0], "stop": [1, 1, 1], "step": [1, 1]}, "stop", "stop has 3 entries"),
    ({"start": [0, 0], "stop": [1, 1], "step": [1]}, "step", "step has 1 entries"),
    ({"start": [0, 0], "stop": [1, 1], "step": [1, 0]}, "step", r"step\[1\] is 0"),
    ({"start": [0, 0], "stop": [1, 1], "step": [-1, 1]}, "step", r"step\[0\] is -1.*positive"),
])
def test_slice_attribute_errors_name_the_attribute(attrs, attr, match):
    with pytest.raises(InferError, match=match) as e:
        D.infer_result_types("tdflow.slice", [T((4, 6), "f32")], attrs)
    assert e.value.attr == attr and "tdflow.slice" in str(e.value)
    with pytest.raises(EagerError, match=match):
        F.slice(tdflow.tensor(np.ones((4, 6))), **attrs)


def test_slice_errors_in_program_text_name_op_and_attribute():
    from tdflow.dialect.ir import verify_module
    from tdflow.dialect.ir.parser import parse_module

    text = ('func.func @f(%x: tensor<4x6xf32>) {\n'
            '  %0 = "tdflow.slice"(%x) {start = [0, 0], stop = [4, 6], step = [1, -2]} : '
            '(tensor<4x6xf32>) -> tensor<4x3xf32>\n  return\n}\n')
    diags = verify_module(parse_module(text, "<slice>"), D)
    assert diags and any("step" in str(d) and "positive" in str(d) for d in diags), diags


# -- slice_grad: forward ----------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(6,), (6, 6), (3, 6, 4)])
def test_slice_grad_matches_numpy_scatter(shape):
    for sl in _cases(shape, 30):
        at = _attrs(sl)
        out_shape = _np_slice(np.empty(shape), **at).shape
        dy = rng.normal(size=out_shape)
        dx = F.slice_grad(tdflow.tensor(dy), like_shape=list(shape), **at).numpy()
        assert dx.shape == shape
        assert np.array_equal(dx, _np_slice_grad(dy, shape, **at)), sl


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_slice_grad_dtypes(dtype):
    at = {"start": [1, -5], "stop": [BIG, 6], "step": [2, 3]}
    dy = (rng.normal(size=(2, 2)) * 10).astype(dtype)
    dx = F.slice_grad(tdflow.tensor(dy), like_shape=[5, 6], **at).numpy()
    assert dx.dtype == dy.dtype and np.array_equal(dx, _np_slice_grad(dy, (5, 6), **at))


def test_slice_grad_shape_errors():
    at = {"start": [0, 0], "stop": [2, 2], "step": [1, 1]}
    with pytest.raises(InferError, match=r"'dy' has shape \[3, 2\]") as e:
        D.infer_result_types("tdflow.slice_grad", [T((3, 2), "f32")], {**at, "like_shape": [4, 4]})
    assert e.value.operand == "dy"
    with pytest.raises(InferError, match="start has 2 entries.*like_shape has rank 3") as e:
        D.infer_result_types("tdflow.slice_grad", [T((2, 2), "f32")], {**at, "like_shape": [4, 4, 4]})
    assert e.value.attr == "start"
    with pytest.raises(InferError, match="positive") as e:
        D.infer_result_types("tdflow.slice_grad", [T((2, 2), "f32")],
                             {**at, "step": [0, 1], "like_shape": [4, 4]})
    assert e.value.attr == "step"
    (ty,) = D.infer_result_types("tdflow.slice_grad", [T((2, 2), "f16")], {**at, "like_shape": [4, 5]})
    assert ty == T((4, 5), "f16")


def test_slice_hooks_sbp_and_input_args():
    sigs = [s.as_dict() for s in D.sbp_signatures(
        "tdflow.slice", [T((4, 6), "f32")], {"start": [0, 1], "stop": [BIG, 6], "step": [1, 1]})]
    assert {"inputs": {"x_0": "S(0)"}, "outputs": {"y_0": "S(0)"}} in sigs
    assert {"inputs": {"x_0": "S(1)"}, "outputs": {"y_0": "S(1)"}} not in sigs
    assert {"inputs": {"x_0": "P"}, "outputs": {"y_0": "P"}} in sigs
    mods = D.input_arg_modifiers("tdflow.slice_grad", {"like_shape": (4, 6), "start": (0, 0),
                                                        "stop": (4, 6), "step": (1, 1)})
    assert set(mods) == {"dy"} and not mods["dy"].is_mutable


# -- slice: gradients ---------------------------------------------------------------------------
def _finite_differences(f, a, eps=1e-6):
    g = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        up, down = a.copy(), a.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (f(up) - f(down)) / (2 * eps)
    return g


SLICE_GRAD_CASES = [
    ((5, 6), ((1, 4, 1), (0, BIG, 2))),
    ((5, 6), ((-3, 100, 2), (-100, -1, 3))),
    ((4, 3, 5), ((0, 4, 3), (1, 2, 1), (-4, 5, 2))),
    ((7,), ((2, 2, 1),)),
]


def _eager_slice_grad(a, at):
    x = tdflow.tensor(a, requires_grad=True)
    y = F.slice(x, **at)
    F.reduce_sum(F.mul(y, y), axis=[]).backward()
    return x.grad.numpy()


@pytest.mark.parametrize("shape, sl", SLICE_GRAD_CASES)
def test_eager_slice_gradient_matches_finite_differences(shape, sl):
    a = rng.normal(size=shape)
    at = _attrs(sl)
    got = _eager_slice_grad(a, at)
    expected = _finite_differences(lambda v: float(np.sum(_np_slice(v, **at) ** 2)), a)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got, _np_slice_grad(2 * _np_slice(a, **at), shape, **at))


def _ty(shape, dtype="f64"):
    return f"tensor<{'x'.join(map(str, shape))}{'x' if shape else ''}{dtype}>"


def _ints(v):
    return "[" + ", ".join(str(int(e)) for e in v) + "]"


def _slice_program(shape, at):
    out = _np_slice(np.empty(shape), **at).shape
    return (f'func.func @f(%x: {_ty(shape)}) -> tensor<f64> {{\n'
            f'  %0 = "tdflow.slice"(%x) {{start = {_ints(at["start"])}, stop = {_ints(at["stop"])}, '
            f'step = {_ints(at["step"])}}} : ({_ty(shape)}) -> {_ty(out)}\n'
            f'  %1 = "tdflow.broadcast_mul"(%0, %0) : ({_ty(out)}, {_ty(out)}) -> {_ty(out)}\n'
            f'  %2 = "tdflow.reduce_sum"(%1) {{axis = []}} : ({_ty(out)}) -> tensor<f64>\n'
            f'  return %2 : tensor<f64>\n}}\n')


@pytest.mark.parametrize("shape, sl", SLICE_GRAD_CASES)
def test_graph_slice_gradient_equals_eager_bit_for_bit(shape, sl):
    a = rng.normal(size=shape)
    at = _attrs(sl)
    loss, (dx,) = tdflow.value_and_grad(_slice_program(shape, at))(a)
    assert float(loss) == pytest.approx(float(np.sum(_np_slice(a, **at) ** 2)))
    assert np.array_equal(np.asarray(dx), _eager_slice_grad(a, at))


def test_slice_grad_is_differentiable_too():
    """slice_grad's own gradient (a slice of ddx): slicing differentiates twice."""
    at = {"start": [1, 0], "stop": [BIG, 6], "step": [2, 3]}
    dy = tdflow.tensor(rng.normal(size=(2, 2)), requires_grad=True)
    w = rng.normal(size=(5, 6))
    dx = F.slice_grad(dy, like_shape=[5, 6], **at)
    F.reduce_sum(F.mul(dx, tdflow.tensor(w)), axis=[]).backward()
    np.testing.assert_array_equal(dy.grad.numpy(), _np_slice(w, **at))
