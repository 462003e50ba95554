"""Helpers shared by the CPU kernels: outputs, optional operands, axes and accumulation types."""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.dialect.element_types import FLOAT_DTYPES, INT_DTYPES

from tdflow.core.errors import TdflowError

# The dtype sets kernels register with, from the one table of element types.
FLOATS = frozenset(FLOAT_DTYPES)
INTS = frozenset(INT_DTYPES)  # i8, i16, i32, i64, ui8, ui16, ui32, ui64
NUMERIC = FLOATS | INTS
ALL_DTYPES = NUMERIC | {"i1"}


#: the arrays a loaded plan passes as constant operands (its prologue's buffers, which nothing
#: writes after the plan is loaded), by id; weak, so a dropped plan's arrays leave
_CONSTANTS: weakref.WeakValueDictionary[int, np.ndarray] = weakref.WeakValueDictionary()


def mark_constant(a: np.ndarray) -> None:
    """Record ``a`` as an operand whose contents never change while it lives (the executor
    marks a plan's constant operands when it loads the plan): a kernel may keep what it
    derives from ``a`` (a transformed filter) for the next call.

    >>> a = np.ones(3); mark_constant(a); is_constant(a), is_constant(np.ones(3))
    (True, False)
    """
    _CONSTANTS[id(a)] = a


def is_constant(a: Any) -> bool:
    """Whether ``a`` itself (not an array equal to it) was given to :func:`mark_constant`.

    >>> is_constant(np.zeros(2))
    False
    """
    return _CONSTANTS.get(id(a)) is a


def out_buffer(outs: Sequence[Any], i: int, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """``outs[i]`` when preallocated (its shape is checked), else a new array."""
    out = outs[i] if i < len(outs) else None
    if out is None:
        return np.empty(shape, dtype)
    if out.shape != tuple(shape):
        raise ValueError(f"preallocated output {i} has shape {out.shape}, expected {tuple(shape)}")
    return out


def store(outs: Sequence[Any], res: np.ndarray, dtype: Any) -> np.ndarray:
    """``res`` as output 0: copied into ``outs[0]`` when preallocated (cast on store), else a
    new C-contiguous array of ``dtype`` (``res`` may be a strided view, e.g. after a moveaxis)."""
    out = outs[0] if outs else None
    if out is None:
        return np.ascontiguousarray(res, dtype=dtype)
    np.copyto(out, res, casting="unsafe")
    return out


def operands(inputs: Sequence[Any], attrs: Mapping[str, Any], count: int) -> list[Any]:
    """``inputs`` as ``count`` positional operands, absent optional ones ``None``.

    Accepts the padded form (``[x, w, None, add]``), the trailing-omitted form (``[x, w]``) and,
    when ``attrs`` has MLIR's ``operandSegmentSizes``, the compact form (``[x, w, add]`` with
    ``operandSegmentSizes = [1, 1, 0, 1]``).
    """
    seg = attrs.get("operandSegmentSizes")
    if seg is not None and len(seg) == count and len(inputs) == sum(seg) and len(inputs) < count:
        it = iter(inputs)
        return [next(it) if n else None for n in seg]
    if len(inputs) > count:
        raise ValueError(f"expected at most {count} operands, got {len(inputs)}")
    return list(inputs) + [None] * (count - len(inputs))


def acc_dtype(dt: np.dtype) -> np.dtype:
    """Accumulation type: half types accumulate in f32, others in themselves."""
    return np.dtype(np.float32) if dt == np.float16 else dt


def settle(got: Sequence[Any], outs: Sequence[Any], kernel: Any = None) -> None:
    """Copy the results a kernel returned as new arrays into the buffers it was given (a
    kernel may write ``outs`` or return fresh arrays; callers always read ``outs``).

    The kernel contract is checked here, the one place every result passes: a list (or
    tuple) with one array per output, each of its output's shape exactly (never broadcast;
    the element type may be a wider one, converted as numpy converts). Anything else is a
    :class:`KernelContractError` naming the kernel (``module.function``, file:line); callers
    add the op and its location.

    >>> out = [np.zeros(2)]
    >>> settle([np.ones(2)], out); out[0].tolist()
    [1.0, 1.0]
    >>> try:
    ...     settle([np.ones(3)], out)
    ... except KernelContractError as e:
    ...     print(e)
    a kernel gave result 0 of shape (3,), its output is (2,)
    """
    if not isinstance(got, (list, tuple)):
        raise KernelContractError(
            f"{_kernel_name(kernel)}returned {type(got).__name__}, not a list of its results "
            f"(one array per output: return [y], not y)")
    if len(got) != len(outs):
        raise KernelContractError(f"{_kernel_name(kernel)}returned {len(got)} result(s) for "
                                  f"{len(outs)} output(s)")
    for i, (g, o) in enumerate(zip(got, outs)):
        if g is o or o is None:
            continue
        shape = getattr(g, "shape", None)
        if shape is None:
            g = np.asarray(g)
            shape = g.shape
        if tuple(shape) != o.shape:
            raise KernelContractError(f"{_kernel_name(kernel) or 'a kernel '}gave result {i} "
                                      f"of shape {tuple(shape)}, its output is {o.shape}")
        np.copyto(o, g, casting="unsafe")


class KernelContractError(TdflowError, TypeError):
    """A kernel returned something its outputs cannot hold (see :func:`settle`)."""


def _kernel_name(fn: Any) -> str:
    """``"kernel scale_cpu (my_hooks.py:27) "`` for error messages; ``""`` when unknown."""
    if fn is None:
        return ""
    code = getattr(fn, "__code__", None)
    where = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
    return f"kernel {getattr(fn, '__qualname__', fn)}{where} "


# -- layouts ----------------------------------------------------------------------------------
_FIRST = ("channels_first", "NCHW", "NCW", "NCDHW")


_LAST = ("channels_last", "NHWC", "NWC", "NDHWC")


def channels_last(fmt: str) -> bool:
    """``True`` for channels-last formats; ``ValueError`` for unknown spellings."""
    if fmt in _FIRST:
        return False
    if fmt in _LAST:
        return True
    raise ValueError(f"unknown data_format {fmt!r}; expected 'channels_first' (NCHW) or "
                     f"'channels_last' (NHWC)")


# -- index operands -----------------------------------------------------------------------------
INDEX_DTYPES = INT_DTYPES  # index operands: every integer type (hooks/index.py's)


def check_indices(op: str, name: str, idx: np.ndarray, size: int) -> np.ndarray:
    """``idx`` as int64; ``ValueError`` naming ``op`` and ``name`` unless every value lies in
    ``[0, size)``."""
    if not np.issubdtype(idx.dtype, np.integer):
        raise ValueError(f"{op}: '{name}' must be an integer tensor, got {idx.dtype}")
    idx = idx.astype(np.int64, copy=False)
    if idx.size:
        bad = (idx < 0) | (idx >= size)
        if bad.any():
            first = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(f"{op}: '{name}' holds {int(idx[first])} at {list(first)}, out of "
                             f"range [0, {size})")
    return idx


def wide_float(dt: np.dtype) -> np.dtype:
    """The type half floats (f16, bf16) compute in: f32; other types compute in their own.

    >>> wide_float(np.dtype(np.float16)), wide_float(np.dtype(np.float64))
    (dtype('float32'), dtype('float64'))
    """
    return np.dtype(np.float32) if dt.itemsize < 4 else dt
