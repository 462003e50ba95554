"""Attribute kinds: which ODS attributes tdflow models, their C++ default spellings, and the
typed Python values hooks see.

========== ==================================== =========================
kind       ODS base attribute                   Python value
========== ==================================== =========================
bool       BoolAttr                             ``bool``
si32/si64  SI32Attr, I32Attr / SI64Attr, I64Attr ``int`` (range-checked)
f32/f64    F32Attr / F64Attr                    ``float``
str        StrAttr                              ``str``
shape      ShapeAttr                            ``tuple[int, ...]``
dtype      OneFlow_DataType, TDF_DataTypeAttr   ``str`` (``"f32"``)
enum       I32EnumAttr, I64EnumAttr (OneFlow's  :class:`EnumCase`, an ``int`` with the
           DataType, MLIR's predicates)         case's ``name`` (``2``, ``"DT_Float"``)
X_array    SI32ArrayAttr, F32ArrayAttr, ...     ``tuple`` of X values
other      anything else (bit enums, ...)       whatever the IR holds
========== ==================================== =========================

An ``enum`` attribute is found by shape (a record deriving from MLIR's ``EnumAttrInfo`` whose
cases are ``I32EnumAttrCase``/``I64EnumAttrCase``), not by name: OneFlow's own
``OneFlow_DataType`` is an ``I32EnumAttr`` (``data_type = 2 : i32``), tdflow's ``Base.td`` one is
a type (``dtype = f32``). Its :class:`EnumInfo` lists the cases.

>>> parse_default("f32", "1e-08"), parse_default("str", '"NCHW"'), parse_default("bool", "false")
(1e-08, 'NCHW', False)
>>> parse_default("si32_array", "{1, -2}")
(1, -2)
"""

from __future__ import annotations

import math
import re
import struct
from typing import Any

from tdflow.core.errors import TdflowError
from tdflow.core.valueclass import field, value_class

from .element_types import DTYPE_NAMES as _ELEMENT_DTYPES

SCALAR_KINDS = ("bool", "si32", "si64", "f32", "f64", "str", "dtype")
ARRAY_KINDS = tuple(f"{k}_array" for k in SCALAR_KINDS) + ("shape", "shape_array")
KINDS = SCALAR_KINDS + ARRAY_KINDS + ("enum", "enum_array", "other")

# Base attribute def name -> kind (MLIR's and OneFlow's names; Base.td uses the same ones).
KIND_BY_ATTR: dict[str, str] = {
    "BoolAttr": "bool",
    "SI32Attr": "si32", "I32Attr": "si32", "SI64Attr": "si64", "I64Attr": "si64",
    "F32Attr": "f32", "F64Attr": "f64",
    "StrAttr": "str",
    "BoolArrayAttr": "bool_array",
    "SI32ArrayAttr": "si32_array", "I32ArrayAttr": "si32_array", "DenseI32ArrayAttr": "si32_array",
    "SI64ArrayAttr": "si64_array", "I64ArrayAttr": "si64_array", "DenseI64ArrayAttr": "si64_array",
    "F32ArrayAttr": "f32_array", "F64ArrayAttr": "f64_array",
    "DenseF32ArrayAttr": "f32_array", "DenseF64ArrayAttr": "f64_array",
    "StrArrayAttr": "str_array",
    "ShapeAttr": "shape", "ShapeArrayAttr": "shape_array",
    "OneFlow_DataType": "dtype", "TDF_DataTypeAttr": "dtype", "DTArrayAttr": "dtype_array",
}

INT_RANGE = {"si32": (-(2**31), 2**31 - 1), "si64": (-(2**63), 2**63 - 1)}

# OneFlow's DataType enumerators -> MLIR element type spelling.
ONEFLOW_DTYPES = {
    "kFloat": "f32", "kDouble": "f64", "kFloat16": "f16", "kBFloat16": "bf16",
    "kInt8": "i8", "kInt32": "i32", "kInt64": "i64", "kBool": "i1", "kChar": "i8",
    "kUInt8": "ui8", "kInt16": "i16", "kUInt16": "ui16", "kUInt32": "ui32", "kUInt64": "ui64",
}
# The dtype attribute's values: tdflow's element types (one table, element_types.py).
DTYPE_NAMES = _ELEMENT_DTYPES

