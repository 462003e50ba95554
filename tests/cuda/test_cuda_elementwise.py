"""Generated elementwise kernels on cudasim equal the numpy backend: every formula op of the
standard library in each of its dtypes, odd sizes (tails of the float4 path), broadcasting,
fused chains and ``bias_add``; then all of them compile with nvcc for sm_90."""

from __future__ import annotations

import numpy as np
import pytest
from cuda_harness import check, nvcc_compile_all, prebuild, rand
from tdflow.dialect.types import DTYPES
from tdflow.lowering.elementwise_ops import ELEMENTWISE_OPS

ATTRS = {
    "tdflow.leaky_relu": {"alpha": 0.1}, "tdflow.leaky_relu_grad": {"alpha": 0.1},
    "tdflow.dropout_grad": {"scale": 2.0},
    "tdflow.scalar_add": {"has_float_operand": True, "float_operand": 1.5},
    "tdflow.scalar_mul": {"has_int_operand": True, "int_operand": 3},
    "tdflow.scalar_pow": {"has_int_operand": True, "int_operand": 2},
    "tdflow.scalar_div": {"has_float_operand": True, "float_operand": 4.0},
}


def _attrs(name: str, dt: str) -> dict:
    if name == "tdflow.scalar_div" and not dt.startswith("f"):
        return {"has_int_operand": True, "int_operand": -3}
    return ATTRS.get(name, {})
POSITIVE = {"tdflow.log", "tdflow.sqrt", "tdflow.rsqrt", "tdflow.reciprocal", "tdflow.broadcast_pow"}


def _inputs(d, dt, shape, other_shape=None):
    ins = []
    for i, _ in enumerate(d.inputs):
        t = dt
        if i in d.input_dtypes:  # an operand with its own constraint (dropout_grad's mask)
            t = "i1" if "i1" in d.input_dtypes[i] else sorted(d.input_dtypes[i])[0]
        if d.name == "tdflow.where" and i == 0:
            t = "i1"
        s = shape if i == 0 or other_shape is None else other_shape
        lo = (0.5 if t.startswith("f") else 0) if d.name in POSITIVE else -2.0
        ins.append(rand(s, t, lo=lo, seed=i))
    return ins


CASES = [(name, dt) for name, d in sorted(ELEMENTWISE_OPS.items())
         for dt in sorted(d.dtypes) if dt != "bf16"]


SHAPES = ((7, 13), (64,))  # a tail the float4 path must not touch; an aligned size


@pytest.fixture(scope="module", autouse=True)
def _compiled_together() -> None:
    prebuild([(name, _inputs(ELEMENTWISE_OPS[name], dt, shape), _attrs(name, dt))
              for name, dt in CASES for shape in SHAPES])


@pytest.mark.parametrize("name,dt", CASES, ids=[f"{n.split('.')[1]}-{d}" for n, d in CASES])
def test_formula_op_matches_numpy(name: str, dt: str) -> None:
    d = ELEMENTWISE_OPS[name]
    for shape in SHAPES:
        check(name, _inputs(d, dt, shape), _attrs(name, dt))


@pytest.mark.parametrize("a,b", [((4, 5, 3), (3,)), ((4, 5, 3), (4, 1, 3)), ((4, 1), (1, 6)),
                                 ((2, 3), (1,))])
def test_broadcasting(a, b) -> None:
    x, y = rand(a, seed=1), rand(b, seed=2)
    for op in ("tdflow.broadcast_add", "tdflow.broadcast_mul", "tdflow.broadcast_maximum",
               "tdflow.broadcast_less"):
        check(op, [x, y])
        check(op, [y, x])


def test_fused_chain_and_bias_add() -> None:
    from tdflow.dialect.formula.expr import Input, maximum, sigmoid
    from tdflow.dialect.formula.text import format_expr

    expr = sigmoid(maximum(Input(0) * Input(1), 0.0)) + Input(2)
    x, y, z = rand((33, 17), seed=3), rand((33, 17), seed=4), rand((17,), seed=5)
    check("tdflow.fused_elementwise", [x, y, z], {"expr": format_expr(expr)})
    check("tdflow.bias_add", [rand((5, 6, 7)), rand((6,))], {"axis": 1})
    check("tdflow.bias_add", [rand((8, 4), "f64"), rand((4,), "f64")], {"axis": -1})


@pytest.mark.parametrize("dt", ["i8", "ui8", "i16", "ui16", "i32", "ui32", "i64", "ui64"])
def test_integer_pow_is_exact_and_wraps(dt: str) -> None:
    """numpy's integer power wraps to the type and is exact past 2**53: 3**39 in 64 bits, 9**9
    in 8 (a double pow lost the low bits, and its out-of-range conversion saturated on the
    H200 where x86 wrapped)."""
    bases = [3, 9, 0, 1, 2, 7, 5, 255 if dt.startswith("ui") else -3, 2]
    exps = [39, 9, 0, 100, 63, 11, 27, 5, 64]
    x, y = np.array(bases).astype(DTYPES[dt]), np.array(exps).astype(DTYPES[dt])
    got = check("tdflow.broadcast_pow", [x, y], exact=True)[0]
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, np.power(x, y))


def test_large_vectorised() -> None:
    check("tdflow.gelu", [rand((1 << 16) + 4, seed=9)])
    got = check("tdflow.relu", [rand((1 << 12,), "f32")])[0]
    assert (got >= 0).all()


def test_all_compile_with_nvcc() -> None:
    # runs last in this module: every kernel the tests above generated, in one nvcc call
    report = nvcc_compile_all()
    assert "Compiling entry function" in report
    assert np is not None
