"""Attribute values, written and printed as MLIR writes them.

Every attribute is a small frozen, hashable object (CSE keys on them); ``str(attr)`` is its exact
MLIR spelling and re-parses to an equal attribute. The Python representation:

=============================  ==========================================  ======================
MLIR text                      Python object                               ``to_python(attr)``
=============================  ==========================================  ======================
``true`` / ``false``           ``BoolAttr(True)`` (also ``1 : i1``)        ``True``
``3`` / ``3 : i64``            ``IntegerAttr(3, "i64")`` (untyped = i64)   ``3``
``-1 : si32``                  ``IntegerAttr(-1, "si32")``                 ``-1``
``0.2`` / ``2.0e-01 : f32``    ``FloatAttr(0.2, "f64")`` / ``(…, "f32")``  ``0.2`` (rounded to
                               (untyped = f64; value rounded to the type)  the type's precision)
``"NCHW"``                     ``StringAttr("NCHW")``                      ``"NCHW"``
``[1, 0]``, ``[0.5, 1.0]``     ``ArrayAttr((IntegerAttr(1), …))``          ``(1, 0)``
``array<i64: 1, 0>``           ``DenseArrayAttr("i64", (1, 0))``           ``(1, 0)``
``array<i32: 1, 0, 1>``        ``DenseArrayAttr("i32", (1, 0, 1))``        (operandSegmentSizes)
``f16``, ``tensor<4xf32>``     ``TypeAttr("f16")``, ``TypeAttr(TensorType)``  the type
``unit`` / bare ``name``       ``UNIT`` (the ``UnitAttr()`` singleton)     ``True``
``{a = 1}``                    ``DictAttr((("a", IntegerAttr(1)),))``      ``{"a": 1}``
                               (pairs sorted by name, as in MLIR)
``@f``                         ``SymbolRefAttr("f")``                      ``"f"``
``dense<[1.0, 2.0]> : T``      ``DenseElementsAttr(T, (1.0, 2.0))``        the flat elements
``dense_resource<w> : T``      ``DenseResourceAttr(T, "w", blobs)``        the flat elements,
                               (the data in the file's ``{-# ... #-}``     decoded from the blob
                               section, ``module.resources``)
=============================  ==========================================  ======================

An integer literal where a float type is given (``1 : f32``) becomes ``FloatAttr(1.0, "f32")``.
Floats print as MLIR does: ``2.000000e-01`` when six digits re-parse to the same value, else the
shortest exact decimal; infinities and NaNs as hexadecimal bit patterns (``0x7F800000 : f32``).

>>> from tdflow.dialect.ir.attrs import FloatAttr, DenseArrayAttr, IntegerAttr
>>> str(FloatAttr(0.2, "f32")), str(IntegerAttr(3, "si32")), str(DenseArrayAttr("i64", (1, 0)))
('2.000000e-01 : f32', '3 : si32', 'array<i64: 1, 0>')
"""

from __future__ import annotations

import math
import re
import struct
from typing import Any, ClassVar

from tdflow.core.valueclass import field, value_class

__all__ = [
    "Attribute", "BoolAttr", "IntegerAttr", "FloatAttr", "StringAttr", "ArrayAttr",
    "DenseArrayAttr", "TypeAttr", "UnitAttr", "UNIT", "DictAttr", "SymbolRefAttr",
    "OpaqueAttr", "DenseElementsAttr", "DenseResourceAttr", "blob_bytes", "blob_text", "element_bytes",
    "to_python", "format_float", "round_float", "float_attr", "escape_string", "print_attr_dict",
    "attr_name", "INT_TYPES_RE", "FLOAT_TYPES", "int_range",
]

FLOAT_TYPES = frozenset({"f16", "bf16", "f32", "f64"})
#: Builtin integer types: signless ``i32``, signed ``si32``, unsigned ``ui8``, and ``index``.
INT_TYPES_RE = re.compile(r"(?:[su]?i[1-9][0-9]*|index)\Z")
_BARE_NAME = re.compile(r"[A-Za-z_][\w$.]*\Z")


def int_range(type: str) -> tuple[int, int]:
    """The ``(min, max)`` values an integer attribute of ``type`` holds (MLIR's rule).

    Signless integers accept both signed and unsigned spellings, like MLIR.
    >>> int_range("si8"), int_range("ui8"), int_range("i8")
    ((-128, 127), (0, 255), (-128, 255))
    """
    if type == "index":  # MLIR stores index attributes as signed 64-bit
        type = "si64"
    bits = int(type.lstrip("su")[1:])
    if type.startswith("si"):
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if type.startswith("ui"):
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)) if bits > 1 else -1, (1 << bits) - 1


