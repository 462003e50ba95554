"""Bit-for-bit comparison of results, nested in tuples as programs return them: floats by
their bit patterns (so NaN payloads, signs of zero and infinities count), shapes too.

>>> import numpy as np
>>> assert_same_bits((np.float32([0.0, np.nan]), 1.0), (np.float32([0.0, np.nan]), 1.0))
>>> assert_same_bits(np.float32([0.0]), np.float32([-0.0]))  # doctest: +IGNORE_EXCEPTION_DETAIL
Traceback (most recent call last):
AssertionError
"""

from __future__ import annotations

import numpy as np


def bits(a) -> np.ndarray:
    """``a`` as an array whose floats are seen as unsigned integers of their width."""
    a = np.ascontiguousarray(np.asarray(a))
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize]) if a.dtype.kind == "f" else a


def assert_same_bits(got, want) -> None:
    """``got`` and ``want`` (arrays, scalars or tuples of them) hold the same shapes and bits."""
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(g, tuple):
            assert_same_bits(g, w)
        else:
            assert np.asarray(g).shape == np.asarray(w).shape
            assert np.array_equal(bits(g), bits(w))
