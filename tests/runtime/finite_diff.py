"""Central finite differences, the reference the gradient tests of this folder share."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def central_differences(f: Callable[[np.ndarray], float], a: np.ndarray,
                        eps: float = 1e-6) -> np.ndarray:
    """``d f / d a`` element by element: ``(f(a + eps e_i) - f(a - eps e_i)) / (2 eps)``.

    >>> central_differences(lambda v: float((v * v).sum()), np.array([1.0, -2.0])).round(6)
    array([ 2., -4.])
    """
    g = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        up, down = a.copy(), a.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (f(up) - f(down)) / (2 * eps)
    return g