_INT_RE = re.compile(r"^([+-]?)(0[xX][0-9a-fA-F]+|\d+)(?:[uU]?[lL]{0,2}|[lL]{1,2}[uU])$")
_FLOAT_RE = re.compile(r"^[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?[fFlL]?$")
_STR_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0"}


class DefaultError(TdflowError, ValueError):
    """A default value whose C++ spelling does not parse for its kind."""


@value_class(frozen=True, slots=True)
class EnumInfo:
    """An integer enum attribute's cases, in declaration order, and its storage type.

    >>> e = EnumInfo("DataType", (("DT_Char", 1), ("DT_Float", 2)))
    >>> e.case(2), e.case("DT_Char"), e.case(7), e.listing()
    (EnumCase(2, 'DT_Float'), EnumCase(1, 'DT_Char'), None, 'DT_Char(1), DT_Float(2)')
    """

    name: str  # the C++ enum class name (``DataType``)
    cases: tuple[tuple[str, int], ...]  # (case name as MLIR spells it, value)
    type: str = "i32"  # the IntegerAttr type that stores it (i32 for I32EnumAttr)
    _by_value: dict = field(default_factory=dict, compare=False, repr=False)
    _by_name: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for n, v in self.cases:
            c = EnumCase(v, n, self.name)
            self._by_value.setdefault(v, c)
            self._by_name.setdefault(n, c)

    def case(self, key: int | str) -> EnumCase | None:
        """The case of value ``key`` (an int) or named ``key`` (a str), or ``None``."""
        return (self._by_name if isinstance(key, str) else self._by_value).get(key)

    def listing(self) -> str:
        """``DT_InvalidDataType(0), DT_Char(1), ...``: every case, for messages."""
        return ", ".join(f"{n}({v})" for n, v in self.cases)


class EnumCase(int):
    """An enum attribute's value as hooks see it: the integer, with the case ``name`` (and the
    ``enum`` class name). It compares, hashes and computes as the integer.

    >>> c = EnumCase(2, "DT_Float", "DataType")
    >>> c == 2, c.name, int(c) + 1
    (True, 'DT_Float', 3)
    """

    name: str
    enum: str

    def __new__(cls, value: int, name: str, enum: str = "") -> EnumCase:
        obj = super().__new__(cls, value)
        obj.name = name
        obj.enum = enum
        return obj

    def __repr__(self) -> str:
        return f"EnumCase({int(self)}, {self.name!r})"

    def __reduce__(self):
        return (EnumCase, (int(self), self.name, self.enum))


def enum_case(enum: EnumInfo | None, value: Any) -> Any:
    """The :class:`EnumCase` of a Python value (a case's integer or name) of ``enum``; raises
    ``ValueError`` listing the cases for any other. Without ``enum`` (an attribute read without
    its definition) an int or str is returned as it is.

    >>> enum_case(EnumInfo("DataType", (("DT_Float", 2),)), "DT_Float")
    EnumCase(2, 'DT_Float')
    """
    if isinstance(value, bool) or not (_is_int(value) or isinstance(value, str)):
        raise TypeError(f"expected an enum case (an integer or a case name), got {_show(value)}")
    if enum is None:
        return value if isinstance(value, str) else int(value)
    case = enum.case(value if isinstance(value, str) else int(value))
    if case is None:
        shown = repr(value) if isinstance(value, str) else str(int(value))
        raise ValueError(f"got {shown}; expected one of {enum.listing()}")
    return case


def element_kind(kind: str) -> str | None:
    """The element kind of an array kind (``si32_array`` -> ``si32``, ``shape`` -> ``si64``)."""
    if kind == "shape":
        return "si64"
    if kind == "shape_array":
        return "shape"
    return kind[: -len("_array")] if kind.endswith("_array") else None


