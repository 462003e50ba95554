"""Attribute values as the generators read them, one helper per concept.

Dims and axes may be negative (numpy's convention): :func:`norm_axis` and :func:`norm_dim` make
them non-negative and range-check them, naming the op.

>>> norm_axis("tdflow.gather", -1, 3), norm_dim("tdflow.cumsum", 1, 2)
(2, 1)
"""

from __future__ import annotations

from .code import CudaCodegenError


def norm_axis(op: str, axis: int, ndim: int, what: str = "axis") -> int:
    """``axis`` made non-negative for rank ``ndim``; :class:`CudaCodegenError` naming ``op``
    and the attribute (``what``) otherwise: ``norm_axis("gather", -1, 3) == 2``."""
    a = int(axis)
    if not -ndim <= a < ndim:
        raise CudaCodegenError(f"{op}: {what} {axis} is out of range for a tensor of rank {ndim}")
    return a + ndim if a < 0 else a


def norm_dim(op: str, d: int, ndim: int) -> int:
    """``d`` made non-negative for rank ``ndim``; :class:`CudaCodegenError` naming ``op``
    otherwise: ``norm_dim("tdflow.cumsum", -1, 3) == 2``."""
    if not -ndim <= int(d) < ndim:
        raise CudaCodegenError(f"{op}: dim {d} is out of range for a tensor of rank {ndim}")
    return int(d) % ndim
