"""Attributes shared by the sliding-window families (conv and pool): ``data_format`` and the
per-spatial-dim pairs.

``data_format`` is OneFlow's ``"channels_first"`` (NCHW) or ``"channels_last"`` (NHWC); the
spellings ``"NCHW"``/``"NHWC"`` are accepted too.
"""

from __future__ import annotations

from .context import HookError, InferContext

FORMATS = {"channels_first": True, "NCHW": True, "channels_last": False, "NHWC": False}


def channels_first(ctx: InferContext) -> bool:
    fmt_ = ctx.attr("data_format")
    if fmt_ not in FORMATS:
        raise HookError(f"data_format must be \"channels_first\" or \"channels_last\" (or "
                        f"\"NCHW\"/\"NHWC\"), got \"{fmt_}\"", attr="data_format")
    return FORMATS[fmt_]


def window_attrs(ctx: InferContext, names=("kernel_size", "strides", "dilation_rate",
                                              "padding_before")):
    """The window's four pairs, as the dialect normalized them (TDF_PairAttr in the records:
    two entries each, kernel, stride and dilation >= 1, padding >= 0)."""
    return tuple(tuple(ctx.attr(n)) for n in names)


def split_nchw(shape, first: bool):
    """(N, C, (H, W)) of a rank-4 shape in either layout."""
    if first:
        return shape[0], shape[1], shape[2:]
    return shape[0], shape[3], shape[1:3]


def join_nchw(n, c, hw, first: bool):
    return (n, c, *hw) if first else (n, *hw, c)
