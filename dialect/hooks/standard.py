"""Importing this module registers the hooks of every op in the standard ``ops.td``."""

from . import (  # noqa: F401
    boxing,
    elementwise,
    elementwise_math,
    fused,
    grads,
    index,
    indexing,
    linalg,
    math_ops,
    nn,
    norm,
    optim,
    reduce,
    shape_ops,
    slice,
    train,
)
