"""``tril``/``fused_scale_tril``'s CPU kernel written straight into its output against numpy's
``where(tri, x * scale, fill)``, bit for bit: NaN, inf and signed zeros, integer types, any
diagonal, a preallocated output, in place, and an output that overlaps the input elsewhere."""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.runtime.kernels.slice import fused_scale_tril, tril


def _attrs(diagonal=0, scale=None, fill=0.0, floating=True):
    a = {"diagonal": diagonal, "is_floating_fill_value": floating,
         "floating_fill_value": float(fill), "integer_fill_value": int(fill) if fill == fill
         and abs(fill) != np.inf else 0}
    if scale is not None:
        a.update(is_floating_scale_value=floating, floating_scale_value=float(scale),
                 integer_scale_value=int(scale))
    return a


def _want(x, attrs, scale):
    keep = np.tri(*x.shape[-2:], attrs["diagonal"], dtype=bool)
    fill_key = "floating_fill_value" if attrs["is_floating_fill_value"] else "integer_fill_value"
    fill = np.array(attrs[fill_key]).astype(x.dtype)
    if scale is not None:
        x = x * np.array(scale).astype(x.dtype)
    return np.where(keep, x, fill)


def _x(dtype, shape=(3, 2, 7, 5)):
    rng = np.random.default_rng(7)
    if np.issubdtype(dtype, np.floating):
        x = rng.normal(0, 3, shape).astype(dtype)
        flat = x.reshape(-1)
        flat[::11], flat[1::13], flat[2::17], flat[3::19] = np.nan, np.inf, -0.0, -np.inf
        return x
    return rng.integers(-100, 100, shape).astype(dtype)


def _bits(a):
    return a.view(np.uint8)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("diagonal", [-2, 0, 1, 9])
@pytest.mark.parametrize("scale", [None, 0.125, -3.0])
def test_written_into_its_output_as_numpy_s_where(dtype, diagonal, scale):
    x = _x(dtype)
    floating = np.issubdtype(dtype, np.floating)
    attrs = _attrs(diagonal, scale if floating or scale is None else -3,
                   -np.inf if floating else -7, floating)
    kernel = tril if scale is None else fused_scale_tril
    s = None if scale is None else (scale if floating else -3)
    want = _want(x, attrs, s)
    (got,) = kernel(attrs, [x], [])
    assert np.array_equal(_bits(got), _bits(np.ascontiguousarray(want)))
    out = np.full_like(x, 99)
    (got,) = kernel(attrs, [x], [out])
    assert got is out and np.array_equal(_bits(out), _bits(want))
    y = x.copy()
    (got,) = kernel(attrs, [y], [y])  # in place
    assert np.array_equal(_bits(y), _bits(want))


def test_an_output_overlapping_the_input_elsewhere_reads_the_input_first():
    buf = _x(np.float32, (2, 4, 4)).reshape(-1)
    base = np.concatenate([buf, np.zeros(4, np.float32)])
    x = base[:32].reshape(2, 4, 4)
    want = _want(x.copy(), _attrs(0, 0.5), 0.5)
    out = base[4:36].reshape(2, 4, 4)
    (got,) = fused_scale_tril(_attrs(0, 0.5), [x], [out])
    assert np.array_equal(_bits(out), _bits(want))
