"""Attribute values as the generators read them, where the dialect does not decide them.

Generators receive every attribute complete and normalized (:func:`generate
<tdflow.lowering.cuda.code.generate>` applies the dialect's one normalization,
``tdflow.dialect.attr_normalize.complete_attrs``): an attribute declared with Base.td's
``TDF_AxisAttr``/``TDF_AxesAttr``/``TDF_PairAttr`` arrives non-negative and checked, and the
generator reads ``attrs[name]``. The helpers here serve the attributes not declared that way
(cumsum's and cumprod's ``dim``, which a scalar may carry; normalization's ``axis``:
:func:`norm_axis`) and data formats (:func:`channels_last`). Errors name the op.

>>> norm_axis("tdflow.cumsum", -1, 3)
2
>>> channels_last("op", "NHWC")
True
"""

from __future__ import annotations

from .code import CudaCodegenError

__all__ = ["norm_axis", "channels_last"]

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
