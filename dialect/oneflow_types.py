"""OneFlow's element types: which ``DataType`` an MLIR element type stands for in OneFlow's IR.

OneFlow prints a tensor's ``DataType`` with its own spellings (``getTypeFromOneFlowDataType``
and ``FromMLIRTypeToOFDataType`` in OneFlow's ``ir/lib/OneFlow``): ``kInt64`` is ``si64``,
``kInt32`` ``si32``, ``kInt8`` ``si8``, and ``kBool`` is written ``si8`` or ``i8`` (a signless
``i8`` reads back as ``kBool``; the signless ``i16``/``i32``/``i64`` read back as the unsigned
types). tdflow's own element types mean: ``i1`` the boolean, ``i8 ... i64`` the signed integers,
``ui*`` the unsigned ones.

The standard ops' hooks compute in tdflow's types. When they serve a OneFlow op, its signed
operands are read in tdflow's spelling (:func:`tdflow_type`), and a declared result agrees with
an inferred one when both stand for the same ``DataType`` (:func:`same_data_type`): so
``max_pool_2d``'s ``indice`` written ``si64`` (OneFlow's ``kInt64``) agrees with the ``i64``
the standard hook infers, and ``dropout``'s ``mask`` written ``i8`` (``kBool``) with ``i1``.

>>> same_data_type("si64", "i64"), same_data_type("i8", "i1"), same_data_type("si32", "i64")
(True, True, False)
"""

from __future__ import annotations

from typing import Any

__all__ = ["oneflow_data_type", "data_type_of_tdflow", "tdflow_type", "same_data_type"]

#: An element type as OneFlow reads it (FromMLIRTypeToOFDataType), by MLIR spelling.
_ONEFLOW_READS = {
    "f16": "kFloat16", "bf16": "kBFloat16", "f32": "kFloat", "f64": "kDouble",
    "i8": "kBool", "i16": "kUInt16", "i32": "kUInt32", "i64": "kUInt64",
    "si8": "kInt8", "si16": "kInt16", "si32": "kInt32", "si64": "kInt64",
    "ui8": "kUInt8", "ui16": "kUInt16", "ui32": "kUInt32", "ui64": "kUInt64",
}
#: What tdflow's element types mean, as OneFlow DataTypes.
_TDFLOW_MEANS = {
    "f16": "kFloat16", "bf16": "kBFloat16", "f32": "kFloat", "f64": "kDouble", "i1": "kBool",
    "i8": "kInt8", "i16": "kInt16", "i32": "kInt32", "i64": "kInt64",
    "ui8": "kUInt8", "ui16": "kUInt16", "ui32": "kUInt32", "ui64": "kUInt64",
    # tdflow's si* spellings are the signed integers too (numpy int8 ... int64)
    "si8": "kInt8", "si16": "kInt16", "si32": "kInt32", "si64": "kInt64",
}
_TDFLOW_OF = {v: k for k, v in _TDFLOW_MEANS.items() if not k.startswith("s")}


def oneflow_data_type(dtype: str) -> str | None:
    """The OneFlow ``DataType`` an element type written in OneFlow's IR stands for.

    >>> oneflow_data_type("si64"), oneflow_data_type("i8"), oneflow_data_type("i1")
    ('kInt64', 'kBool', None)
    """
    return _ONEFLOW_READS.get(dtype)


def data_type_of_tdflow(dtype: str) -> str | None:
    """The OneFlow ``DataType`` of one of tdflow's element types.

    >>> data_type_of_tdflow("i1"), data_type_of_tdflow("i64")
    ('kBool', 'kInt64')
    """
    return _TDFLOW_MEANS.get(dtype)


def tdflow_type(t: Any) -> Any:
    """A tensor type of OneFlow's IR with a signed element type in tdflow's spelling (``si32``
    -> ``i32``, OneFlow's ``kInt32``), which the standard hooks compute in. Signless types are
    left as written: tdflow's own meaning (``i8`` an int8, not OneFlow's reading of it as
    ``kBool``) is what a program mixing OneFlow's ops with tdflow's means by them.

    >>> from tdflow.dialect.types import TensorType
    >>> tdflow_type(TensorType((2,), "si32")), tdflow_type(TensorType((2,), "i8"))
    (TensorType(shape=(2,), dtype='i32'), TensorType(shape=(2,), dtype='i8'))
    """
    dtype = getattr(t, "dtype", None)
    if not (isinstance(dtype, str) and dtype.startswith("si")):
        return t
    mine = _TDFLOW_OF.get(_ONEFLOW_READS.get(dtype, ""))
    return t if mine is None else type(t)(t.shape, mine)


def same_data_type(declared: str, inferred: str) -> bool:
    """Whether ``declared`` (an element type written in OneFlow's IR) and ``inferred`` (one of
    tdflow's) stand for the same OneFlow ``DataType``.

    >>> same_data_type("si64", "i64"), same_data_type("i64", "i64"), same_data_type("i8", "i8")
    (True, False, False)
    """
    of = _ONEFLOW_READS.get(declared)
    return of is not None and of == _TDFLOW_MEANS.get(inferred)