def round_float(value: float, type: str) -> float:
    """``value`` rounded to the precision of ``type`` (f16/bf16/f32/f64).

    Raises ``OverflowError`` when a finite value does not fit the type.
    """
    value = float(value)
    if type == "f64" or math.isnan(value) or math.isinf(value):
        return value
    if type == "f32":
        return struct.unpack("<f", struct.pack("<f", value))[0]
    if type == "f16":
        return struct.unpack("<e", struct.pack("<e", value))[0]
    if type == "bf16":
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        out = struct.unpack("<f", struct.pack("<I", bits))[0]
        if math.isinf(out):
            raise OverflowError(f"{value} does not fit in bf16")
        return out
    raise ValueError(f"not a float type: {type!r}")


_HEX_FORMATS = {"f64": ("<d", "<Q", 16), "f32": ("<f", "<I", 8), "f16": ("<e", "<H", 4)}


def float_bits(value: float, type: str) -> int:
    """The IEEE bit pattern of ``value`` stored as ``type``."""
    if type == "bf16":
        return struct.unpack("<I", struct.pack("<f", value))[0] >> 16
    ffmt, ifmt, _ = _HEX_FORMATS[type]
    return struct.unpack(ifmt, struct.pack(ffmt, value))[0]


def float_from_bits(bits: int, type: str) -> float:
    """The float whose IEEE bit pattern in ``type`` is ``bits`` (hex float literals)."""
    if type == "bf16":
        return struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0]
    ffmt, ifmt, _ = _HEX_FORMATS[type]
    return struct.unpack(ffmt, struct.pack(ifmt, bits))[0]


def format_float(value: float, type: str = "f64") -> str:
    """MLIR's spelling of a float literal (without the ``: type`` suffix).

    >>> format_float(0.2, "f32"), format_float(0.123456789), format_float(1e-20)
    ('2.000000e-01', '0.123456789', '1.000000e-20')
    """
    return _format_rounded(round_float(value, type), type)


def _format_rounded(value: float, type: str) -> str:
    """``format_float`` of a value already rounded to ``type``."""
    if not math.isfinite(value):
        width = 4 if type == "bf16" else _HEX_FORMATS[type][2]
        return f"0x{float_bits(value, type):0{width}X}"
    s = f"{value:.6e}"
    back = float(s) if type == "f64" else round_float(float(s), type)
    # _same_float inlined (once per constant printed): equal nonzero floats have one sign
    if back == value and (value != 0.0 or _same_float(back, value)):
        return s
    s = repr(value)
    mantissa, e, exp = s.partition("e")
    if "." not in mantissa:
        s = f"{mantissa}.0{e}{exp}"
    return s


def _same_float(a: float, b: float) -> bool:
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def escape_string(value: str) -> str:
    """MLIR's quoted spelling of a string: printable ASCII as is, other bytes as ``\\XX``.

    >>> escape_string('say "hi"\\n')
    '"say \\\\"hi\\\\"\\\\0A"'
    """
    if value.isascii() and value.isprintable() and '"' not in value and "\\" not in value:
        return f'"{value}"'
    out = []
    # A string is bytes in MLIR: "\\FF" parses to the surrogate-escaped byte 0xFF, which must
    # print as the same byte; any other lone surrogate (from Python) prints as its UTF-8 form.
    try:
        data = value.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:
        data = value.encode("utf-8", errors="surrogatepass")
    for b in data:
        c = chr(b)
        if c == '"' or c == "\\":
            out.append("\\" + c)
        elif 0x20 <= b < 0x7F:
            out.append(c)
        else:
            out.append(f"\\{b:02X}")
    return '"' + "".join(out) + '"'


def attr_name(name: str) -> str:
    """An attribute name as printed: bare when it is an identifier, else quoted."""
    return name if _BARE_NAME.match(name) else escape_string(name)


class Attribute:
    """Base class of all attribute values (for ``isinstance`` checks)."""

    __slots__ = ()
    # Whether the value holds constant elements (the memo keys leave such ops out); asked of
    # every attribute of every op verified, so found on the class rather than missed.
    holds_elements = False


@value_class(frozen=True, slots=True)
class BoolAttr(Attribute):
    """``true`` / ``false``."""

    value: bool

    def __str__(self) -> str:
        return "true" if self.value else "false"


