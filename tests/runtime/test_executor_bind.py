"""The executor's argument binding: trailing keyword arguments in order take the fast path
(``value_and_grad``'s seeds are passed so) and bind exactly as the generic binder does."""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.runtime.arguments import ArgumentError

import tdflow

PROG = """func.func @f(%a: tensor<3xf32>, %b: tensor<3xf32>, %c: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "tdflow.broadcast_mul"(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "tdflow.broadcast_sub"(%0, %c) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}"""


def test_keywords_bind_like_positions():
    f = tdflow.compile(PROG)
    a, b, c = (np.arange(3, dtype=np.float32) + k for k in range(3))
    want = a * b - c
    for call in (lambda: f(a, b, c), lambda: f(a, b, c=c), lambda: f(a, c=c, b=b),
                 lambda: f(a=a, b=b, c=c), lambda: f(c=c, a=a, b=b)):
        assert np.array_equal(call(), want)


def test_keyword_errors_still_name_the_argument():
    f = tdflow.compile(PROG)
    a = np.zeros(3, np.float32)
    with pytest.raises(ArgumentError, match="%c"):
        f(a, a, c=np.zeros(3, np.float64))
    with pytest.raises(ArgumentError, match="no argument 'd'"):
        f(a, a, d=a)
    with pytest.raises(ArgumentError, match="given twice"):
        f(a, a, a, c=a)


def test_value_and_grad_seeds_unchanged():
    vg = tdflow.value_and_grad(PROG)
    a, b, c = (np.arange(3, dtype=np.float32) + k for k in range(3))
    _, (da, db, dc) = vg(a, b, c)
    assert np.array_equal(da, b) and np.array_equal(db, a) and np.array_equal(dc, -np.ones(3))
