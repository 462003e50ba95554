"""Importing this module registers the hooks of every op in the standard ``ops.td``: one module
per op family (``dialect/hooks/<family>.py``, the family's ``.td`` is
``dialect/include/tdflow/ops/<family>.td``); the math family's ops are all formula ops and need none."""

from . import (  # noqa: F401
    boxing,
    conv,
    elementwise,
    index,
    linalg,
    norm,
    optim,
    pool,
    random,
    reduce,
    shape,
    slice,
    softmax,
)