@value_class(frozen=True, slots=True)
class IntegerAttr(Attribute):
    """An integer of builtin type ``type`` (``i64`` when written without one)."""

    value: int
    type: str = "i64"

    def __str__(self) -> str:
        return str(self.value) if self.type == "i64" else f"{self.value} : {self.type}"


@value_class(frozen=True, slots=True, eq=False)
class FloatAttr(Attribute):
    """A float of type ``type`` (``f64`` when written without one), rounded to that type.

    Equality and hashing use the bit pattern, so ``-0.0`` differs from ``0.0`` and a NaN equals
    itself (what CSE and round trips need).
    """

    value: float
    type: str = "f64"

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", round_float(self.value, self.type))

    def _key(self) -> tuple:
        return (self.type, struct.pack("<d", self.value))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FloatAttr) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        # the value is rounded to its type already (__post_init__, float_attr): format it
        # without rounding it again (once per constant printed)
        t = self.type
        s = _format_rounded(self.value, t)
        return s if t == "f64" and s[1] != "x" else f"{s} : {t}"


_new_float_attr = FloatAttr.__new__
_set_float_value = FloatAttr.__dict__["value"].__set__
_set_float_type = FloatAttr.__dict__["type"].__set__


def float_attr(value: float, type: str = "f64") -> FloatAttr:
    """``FloatAttr(value, type)`` for a Python ``float`` ``value``, made without the generic
    constructor: the parser's fast path, once per float constant of a program (a third of the
    cost). Raises ``OverflowError`` as ``FloatAttr`` does.

    >>> float_attr(0.1, "f32") == FloatAttr(0.1, "f32"), float_attr(0.1).value
    (True, 0.1)
    """
    a = _new_float_attr(FloatAttr)
    _set_float_value(a, value if type == "f64" else round_float(value, type))
    _set_float_type(a, type)
    return a


@value_class(frozen=True, slots=True)
class StringAttr(Attribute):
    """A quoted string: ``"channels_first"``."""

    value: str

    def __str__(self) -> str:
        return escape_string(self.value)


@value_class(frozen=True, slots=True)
class ArrayAttr(Attribute):
    """``[a, b, ...]``: a tuple of attributes."""

    value: tuple

    def __str__(self) -> str:
        return "[" + ", ".join(str(a) for a in self.value) + "]"

    def __len__(self) -> int:
        return len(self.value)

    def __iter__(self):
        return iter(self.value)

    def __getitem__(self, i):
        return self.value[i]


_DENSE_TYPES = frozenset({"i1", "i8", "i16", "i32", "i64", "f32", "f64"})


@value_class(frozen=True, slots=True, eq=False)
class DenseArrayAttr(Attribute):
    """``array<i64: 1, 0>``: element type (i1, i8, i16, i32, i64, f32, f64) and Python values."""

    type: str
    value: tuple

    def __post_init__(self) -> None:
        if self.type not in _DENSE_TYPES:
            raise ValueError(f"dense array element type must be one of "
                             f"{', '.join(sorted(_DENSE_TYPES))}; got {self.type!r}")
        if self.type == "i1":
            vals = tuple(bool(v) for v in self.value)
        elif self.type[0] == "f":
            vals = tuple(round_float(v, self.type) for v in self.value)
        else:
            vals = tuple(int(v) for v in self.value)
        object.__setattr__(self, "value", vals)

    def _key(self) -> tuple:
        if self.type[0] == "f":
            return (self.type, tuple(struct.pack("<d", v) for v in self.value))
        return (self.type, self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DenseArrayAttr) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        if not self.value:
            return f"array<{self.type}>"
        if self.type == "i1":
            items = ("true" if v else "false" for v in self.value)
        elif self.type[0] == "f":
            items = (format_float(v, self.type) for v in self.value)
        else:
            items = (str(v) for v in self.value)
        return f"array<{self.type}: {', '.join(items)}>"

    def __len__(self) -> int:
        return len(self.value)

    def __iter__(self):
        return iter(self.value)

    def __getitem__(self, i):
        return self.value[i]


@value_class(frozen=True, slots=True)
class TypeAttr(Attribute):
    """A type used as an attribute value: ``f16``, ``i64``, ``tensor<4xf32>``, ``(T) -> T``."""

    value: Any

    def __str__(self) -> str:
        return str(self.value)


@value_class(frozen=True, slots=True)
class UnitAttr(Attribute):
    """The unit attribute: a name present without a value (``{fused}`` or ``{fused = unit}``)."""

    def __str__(self) -> str:
        return "unit"


UNIT = UnitAttr()


