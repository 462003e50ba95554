"""Attribute values as the generators read them, where the dialect does not decide them.

Generators receive every attribute complete and normalized (:func:`generate
<tdflow.lowering.cuda.code.generate>` applies the dialect's one normalization,
``tdflow.dialect.attr_normalize.complete_attrs``): an attribute declared with Base.td's
``TDF_AxisAttr``/``TDF_ScanAxisAttr``/``TDF_AxesAttr``/``TDF_PermAttr``/``TDF_DimsAttr``/
``TDF_PairAttr`` arrives non-negative and checked, and the generator reads ``attrs[name]``.
What is left here is data formats (:func:`channels_last`). Errors name the op.

>>> channels_last("op", "NHWC")
True
"""

from __future__ import annotations

from .code import CudaCodegenError

__all__ = ["channels_last"]

_FIRST = ("channels_first", "NCHW")
_LAST = ("channels_last", "NHWC")


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
