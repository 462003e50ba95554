"""Shape and type kernels: reshape, transpose, cat, cast, constant, ones_like, *_like."""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.runtime.kernels.registry import KernelNotFoundError, select_kernel

NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i8": np.int8, "i32": np.int32,
      "i64": np.int64, "i1": np.bool_}
MLIR = {v: k for k, v in NP.items()}


def run(op, inputs, attrs, outs=None):
    dts = tuple(MLIR[a.dtype.type] for a in inputs)
    return select_kernel(op, "cpu", dts, attrs)(attrs, inputs, outs)


@pytest.mark.parametrize("dtype", list(NP))
def test_reshape_all_dtypes(dtype):
    x = (np.arange(12) % 3).astype(NP[dtype])
    (y,) = run("tdflow.reshape", [x], {"shape": [3, -1]})
    assert y.shape == (3, 4) and y.dtype == NP[dtype]
    assert y.ravel().tolist() == x.tolist()
    out = np.empty((2, 6), NP[dtype])
    assert run("tdflow.reshape", [x], {"shape": [2, 6]}, [out])[0] is out
    assert out.ravel().tolist() == x.tolist()


def test_reshape_errors_and_edges():
    x = np.arange(6.0)
    with pytest.raises(ValueError, match="at most one -1"):
        run("tdflow.reshape", [x], {"shape": [-1, -1]})
    with pytest.raises(ValueError, match="has 4 elements"):
        run("tdflow.reshape", [x], {"shape": [2, 2]})
    with pytest.raises(ValueError, match="cannot infer -1"):
        run("tdflow.reshape", [x], {"shape": [4, -1]})
    assert run("tdflow.reshape", [np.ones((0, 2))], {"shape": [0, 5]})[0].shape == (0, 5)
    assert run("tdflow.reshape", [np.ones(1)], {"shape": []})[0].shape == ()
    # in place: the output buffer is the input's buffer viewed with the new shape
    buf = np.arange(6.0)
    (y,) = run("tdflow.reshape", [buf], {"shape": [2, 3]}, [buf.reshape(2, 3)])
    assert y.tolist() == [[0, 1, 2], [3, 4, 5]]
    # a transposed (non-contiguous) input into a contiguous buffer
    t = np.arange(6.0).reshape(2, 3).T
    out = np.empty(6)
    run("tdflow.reshape", [t], {"shape": [6]}, [out])
    assert out.tolist() == [0, 3, 1, 4, 2, 5]


def test_transpose():
    x = np.arange(24).reshape(2, 3, 4).astype(np.int32)
    (y,) = run("tdflow.transpose", [x], {"perm": [2, 0, 1]})
    assert y.shape == (4, 2, 3) and y.flags.c_contiguous
    for i in range(2):
        for j in range(3):
            for k in range(4):
                assert y[k, i, j] == x[i, j, k]
    (z,) = run("tdflow.transpose", [x], {"perm": [-1, 0, 1]})
    assert np.array_equal(z, y)
    out = np.empty((4, 2, 3), np.int32)
    assert run("tdflow.transpose", [x], {"perm": [2, 0, 1]}, [out])[0] is out
    with pytest.raises(ValueError, match="not a permutation"):
        run("tdflow.transpose", [x], {"perm": [0, 0, 1]})


def test_cat():
    a = np.ones((2, 3), np.float32)
    b = np.zeros((1, 3), np.float32)
    c = np.ones((0, 3), np.float32)
    (y,) = run("tdflow.cat", [a, b, c], {"axis": 0})
    assert y.tolist() == [[1, 1, 1], [1, 1, 1], [0, 0, 0]]
    (z,) = run("tdflow.cat", [a, a], {"axis": -1, "max_dim_size": 6})
    assert z.shape == (2, 6)
    assert run("tdflow.cat", [a], {})[0].shape == (2, 3)  # default axis 0
    out = np.empty((4, 3), np.float32)
    assert run("tdflow.cat", [a, a], {"axis": 0}, [out])[0] is out
    with pytest.raises(KernelNotFoundError):
        run("tdflow.cat", [a, a.astype(np.float64)], {"axis": 0})