@value_class(frozen=True, slots=True)
class DictAttr(Attribute):
    """``{a = 1, b}``: ``value`` is a tuple of ``(name, attr)`` pairs, sorted by name (as MLIR
    keeps dictionary attributes, so equality does not depend on the written order)."""

    value: tuple

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", tuple(sorted(self.value, key=lambda kv: kv[0])))

    def __str__(self) -> str:
        return print_attr_dict(dict(self.value)) if self.value else "{}"

    def as_dict(self) -> dict[str, Attribute]:
        return dict(self.value)


@value_class(frozen=True, slots=True)
class SymbolRefAttr(Attribute):
    """``@name``: a reference to a function."""

    value: str

    def __str__(self) -> str:
        return "@" + (self.value if _BARE_NAME.match(self.value) else escape_string(self.value))


@value_class(frozen=True, slots=True)
class OpaqueAttr(Attribute):
    """An attribute tdflow does not interpret, kept as its text: a dialect attribute
    (``#sbp.S<0>``, ``#sbp.parallel<[] -> [#sbp.B]>``) or a builtin one it has no model for
    (``affine_map<(d0) -> (d0)>``). It prints back exactly as written."""

    text: str

    def __str__(self) -> str:
        return self.text


@value_class(frozen=True, slots=True)
class DenseElementsAttr(Attribute):
    """``dense<[1.0, 2.0]> : tensor<2xf32>``: the elements of a constant tensor.

    ``value`` is the flat tuple of elements in row-major order (one element for a splat
    ``dense<0.0>``; the parser makes any tensor of equal elements one, as MLIR does), or the ``"0x..."`` string of MLIR's hexadecimal form, kept as written.

    >>> from tdflow.dialect.types import TensorType
    >>> str(DenseElementsAttr(TensorType((2,), "f32"), (1.0, 2.0)))
    'dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>'
    """

    #: a tensor constant: memos keyed by attributes skip it (see dialect.infer.holds_constant)
    holds_elements: ClassVar[bool] = True

    type: Any
    value: tuple | str

    def _item(self, v) -> str:
        dt = self.type.dtype
        if dt == "i1":
            return "true" if v else "false"
        if dt in FLOAT_TYPES:
            return format_float(v, dt)
        return str(v)

    def __str__(self) -> str:
        if isinstance(self.value, str):
            return f'dense<"{self.value}"> : {self.type}'
        if not self.value:
            return f"dense<> : {self.type}"
        shape = self.type.shape or ()
        vals = self.value
        if len(vals) == 1:  # a splat, as MLIR prints every tensor of equal elements
            return f"dense<{self._item(vals[0])}> : {self.type}"
        items = [self._item(v) for v in vals]
        for d in reversed(shape[1:]):
            items = ["[" + ", ".join(items[i:i + d]) + "]" for i in range(0, len(items), d)]
        body = "[" + ", ".join(items) + "]" if shape else items[0]
        return f"dense<{body}> : {self.type}"


#: struct codes of the element types a blob can hold (little-endian, as MLIR writes them)
_BLOB_CODES = {"f16": "e", "f32": "f", "f64": "d", "i1": "?", "i8": "b", "si8": "b",
               "ui8": "B", "i16": "h", "si16": "h", "ui16": "H", "i32": "i", "si32": "i",
               "ui32": "I", "i64": "q", "si64": "q", "ui64": "Q", "bf16": "H"}


def element_bytes(dtype: str) -> int | None:
    """Bytes per element of ``dtype`` in a dense blob (``None``: not storable in one).

    >>> element_bytes("f32"), element_bytes("i1"), element_bytes("index")
    (4, 1, None)
    """
    code = _BLOB_CODES.get(dtype)
    return struct.calcsize("<" + code) if code else None


def blob_bytes(blob: str | bytes) -> bytes | memoryview:
    """The data of a ``dialect_resources`` blob: ``"0x"`` then hex, whose first 4 bytes are the
    alignment (little-endian u32, as MLIR writes it), or those bytes themselves (blobs a
    program made rather than parsed stay binary: no hex round trip for a model's weights);
    raises ``ValueError`` for malformed text.

    >>> blob_bytes("0x040000000000803F").hex()
    '0000803f'
    >>> bytes(blob_bytes(b"\\x04\\x00\\x00\\x00\\x00\\x00\\x80?"))
    b'\\x00\\x00\\x80?'
    """
    if isinstance(blob, (bytes, bytearray, memoryview)):
        if len(blob) < 4:
            raise ValueError("a blob starts with its 4-byte alignment, then the data")
        return memoryview(blob)[4:]
    if not blob.startswith("0x"):
        raise ValueError("a blob is hexadecimal text starting with '0x'")
    try:
        raw = bytes.fromhex(blob[2:])
    except ValueError:
        raise ValueError("a blob holds an even number of hexadecimal digits after '0x'") from None
    if len(raw) < 4:
        raise ValueError("a blob starts with its 4-byte alignment (e.g. 0x04000000), then the data")
    return raw[4:]


