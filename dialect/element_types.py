"""The element types tdflow computes in, as one table: every other dtype list is derived from it.

Dialect, formula rules, kernels and CUDA generators import the names below rather than spelling
their own lists, so adding an integer type is one row of ``INT_TYPES`` (issue 19: attributes
normalized once). The module imports nothing, so the dialect can use it without numpy.

>>> INT_TYPES["ui16"].c_type, INT_TYPES["ui16"].numpy, INT_TYPES["ui16"].range
('uint16_t', 'uint16', (0, 65535))
>>> DTYPE_NAMES
('f16', 'bf16', 'f32', 'f64', 'i1', 'i8', 'i16', 'i32', 'i64', 'ui8', 'ui16', 'ui32', 'ui64')
>>> promote_int("ui8", "i8"), promote_int("ui32", "i32"), promote_int("ui64", "i64")
('i16', 'i64', 'i64')
"""

from __future__ import annotations

from tdflow.core.valueclass import value_class


@value_class(frozen=True, slots=True)
class IntType:
    """One integer element type: MLIR spelling (``ui16``), width and sign.

    >>> t = INT_TYPES["i8"]
    >>> t.c_type, t.c_unsigned, t.range, t.wrap(200)
    ('int8_t', 'uint8_t', (-128, 127), -56)
    """

    name: str
    bits: int
    signed: bool

    @property
    def numpy(self) -> str:
        """The numpy dtype name (``int16``, ``uint8``)."""
        return f"{'' if self.signed else 'u'}int{self.bits}"

    @property
    def c_type(self) -> str:
        """The C type of a stored element (``int16_t``)."""
        return f"{self.numpy}_t"

    @property
    def c_unsigned(self) -> str:
        """The unsigned C type of the same width: wrapping arithmetic is done in it, since
        signed overflow is undefined in C (numpy wraps)."""
        return f"uint{self.bits}_t"

    @property
    def range(self) -> tuple[int, int]:
        """The smallest and largest value."""
        if self.signed:
            return -(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1
        return 0, (1 << self.bits) - 1

    def wrap(self, value: int) -> int:
        """``value`` reduced into this type's range, as C's and numpy's conversions do."""
        v = int(value) & ((1 << self.bits) - 1)
        if self.signed and v >= 1 << (self.bits - 1):
            v -= 1 << self.bits
        return v


#: Every integer type with kernels (``i1`` is the boolean, not in this table), signed first.
INT_TYPES: dict[str, IntType] = {t.name: t for t in (
    IntType("i8", 8, True), IntType("i16", 16, True), IntType("i32", 32, True),
    IntType("i64", 64, True), IntType("ui8", 8, False), IntType("ui16", 16, False),
    IntType("ui32", 32, False), IntType("ui64", 64, False))}

#: The integer types, in the order messages list them.
INT_DTYPES: tuple[str, ...] = tuple(INT_TYPES)
SIGNED_INT_DTYPES: tuple[str, ...] = tuple(n for n, t in INT_TYPES.items() if t.signed)
UNSIGNED_INT_DTYPES: tuple[str, ...] = tuple(n for n, t in INT_TYPES.items() if not t.signed)
FLOAT_DTYPES: tuple[str, ...] = ("f16", "bf16", "f32", "f64")
#: Every element type tdflow computes in, in the order messages list them.
DTYPE_NAMES: tuple[str, ...] = FLOAT_DTYPES + ("i1",) + INT_DTYPES
#: Every number type (not ``i1``).
NUMERIC_DTYPES: tuple[str, ...] = FLOAT_DTYPES + INT_DTYPES


def is_int(dtype: str) -> bool:
    """True for an integer element type other than ``i1``: ``is_int("ui8")``."""
    return dtype in INT_TYPES


def is_unsigned(dtype: str) -> bool:
    """True for ``ui8``, ``ui16``, ``ui32``, ``ui64``."""
    t = INT_TYPES.get(dtype)
    return t is not None and not t.signed


def promote_int(a: str, b: str) -> str:
    """The integer type two integer types combine in: numpy's rule (the smallest type holding
    both ranges), except that ``ui64`` with a signed type gives ``i64`` where numpy gives
    ``f64`` (integer arithmetic stays integer, as in C). ``i1`` ranks below every type."""
    if a == b or b == "i1":
        return a
    if a == "i1":
        return b
    ta, tb = INT_TYPES[a], INT_TYPES[b]
    if ta.signed == tb.signed:
        return a if ta.bits >= tb.bits else b
    s, u = (ta, tb) if ta.signed else (tb, ta)
    if s.bits > u.bits:
        return s.name
    return {8: "i16", 16: "i32", 32: "i64", 64: "i64"}[u.bits]
