"""Attribute values as the generators read them: one helper per concept.

Generators receive every attribute with its ``.td`` default filled in (:func:`generate
<tdflow.lowering.cuda.code.generate>` fills what a caller left out), so they read
``attrs[name]``. What a value *means* beyond its default is decided here, once for every
generator: a negative dim or axis counts from the end (:func:`norm_axis`, :func:`axes`), a
2-D window attribute is a pair (:func:`pair`), a data format is channels first or last
(:func:`channels_last`), ``bias_add``'s axis names the dim its bias runs along
(:func:`bias_axis`). Errors name the op. (The dialect's own normalization, when it is wired in,
replaces these in one place.)

>>> norm_axis("tdflow.gather", -1, 3), axes("tdflow.reduce_sum", [-1, 0], 3, every=True)
(2, (0, 2))
>>> pair("tdflow.max_pool_2d", "stride", [2], 1, repeat_one=True), channels_last("op", "NHWC")
((2, 2), True)
"""

from __future__ import annotations

from collections.abc import Sequence

from .code import CudaCodegenError

__all__ = ["norm_axis", "axes", "pair", "channels_last", "bias_axis"]

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


def pair(op: str, name: str, value: Sequence[int] | None, default: int,
         repeat_one: bool = False) -> tuple[int, int]:
    """A 2-D window attribute (kernel size, stride, padding, dilation) as ``(h, w)``: an empty
    (or absent) list is ``(default, default)``; one entry is used for both dims when
    ``repeat_one`` (pooling's convention), else only two entries are accepted (convolutions).

    >>> pair("tdflow.conv2d", "strides", [], 1), pair("tdflow.conv2d", "strides", [2, 3], 1)
    ((1, 1), (2, 3))
    """
    if value is None or len(value) == 0:
        return (default, default)
    if repeat_one and len(value) == 1:
        return (int(value[0]), int(value[0]))
    if len(value) != 2:
        raise CudaCodegenError(f"{op}: {name} has {len(value)} entries {list(value)}, expected "
                               f"{'1 or 2' if repeat_one else '2'}")
    return int(value[0]), int(value[1])


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


def bias_axis(op: str, axis: int, a: Sequence[int], b: Sequence[int]) -> int:
    """``bias_add``'s ``axis`` made non-negative, checked against the shapes: the 1-D bias ``b``
    must be as long as dim ``axis`` of ``a``.

    >>> bias_axis("tdflow.bias_add", -1, (2, 3), (3,))
    1
    """
    ax = int(axis)
    if ax < 0:
        ax += len(a)
    if not 0 <= ax < len(a) or tuple(b) != (a[ax],):
        raise CudaCodegenError(f"{op}: b of shape {tuple(b)} does not match axis {ax} of a with "
                               f"shape {tuple(a)}")
    return ax