def blob_text(blob: str | bytes) -> str:
    """A blob as the file's ``"0x..."`` text (quotes included).

    >>> blob_text(b"\\x04\\x00\\x00\\x00\\x01"), blob_text("0x0400000001")
    ('"0x0400000001"', '"0x0400000001"')
    """
    if isinstance(blob, (bytes, bytearray, memoryview)):
        return '"0x' + bytes(blob).hex().upper() + '"'
    return escape_string(blob)


@value_class(frozen=True, slots=True)
class DenseResourceAttr(Attribute):
    """``dense_resource<w> : tensor<4xf32>``: a constant whose data is the blob ``w`` of the
    file's ``{-# dialect_resources: { builtin: { w: "0x04000000..." } } #-}`` section.

    ``resources`` is the module's blob table (``module.resources``: name -> hex text, kept as
    written, or the bytes of a blob a program made); ``value`` decodes the elements like :class:`DenseElementsAttr`'s (a splat when all
    are equal), ``as_dense()`` gives that attribute. Equality is by name and type: the blobs
    are compared with the module.

    >>> from tdflow.dialect.types import TensorType
    >>> a = DenseResourceAttr(TensorType((2,), "f32"), "w", {"w": "0x040000000000803F00000040"})
    >>> str(a), a.value, str(a.as_dense())
    ('dense_resource<w> : tensor<2xf32>', (1.0, 2.0), 'dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>')
    """

    #: a tensor constant: memos keyed by attributes skip it (see dialect.infer.holds_constant)
    holds_elements: ClassVar[bool] = True

    type: Any
    name: str
    resources: Any = field(default=None, compare=False, hash=False, repr=False)

    def __str__(self) -> str:
        name = self.name if _BARE_NAME.match(self.name) else escape_string(self.name)
        return f"dense_resource<{name}> : {self.type}"

    @property
    def blob(self) -> bytes | None:
        """The blob's data (without the alignment prefix), ``None`` when it is not defined."""
        text = self.resources.get(self.name) if self.resources is not None else None
        return None if text is None else blob_bytes(text)

    @property
    def value(self) -> tuple:
        data = self.blob
        if data is None:
            raise ValueError(f"dense_resource<{self.name}> has no blob '{self.name}'")
        dt = self.type.dtype
        n = len(data) // element_bytes(dt)
        vals = struct.unpack(f"<{n}{_BLOB_CODES[dt]}", data)
        if dt == "bf16":
            vals = tuple(float_from_bits(v, "bf16") for v in vals)
        if vals and all(v == vals[0] for v in vals):
            vals = vals[:1]
        return tuple(vals)

    def as_dense(self) -> DenseElementsAttr:
        """The same constant as a ``dense<...>`` attribute."""
        return DenseElementsAttr(self.type, self.value)


AttrValue = (BoolAttr | IntegerAttr | FloatAttr | StringAttr | ArrayAttr | DenseArrayAttr
             | TypeAttr | UnitAttr | DictAttr | SymbolRefAttr | OpaqueAttr | DenseElementsAttr
             | DenseResourceAttr)


def print_attr_dict(attrs: dict[str, Attribute]) -> str:
    """``{name = value, flag}`` (unit attributes print as bare names); ``""`` when empty.

    >>> print_attr_dict({"alpha": FloatAttr(0.2, "f32"), "fused": UNIT})
    '{alpha = 2.000000e-01 : f32, fused}'
    """
    if not attrs:
        return ""
    parts = []
    for k, v in attrs.items():
        parts.append(attr_name(k) if v is UNIT or isinstance(v, UnitAttr)
                     else f"{attr_name(k)} = {v}")
    return "{" + ", ".join(parts) + "}"


def to_python(attr: Attribute) -> Any:
    """The plain Python value of an attribute (see the table in the module docstring).

    >>> to_python(ArrayAttr((IntegerAttr(1), IntegerAttr(0))))
    (1, 0)
    """
    if isinstance(attr, (ArrayAttr,)):
        return tuple(to_python(a) for a in attr.value)
    if isinstance(attr, DictAttr):
        return {k: to_python(v) for k, v in attr.value}
    if isinstance(attr, UnitAttr):
        return True
    return attr.value  # type: ignore[attr-defined]
