"""The Python API checks its arguments (issue 24): ``value_and_grad``'s ``wrt`` and
``sgd_step``'s ``lr`` are refused with a ``TypeError``/``ValueError`` naming the argument and
what was expected, never an AttributeError or a silently wrong meaning."""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.dialect.grad import GradError

import tdflow

PROG = ('func.func @f(%w: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<f32> {\n'
        '  %0 = "tdflow.broadcast_mul"(%w, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n'
        '  %1 = "tdflow.reduce_sum"(%0) {axis = [0 : si32]} : (tensor<2xf32>) -> tensor<f32>\n'
        '  return %1 : tensor<f32>\n}')


@pytest.mark.parametrize("wrt, error, text", [
    ([0], TypeError, "wrt: argument names are strings, got int 0"),
    ("x", GradError, "no argument %x"),
    ([], ValueError, "wrt is empty"),
    (["w", "%w"], ValueError, "wrt names w more than once"),
    (3, TypeError, "wrt: a name or a sequence of argument names, got int"),
])
def test_bad_wrt_is_refused(wrt, error, text):
    with pytest.raises(error, match=text):
        tdflow.value_and_grad(PROG, wrt=wrt)


def test_one_name_is_one_argument_not_its_characters():
    vg = tdflow.value_and_grad(PROG, wrt="%w")
    w, b = np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32)
    value, grads = vg(w, b)
    assert float(value) == 11.0 and len(grads) == 1
    np.testing.assert_array_equal(grads[0], b)


@pytest.mark.parametrize("lr, error", [("0.1", TypeError), (True, TypeError),
                                       (float("nan"), ValueError), (float("inf"), ValueError)])
def test_bad_learning_rate_is_refused(lr, error):
    with pytest.raises(error, match="lr must be"):
        tdflow.sgd_step(PROG, lr=lr)
