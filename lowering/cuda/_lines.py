"""Lines along one dim of a row-major tensor: their count, length, stride and first
element's offset (the scans, arg-max and top-k, and the dim scatters give a thread a line),
and the unsigned types integer running sums and products wrap in.

>>> lines_along((2, 3, 4), 1), line_base("l", 3, 4)
((8, 3, 4), '(l / 4LL) * 12LL + l % 4LL')
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .common import is_float

UNSIGNED = {"i8": "unsigned", "i32": "unsigned", "i64": "unsigned long long"}


def prod(xs: Sequence[int]) -> int:
    """The product of ``xs`` in int64 (1 when empty): ``prod([2, 3]) == 6``."""
    return int(np.prod(list(xs), dtype=np.int64)) if len(xs) else 1


def lines_along(shape: Sequence[int], d: int) -> tuple[int, int, int]:
    """``(lines, n, inner)``: how many lines run along dim ``d``, their length and stride.

    >>> lines_along((2, 3, 4), 1)
    (8, 3, 4)
    """
    n, inner = shape[d], prod(shape[d + 1:])
    return prod(shape[:d]) * inner, n, inner


def line_base(var: str, n: int, inner: int) -> str:
    """C expression of the offset of line ``var``'s first element (lines along a dim of
    length ``n`` and stride ``inner``).

    >>> line_base("l", 3, 4)
    '(l / 4LL) * 12LL + l % 4LL'
    """
    return var if inner == 1 and n == 1 else (
        f"{var} * {n}LL" if inner == 1 else f"({var} / {inner}LL) * {n * inner}LL + {var} % {inner}LL")


def is_nan(dt: str, v: str) -> str:
    """C test of ``v`` (of ``dt``, widened) being NaN: ``false`` for integers.

    >>> is_nan("f32", "v"), is_nan("i64", "v")
    ('(v != v)', 'false')
    """
    return f"({v} != {v})" if is_float(dt) else "false"
