"""A formula's constants are told apart by type and sign: ``x + -0.0`` and ``x + 0.0`` differ at
``x = -0.0`` (IEEE: -0 + -0 is -0, -0 + +0 is +0), so no memo, shared subtree or kernel cache
may take one for the other (the bug: ``Const(-0.0) == Const(0.0)`` made both read +0)."""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.dialect.formula.expr import Input
from tdflow.dialect.formula.nodes import Const
from tdflow.lowering.elementwise_numpy import render_numpy


def _want(x: np.ndarray) -> np.ndarray:
    return (x + np.float32(-0.0)) * (x + np.float32(0.0))


@pytest.mark.parametrize("n", [4, 8192])  # numpy's small path and the native one
def test_plus_minus_zero_and_plus_zero_stay_two_subtrees(n):
    x = Input(0)
    expr = (x + Const(-0.0)) * (x + Const(0.0))
    run = render_numpy(expr, ["f32"], "f32")
    a = np.full(n, -0.0, np.float32)
    a[::3] = 1.5
    got = run([a])
    assert np.array_equal(np.signbit(got), np.signbit(_want(a)))
    assert np.signbit(_want(a)[1])  # -0 * +0 = -0: the case that went wrong


def test_an_integer_and_a_float_literal_are_two_constants():
    assert Const(1) != Const(1.0) and Const(True) != Const(1)
    assert len({Const(0), Const(0.0), Const(-0.0), Const(False)}) == 4

