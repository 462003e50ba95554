"""``float_attr`` (the parser's fast ``FloatAttr``) and ``FloatAttr.__str__`` (which formats
the already rounded value without rounding it again): differential against ``FloatAttr`` and
``format_float`` over special and random values in every float type."""

from __future__ import annotations

import math
import random
import struct

import pytest
from tdflow.dialect.ir.attrs import FloatAttr, float_attr, format_float

TYPES = ("f64", "f32", "f16", "bf16")


def _values() -> list[float]:
    rng = random.Random(23)
    special = [0.0, -0.0, 1.0, -1.0, 0.1, 0.5003, 1e-20, 1e-45, 5e-324, 2.2e-308, 6.1e-5,
               65504.0, 65520.0, 3.4e38, 3.5e38, 1e300, -1e300, math.inf, -math.inf,
               math.nan, 1 / 3, 2.0 ** -149, 2.0 ** -24, 9.999999, 123456789.0]
    rand = [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(3000)]
    scaled = [rng.uniform(-1, 1) * 10.0 ** rng.randint(-40, 40) for _ in range(3000)]
    return special + rand + scaled


def _same(a: float, b: float) -> bool:
    return struct.pack("<d", a) == struct.pack("<d", b)


@pytest.mark.parametrize("type", TYPES)
def test_float_attr_is_float_attr(type):
    for v in _values():
        try:
            want = FloatAttr(v, type)
        except OverflowError:
            with pytest.raises(OverflowError):
                float_attr(v, type)
            continue
        got = float_attr(v, type)
        assert got == want and _same(got.value, want.value) and got.type == type
        assert hash(got) == hash(want) and repr(got) == repr(want)


@pytest.mark.parametrize("type", TYPES)
def test_str_is_format_float(type):
    for v in _values():
        try:
            a = FloatAttr(v, type)
        except OverflowError:
            continue
        s = format_float(v, type)
        assert str(a) == (s if type == "f64" and not s.startswith("0x") else f"{s} : {type}")
