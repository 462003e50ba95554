"""Attribute values as the generators read them, where the dialect does not decide them.

Generators receive every attribute complete and normalized (:func:`generate
<tdflow.lowering.cuda.code.generate>` applies the dialect's one normalization,
``tdflow.dialect.attr_normalize.complete_attrs``): an attribute declared with Base.td's
``TDF_AxisAttr``/``TDF_AxesAttr``/``TDF_PairAttr`` arrives non-negative and checked, and the
generator reads ``attrs[name]``. The helpers here serve the attributes not declared that way
yet (cumsum's ``dim``, normalization's ``axis``, ``reduce_sum_like``'s ``axis``, narrow's
``dim``: :func:`norm_axis`, :func:`axes`) and data formats (:func:`channels_last`). Errors
name the op.

>>> norm_axis("tdflow.cumsum", -1, 3), axes("tdflow.reduce_sum_like", [-1, 0], 3, every=False)
(2, (0, 2))
>>> channels_last("op", "NHWC")
True
"""

from __future__ import annotations

from collections.abc import Sequence

from .code import CudaCodegenError

__all__ = ["norm_axis", "axes", "channels_last"]

_FIRST = ("channels_first", "NCHW")
_LAST = ("channels_last", "NHWC")


def norm_axis(op: str, axis: int, ndim: int, what: str = "axis") -> int:
    """``axis`` made non-negative for rank ``ndim``; :class:`CudaCodegenError` naming ``op``
    and the attribute (``what``) when it is outside ``[-ndim, ndim)``.

    >>> norm_axis("tdflow.cumsum", -1, 3, "dim")
    2
    """
    a = int(axis)
    if not -ndim <= a < ndim:
        raise CudaCodegenError(f"{op}: {what} {axis} is out of range for a tensor of rank {ndim}")
    return a + ndim if a < 0 else a


def axes(op: str, axis: int | Sequence[int], ndim: int, every: bool) -> tuple[int, ...]:
    """A reduction's ``axis`` attribute (one axis or a list) as sorted, distinct, non-negative
    axes; an empty list means every axis when ``every`` (``reduce_sum``), none otherwise
    (``reduce_sum_like``). Axis 0 of a scalar is accepted, as numpy's reductions accept it.

    >>> axes("tdflow.reduce_sum", [], 2, every=True), axes("tdflow.reduce_sum_like", [], 2, every=False)
    ((0, 1), ())
    """
    listed = [axis] if isinstance(axis, int) else list(axis)
    if not listed:
        return tuple(range(ndim)) if every else ()
    out = set()
    for a in listed:
        b = int(a) + (ndim if int(a) < 0 else 0)
        if not 0 <= b < max(ndim, 1):
            raise CudaCodegenError(f"{op}: axis {a} is out of range for a tensor of rank {ndim}")
        out.add(b)
    return tuple(sorted(out))


def channels_last(op: str, data_format: str) -> bool:
    """Whether ``data_format`` puts channels last (``channels_last``/``NHWC``) rather than
    first (``channels_first``/``NCHW``); :class:`CudaCodegenError` for anything else.

    >>> channels_last("tdflow.conv2d", "channels_first")
    False
    """
    fmt = str(data_format)
    if fmt in _FIRST:
        return False
    if fmt in _LAST:
        return True
    raise CudaCodegenError(f"{op}: unknown data_format {fmt!r}")
