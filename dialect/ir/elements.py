"""Constant tensors in the IR as numpy arrays, and back: ``dense<...>`` and ``dense_resource``.

A small constant is written inline (``dense<[1, 2]> : tensor<2xi64>``); a big one as a blob of
the module's ``dialect_resources`` section (``dense_resource<w0> : tensor<64x3x7x7xf32>``), the
way MLIR's importers keep weights out of the op text. Decoding goes through ``numpy.frombuffer``
on the blob's bytes, never element by element, so a model's weights load in milliseconds.

>>> import numpy as np
>>> from tdflow.dialect.ir.core import Module
>>> m = Module()
>>> a = elements_attr(np.arange(20, dtype=np.float32).reshape(4, 5), m, "w")
>>> str(a), to_numpy(a)[1].tolist()
('dense_resource<w> : tensor<4x5xf32>', [5.0, 6.0, 7.0, 8.0, 9.0])
>>> str(elements_attr(np.array([1, 2], np.int64), m, "s"))
'dense<[1, 2]> : tensor<2xi64>'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tdflow.dialect.types import TensorType

from .attrs import DenseElementsAttr, DenseResourceAttr, element_bytes

if TYPE_CHECKING:
    from .core import Module

__all__ = ["elements_attr", "to_numpy", "INLINE_LIMIT"]

#: Constants with at most this many elements are written inline as ``dense<...>``.
INLINE_LIMIT = 16


def _np_dtype(dtype: str) -> Any:
    import numpy as np
    from tdflow.dialect.types import DTYPES

    return np.dtype("uint16") if dtype == "bf16" else DTYPES[dtype]


def to_numpy(attr: Any):
    """The array of a ``dense`` or ``dense_resource`` attribute (shape and dtype of its type;
    bf16 is widened to float32, as tdflow computes it on the CPU).

    Raises ``ValueError`` for an attribute that is not a constant tensor or whose data does not
    match its type.
    """
    import numpy as np
    from tdflow.dialect.types import DTYPES

    if not isinstance(attr, (DenseElementsAttr, DenseResourceAttr)):
        raise ValueError(f"expected a dense or dense_resource constant, got {attr}")
    t: TensorType = attr.type
    if not isinstance(t, TensorType) or not t.is_static:
        raise ValueError(f"a constant needs a static tensor type, got {t}")
    shape = tuple(int(d) for d in t.shape)
    raw_dt = _np_dtype(t.dtype)
    if isinstance(attr, DenseResourceAttr):
        data = attr.blob
        if data is None:
            raise ValueError(f"dense_resource<{attr.name}> has no blob '{attr.name}'")
        arr = _from_bytes(data, raw_dt, shape, t)
    elif isinstance(attr.value, str):  # MLIR's hexadecimal form: the raw little-endian bytes
        arr = _from_bytes(bytes.fromhex(attr.value[2:]), raw_dt, shape, t)
    else:
        vals = attr.value
        want = int(np.prod(shape, dtype=np.int64))
        if t.dtype == "bf16":
            arr = np.array(vals, np.float32)
            return (np.full(shape, arr[0], np.float32) if len(vals) == 1 and want != 1
                    else arr.reshape(shape))
        arr = np.array(vals, DTYPES[t.dtype])
        if len(vals) == 1 and want != 1:
            return np.full(shape, arr[0], arr.dtype)
        if arr.size != want:
            raise ValueError(f"{len(vals)} elements for {t}")
        return arr.reshape(shape)
    if t.dtype == "bf16":  # the upper half of a float32's bits
        arr = (arr.astype(np.uint32) << 16).view(np.float32)
    return arr


def _from_bytes(data: bytes, raw_dt: Any, shape: tuple[int, ...], t: TensorType):
    import numpy as np

    n = int(np.prod(shape, dtype=np.int64))
    if t.dtype == "i1":
        raw_dt = np.dtype(np.uint8)
    if len(data) == raw_dt.itemsize and n != 1:  # a splat blob, as MLIR allows
        return np.full(shape, np.frombuffer(data, raw_dt.newbyteorder("<"))[0]).astype(
            np.bool_ if t.dtype == "i1" else raw_dt)
    if len(data) != n * raw_dt.itemsize:
        raise ValueError(f"{t} needs {n * raw_dt.itemsize} bytes, the data has {len(data)}")
    arr = np.frombuffer(data, raw_dt.newbyteorder("<")).astype(raw_dt).reshape(shape)
    return arr.astype(np.bool_) if t.dtype == "i1" else arr


def elements_attr(array: Any, module: Module | None = None, name: str | None = None,
                  dtype: str | None = None):
    """The attribute holding ``array``: inline ``dense<...>`` up to :data:`INLINE_LIMIT`
    elements (or when no ``module`` is given), else a ``dense_resource`` blob named ``name``
    added to ``module.resources``. ``dtype`` overrides the MLIR element type (``"bf16"``)."""
    import numpy as np
    from tdflow.dialect.types import dtype_from_numpy

    arr = np.asarray(array)
    dt = dtype or dtype_from_numpy(arr.dtype)
    t = TensorType(tuple(int(d) for d in arr.shape), dt)
    if module is None or arr.size <= INLINE_LIMIT or name is None or element_bytes(dt) is None:
        flat = arr.reshape(-1)
        if dt == "i1":
            vals = tuple(bool(v) for v in flat)
        elif arr.dtype.kind == "f":
            vals = tuple(float(v) for v in flat)
        else:
            vals = tuple(int(v) for v in flat)
        if vals and all(v == vals[0] for v in vals) and not (
                arr.dtype.kind == "f" and np.isnan(flat).any()):
            vals = vals[:1]
        return DenseElementsAttr(t, vals)
    if dt == "bf16":
        bits = (np.ascontiguousarray(arr, np.float32).view(np.uint32) >> 16).astype("<u2")
        data = bits.tobytes()
    elif dt == "i1":
        data = np.ascontiguousarray(arr, np.uint8).tobytes()
    else:
        data = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes()
    base, k = name, 1
    while name in module.resources:  # names are unique in a module
        name = f"{base}_{k}"
        k += 1
    module.resources[name] = b"\x04\x00\x00\x00" + data  # alignment 4, then the data
    return DenseResourceAttr(t, name, module.resources)