def parse_default(kind: str, text: str, enum: EnumInfo | None = None) -> Any:
    """Parse a default from its C++ spelling; raises :class:`DefaultError` saying what was expected.

    An ``enum`` default is a case name, qualified or not (``::oneflow::DataType::DT_Float``), or
    its integer.

    >>> parse_default("f64", "0.")
    0.0
    >>> parse_default("si64", "-1")
    -1
    >>> parse_default("dtype", "::oneflow::DataType::kFloat")
    'f32'
    >>> parse_default("bool", "0."), parse_default("bool", "1"), parse_default("si64", "0.")
    (False, True, 0)
    """
    s = text.strip()
    if kind == "other":
        return s
    elem = element_kind(kind)
    if elem is not None:
        if s.startswith("{") and s.endswith("}") or s.startswith("[") and s.endswith("]"):
            inner = s[1:-1].strip()
            if not inner:
                return ()
            return tuple(parse_default(elem, part, enum) for part in _split_top(inner))
        raise DefaultError(f"expected a C++ initializer list like '{{1, 2}}' for a {kind} default, "
                           f"got {text!r}")
    if kind == "bool":
        if s == "true":
            return True
        if s == "false":
            return False
        # Any C++ arithmetic literal converts to bool (nonzero is true): MLIR compiles
        # DefaultValuedAttr<BoolAttr, "0."> as 'false', so it reads that way here too.
        m = _INT_RE.match(s)
        if m:
            return int(m.group(2), 0) != 0
        if _FLOAT_RE.match(s):
            return float(s.rstrip("fFlL")) != 0.0
        raise DefaultError(f"expected 'true' or 'false' (or a C++ number) for a bool default, "
                           f"got {text!r}")
    if kind in INT_RANGE:
        m = _INT_RE.match(s)
        if m:
            value = int(m.group(2), 0)
            value = -value if m.group(1) == "-" else value
        elif _FLOAT_RE.match(s) and float(s.rstrip("fFlL")).is_integer():
            # C++ converts a whole-valued floating literal to the integer type: MLIR compiles
            # DefaultValuedAttr<SI64Attr, "0."> as 0. A fractional one ("1.5") stays an error.
            value = int(float(s.rstrip("fFlL")))
        else:
            raise DefaultError(f"expected a C++ integer literal like '0' or '-1' for a {kind} "
                               f"default, got {text!r}")
        lo, hi = INT_RANGE[kind]
        if not lo <= value <= hi:
            raise DefaultError(f"default {value} is out of range for {kind} [{lo}, {hi}]")
        return value
    if kind in ("f32", "f64"):
        if _FLOAT_RE.match(s):
            value = float(s.rstrip("fFlL"))
            try:  # C++ rejects a literal its type cannot hold (what rounds to infinity)
                if math.isinf(value) or kind == "f32" and struct.pack("<f", value) is None:
                    raise OverflowError
            except OverflowError:
                raise DefaultError(f"default {s} is out of range for {kind}; write INFINITY "
                                   f"for infinity") from None
            return value
        # C++'s spellings of the special values (a bare 'nan' or 'inf' is not C++)
        body = s.lstrip("+-").replace(" ", "")
        special = {"INFINITY": math.inf, "HUGE_VAL": math.inf, "HUGE_VALF": math.inf,
                   "NAN": math.nan, "std::numeric_limits<float>::infinity()": math.inf,
                   "std::numeric_limits<double>::infinity()": math.inf,
                   "std::numeric_limits<float>::quiet_NaN()": math.nan,
                   "std::numeric_limits<double>::quiet_NaN()": math.nan}
        if body in special:
            v = special[body]
            return -v if s.startswith("-") else v
        raise DefaultError(f"expected a C++ floating-point literal like '0.' or '1e-08' (or "
                           f"INFINITY, NAN) for a {kind} default, got {text!r}")
    if kind == "str":
        return _parse_cpp_string(s, text)
    if kind == "enum":
        name = s.rsplit("::", 1)[-1].strip()
        m = _INT_RE.match(name)
        key: int | str = int(m.group(2), 0) * (-1 if m.group(1) == "-" else 1) if m else name
        try:
            return enum_case(enum, key)
        except (TypeError, ValueError) as exc:
            raise DefaultError(f"expected a case of enum {enum.name if enum else '?'} for an "
                               f"enum default, {exc}") from None
    if kind == "dtype":
        name = s.rsplit("::", 1)[-1]
        if name in ONEFLOW_DTYPES:
            return ONEFLOW_DTYPES[name]
        if name in DTYPE_NAMES:
            return name
        raise DefaultError(f"expected a data type like 'f32' or '::oneflow::DataType::kFloat', "
                           f"got {text!r}")
    raise DefaultError(f"unknown attribute kind {kind!r}")


