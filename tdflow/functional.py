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
# The API's own helpers, beside the generated functions (which never clash with them).
EagerError = _impl.EagerError
SIGNATURES_FILE = _impl.SIGNATURES_FILE
default_signature = _impl.default_signature
functions = _impl.functions
signatures = _impl.signatures
__all__ = sorted([*_impl.functions, *_impl.__all__])
