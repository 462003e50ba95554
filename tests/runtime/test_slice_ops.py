"""slice and slice_grad against numpy's basic slicing, their gradients eagerly and in graph mode,
and cat's gradient (a slice of the output gradient per input)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from finite_diff import central_differences
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
def test_eager_slice_gradient_matchescentral_differences(shape, sl):
    a = rng.normal(size=shape)
    at = _attrs(sl)
    got = _eager_slice_grad(a, at)
    expected = central_differences(lambda v: float(np.sum(_np_slice(v, **at) ** 2)), a)
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


# -- cat's gradient -----------------------------------------------------------------------------
CAT_CASES = [  # (shapes of the inputs, axis)
    ([(2, 3), (4, 3)], 0),
    ([(2, 1, 4), (2, 3, 4), (2, 2, 4)], 1),
    ([(3, 2), (3, 5), (3, 1)], -1),
    ([(2, 2, 1), (2, 2, 4), (2, 2, 2)], -1),
    ([(5,)], 0),
]


def _np_cat_grads(arrays, w, axis):
    """d sum(cat(xs)^2 * w) / d x_i: the stretch of 2 * cat(xs) * w that x_i fills."""
    y = np.concatenate(arrays, axis=axis)
    g = 2 * y * w
    cuts = np.cumsum([a.shape[axis] for a in arrays])[:-1]
    return np.split(g, cuts, axis=axis)


def _eager_cat_grads(arrays, w, axis):
    xs = [tdflow.tensor(a, requires_grad=True) for a in arrays]
    y = F.concat(xs, axis=axis)
    node = y.grad_fn
    saved = node.inputs["in"]
    F.reduce_sum(F.mul(F.mul(y, y), tdflow.tensor(w)), axis=[]).backward()
    return [x.grad.numpy() for x in xs], saved


@pytest.mark.parametrize("shapes, axis", CAT_CASES)
def test_eager_cat_gradient_matches_numpy(shapes, axis):
    arrays = [rng.normal(size=s) for s in shapes]
    w = rng.normal(size=np.concatenate(arrays, axis=axis).shape)
    got, saved = _eager_cat_grads(arrays, w, axis)
    for g, e, a in zip(got, _np_cat_grads(arrays, w, axis), arrays):
        assert g.shape == a.shape
        np.testing.assert_allclose(g, e, rtol=1e-12)
    # the rule reads only shapes: the inputs are kept as zero-strided placeholders
    assert all(s.numpy().shape == a.shape and not any(s.numpy().strides) for s, a in
               zip(saved, arrays))


def test_eager_cat_gradient_only_to_inputs_that_require_it():
    a, b = rng.normal(size=(2, 3)), rng.normal(size=(1, 3))
    x, c = tdflow.tensor(a, requires_grad=True), tdflow.tensor(b)
    F.reduce_sum(F.concat([c, x], axis=0), axis=[]).backward()
    assert c.grad is None and np.array_equal(x.grad.numpy(), np.ones((2, 3)))


def _cat_program(shapes, axis):
    out = np.concatenate([np.empty(s) for s in shapes], axis=axis).shape
    names = [f"x{i}" for i in range(len(shapes))]
    args = ", ".join(f"%{n}: {_ty(s)}" for n, s in zip(names, shapes))
    ins = ", ".join(_ty(s) for s in shapes)
    return (f'func.func @f({args}, %w: {_ty(out)}) -> tensor<f64> {{\n'
            f'  %0 = "tdflow.cat"({", ".join("%" + n for n in names)}) {{axis = {axis} : si64}} : '
            f'({ins}) -> {_ty(out)}\n'
            f'  %1 = "tdflow.broadcast_mul"(%0, %0) : ({_ty(out)}, {_ty(out)}) -> {_ty(out)}\n'
            f'  %2 = "tdflow.broadcast_mul"(%1, %w) : ({_ty(out)}, {_ty(out)}) -> {_ty(out)}\n'
            f'  %3 = "tdflow.reduce_sum"(%2) {{axis = []}} : ({_ty(out)}) -> tensor<f64>\n'
            f'  return %3 : tensor<f64>\n}}\n'), names


@pytest.mark.parametrize("shapes, axis", CAT_CASES)
def test_graph_cat_gradient_matches_numpy_and_eager(shapes, axis):
    arrays = [rng.normal(size=s) for s in shapes]
    w = rng.normal(size=np.concatenate(arrays, axis=axis).shape)
    prog, names = _cat_program(shapes, axis)
    loss, grads = tdflow.value_and_grad(prog, wrt=names)(*arrays, w)
    y = np.concatenate(arrays, axis=axis)
    assert float(loss) == pytest.approx(float(np.sum(y * y * w)))
    eager, _ = _eager_cat_grads(arrays, w, axis)
    for g, e, ge in zip(grads, _np_cat_grads(arrays, w, axis), eager):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-12)
        assert np.array_equal(np.asarray(g), ge)


def test_every_differentiable_standard_op_has_a_gradient():
    from tdflow.dialect.context import standard_context
    from tdflow.dialect.grad import gradient_of, gradient_report

    ctx = standard_context()
    counts, missing, errors = gradient_report(ctx, list(ctx.lookup(op.name) for op in D))
    assert missing == [] and errors == []
    assert gradient_of(ctx, ctx.lookup("tdflow.cat")).source == "rule"
    assert gradient_of(ctx, ctx.lookup("tdflow.slice")).source == "grad field"
    assert gradient_of(ctx, ctx.lookup("tdflow.slice_grad")).source == "grad field"


def test_verify_reports_no_differentiable_op_without_gradient():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "tdflow", "verify", "--ops", "ops.td",
                           "--strict-hooks", "--verbose"], capture_output=True, text=True,
                          cwd=root, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "0 differentiable ops have none" in proc.stdout, proc.stdout


# -- basic indexing: t[...] --------------------------------------------------------------------
INDICES = [
    1, -1, np.int64(2), (1, 2), (1, 2, 3), (-4, -5, -6), slice(1, 3), slice(None),
    (slice(None), 2), (Ellipsis, 1), (Ellipsis,), (), None, (None, 1, None),
    (slice(None, None, 2), Ellipsis, slice(1, None, 3)), (slice(-100, 100),), (slice(3, 1),),
    (1, None, slice(2, 5), Ellipsis), (Ellipsis, None), (slice(1, None), slice(None, None, 2)),
    (Ellipsis, -6), (0, 0, slice(None)), (None, Ellipsis, None), (slice(0, 0), 1),
    (slice(None, None, 7), slice(4, 100, 2), 5), (2, Ellipsis, slice(-2, None)),
]


@pytest.mark.parametrize("idx", INDICES, ids=repr)
def test_getitem_matches_numpy_basic_indexing(idx):
    a = rng.normal(size=(4, 5, 6))
    y = tdflow.tensor(a)[idx]
    expected = a[idx]
    assert y.shape == expected.shape
    assert np.array_equal(y.numpy(), expected)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_getitem_keeps_the_dtype(dtype):
    a = (rng.normal(size=(3, 4)) * 3).astype(dtype)
    y = tdflow.tensor(a)[1:, None, ::3]
    assert y.numpy().dtype == a.dtype and np.array_equal(y.numpy(), a[1:, None, ::3])


def test_getitem_chains_and_indexes_scalars():
    a = rng.normal(size=(4, 5))
    x = tdflow.tensor(a)
    assert np.array_equal(x[1:][:, 0].numpy(), a[1:][:, 0])
    assert x[2, 3].shape == () and x[2, 3].item() == a[2, 3]
    s = tdflow.tensor(np.array(1.5))
    assert s[()].item() == 1.5 and s[None].shape == (1,) and s[...].shape == ()


@pytest.mark.parametrize("idx, error, match", [
    (4, IndexError, "index 4 is out of bounds for axis 0 with size 4"),
    (-5, IndexError, "index -5 is out of bounds for axis 0"),
    ((0, 5), IndexError, "out of bounds for axis 1 with size 5"),
    ((0, 0, -7), IndexError, "axis 2 with size 6"),
    ((1, 2, 3, 4), IndexError, "too many indices"),
    ((Ellipsis, 0, Ellipsis), IndexError, "single ellipsis"),
    (slice(None, None, -1), IndexError, "only positive steps"),
    ((slice(None), slice(4, 0, -2)), IndexError, "step -2 on axis 1.*positive"),
    (slice(None, None, 0), ValueError, "step cannot be zero"),
    ([0, 1], TypeError, "advanced indexing.*needs gather"),
    (np.array([0, 1]), TypeError, "advanced indexing.*needs gather"),
    ((slice(None), [0]), TypeError, "advanced indexing.*needs gather"),
    (True, TypeError, "advanced indexing"),
    ("a", TypeError, "ints, slices"),
    (1.5, TypeError, "ints, slices"),
])
def test_getitem_errors(idx, error, match):
    x = tdflow.tensor(rng.normal(size=(4, 5, 6)))
    with pytest.raises(error, match=match):
        x[idx]
    if error is IndexError and "positive" not in match:
        with pytest.raises(IndexError):  # numpy agrees
            np.empty((4, 5, 6))[idx]


def test_getitem_by_a_tensor_is_advanced_indexing():
    x = tdflow.tensor(rng.normal(size=(4, 5)))
    with pytest.raises(TypeError, match="advanced indexing .by a Tensor. needs gather"):
        x[tdflow.tensor(np.array([0, 1]))]


@pytest.mark.parametrize("idx", [
    (slice(1, None), slice(None, None, 2)), 1, (Ellipsis, -1), (None, 0, slice(1, 4)),
    (slice(None, None, 3), None, 2, slice(-3, None)), (2, 3, 4), (Ellipsis,), (slice(2, 2),),
], ids=repr)
def test_getitem_gradient_matches_numpy(idx):
    a = rng.normal(size=(4, 5, 6))
    x = tdflow.tensor(a, requires_grad=True)
    y = x[idx]
    w = rng.normal(size=a[idx].shape)
    F.reduce_sum(F.mul(y, tdflow.tensor(w)), axis=[]).backward()
    # np.add.at takes no None: index without the new axes and drop them from w
    basic = tuple(i for i in (idx if isinstance(idx, tuple) else (idx,)) if i is not None)
    expected = np.zeros_like(a)
    np.add.at(expected, basic, w.reshape(a[basic].shape))
    assert np.array_equal(x.grad.numpy(), expected)


def test_getitem_gradient_of_squares_and_two_uses():
    a = rng.normal(size=(4, 6))
    x = tdflow.tensor(a, requires_grad=True)
    y = x[1:, ::2]
    F.reduce_sum(F.mul(y, y), axis=[]).backward()
    expected = np.zeros_like(a)
    np.add.at(expected, (slice(1, None), slice(None, None, 2)), 2 * a[1:, ::2])
    np.testing.assert_array_equal(x.grad.numpy(), expected)
    x.grad = None
    F.reduce_sum(F.add(x[0], x[:, 1:3][0, 0]), axis=[]).backward()  # overlapping picks add up
    expected = np.zeros_like(a)
    expected[0] += 1
    expected[0, 1] += 6  # x[:, 1:3][0, 0] is x[0, 1], broadcast over the 6 elements of x[0]
    np.testing.assert_array_equal(x.grad.numpy(), expected)