def _split_top(text: str) -> list[str]:
    """Split at commas outside braces and quotes."""
    parts, depth, cur, quote = [], 0, [], False
    prev = ""
    for ch in text:
        if ch == '"' and prev != "\\":
            quote = not quote
        if not quote:
            if ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append("".join(cur))
                cur = []
                prev = ch
                continue
        cur.append(ch)
        prev = ch
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def _parse_cpp_string(s: str, text: str) -> str:
    if len(s) < 2 or s[0] != '"' or s[-1] != '"':
        raise DefaultError(f"expected a quoted C++ string literal like '\"NCHW\"' for a str "
                           f"default (write DefaultValuedStrAttr<StrAttr, \"NCHW\"> or "
                           f"\"\\\"NCHW\\\"\"), got {text!r}")
    body, out, i = s[1:-1], [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            out.append(_STR_ESCAPES.get(body[i + 1], body[i + 1]))
            i += 2
            continue
        if ch == '"':
            raise DefaultError(f"unescaped quote inside the C++ string literal {text!r}")
        out.append(ch)
        i += 1
    return "".join(out)


def kind_description(kind: str, enum: EnumInfo | None = None) -> str:
    """Human wording of a kind for error messages (``si32_array`` -> 'array of si32').

    >>> kind_description("enum", EnumInfo("DataType", ()))
    'a case of enum DataType'
    """
    if kind == "shape":
        return "shape (array of integers)"
    if kind == "enum":
        return f"a case of enum {enum.name}" if enum is not None else "an enum case"
    elem = element_kind(kind)
    if elem is not None:
        return f"array of {kind_description(elem, enum) if elem == 'enum' else elem}"
    return {"bool": "bool", "str": "string", "dtype": "data type (f32, i64, ...)"}.get(kind, kind)


def as_stored(kind: str, value: Any) -> Any:
    """``value`` as an attribute of ``kind`` holds it: an ``f32`` float rounded to float32
    (what a compiled program's IR attribute carries), anything else unchanged. Eager calls
    and kernel attributes filled from defaults go through it, so both compute the same bits.

    >>> as_stored("f32", 0.1), as_stored("f64", 0.1), as_stored("si32", 3)
    (0.10000000149011612, 0.1, 3)
    """
    if kind == "f32" and isinstance(value, float):
        import numpy as np

        return float(np.float32(value))
    return value


def coerce(kind: str, value: Any, enum: EnumInfo | None = None) -> Any:
    """Check a Python value against ``kind`` and return its canonical form.

    Lists become tuples, ints are accepted for floats, numpy scalars are unwrapped, an enum case
    is given by its integer or name (``enum`` lists the cases). Raises ``TypeError``/
    ``ValueError`` with what was expected.

    >>> coerce("f32", 1), coerce("si32_array", [1, 2]), coerce("shape", (2, -1))
    (1.0, (1, 2), (2, -1))
    """
    if kind == "other":
        return value
    elem = element_kind(kind)
    if elem is not None:
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise TypeError(f"expected {kind_description(kind, enum)}, got {_show(value)}")
        return tuple(coerce(elem, v, enum) for v in value)
    if kind == "enum":
        return enum_case(enum, value)
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if type(value).__name__ == "bool_":
            return bool(value)
        raise TypeError(f"expected a bool, got {_show(value)}")
    if kind in INT_RANGE:
        if isinstance(value, bool) or not _is_int(value):
            raise TypeError(f"expected an integer ({kind}), got {_show(value)}")
        value = int(value)
        lo, hi = INT_RANGE[kind]
        if not lo <= value <= hi:
            raise ValueError(f"{value} is out of range for {kind}")
        return value
    if kind in ("f32", "f64"):
        if isinstance(value, bool) or not (_is_int(value) or isinstance(value, float)
                                           or type(value).__name__.startswith("float")):
            raise TypeError(f"expected a number ({kind}), got {_show(value)}")
        return float(value)
    if kind == "str":
        if not isinstance(value, str):
            raise TypeError(f"expected a string, got {_show(value)}")
        return value
    if kind == "dtype":
        if isinstance(value, str) and value in DTYPE_NAMES:
            return value
        if isinstance(value, str):
            raise ValueError(f"expected a data type ({', '.join(DTYPE_NAMES)}), got {value!r}")
        try:  # numpy dtypes and scalar types
            from tdflow.dialect.types import dtype_from_numpy

            return dtype_from_numpy(value)
        except (TypeError, ValueError):
            raise TypeError(f"expected a data type ({', '.join(DTYPE_NAMES)}), "
                            f"got {_show(value)}") from None
    raise TypeError(f"unknown attribute kind {kind!r}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) or type(v).__name__.startswith(("int", "uint"))


def _show(v: Any) -> str:
    return f"{type(v).__name__} {v!r}"
