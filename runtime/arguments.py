"""A compiled program's call arguments: checked against the entry's types and made arrays.

:func:`bind_arguments` orders the positional and keyword arguments of a call, converts each to
an array where that is faithful, and raises :class:`ArgumentError` naming the argument and the
type it must have.

>>> import numpy as np
>>> bind_arguments("f", [("x", (2,), "f32")], (np.ones(2, np.float32),), {})[0].shape
(2,)
>>> try:
...     bind_arguments("f", [("x", (2,), "f32")], (np.ones(2),), {})
... except ArgumentError as e:
...     print(str(e)[:60])
@f: argument %x must be tensor<2xf32> (float32 array of shap
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from tdflow.dialect.types import DTYPES

from tdflow.core.errors import TdflowError

__all__ = ["ArgumentError", "bind_arguments", "describe_array", "type_text"]


class ArgumentError(TdflowError, TypeError):
    """A compiled program was called with a missing, extra or mistyped argument.

    ``render()`` gives the CLI's diagnostic line.
    """

    def render(self) -> str:
        return f"error: {self}"


def describe_array(a: np.ndarray) -> str:
    shape = "x".join(map(str, a.shape)) or "scalar"
    return f"{a.dtype} array of shape {shape}"


def type_text(shape: tuple[int | None, ...] | None, dtype: str) -> str:
    """The MLIR spelling of a tensor type, for messages that name an argument's type.

    >>> type_text((2, None), "f32"), type_text(None, "i64")
    ('tensor<2x?xf32>', 'tensor<*xi64>')
    """
    if shape is None:
        return f"tensor<*x{dtype}>"
    return "tensor<" + "".join(f"{'?' if d is None else d}x" for d in shape) + dtype + ">"


def _shape_text(shape: tuple[int | None, ...]) -> str:
    return "x".join("?" if d is None else str(d) for d in shape) or "scalar"


def _fits(shape: tuple[int, ...], want: tuple[int | None, ...] | None) -> bool:
    if want is None:
        return True
    return len(shape) == len(want) and all(w is None or s == w for s, w in zip(shape, want))


def bind_arguments(func: str, specs: Sequence[tuple[str, Any, str]], args: Sequence[Any],
                   kwargs: dict[str, Any]) -> list[np.ndarray]:
    """Order and check call arguments against ``specs`` (name, shape, dtype) of ``@func``.

    A ``None`` dim (or shape) accepts any size (or rank). ``ArgumentError`` names the argument
    that is missing, unknown, given twice, or of the wrong shape or dtype.
    """
    names = {name: i for i, (name, _, _) in enumerate(specs)}
    signature = ", ".join(f"%{n}: {type_text(s, d)}" for n, s, d in specs)
    if len(args) > len(specs):
        raise ArgumentError(f"@{func} takes {len(specs)} arguments ({signature}), "
                            f"got {len(args)}")
    values: list[Any] = list(args) + [_MISSING] * (len(specs) - len(args))
    for key, v in kwargs.items():
        i = names.get(key)
        if i is None:
            raise ArgumentError(f"@{func} has no argument {key!r}; arguments: {signature}")
        if i < len(args):
            raise ArgumentError(f"@{func}: argument {key!r} given twice")
        values[i] = v
    out = []
    for (name, shape, dtype), v in zip(specs, values):
        if v is _MISSING:
            raise ArgumentError(f"@{func}: missing argument %{name} ({type_text(shape, dtype)})")
        a = v if type(v) is np.ndarray else _as_array(v, func, name, shape, dtype)
        if a.dtype != DTYPES[dtype] or not _fits(a.shape, shape):
            want = "any shape" if shape is None else f"shape {_shape_text(shape)}"
            hint = ""
            if a.dtype != DTYPES[dtype] and _fits(a.shape, shape):
                hint = f"; convert it first (.astype(np.{np.dtype(DTYPES[dtype])})): " \
                       f"arguments are never cast implicitly"
            raise ArgumentError(
                f"@{func}: argument %{name} must be {type_text(shape, dtype)} "
                f"({np.dtype(DTYPES[dtype])} array of {want}), got {describe_array(a)}{hint}")
        out.append(a)
    return out


_MISSING = object()  # an argument not given (None is a given, wrong, value)


def _as_array(v: Any, func: str, name: str, shape: Any, dtype: str) -> np.ndarray:
    """A call argument as an array; ``ArgumentError`` for what cannot be one faithfully."""
    want = type_text(shape, dtype)
    if isinstance(v, np.ma.MaskedArray):  # np.asarray would drop the mask silently
        raise ArgumentError(f"@{func}: argument %{name} ({want}) is a masked array; masks are "
                            f"not supported: pass array.filled(value)")
    if v is None:
        raise ArgumentError(f"@{func}: argument %{name} must be {want}, got None")
    numpy = getattr(v, "numpy", None)
    if callable(numpy) and not isinstance(v, np.ndarray):
        return np.asarray(numpy())
    try:
        a = np.asarray(v)
    except (ValueError, TypeError) as e:  # ragged nested lists, unconvertible objects
        raise ArgumentError(f"@{func}: argument %{name} ({want}) cannot be made an array: "
                            f"{e}") from None
    if a.dtype == object:
        raise ArgumentError(f"@{func}: argument %{name} must be {want}, got "
                            f"{type(v).__name__} (numpy dtype object)")
    return a
