"""Generated softmax-family and cross-entropy kernels on cudasim equal the numpy backend: every
float dtype, rows that take each path (a warp per row, a block with the row in registers, a
block with the online (max, sum) pass, 512-thread blocks, few long rows split over blocks),
3-D inputs, every label dtype with labels out of range, -inf/inf/NaN logits; then all compile
with nvcc."""

from __future__ import annotations

import numpy as np
import pytest
from cuda_harness import check, full_attrs, nvcc_compile_all, prebuild, rand, result_types, run
from tdflow.dialect.types import TensorType
from tdflow.lowering.cuda import TensorSpec, generate
from tdflow.lowering.cuda._rows import Rows

FLOATS = ("f16", "bf16", "f32", "f64")
LABELS = ("i8", "i32", "i64")  # the CPU kernel admits i1 too, the dialect's type hook does not
# (5, 7): a warp per row; (2, 3, 300): a block, row cached; (2, 5000): 512 threads, cached
# (f32) or online (f64); (2, 9000): 512 threads, online
SHAPES = ((5, 7), (2, 3, 300), (2, 5000), (2, 9000))


def _softmax(x: np.ndarray) -> np.ndarray:
    w = x.astype(np.float64)
    e = np.exp(w - w.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _labels(shape, dt: str, seed: int = 0) -> np.ndarray:
    c = shape[-1]
    lab = np.random.default_rng(seed).integers(0, min(c, 127), size=shape[:-1])
    lab.reshape(-1)[:1] = -1           # out of range: a loss of 0, no one-hot term
    if lab.size > 1 and c < 127:
        lab.reshape(-1)[1] = c         # == depth: out of range too
    return lab.astype({"i8": np.int8, "i32": np.int32, "i64": np.int64}[dt])


def _cases(dt: str, shape, lab_dt: str = "i64"):
    x = rand(shape, dt, lo=-4, hi=4, seed=1)
    y = _softmax(x).astype(x.dtype)  # softmax_grad's y is a softmax, its dot product small
    dy = rand(shape, dt, seed=2)
    soft = _softmax(rand(shape, dt, seed=3)).astype(x.dtype)
    lab, depth = _labels(shape, lab_dt), {"depth": shape[-1]}
    loss_dy = rand(shape[:-1], dt, seed=4)
    return [("tdflow.softmax", [x], {}), ("tdflow.log_softmax", [x], {}),
            ("tdflow.softmax_grad", [y, dy], {}),
            ("tdflow.sparse_softmax_cross_entropy", [x, lab], depth),
            ("tdflow.sparse_softmax_cross_entropy_grad", [lab, loss_dy, y], depth),
            ("tdflow.softmax_cross_entropy", [x, soft], {}),
            ("tdflow.softmax_cross_entropy_grad", [loss_dy, soft, y], {}),
            ("tdflow.sparse_softmax_cross_entropy_with_grad", [x, lab, loss_dy], depth)]


def _special(n: int) -> np.ndarray:
    x = rand((4, n), "f32", seed=5)
    x[0, : n // 3] = -np.inf  # -inf logits add nothing
    x[1, 3] = np.nan          # NaN spreads over its row
    x[2, :] = -np.inf         # an all -inf row is NaN, as in numpy
    x[3, 2] = np.inf          # an infinite max makes the row NaN
    return x


LABEL_SHAPES = ((5, 7), (2, 3, 300))
SPLIT = ((2, 20000), (1, 3, 17000))  # few long rows: softmax and log_softmax split them


def _split_cases(dt: str, shape):
    x = rand(shape, dt, lo=-4, hi=4, seed=8)
    return [("tdflow.softmax", [x], {}), ("tdflow.log_softmax", [x], {})]


@pytest.fixture(scope="module", autouse=True)
def _compiled_together() -> None:
    cases = [c for dt in FLOATS for shape in SHAPES for c in _cases(dt, shape)]
    cases += [c for lt in LABELS for shape in LABEL_SHAPES
              for c in _cases("f32", shape, lt)[3:5] + _cases("f32", shape, lt)[7:]]
    cases += [c for dt in FLOATS for shape in SPLIT for c in _split_cases(dt, shape)]
    cases += [(op, [_special(n)], {}) for n in (9, 3000, 9000, 20000)
              for op in ("tdflow.softmax", "tdflow.log_softmax")]
    prebuild(cases)


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_row_ops_match_numpy(dt, shape) -> None:
    for op, ins, attrs in _cases(dt, shape):
        got = check(op, ins, attrs)
        assert got[0].shape == (ins[-1] if op.endswith("_grad") else ins[0]).shape


@pytest.mark.parametrize("lab_dt", LABELS)
def test_sparse_labels_of_every_integer_type(lab_dt) -> None:
    for shape in LABEL_SHAPES:
        (_, fwd, attrs), (_, bwd, _) = _cases("f32", shape, lab_dt)[3:5]
        prob, loss = check("tdflow.sparse_softmax_cross_entropy", fwd, attrs)
        assert loss.reshape(-1)[0] == 0 and prob.shape == fwd[0].shape  # label -1: no loss
        check("tdflow.sparse_softmax_cross_entropy_grad", bwd, attrs)
        loss, _ = check("tdflow.sparse_softmax_cross_entropy_with_grad",
                        _cases("f32", shape, lab_dt)[7][1], attrs)
        assert loss.reshape(-1)[0] == 0


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_loss_with_grad_is_the_two_kernels_bit_for_bit(dt, shape) -> None:
    """On cudasim the fused kernel gives the bits of the loss's kernel then the gradient's
    (prob rounded to the prediction's type between them, as that launch stored it)."""
    x, lab, dy = _cases(dt, shape)[7][1]
    op = "tdflow.sparse_softmax_cross_entropy_with_grad"
    attrs = full_attrs(op, {"depth": shape[-1]})
    got = run("cudasim", op, [x, lab, dy], attrs, result_types(op, [x, lab, dy], attrs))
    sce = "tdflow.sparse_softmax_cross_entropy"
    prob, loss = run("cudasim", sce, [x, lab], attrs, result_types(sce, [x, lab], attrs))
    grad = "tdflow.sparse_softmax_cross_entropy_grad"
    diff = run("cudasim", grad, [lab, dy, prob], attrs, result_types(grad, [lab, dy, prob], attrs))
    np.testing.assert_array_equal(got[0].view(np.uint8), loss.view(np.uint8))
    np.testing.assert_array_equal(got[1].view(np.uint8), diff[0].view(np.uint8))


def test_boolean_labels() -> None:
    # the CPU kernel admits i1 labels (classes 0 and 1); the dialect's hook does not, so the
    # result types are given here instead of inferred
    x = rand((6, 5), "f32", seed=6)
    lab = np.array([True, False, True, True, False, False])
    attrs = full_attrs("tdflow.sparse_softmax_cross_entropy", {"depth": 5})
    types = [TensorType((6, 5), "f32"), TensorType((6,), "f32")]
    want = run("cpu", "tdflow.sparse_softmax_cross_entropy", [x, lab], attrs, types)
    got = run("cudasim", "tdflow.sparse_softmax_cross_entropy", [x, lab], attrs, types)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-7)
    dy = rand((6,), "f32", seed=7)
    grad = [TensorType((6, 5), "f32")]
    want = run("cpu", "tdflow.sparse_softmax_cross_entropy_grad", [lab, dy, want[0]], attrs, grad)
    got = run("cudasim", "tdflow.sparse_softmax_cross_entropy_grad", [lab, dy, got[0]], attrs,
              grad)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-7)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's inf - inf
