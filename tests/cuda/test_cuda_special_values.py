"""One NaN/inf semantics on every backend (issue 24): every standard elementwise op with a
formula, run on cudasim (the generated CUDA C, compiled with g++) over NaN, +-inf, +-0,
subnormals and ordinary values, in f32 and f64, gives what numpy gives: NaN where numpy has NaN,
the same infinities, zeros of the same sign, and the same finite values within a few ulps
(numpy and the C library may round transcendental functions differently in the last bit)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from cuda_harness import full_attrs, need_gxx, nvcc_compile_all, prebuild, result_types, run
from tdflow.dialect import standard_dialect
from tdflow.dialect.infer import InferError
from tdflow.runtime.kernels.registry import kernel_table

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 1.0, -1.0, 0.5, -2.5, 3.0, 100.0,
           -100.0, 1e30]
DTYPES = {"f32": np.float32, "f64": np.float64}
RTOL = {"f32": 1e-5, "f64": 1e-13}  # composite formulas (fast_gelu's tanh) lose a few ulps


def _inputs(op: str, dt: str) -> list[np.ndarray]:
    n = len(standard_dialect().lookup(op).operands)
    if n == 1:
        return [np.array(SPECIAL, DTYPES[dt])]
    pairs = list(itertools.product(SPECIAL, SPECIAL))
    return [np.array([a for a, _ in pairs], DTYPES[dt]), np.array([b for _, b in pairs],
                                                                  DTYPES[dt])]


def _float_formula_ops() -> list[str]:
    out = []
    for op in standard_dialect():
        if op.formula is None or not op.has_trait("Elementwise"):
            continue
        if not 1 <= len(op.operands) <= 2 or any(d.arity != "single" for d in op.operands):
            continue
        k = kernel_table("cpu").candidates(op.name)
        if not k or (k[0].dtypes is not None and "f32" not in k[0].dtypes) or \
                len(op.results) != 1:
            continue
        try:  # every operand a float tensor (dropout_grad's mask is not: left out)
            result_types(op.name, _inputs(op.name, "f32"), full_attrs(op.name, {}))
        except InferError:
            continue
        out.append(op.name)
    return sorted(out)


OPS = _float_formula_ops()


@pytest.fixture(scope="module", autouse=True)
def _built():
    need_gxx()
    prebuild([(op, _inputs(op, dt), {}) for op in OPS for dt in DTYPES])


def test_the_sweep_covers_the_elementwise_library():
    assert len(OPS) >= 55 and {"tdflow.relu", "tdflow.broadcast_maximum", "tdflow.sin",
                               "tdflow.broadcast_floor_mod", "tdflow.gelu"} <= set(OPS)


@pytest.mark.parametrize("dt", list(DTYPES))
@pytest.mark.parametrize("op", OPS)
def test_special_values_agree_with_numpy(op, dt):
    inputs = _inputs(op, dt)
    attrs = full_attrs(op, {})
    types = result_types(op, inputs, attrs)
    with np.errstate(all="ignore"):
        (want,) = run("cpu", op, inputs, attrs, types)
    (got,) = run("cudasim", op, inputs, attrs, types)
    if want.dtype.kind != "f":  # comparisons and tests give i1: exactly
        np.testing.assert_array_equal(got, want, err_msg=op)
        return
    w, g = want.astype(np.float64), got.astype(np.float64)
    where = [f"{tuple(float(a[i]) for a in inputs)}" for i in range(w.size)]
    bad = [where[i] for i in np.flatnonzero(np.isnan(w) != np.isnan(g))]
    assert not bad, f"{op} {dt}: NaN on one backend only at {bad[:6]}"
    inf = np.isinf(w) | np.isinf(g)
    bad = [where[i] for i in np.flatnonzero(inf & (w != g))]
    assert not bad, f"{op} {dt}: infinities differ at {bad[:6]}"
    zero = (w == 0) & (g == 0)
    bad = [where[i] for i in np.flatnonzero(zero & (np.signbit(w) != np.signbit(g)))]
    assert not bad, f"{op} {dt}: zeros of different sign at {bad[:6]}"
    fin = np.isfinite(w) & ~zero
    np.testing.assert_allclose(g[fin], w[fin], rtol=RTOL[dt], atol=1e-300, err_msg=op)


def test_the_kernels_compile_with_nvcc():
    """The same kernels (NaN-propagating max/min, numpy's sign) compile for sm_90."""
    assert "Compiling entry function" in nvcc_compile_all()
