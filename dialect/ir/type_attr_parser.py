"""Parsing types and attribute values (see :mod:`tdflow.dialect.ir.attrs` for the forms).

>>> parse_attribute("array<i64: 1, 0>")
DenseArrayAttr(type='i64', value=(1, 0))
>>> parse_type("tensor<4x?xf32>")
TensorType(shape=(4, None), dtype='f32')
"""

from __future__ import annotations

from tdflow.dialect.ir.attrs import (
    FLOAT_TYPES,
    INT_TYPES_RE,
    UNIT,
    ArrayAttr,
    BoolAttr,
    DenseArrayAttr,
    DictAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    SymbolRefAttr,
    TypeAttr,
    float_from_bits,
    int_range,
)
from tdflow.dialect.ir.diagnostics import register_source
from tdflow.dialect.ir.lexer import (
    _BARE_ID,
    _NUMBER,
    _SCALAR_TYPE,
    _SYMBOL,
    Lexer,
    _signless,
)
from tdflow.dialect.types import FunctionType, TensorType

__all__ = ["TypeAttrParser", "parse_type", "parse_attribute"]


class TypeAttrParser(Lexer):
    """Types (``tensor<...>``, scalars, function types) and attribute values."""

    __slots__ = ("types",)

    def __init__(self, text: str, file: str = "<string>") -> None:
        super().__init__(text, file)
        self.types: dict[str, object] = {}  # tensor type text -> TensorType (types repeat)

    # -- types ---------------------------------------------------------------------------
    def parse_type(self):
        """``tensor<...>``, a scalar type (``f32``, ``i64``, ``index``) or a function type."""
        self.skip()
        text, pos = self.text, self.pos
        if text.startswith("tensor<", pos):
            end = text.find(">", pos)
            if end < 0:
                raise self.error("unterminated tensor type (expected '>')", pos)
            s = text[pos:end + 1]
            t = self.types.get(s)
            if t is None:
                try:
                    t = TensorType.parse(s)
                except ValueError as exc:
                    raise self.error(str(exc), pos) from None
                self.types[s] = t
            self.pos = end + 1
            return t
        if text.startswith("(", pos):
            ins, outs = self.parse_function_type()
            return FunctionType(ins, outs)
        m = _SCALAR_TYPE.match(text, pos)
        if m is not None:
            self.pos = m.end()
            return m.group()
        raise self.expected("a type (e.g. 'tensor<4x?xf32>', 'tensor<*xf32>', 'f32', 'i64')")

    def parse_type_list(self, close: str) -> tuple:
        """Types separated by ``,`` up to (and consuming) ``close``."""
        types = []
        if not self.accept(close):
            while True:
                types.append(self.parse_type())
                if self.accept(close):
                    break
                if not self.accept(","):
                    raise self.expected(f"',' or '{close}' in a type list")
        return tuple(types)

    def parse_function_type(self) -> tuple[tuple, tuple]:
        """``(T, T) -> T`` or ``(T) -> (T, T)``."""
        self.expect("(", "'(' starting a function type like '(tensor<4xf32>) -> tensor<4xf32>'")
        ins = self.parse_type_list(")")
        self.expect("->", "'->' in a function type")
        return ins, self.parse_result_types()

    def parse_result_types(self) -> tuple:
        if self.accept("("):
            return self.parse_type_list(")")
        return (self.parse_type(),)

    # -- attributes ------------------------------------------------------------------------
    def parse_attr_dict(self, close: str = "}") -> dict:
        """``{name = value, flag, ...}`` after its opening brace, up to ``close``."""
        attrs: dict = {}
        if self.accept(close):
            return attrs
        while True:
            self.skip()
            start = self.pos
            m = _BARE_ID.match(self.text, self.pos)
            if m is not None:
                name = m.group()
                self.pos = m.end()
            elif self.text.startswith('"', self.pos):
                name = self.string()
            else:
                raise self.expected("an attribute name")
            if name in attrs:
                raise self.error(f"duplicate attribute '{name}' in the attribute dictionary",
                                 start)
            attrs[name] = self.parse_attr() if self.accept("=") else UNIT
            if self.accept(close):
                return attrs
            if not self.accept(","):
                raise self.expected(f"',' or '{close}' in an attribute dictionary")

    def parse_attr(self):
        """One attribute value (see :mod:`tdflow.dialect.ir.attrs` for the forms)."""
        self.skip()
        text, pos = self.text, self.pos
        c = text[pos] if pos < len(text) else ""
        if c == '"':
            return StringAttr(self.string())
        if c == "[":
            self.pos += 1
            items = []
            if not self.accept("]"):
                while True:
                    items.append(self.parse_attr())
                    if self.accept("]"):
                        break
                    if not self.accept(","):
                        raise self.expected("',' or ']' in an array attribute")
            return ArrayAttr(tuple(items))
        if c == "{":
            self.pos += 1
            return DictAttr(tuple(self.parse_attr_dict().items()))
        if c == "@":
            m = self.match(_SYMBOL)
            if m is not None:
                return SymbolRefAttr(m.group(1))
            self.pos += 1
            return SymbolRefAttr(self.string("a symbol name after '@'"))
        if c == "-" or c.isdigit():
            return self.parse_number_attr()
        if c == "(":
            return TypeAttr(self.parse_type())
        m = _BARE_ID.match(text, pos)
        if m is not None:
            word = m.group()
            if word in ("true", "false"):
                self.pos = m.end()
                if self.accept(":"):
                    tpos = self.skip()
                    if self.parse_type() != "i1":
                        raise self.error("a boolean attribute has type 'i1'", tpos)
                return BoolAttr(word == "true")
            if word == "unit":
                self.pos = m.end()
                return UNIT
            if word == "array" and text.startswith("array<", pos):
                return self.parse_dense_array()
            if word == "dense" or word.startswith("dense_"):
                raise self.error("dense elements attributes are not supported; write an array "
                                 "like [1, 2] or array<i64: 1, 2>", pos)
            if word == "tensor" or _SCALAR_TYPE.match(text, pos):
                return TypeAttr(self.parse_type())
        raise self.expected("an attribute value (true, 3, 0.5 : f32, \"text\", [..], "
                            "array<i64: ..>, a type)")

    def parse_number_attr(self):
        start = self.pos
        m = self.match(_NUMBER)
        if m is None:
            raise self.expected("a number")
        lit = m.group()
        is_float = m.group(1) is not None
        type = None
        if self.accept(":"):
            tpos = self.skip()
            type = self.parse_type()
            if not isinstance(type, str) or not (type in FLOAT_TYPES or INT_TYPES_RE.match(type)):
                raise self.error(f"expected an integer or float type for the number {lit}, "
                                 f"found '{type}'", tpos)
        if is_float or type in FLOAT_TYPES:
            type = type or "f64"
            if type not in FLOAT_TYPES:
                raise self.error(f"floating point literal {lit} cannot have integer type '{type}'",
                                 start)
            if "0x" in lit:
                value = float_from_bits(int(lit, 16), type)
            else:
                value = float(lit)
            try:
                return FloatAttr(value, type)
            except OverflowError:
                raise self.error(f"float {lit} is out of range for type '{type}'", start) from None
        type = type or "i64"
        value = int(lit, 0) if "0x" in lit else int(lit)
        lo, hi = int_range(type)
        if not lo <= value <= hi:
            raise self.error(f"integer {lit} is out of range for type '{type}' "
                             f"(expected {lo} to {hi})", start)
        if type == "i1":
            return BoolAttr(bool(value))
        return IntegerAttr(_signless(value, type), type)

    def parse_dense_array(self):
        start = self.pos
        self.pos += len("array<")
        tpos = self.skip()
        etype = self.parse_type()
        if etype not in ("i1", "i8", "i16", "i32", "i64", "f32", "f64"):
            raise self.error(f"dense array element type must be i1, i8, i16, i32, i64, f32 or "
                             f"f64; found '{etype}'", tpos)
        values: list = []
        if self.accept(":"):
            while True:
                self.skip()
                vpos = self.pos
                if etype == "i1":
                    w = self.keyword("true", "false")
                    if w is None:
                        raise self.expected("'true' or 'false' in an i1 array")
                    values.append(w == "true")
                else:
                    m = self.match(_NUMBER)
                    if m is None:
                        raise self.expected(f"a number in an array<{etype}: ...>")
                    lit = m.group()
                    if etype[0] == "f":
                        values.append(float_from_bits(int(lit, 16), etype) if "0x" in lit
                                      else float(lit))
                    else:
                        if m.group(1) is not None:
                            raise self.error(f"expected an integer in array<{etype}: ...>, "
                                             f"found {lit}", vpos)
                        v = int(lit, 0) if "0x" in lit else int(lit)
                        lo, hi = int_range(etype)
                        if not lo <= v <= hi:
                            raise self.error(f"{lit} is out of range for {etype}", vpos)
                        values.append(_signless(v, etype))
                if not self.accept(","):
                    break
        self.expect(">", "'>' closing array<...>")
        try:
            return DenseArrayAttr(etype, tuple(values))
        except OverflowError:
            raise self.error(f"a value does not fit in {etype}", start) from None


def parse_type(text: str):
    """Parse a type: ``parse_type("tensor<4x?xf32>")`` → ``TensorType((4, None), "f32")``."""
    p = TypeAttrParser(text, "<type>")
    t = p.parse_type()
    if p.skip() != len(text):
        raise p.expected("end of the type")
    return t


def parse_attribute(text: str):
    """Parse one attribute value: ``parse_attribute("0.2 : f32")`` → ``FloatAttr(0.2, "f32")``."""
    p = TypeAttrParser(text, "<attribute>")
    register_source("<attribute>", text)
    a = p.parse_attr()
    if p.skip() != len(text):
        raise p.expected("end of the attribute")
    return a