@pytest.mark.parametrize("src", list(NP))
@pytest.mark.parametrize("dst", list(NP))
def test_cast_matrix(src, dst):
    x = np.array([0, 1, 2, -3, 5], np.float64)
    xs = x.astype(NP[src]) if src != "i1" else x != 0
    (y,) = run("tdflow.cast", [xs], {"dtype": dst})
    assert y.dtype == NP[dst]
    want = [NP[dst](v) if dst != "i1" else bool(v) for v in xs.tolist()]
    assert y.tolist() == [w.item() if hasattr(w, "item") else w for w in want]


def test_cast_truncates_like_c():
    (y,) = run("tdflow.cast", [np.array([1.9, -1.9], np.float32)], {"dtype": "i32"})
    assert y.tolist() == [1, -1]


def test_constant():
    (y,) = run("tdflow.constant", [], {"dtype": "i32", "shape": [2, 2], "integer_value": 7})
    assert y.dtype == np.int32 and y.tolist() == [[7, 7], [7, 7]]
    (y,) = run("tdflow.constant", [], {"dtype": "f16", "shape": [3], "is_floating_value": True,
                                       "floating_value": 0.25})
    assert y.dtype == np.float16 and y.tolist() == [0.25] * 3
    (y,) = run("tdflow.constant", [], {"dtype": "f32", "shape": []})
    assert y.shape == () and y == 0
    out = np.empty((2,), np.float64)
    assert run("tdflow.constant", [], {"dtype": "f64", "shape": [2], "is_floating_value": True,
                                       "floating_value": 1.5}, [out])[0] is out
    with pytest.raises(ValueError, match="preallocated output 0 has shape"):
        run("tdflow.constant", [], {"dtype": "f64", "shape": [3]}, [out])


def test_ones_like():
    for dt in NP.values():
        (y,) = run("tdflow.ones_like", [np.zeros((2, 0, 1), dt)], {})
        assert y.shape == (2, 0, 1) and y.dtype == dt
    (y,) = run("tdflow.ones_like", [np.zeros(3, np.int8)], {})
    assert y.tolist() == [1, 1, 1]


def test_reduce_sum_like():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    (y,) = run("tdflow.reduce_sum_like", [x, np.empty((1, 3, 1), np.float32)], {"axis": [0, 2]})
    want = np.zeros((1, 3, 1))
    for i in range(2):
        for j in range(3):
            for k in range(4):
                want[0, j, 0] += x[i, j, k]
    np.testing.assert_array_equal(y, want)
    (y,) = run("tdflow.reduce_sum_like", [x, np.empty((3, 4), np.float32)], {"axis": [0]})
    np.testing.assert_array_equal(y, x[0] + x[1])
    (y,) = run("tdflow.reduce_sum_like", [x, np.empty((2, 3, 4), np.float32)], {"axis": []})
    assert np.array_equal(y, x) and y is not x


def test_broadcast_like():
    x = np.array([1, 2, 3], np.int64)
    (y,) = run("tdflow.broadcast_like", [x, np.empty((2, 3), np.int64)], {"broadcast_axes": [0]})
    assert y.tolist() == [[1, 2, 3], [1, 2, 3]]
    (y,) = run("tdflow.broadcast_like", [x, np.empty((3, 2), np.int64)], {"broadcast_axes": [1]})
    assert y.tolist() == [[1, 1], [2, 2], [3, 3]]
    (y,) = run("tdflow.broadcast_like", [x.reshape(3, 1), np.empty((3, 4), np.int64)],
               {"broadcast_axes": [-1]})
    assert y.shape == (3, 4) and (y[:, 3] == x).all()
    (y,) = run("tdflow.broadcast_like", [x, np.empty((2, 3), np.int64)], {})
    assert y.shape == (2, 3)
    with pytest.raises(ValueError, match="cannot broadcast"):
        run("tdflow.broadcast_like", [x, np.empty((2, 4), np.int64)], {"broadcast_axes": [0]})
