"""One step of a rendered numpy program
(:func:`~tdflow.lowering.elementwise_numpy.render_numpy`): the closure a node of the expression
becomes, reading and writing the program's register list.

The steps run once per node per call of the program; :func:`make_step` picks, at render time,
the closure for the node's kind and operand count, so a call asks nothing but what its values
decide (the branch-free select's conditions).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["make_step"]


# Unsigned integer views by item size, for the branch-free select.
_BITS = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
         8: np.dtype(np.uint64)}


def _same_type(v: Any, dest: np.ndarray) -> bool:
    """``v`` can be read as ``dest``'s bits: an array of its dtype, or a Python scalar."""
    if isinstance(v, np.ndarray):
        return v.dtype == dest.dtype
    return isinstance(v, (int, float, bool, np.generic))


def _bits_of(v: Any, dtype: np.dtype, bits: np.dtype) -> np.ndarray:
    if not isinstance(v, np.ndarray):
        v = np.asarray(v, dtype=dtype)  # a weak scalar takes the destination's type, as C does
    return v.view(bits)


def make_step(kind: str, f: Any, idx: tuple[int, ...], d: int, dt: Any,
              fresh: bool) -> Callable[[list[Any]], None]:
    """One closure per node: ``kind`` (``ufunc``, ``cmp``, ``cast``, ``select``) applies ``f``
    (or casts to ``dt``) to the registers ``idx`` of ``r``, the register list of the current
    call, and stores the value in register ``d``.

    ``fresh`` steps let numpy allocate their result (used when inputs broadcast, so scratch
    values differ in shape and slots cannot be recycled).

    >>> import numpy as np
    >>> r = [np.float32([1, -2]), np.float32([3, 3]), np.empty(2, np.float32),
    ...      np.array([True, False])]
    >>> make_step("ufunc", np.add, (0, 1), 2, np.float32, fresh=False)(r)
    >>> r[2].tolist()
    [4.0, 1.0]
    >>> make_step("select", None, (3, 0, 1), 2, np.float32, fresh=False)(r)  # where(r3, r0, r1)
    >>> r[2].tolist()
    [1.0, 3.0]
    """
    if fresh and kind in ("ufunc", "cmp"):
        if kind == "cmp":
            a, b = idx

            def step(r: list[Any]) -> None:
                r[d] = f(r[a], r[b])
        elif len(idx) == 1:
            (a,) = idx

            def step(r: list[Any]) -> None:
                r[d] = f(r[a], dtype=dt, casting="unsafe")
        else:
            a, b = idx

            def step(r: list[Any]) -> None:
                r[d] = f(r[a], r[b], dtype=dt, casting="unsafe")
        return step
    if kind == "ufunc":
        if len(idx) == 1:
            (a,) = idx

            def step(r: list[Any]) -> None:
                r[d] = f(r[a], out=r[d], dtype=dt, casting="unsafe")
        else:
            a, b = idx

            def step(r: list[Any]) -> None:
                r[d] = f(r[a], r[b], out=r[d], dtype=dt, casting="unsafe")
        return step
    if kind == "cmp":
        a, b = idx

        def step(r: list[Any]) -> None:
            r[d] = f(r[a], r[b], out=r[d], casting="unsafe")
        return step
    if kind == "cast":
        (a,) = idx

        def step(r: list[Any]) -> None:
            dest = None if fresh else r[d]
            if dest is None:
                r[d] = np.asarray(r[a]).astype(dt)
            elif dest.dtype == dt:
                np.copyto(dest, r[a], casting="unsafe")
            else:  # the root of a cast stored into another type: round through ``dt`` first
                np.copyto(dest, np.asarray(r[a]).astype(dt), casting="unsafe")
        return step
    if kind == "select":
        c, a, b = idx

        def step(r: list[Any]) -> None:
            cond, va, vb, dest = r[c], r[a], r[b], None if fresh else r[d]
            bits = None if dest is None else _BITS.get(dest.dtype.itemsize)
            if dest is None:
                r[d] = np.where(cond, va, vb).astype(dt, copy=False)
            elif (bits is not None and dest.dtype.kind in "fiub" and dest.ndim
                  and isinstance(cond, np.ndarray) and cond.dtype == np.bool_
                  and _same_type(va, dest) and _same_type(vb, dest)
                  and not (isinstance(vb, np.ndarray) and np.may_share_memory(dest, vb))):
                # Branch-free: dest = b ^ ((a ^ b) * cond) on the bits. A masked copy with an
                # unpredictable mask costs ~50x a plain pass; this is three plain passes, and
                # bit-exact (NaNs and signed zeros included).
                du = dest.view(bits)
                ub = _bits_of(vb, dest.dtype, bits)
                np.bitwise_xor(_bits_of(va, dest.dtype, bits), ub, out=du)
                np.multiply(du, cond, out=du)
                np.bitwise_xor(du, ub, out=du)
            elif isinstance(va, np.ndarray) and np.may_share_memory(dest, va):
                np.copyto(dest, vb, where=np.logical_not(cond), casting="unsafe")
            else:
                np.copyto(dest, vb, casting="unsafe")
                np.copyto(dest, va, where=cond, casting="unsafe")
        return step
    raise ValueError(kind)  # pragma: no cover
