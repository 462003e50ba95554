"""``tdflow.functional``: one Python function per op of the standard dialect.

This is the public home of the eager functional API (implemented in
:mod:`tdflow.runtime.functional`), so the usual spellings work::

    >>> import numpy as np
    >>> import tdflow
    >>> import tdflow.functional as F
    >>> F.relu(tdflow.tensor(np.array([-1.0, 2.0], np.float32))).numpy()
    array([0., 2.], dtype=float32)
    >>> from tdflow.functional import leaky_relu, concat
"""

from __future__ import annotations

from tdflow.runtime import functional as _impl

globals().update(_impl.functions)
EagerError = _impl.EagerError
__all__ = sorted([*_impl.functions, "EagerError"])
