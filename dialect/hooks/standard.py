"""Importing this module registers the hooks of every op in the standard ``ops.td``."""

from . import elementwise, fused, grads, linalg, nn, optim, reduce, shape_ops, slice  # noqa: F401