@pytest.mark.parametrize("n", (9, 3000, 9000, 20000))
def test_infinities_and_nan(n) -> None:
    for op in ("tdflow.softmax", "tdflow.log_softmax"):
        got = check(op, [_special(n)], atol=1e-6)[0]  # atol: the scale is infinite
        assert np.isnan(got[1:]).all() and not np.isnan(got[0]).any()


@pytest.mark.parametrize("dt", FLOATS)
def test_few_long_rows_split_over_blocks(dt) -> None:
    for shape in SPLIT:
        for op, ins, attrs in _split_cases(dt, shape):
            check(op, ins, attrs)
    code = generate("tdflow.softmax", [TensorSpec((2, 20000), dt)],
                    [TensorSpec((2, 20000), dt)], {})
    assert [ln.grid[0] for ln in code.launches] == [10, 10] and len(code.scratch) == 1


def test_paths() -> None:
    assert Rows(5, 7, "float").warp and Rows(2, 300, "float").cached
    assert Rows(2, 5000, "float").gs == 512 and Rows(2, 5000, "float").cached
    assert not Rows(2, 5000, "double").cached and not Rows(2, 9000, "float").cached


def test_all_compile_with_nvcc() -> None:
    # runs last in this module: every kernel the tests above generated, in one nvcc call
    report = nvcc_compile_all()
    assert "Compiling entry function" in report
